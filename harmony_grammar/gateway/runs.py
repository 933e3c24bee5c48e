"""One generation on the wire: engine output in, Chat Completions chunks or Responses events out.

A run wraps the stream bridge of its API (:class:`ChatCompletionStream`,
:class:`ResponsesStream`) and adds what the bridge does not know: token usage, ``stop``
strings, and how an engine fault ends the turn. A whole (non-streamed) answer is the same
run's payloads folded together (:func:`chat_completion` / ``ResponsesRun.response``), so a
streamed and a whole answer to the same output can never disagree.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from ..bridges import ChatCompletionStream, ResponsesStream
from ..format.tokens import STOP_TOKENS
from ..format.vocabulary import load_encoding
from .backend import Output
from .errors import UpstreamError
from .planning import Plan
from .reasoning_seal import INCLUDE_KEY, ReasoningSeal

__all__ = ["ChatRun", "ResponsesRun", "StopFilter", "chat_completion"]


class StopFilter:
    """Cuts text at the first of the ``stop`` strings, holding back a possible partial match.

    ``feed(text)`` returns the text that is safe to send; ``stopped`` turns true at a match.
    ``flush()`` returns what was held back (the stream ended without a match).
    """

    def __init__(self, stops: Sequence[str]) -> None:
        self._stops = tuple(stops)
        self._hold = max((len(s) for s in stops), default=1) - 1
        self._buffer = ""
        self.stopped = False

    def feed(self, text: str) -> str:
        """The part of ``text`` (after what was held) that can go out now."""
        if self.stopped:
            return ""
        self._buffer += text
        hits = [i for i in (self._buffer.find(s) for s in self._stops) if i >= 0]
        if hits:
            self.stopped = True
            out, self._buffer = self._buffer[: min(hits)], ""
            return out
        cut = max(len(self._buffer) - self._hold, 0)
        out, self._buffer = self._buffer[:cut], self._buffer[cut:]
        return out

    def flush(self) -> str:
        """What was held back, now that no more text comes."""
        out, self._buffer = self._buffer, ""
        return out


_STOP_IDS = frozenset(token.id for token in STOP_TOKENS)
_STOP_SPELLING = re.compile("|".join(re.escape(token.value) for token in STOP_TOKENS))
#: How much of the text fed last a stop token's spelling may straddle into the next read.
_STOP_OVERLAP = max(len(token.value) for token in STOP_TOKENS) - 1


class _Run:
    """What both APIs' runs share: feeding output and counting tokens.

    The turn ends at its stop token (``<|call|>``, ``<|return|>``), and the gateway stops
    reading there, so a read is fed to the bridge only up to the stop: what an engine sent
    past it is never read, whether it came in the same read or a later one. The answer and
    its diagnostics then never depend on where the engine's reads end
    (tests/test_bridge_chunking.py).
    """

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self._last_text = ""  # the end of the text fed last: a stop spelling may straddle
        self.prompt_tokens = len(plan.prompt_ids)
        self.completion_tokens = 0
        self._engine_count: int | None = None
        self._text = False
        #: Ids that arrived inside analysis (or a built-in tool's call): reasoning tokens.
        self.reasoning_tokens = 0

    @property
    def should_stop(self) -> bool:
        """True once the turn is over (the engine should stop now)."""
        raise NotImplementedError

    def _pieces(self, output: Output) -> Iterator[str | tuple[int, ...]]:
        """``output`` cut after each stop token (ids) or stop spelling (text)."""
        if output.ids:
            ids, start = output.ids, 0
            for index, token_id in enumerate(ids):
                if token_id in _STOP_IDS:
                    yield ids[start : index + 1]
                    start = index + 1
            if start < len(ids):
                yield ids[start:]
            return
        text, before = output.text, self._last_text
        self._last_text = (before + text)[-_STOP_OVERLAP:]
        start = 0
        for match in _STOP_SPELLING.finditer(before + text):
            end = match.end() - len(before)
            if end > start:
                yield text[start:end]
                start = end
        if start < len(text):
            yield text[start:]

    def _read(self, bridge: ChatCompletionStream | ResponsesStream, output: Output) -> list[Any]:
        """What the bridge makes of ``output``, read up to the turn's stop."""
        out: list[Any] = []
        for piece in self._pieces(output):
            out += bridge.feed(piece) if isinstance(piece, str) else bridge.feed_tokens(piece)
            if bridge.should_stop:
                break
        return out

    def _count(self, output: Output) -> None:
        if output.ids:
            self.completion_tokens += len(output.ids)
        elif output.text:
            self._text = True
            # An engine that returns text only: our count, unless it reports its own.
            self.completion_tokens += len(load_encoding().encode_ordinary(output.text))
        if output.completion_tokens is not None:
            self._engine_count = output.completion_tokens

    @property
    def output_tokens(self) -> int:
        """Completion tokens: the ids received, or the engine's count for a text engine."""
        if self._text and self._engine_count is not None:
            return self._engine_count
        return self.completion_tokens


