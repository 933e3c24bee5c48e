"""The vLLM-style ``POST /v1/completions`` of the embedded and replay servers: ids in, ids out.

The subset of vLLM's request that the gateway's vLLM backend sends (``engines.VllmBackend``):
``prompt`` as a list of ids (or a string, whose control-token spellings become their ids, as a
raw completion's prompt is raw), ``max_tokens``, ``temperature``, ``seed``, ``stream``,
``stop_token_ids``, ``structured_outputs.grammar`` (an llguidance grammar) and
``return_token_ids``. Each choice carries ``text`` (special tokens spelled) and
``token_ids``, as vLLM's does with ``return_token_ids: true``; the first streamed chunk also
carries ``prompt_token_ids``. An xgrammar ``structural_tag`` is refused (400): the embedded
engine masks with llguidance only.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from ..format.tokens import CONTROL_SPELLINGS
from ..format.vocabulary import load_encoding
from .backend import TokenSource
from .errors import GatewayError, bad_request

__all__ = ["completions_endpoint"]

#: The grammar of a completion with no constraint: any text, then end-of-sequence.
UNCONSTRAINED = "%llguidance {}\nstart: /(?s:.*)/\n"


def _prompt(value: Any) -> list[int]:
    if isinstance(value, str):
        return load_encoding().encode(value, allowed_special=CONTROL_SPELLINGS)
    if isinstance(value, list) and all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < load_encoding().n_vocab
        for i in value
    ):
        return list(value)
    raise bad_request("prompt must be a string or a list of o200k_harmony token ids", "prompt")


def _grammar(request: Mapping[str, Any]) -> str:
    outputs = request.get("structured_outputs")
    if outputs is None:
        return UNCONSTRAINED
    if not isinstance(outputs, Mapping):
        raise bad_request("must be an object", "structured_outputs")
    if "grammar" in outputs and isinstance(outputs["grammar"], str):
        return outputs["grammar"]
    raise bad_request(
        "the embedded engine takes structured_outputs.grammar (llguidance) only",
        "structured_outputs",
    )


def completions_endpoint(backend: TokenSource, check: Any, read_body: Any, model: str) -> Any:
    """The route handler; ``check`` and ``read_body`` are the gateway's key and body checks."""

    async def handler(request: Request) -> Response:
        check(request)
        body = await read_body(request)
        if not isinstance(body, Mapping):
            raise bad_request("the request body must be a JSON object")
        prompt = _prompt(body.get("prompt"))
        grammar = _grammar(body)
        max_tokens = body.get("max_tokens", 16)
        temperature = body.get("temperature", 1.0)
        seed = body.get("seed")
        stops = body.get("stop_token_ids") or []
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise bad_request("max_tokens must be a positive integer", "max_tokens")
        if not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:
            raise bad_request("temperature must be a number from 0 to 2", "temperature")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise bad_request("seed must be an integer", "seed")
        if not isinstance(stops, list) or not all(isinstance(i, int) for i in stops):
            raise bad_request("stop_token_ids must be a list of ids", "stop_token_ids")
        tokens = backend.tokens(
            prompt,
            grammar,
            max_tokens=max_tokens,
            temperature=float(temperature),
            seed=seed,
            stop_ids=frozenset(stops),
        )
        base = {
            "id": f"cmpl-{secrets.token_hex(12)}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": body.get("model") or model,
        }
        encoding = load_encoding()

        def choice(ids: list[int], finish: str | None) -> dict[str, Any]:
            return {
                "index": 0,
                "text": encoding.decode(ids),
                "token_ids": ids,
                "finish_reason": finish,
                "logprobs": None,
            }

        def usage(count: int) -> dict[str, int]:
            return {
                "prompt_tokens": len(prompt),
                "completion_tokens": count,
                "total_tokens": len(prompt) + count,
            }

        if not body.get("stream"):
            ids = [token async for token in tokens]
            finish = "length" if len(ids) >= max_tokens else "stop"
            return JSONResponse(
                {**base, "choices": [choice(ids, finish)], "usage": usage(len(ids))}
            )

        options = body.get("stream_options")
        with_usage = isinstance(options, Mapping) and bool(options.get("include_usage"))

        async def events() -> AsyncIterator[bytes]:
            count = 0
            try:
                async for token in tokens:
                    chunk = {**base, "choices": [choice([token], None)]}
                    if count == 0:
                        chunk["prompt_token_ids"] = prompt
                    count += 1
                    yield f"data: {json.dumps(chunk)}\n\n".encode()
            except GatewayError as exc:
                yield f"data: {json.dumps(exc.body())}\n\n".encode()
                return
            finally:
                await tokens.aclose()
            finish = "length" if count >= max_tokens else "stop"
            last = {**base, "choices": [choice([], finish)]}
            yield f"data: {json.dumps(last)}\n\n".encode()
            if with_usage:
                counts: dict[str, Any] = {**base, "choices": [], "usage": usage(count)}
                yield f"data: {json.dumps(counts)}\n\n".encode()
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return handler
