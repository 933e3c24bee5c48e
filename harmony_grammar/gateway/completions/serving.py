"""The vLLM-style ``/v1/completions`` out: one plan's ``text_completion`` chunks, and the route.

:class:`CompletionRun` makes one chunk per id (``text`` with special tokens spelled,
``token_ids``, legacy ``logprobs`` where asked), the finish chunk and usage;
:func:`fold_completion` folds them into the whole ``text_completion``.
:class:`CompletionsServing` answers ``POST /v1/completions`` on a backend that draws ids
itself (a :class:`~..backend.TokenSource`: the app registers the route only then) through
the gateway's shared steps (:mod:`..service`), planning with
:func:`~.protocol.plan_completion`.
"""

from __future__ import annotations

import dataclasses
import secrets
import time
from collections.abc import AsyncGenerator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...format.vocabulary import load_encoding
from ...generation.sampling import TokenLogprobs
from ..backend import ScoredTokenSource, TokenSource
from ..errors import UpstreamError, bad_request
from ..logprobs import completion_logprobs
from ..service import Gateway
from .protocol import CompletionPlan, plan_completion

__all__ = ["CompletionRun", "CompletionsServing", "Draw", "fold_completion", "unscored"]

#: One drawn id and its log-probabilities (None where not asked for).
Draw = tuple[int, TokenLogprobs | None]


async def unscored(tokens: AsyncGenerator[int, None]) -> AsyncGenerator[Draw, None]:
    """A backend's bare ids as draws without log-probabilities; closing it closes ``tokens``."""
    try:
        async for token in tokens:
            yield token, None
    finally:
        await tokens.aclose()


class CompletionsServing:
    """``POST /v1/completions`` over a gateway whose backend is a token source."""

    def __init__(self, gateway: Gateway, source: TokenSource) -> None:
        self.gateway = gateway
        self.source = source

    async def create(self, request: Request) -> Response:
        """``POST /v1/completions``: the completion, whole or streamed."""
        gateway, source = self.gateway, self.source
        plan = await gateway.plan(plan_completion, await gateway.admitted(request, None))
        if not plan.stream:
            plan = dataclasses.replace(plan, include_usage=True)  # whole answers carry usage
        sampling: dict[str, Any] = {
            "max_tokens": plan.max_tokens,
            "temperature": plan.temperature,
            "seed": plan.seed,
            "stop_ids": plan.stop_ids,
        }
        tokens: AsyncGenerator[Draw, None]
        if isinstance(source, ScoredTokenSource):
            tokens = source.draws(plan.prompt, plan.grammar, logprobs=plan.logprobs, **sampling)
        elif plan.logprobs is not None:
            raise bad_request(f"the {source.name} backend gives no log-probabilities", "logprobs")
        else:
            tokens = unscored(source.tokens(plan.prompt, plan.grammar, **sampling))
        return await gateway.answer(
            request,
            CompletionRun(plan),
            tokens,
            stream=plan.stream,
            named=False,
            whole=fold_completion,
            grammar_param="structured_outputs.grammar",  # the one thing a draw refuses
        )


class CompletionRun:
    """The ``text_completion`` chunks of one completion: one per id, the finish chunk, usage
    when asked (a :class:`~.lifecycle.Run`: the generation's lifecycle feeds it)."""

    def __init__(self, plan: CompletionPlan) -> None:
        self.plan = plan
        self.prompt_tokens = len(plan.prompt)
        self._base = {
            "id": f"cmpl-{secrets.token_hex(12)}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": plan.model,
        }
        self._count = 0
        self._last: int | None = None
        self._offset = 0  # characters of text so far: each id's text_offset

    @property
    def should_stop(self) -> bool:
        """Never before the backend's own end (its stop ids and ``max_tokens``)."""
        return False

    @property
    def output_tokens(self) -> int:
        """The ids written so far."""
        return self._count

    def _choice(self, draw: Draw | None, finish: str | None) -> dict[str, Any]:
        ids = [] if draw is None else [draw[0]]
        text = load_encoding().decode(ids)
        scores = None
        if self.plan.logprobs is not None:
            scores = completion_logprobs([draw[1]] if draw and draw[1] else [], self._offset)
        self._offset += len(text)
        return {
            "index": 0,
            "text": text,
            "token_ids": ids,
            "finish_reason": finish,
            "logprobs": scores,
        }

    def feed(self, draw: Draw) -> list[dict[str, Any]]:
        """One id's chunk (the first also carries ``prompt_token_ids``)."""
        chunk = {**self._base, "choices": [self._choice(draw, None)]}
        if self._count == 0:
            chunk["prompt_token_ids"] = self.plan.prompt
        self._count += 1
        self._last = draw[0]
        return [chunk]

    def close(self, fault: UpstreamError | None = None) -> list[dict[str, Any]]:
        """The finish chunk and usage; after a fault, the error (a stream's last event)."""
        if fault is not None:
            return [{"error": fault.body()["error"]}]
        plan = self.plan
        # vLLM's words, honestly: "stop" at a stop id (or a grammar that ended, when none
        # were given), "length" at the limit, "abort" for output that just ended.
        if self._last is not None and self._last in plan.stop_ids:
            finish = "stop"
        elif self._count >= plan.max_tokens:
            finish = "length"
        else:
            finish = "abort" if plan.stop_ids else "stop"
        out = [{**self._base, "choices": [self._choice(None, finish)]}]
        if plan.include_usage:
            usage = {
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self._count,
                "total_tokens": self.prompt_tokens + self._count,
            }
            out.append({**self._base, "choices": [], "usage": usage})
        return out


def fold_completion(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The whole ``text_completion`` that the chunks of :class:`CompletionRun` add up to."""
    ids = [i for chunk in chunks for c in chunk["choices"] for i in c["token_ids"]]
    finish = [c["finish_reason"] for chunk in chunks for c in chunk["choices"]][-1]
    usage = next((chunk["usage"] for chunk in chunks if "usage" in chunk), None)
    first = chunks[0]
    scores = [c["logprobs"] for chunk in chunks for c in chunk["choices"] if c["logprobs"]]
    logprobs = None
    if scores:
        logprobs = {key: [v for part in scores for v in part[key]] for key in scores[0]}
    choice = {
        "index": 0,
        "text": load_encoding().decode(ids),
        "token_ids": ids,
        "finish_reason": finish,
        "logprobs": logprobs,
    }
    answer = {key: first[key] for key in ("id", "object", "created", "model")}
    return {**answer, "choices": [choice], "usage": usage}
