"""Streaming bridges: Chat Completions chunks and Responses events from a token stream.

Both adapters sit on :class:`~harmony_grammar.format.stream.StreamParser` and keep its
sans-IO shape: ``feed(text)`` / ``feed_tokens(ids)`` return the payloads that became known,
``close()`` ends the stream with the last ones. Nothing is held back beyond what the parser
holds (a split control token or UTF-8 sequence), so text reaches the client as it decodes.

The adapters classify messages with the whole-response bridges' own rules
(:func:`~harmony_grammar.rendering.responses.item_kind`, the Chat Completions finish
reason), so the concatenated deltas equal :func:`to_chat_completion` and the final
``response.completed`` object equals :func:`to_responses` for the same output, however it
was chunked (tests/test_streaming.py checks this with hypothesis).
"""

from __future__ import annotations

import copy
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..format.events import (
    ContentDelta,
    Event,
    HeaderComplete,
    MessageEnd,
    ToolCallDelta,
    ToolCallStart,
)
from ..format.model import Message
from ..format.stream import StreamParser
from ..tools.arguments import ToolsArgument
from .chat import finish_reason, random_call_id, tokens_stripped
from .responses import (
    IdFactory,
    append_text,
    end_item,
    item_kind,
    new_item,
    random_id,
    request_tools,
    response_object,
)

__all__ = ["ChatCompletionStream", "ResponsesStream"]


class _Adapter:
    """The shared driver: a lenient stream parser and the turn's end (a tool's result)."""

    def __init__(self, tools: ToolsArgument, strict: bool) -> None:
        self.parser = StreamParser(start="completion", strict=strict, tools=tools)
        self.kind: str | None = None  # the current message's item kind
        self.ended = False  # the model began a message it should not write: ignore the rest
        self.last: Message | None = None

    def feed(self, text: str) -> list[dict[str, Any]]:
        """Parse a chunk of text; returns the payloads that became known."""
        return self._payloads(self.parser.feed(text))

    def feed_tokens(self, token_ids: Sequence[int]) -> list[dict[str, Any]]:
        """Parse more o200k_harmony token ids; returns the payloads that became known."""
        return self._payloads(self.parser.feed_tokens(token_ids))

    @property
    def should_stop(self) -> bool:
        """True once generation must stop (``<|call|>``, ``<|return|>``, or a message the model
        should not write)."""
        return self.parser.should_stop or self.ended

    def _payloads(self, events: list[Event]) -> list[dict[str, Any]]:
        out = self._opening()
        for event in events:
            if self.ended:
                break
            if isinstance(event, HeaderComplete):
                self.kind = item_kind(event.role, event.recipient, event.channel)
                if self.kind is None:
                    self.ended = True
                    break
                out += self._header(event)
            elif isinstance(event, ToolCallStart):
                out += self._call_start(event)
            elif isinstance(event, (ContentDelta, ToolCallDelta)) and event.text:
                out += self._delta(event.text)
            elif isinstance(event, MessageEnd):
                self.last = event.message
                out += self._message_end(event.message)
        return out

    def _opening(self) -> list[dict[str, Any]]:
        return []

    def _header(self, event: HeaderComplete) -> list[dict[str, Any]]:
        return []

    def _call_start(self, event: ToolCallStart) -> list[dict[str, Any]]:
        return []

    def _delta(self, text: str) -> list[dict[str, Any]]:
        return []

    def _message_end(self, message: Message) -> list[dict[str, Any]]:
        return []


class ChatCompletionStream(_Adapter):
    """Chat Completions chunks (``chat.completion.chunk``) for a streamed completion.

    The first chunk says ``role: assistant``; analysis (and built-in tool calls) stream as
    ``delta.reasoning_content``, final answers and preambles as ``delta.content`` (a later
    message of either opens with ``"\\n"``, as the whole bridge joins them); a ``functions.*``
    call opens ``delta.tool_calls[i]`` with its id and name, then streams
    ``function.arguments``. :meth:`close` sends ``finish_reason`` (``tool_calls``, ``stop`` or
    ``length``). The parse is lenient unless ``strict``; :attr:`diagnostics` lists what it
    found. ``id_factory(index)`` makes the call ids, as in :func:`to_chat_completion`.
    """

    def __init__(
        self,
        *,
        tools: ToolsArgument = None,
        strict: bool = False,
        model: str = "gpt-oss",
        completion_id: str | None = None,
        created: int | None = None,
        id_factory: Callable[[int], str] | None = None,
    ) -> None:
        super().__init__(tools, strict)
        self._base = {
            "id": completion_id or f"chatcmpl-{secrets.token_hex(12)}",
            "object": "chat.completion.chunk",
            "created": created if created is not None else int(time.time()),
            "model": model,
        }
        self._make_id = id_factory or random_call_id
        self._opened = False
        # Whether each field has text yet, and whether the current message has written any:
        # the whole bridge joins the non-empty texts with "\n" (rendering/chat.py), so a
        # message's first non-empty delta carries the separator and an empty one adds nothing.
        self._has_text = {"content": False, "reasoning_content": False}
        self._message_started = False
        self._calls = 0

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
        return {**self._base, "choices": [choice]}

    def _field(self) -> str:
        return "content" if self.kind == "message" else "reasoning_content"

    def _opening(self) -> list[dict[str, Any]]:
        if self._opened:
            return []
        self._opened = True
        return [self._chunk({"role": "assistant"})]

    def _header(self, event: HeaderComplete) -> list[dict[str, Any]]:
        self._message_started = False
        return []  # text opens at its first non-empty delta; a call at ToolCallStart

    def _call_start(self, event: ToolCallStart) -> list[dict[str, Any]]:
        if self.kind != "function_call":
            return []
        index = self._calls
        self._calls += 1
        call = {
            "index": index,
            "id": self._make_id(index),
            "type": "function",
            "function": {"name": event.name, "arguments": ""},
        }
        return [self._chunk({"tool_calls": [call]})]

    def _delta(self, text: str) -> list[dict[str, Any]]:
        if self.kind == "function_call":
            call = {"index": self._calls - 1, "function": {"arguments": text}}
            return [self._chunk({"tool_calls": [call]})]
        if not text:
            return []
        field = self._field()
        if not self._message_started:
            self._message_started = True
            text = ("\n" if self._has_text[field] else "") + text
            self._has_text[field] = True
        return [self._chunk({field: text})]

    def close(self) -> list[dict[str, Any]]:
        """End of output: the remaining deltas, then the chunk with ``finish_reason``."""
        out = self._payloads(self.parser.close())
        stripped = tokens_stripped(self.parser.result().diagnostics)
        return [*out, self._chunk({}, finish_reason(self.last, self._calls, stripped))]

    @property
    def diagnostics(self) -> list[dict[str, Any]]:
        """What the parse found or repaired so far, JSON-ready."""
        return [d.to_dict() for d in self.parser.result().diagnostics]