class ChatRun(_Run):
    """Chat Completions chunks for one plan (the ``chat.completion.chunk`` stream)."""

    def __init__(self, plan: Plan) -> None:
        super().__init__(plan)
        self.bridge = ChatCompletionStream(
            tools=plan.tools or None, model=plan.model, namespaces=plan.namespaces
        )
        self.stop = StopFilter(plan.stop) if plan.stop else None

    @property
    def should_stop(self) -> bool:
        """The bridge's stop (``<|call|>``, ``<|return|>``), or a ``stop`` string matched."""
        return self.bridge.should_stop or (self.stop is not None and self.stop.stopped)

    def feed(self, output: Output) -> list[dict[str, Any]]:
        """The chunks that ``output`` completes."""
        self._count(output)
        chunks = self._read(self.bridge, output)
        if self.bridge.kind == "reasoning":
            self.reasoning_tokens += len(output.ids)
        return self._filtered(chunks)

    def close(self, fault: UpstreamError | None = None) -> list[dict[str, Any]]:
        """The last chunks: the bridge's rest, the ``finish_reason`` chunk, usage if asked.

        A fault (the engine died, timed out or sent garbage) still ends with
        ``finish_reason`` (what the output so far reads as: ``length`` for a cut answer) and
        says what happened under ``upstream_error`` (our addition; OpenAI has no such key).
        """
        stopped = self.stop is not None and self.stop.stopped
        chunks = self.bridge.close()
        finish = chunks.pop()
        chunks = self._filtered(chunks)
        if self.stop is not None and not stopped:
            rest = self.stop.flush()
            if rest:
                chunks.append(self._content_chunk(finish, rest))
        if self.stop is not None and self.stop.stopped:
            finish["choices"][0]["finish_reason"] = "stop"
        if fault is not None:
            finish["upstream_error"] = fault.body()["error"]
        diagnostics = self.bridge.diagnostics
        if diagnostics:
            finish["diagnostics"] = diagnostics
        chunks.append(finish)
        if self.plan.include_usage:
            usage = {**finish, "choices": [], "usage": self.usage()}
            usage.pop("diagnostics", None)
            usage.pop("upstream_error", None)
            chunks.append(usage)
        return chunks

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
            delta = chunk["choices"][0]["delta"]
            if "content" in delta:
                text = self.stop.feed(delta["content"])
                if not text:
                    continue
                delta["content"] = text
            elif self.stop.stopped:
                continue  # nothing after the stop string
            out.append(chunk)
        return out

    @staticmethod
    def _content_chunk(template: dict[str, Any], text: str) -> dict[str, Any]:
        choice = {"index": 0, "delta": {"content": text}, "finish_reason": None, "logprobs": None}
        return {**template, "choices": [choice]}


def chat_completion(chunks: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The ``chat.completion`` object that a run's chunks add up to."""
    first = chunks[0]
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    extra: dict[str, Any] = {}
    usage = None
    for chunk in chunks:
        if chunk.get("usage"):
            usage = chunk["usage"]
        for key in ("diagnostics", "upstream_error"):
            if key in chunk:
                extra[key] = chunk[key]
        for choice in chunk["choices"]:
            delta = choice["delta"]
            content.append(delta.get("content") or "")
            reasoning.append(delta.get("reasoning_content") or "")
            for call in delta.get("tool_calls") or []:
                if call["index"] not in calls:
                    calls[call["index"]] = {
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""},
                    }
                calls[call["index"]]["function"]["arguments"] += call["function"]["arguments"]
            finish = choice["finish_reason"] or finish
    message = {
        "role": "assistant",
        "content": "".join(content) or None,
        "reasoning_content": "".join(reasoning) or None,
        "tool_calls": [calls[i] for i in sorted(calls)] or None,
    }
    return {
        "id": first["id"],
        "object": "chat.completion",
        "created": first["created"],
        "model": first["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": usage,
        **extra,
    }


class ResponsesRun(_Run):
    """Responses API events for one plan; :meth:`response` is the whole object.

    With ``seal``, and ``reasoning.encrypted_content`` in the request's ``include``, each
    reasoning item carries its text sealed as ``encrypted_content`` (:mod:`.reasoning_seal`).
    """

    def __init__(self, plan: Plan, seal: ReasoningSeal | None = None) -> None:
        super().__init__(plan)
        include = plan.request.get("include")
        wanted = seal is not None and isinstance(include, list) and INCLUDE_KEY in include
        self.bridge = ResponsesStream(
            request=plan.request, model=plan.model, seal=seal.seal if wanted and seal else None
        )
        self._final: dict[str, Any] | None = None

    @property
    def should_stop(self) -> bool:
        """The bridge's stop (``<|call|>``, ``<|return|>``)."""
        return self.bridge.should_stop

    def feed(self, output: Output) -> list[dict[str, Any]]:
        """The events that ``output`` completes."""
        self._count(output)
        events = self._read(self.bridge, output)
        if self.bridge.kind == "reasoning":
            self.reasoning_tokens += len(output.ids)
        return events

    def close(self, fault: UpstreamError | None = None) -> list[dict[str, Any]]:
        """The last events; the final one carries the whole response, usage included.

        A fault makes it ``response.failed`` with the fault as ``error`` and the items
        written so far as ``output``.
        """
        events = self.bridge.close()
        final = events[-1]
        response = final["response"]
        response["usage"] = self.usage()
        if fault is not None:
            final["type"] = "response.failed"
            response["status"] = "failed"
            response["error"] = {"code": "server_error", "message": fault.message}
            response["incomplete_details"] = None
        self._final = response
        return events

    def response(self) -> dict[str, Any]:
        """The whole response object (after :meth:`close`)."""
        if self._final is None:
            raise RuntimeError("the run is not closed")
        return self._final

    def usage(self) -> dict[str, Any]:
        """``usage`` from the token counts, in the Responses API's shape."""
        return {
            "input_tokens": self.prompt_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
            "total_tokens": self.prompt_tokens + self.output_tokens,
        }
