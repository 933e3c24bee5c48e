"""Chat Completions out: one plan's run as ``chat.completion.chunk`` payloads, and the route.

:class:`ChatRun` turns the engine's output into chunks (the bridge's, with usage, ``stop``
strings, log-probabilities, reasoning under both names, and how a cut or a fault ends the
turn); :func:`chat_completion` folds them into the whole ``chat.completion``.
:class:`ChatServing` answers ``POST /v1/chat/completions`` and its ``/render`` twin through
the gateway's shared steps (:mod:`..service`), planning with :func:`~.protocol.plan_chat`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...bridges import ChatCompletionStream, accumulate
from ...rendering.chat import FUNCTIONS_PREFIX
from ..backend import Output
from ..errors import UpstreamError
from ..plan import Plan
from ..render_endpoints import rendered, report_headers
from ..runs import TurnRun
from ..service import Gateway
from ..stop_strings import StopFilter
from ..validation import grammar_field
from .protocol import plan_chat

__all__ = ["ChatRun", "ChatServing", "chat_completion"]


class ChatServing:
    """``POST /v1/chat/completions`` and ``/v1/chat/completions/render`` over a gateway."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    async def plan(self, body: Any) -> Plan:
        """The plan of a Chat Completions body (in a worker thread)."""
        return await self.gateway.plan(plan_chat, body)

    async def create(self, request: Request) -> Response:
        """``POST /v1/chat/completions``: the answer, whole or streamed."""
        gateway = self.gateway
        plan = await self.plan(await gateway.admitted(request, "chat"))
        outputs = gateway.backend.generate(plan)
        return await gateway.answer(
            request,
            ChatRun(plan),
            outputs,
            stream=plan.stream,
            named=False,
            whole=chat_completion,
            grammar_param=grammar_field(plan.api, plan.response_format is not None),
            headers=report_headers(plan),
        )

    async def render(self, request: Request) -> Response:
        """``POST /v1/chat/completions/render``: the prompt, planned as for ``create``."""
        self.gateway.check_key(request)
        return rendered(await self.plan(await self.gateway.body(request)))