class ResponsesStream(_Adapter):
    """Responses API streaming events for a streamed completion.

    ``response.created`` and ``response.in_progress`` first; per output item
    ``response.output_item.added``, then ``response.content_part.added`` and
    ``response.reasoning_text.delta`` / ``response.output_text.delta`` with their ``.done``
    events and ``response.content_part.done``, or ``response.function_call_arguments.delta``
    and ``.done`` for a call, then ``response.output_item.done``. :meth:`close` ends with
    ``response.completed`` (``response.incomplete`` for a cut turn, ``response.failed`` for
    an error the lenient parse cannot repair) carrying the same object as
    :func:`to_responses`. Arguments as there: the ``request`` to echo (and whose tools check
    the calls), ``ids(prefix)`` for the ids.
    """

    def __init__(
        self,
        *,
        request: Mapping[str, Any] | None = None,
        tools: ToolsArgument = None,
        strict: bool = False,
        ids: IdFactory | None = None,
        model: str = "gpt-oss",
        created_at: float | None = None,
    ) -> None:
        super().__init__(request_tools(request) if tools is None else tools, strict)
        self._ids = ids or random_id
        self._request = request
        self._model = model
        self._created_at = created_at if created_at is not None else time.time()
        self._response_id = self._ids("resp")
        self._items: list[dict[str, Any]] = []
        self._sequence = 0
        self._opened = False
        self._cut = True  # until a message ends with its stop token
        self._closed = False

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"type": f"response.{kind}", "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return copy.deepcopy(event)  # items keep growing; an event is a snapshot

    def _response(self, *, finished: bool) -> dict[str, Any]:
        return response_object(
            self._response_id,
            self._items,
            self.parser.result().diagnostics if finished else (),
            cut=self._cut,
            finished=finished,
            request=self._request,
            model=self._model,
            created_at=self._created_at,
        )

    def _opening(self) -> list[dict[str, Any]]:
        if self._opened:
            return []
        self._opened = True
        response = self._response(finished=False)
        return [
            self._event("created", response=response),
            self._event("in_progress", response=response),
        ]

    def _where(self) -> dict[str, Any]:
        return {"item_id": self._items[-1]["id"], "output_index": len(self._items) - 1}

    def _header(self, event: HeaderComplete) -> list[dict[str, Any]]:
        assert self.kind is not None
        item = new_item(self.kind, self._ids, recipient=event.recipient, channel=event.channel)
        self._items.append(item)
        out = [self._event("output_item.added", output_index=len(self._items) - 1, item=item)]
        if self.kind != "function_call":
            part = item["content"][0]
            out.append(
                self._event("content_part.added", **self._where(), content_index=0, part=part)
            )
        return out

    def _delta(self, text: str) -> list[dict[str, Any]]:
        item = self._items[-1]
        append_text(item, text)
        if self.kind == "function_call":
            return [self._event("function_call_arguments.delta", **self._where(), delta=text)]
        where = {**self._where(), "content_index": 0, "delta": text}
        if self.kind == "reasoning":
            return [self._event("reasoning_text.delta", **where)]
        return [self._event("output_text.delta", **where, logprobs=[])]

    def _message_end(self, message: Message) -> list[dict[str, Any]]:
        item = self._items[-1]
        self._cut = end_item(item, message)
        where = self._where()
        if self.kind == "function_call":
            out = [
                self._event("function_call_arguments.done", **where, arguments=item["arguments"])
            ]
        else:
            part = item["content"][0]
            if self.kind == "reasoning":
                done = self._event(
                    "reasoning_text.done", **where, content_index=0, text=part["text"]
                )
            else:
                done = self._event(
                    "output_text.done", **where, content_index=0, text=part["text"], logprobs=[]
                )
            out = [done, self._event("content_part.done", **where, content_index=0, part=part)]
        out.append(self._event("output_item.done", output_index=where["output_index"], item=item))
        return out

    def close(self) -> list[dict[str, Any]]:
        """End of output: the remaining events, then ``response.completed`` (or
        ``response.incomplete`` / ``response.failed``)."""
        out = self._payloads(self.parser.close())
        self._closed = True
        response = self._response(finished=True)
        kind = {"failed": "failed", "incomplete": "incomplete"}.get(response["status"], "completed")
        return [*out, self._event(kind, response=response)]

    def response(self) -> dict[str, Any]:
        """The response object as it stands (final after :meth:`close`)."""
        return self._response(finished=self._closed)