class ChatRun(TurnRun):
    """Chat Completions chunks for one plan (the ``chat.completion.chunk`` stream)."""

    def __init__(self, plan: Plan) -> None:
        super().__init__(plan)
        self.bridge = ChatCompletionStream(
            # Every callable, not only plan.tools: a namespace's calls are checked too.
            tools=plan.toolset if plan.toolset else None,
            model=plan.model,
            namespaces=plan.namespaces,
            custom=plan.toolset.custom,
        )
        self.stop = StopFilter(plan.stop) if plan.stop else None

    @property
    def turn_ended(self) -> bool:
        """The bridge's stop (``<|call|>``, ``<|return|>``), or a ``stop`` string matched."""
        return self.bridge.should_stop or (self.stop is not None and self.stop.stopped)

    def feed(self, output: Output) -> list[dict[str, Any]]:
        """The chunks that ``output`` completes (none past ``max_tokens``)."""
        output = self._take(output)
        if not output.ids and not output.text:
            return []
        chunks = self._read(self.bridge, output)
        if self.bridge.kind == "reasoning":
            self.reasoning_tokens += len(output.ids)
        if self.trail is not None:  # each content chunk's entries, before any stop cut
            targets = []
            for chunk in chunks:
                choice = chunk["choices"][0]
                if "content" in choice["delta"]:
                    choice["logprobs"] = {"content": [], "refusal": None}
                    targets.append(choice["logprobs"]["content"])
            self.trail.feed(output.ids, output.logprobs, targets)
        return _named(self._filtered(chunks))

    def close(self, fault: UpstreamError | None = None) -> list[dict[str, Any]]:
        """The last chunks: the bridge's rest, the ``finish_reason`` chunk, usage if asked.

        A turn cut before its stop token (:attr:`truncated`) ends with ``length``, and a call
        it was cut inside is never sent as a call: its partial name and arguments go under
        ``cut_tool_call`` (our addition) so that nothing the model wrote is hidden. A fault
        (the engine died, timed out, sent garbage or ended its stream early) ends the stream
        with an error chunk, ``{"error": {...}}`` as vLLM sends one, after the text read so
        far; the openai SDK raises it. :attr:`fault` is set for a whole answer (an HTTP error).
        """
        rest = self._settle(fault)
        early = self._filtered(self._read(self.bridge, Output(text=rest))) if rest else []
        truncated = fault is not None or self.truncated
        stopped = self.stop is not None and self.stop.stopped
        chunks = self.bridge.close(truncated=truncated)
        finish = chunks.pop()
        chunks = _named(early + self._filtered(chunks))
        if self.stop is not None and not stopped:
            rest, entries = self.stop.flush()
            if rest:
                chunks.append(self._content_chunk(finish, rest, entries))
        if fault is not None:
            chunks.append({"error": fault.body()["error"]})
            return chunks
        if self.stop is not None and self.stop.stopped:
            finish["choices"][0]["finish_reason"] = "stop"
        if self.trail is not None:  # asked for: a list, empty when the turn wrote no text
            finish["choices"][0]["logprobs"] = {"content": [], "refusal": None}
        cut_call = self._cut_call() if truncated else None
        if cut_call is not None:
            finish["cut_tool_call"] = cut_call
        diagnostics = self.bridge.diagnostics
        if diagnostics:
            finish["diagnostics"] = diagnostics
        chunks.append(finish)
        if self.plan.include_usage:
            usage = {**finish, "choices": [], "usage": self.usage()}
            usage.pop("diagnostics", None)
            usage.pop("cut_tool_call", None)
            chunks.append(usage)
        return chunks

    def _cut_call(self) -> dict[str, str] | None:
        """The call the output was cut inside: its name and arguments so far, or None."""
        messages = self.bridge.parser.result().messages
        last = messages[-1] if messages else None
        if last is None or self.bridge.last_cut is not True:
            return None
        recipient = last.recipient or ""
        if not recipient.startswith(FUNCTIONS_PREFIX):
            return None
        return {"name": recipient[len(FUNCTIONS_PREFIX) :], "arguments": last.content}

    def usage(self) -> dict[str, Any]:
        """``usage`` from the token counts."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.output_tokens,
            "total_tokens": self.prompt_tokens + self.output_tokens,
            "completion_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
        }

    def _filtered(self, chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.stop is None:
            return chunks
        out = []
        for chunk in chunks:
            choice = chunk["choices"][0]
            delta = choice["delta"]
            if "content" in delta:
                scores = choice.get("logprobs")
                text, entries = self.stop.feed(
                    delta["content"], scores["content"] if scores else ()
                )
                if not text:
                    continue
                delta["content"] = text
                if scores:  # exactly the entries of the text it now carries
                    choice["logprobs"] = {"content": entries, "refusal": None}
            elif self.stop.stopped:
                continue  # nothing after the stop string
            out.append(chunk)
        return out

    def _content_chunk(
        self, template: dict[str, Any], text: str, entries: list[Any]
    ) -> dict[str, Any]:
        scores = None if self.trail is None else {"content": entries, "refusal": None}
        choice = {"index": 0, "delta": {"content": text}, "finish_reason": None, "logprobs": scores}
        return {**template, "choices": [choice]}


def _named(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reasoning under both names: ``reasoning`` (vLLM 0.31 on, most gateways) and
    ``reasoning_content`` (older clients, DeepSeek's name), the same text in each."""
    for chunk in chunks:
        for choice in chunk.get("choices") or ():
            delta = choice["delta"]
            if "reasoning_content" in delta:
                delta["reasoning"] = delta["reasoning_content"]
    return chunks


def chat_completion(chunks: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The ``chat.completion`` object that a run's chunks add up to: the bridge's one fold
    (:func:`~harmony_grammar.bridges.chat.accumulate`) with the gateway's additions (reasoning
    under both names, ``usage``, ``diagnostics`` and ``cut_tool_call``)."""
    first = chunks[0]
    folded = accumulate(chunks)
    message = folded["message"]
    message["reasoning"] = message["reasoning_content"]
    message["tool_calls"] = message["tool_calls"] or None
    usage = next((chunk["usage"] for chunk in reversed(chunks) if chunk.get("usage")), None)
    extra: dict[str, Any] = {
        key: chunk[key]
        for chunk in chunks
        for key in ("diagnostics", "cut_tool_call")
        if key in chunk
    }
    choice = {"index": 0, "message": message, "finish_reason": folded["finish_reason"]}
    return {
        "id": first["id"],
        "object": "chat.completion",
        "created": first["created"],
        "model": first["model"],
        "choices": [{**choice, "logprobs": _logprobs(chunks)}],
        "usage": usage,
        **extra,
    }


def _logprobs(chunks: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Choice 0's log-probabilities, the chunks' added up as one ``{"content", "refusal"}``,
    or None when no chunk carried any (none asked for)."""
    content: list[dict[str, Any]] | None = None
    for chunk in chunks:
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) == 0 and choice.get("logprobs"):
                content = (content or []) + choice["logprobs"]["content"]
    return None if content is None else {"content": content, "refusal": None}
