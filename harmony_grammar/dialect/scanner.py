"""The agent-side event view of model output, over the streaming parser (``StreamParser``).

Theory of operation
-------------------
The streaming parser does all the reading: lenient by default (real gpt-oss output), chunk
edges safe (a partial control token or a split UTF-8 sequence is held back), the recipient
in either header section, a forged tool result reported as HG170 with an ``abort`` stop.
This module only translates its events into the dialect's (:mod:`.events`), keeping per
message what kind it is:

* an assistant message with a recipient (``functions.*`` or a built-in) is a call: the
  parser's :class:`ToolCallStart` at its header, :class:`ToolEnd` at its end, arguments read
  as one JSON object or ``{}`` with an HG180 diagnostic;
* an ``analysis`` message is reasoning: :class:`ThinkingStart`, deltas, :class:`ThinkingEnd`;
* any other assistant message is visible text, the parser's :class:`ContentDelta` s; other
  authors' messages are skipped;
* stop tokens and diagnostics pass through as the parser's :class:`StopGeneration` and
  :class:`DiagnosticEvent` (HG170 excepted);
* every message ends with a :class:`RawBlock` (its input, verbatim, for audit);
* HG170 ends the stream with :class:`Aborted`: later input is ignored.

Because the parser's events do not depend on how the input was cut, neither do these, up to
how text and reasoning are split into deltas (tests join adjacent deltas and compare).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..base.deprecation import renamed_keyword
from ..declarations.toolset import ToolsArgument
from ..format.codes import CATALOGUE
from ..format.diagnostics import make_diagnostic
from ..format.events import (
    ContentDelta,
    DiagnosticEvent,
    Event,
    HeaderComplete,
    MessageEnd,
    StopGeneration,
    ToolCallStart,
)
from ..format.model import Diagnostic, Message, Role
from ..format.stream import StreamParser
from ..tools.call_check import arguments_problem
from ..tools.json_limits import loads_bounded
from .events import (
    Aborted,
    DialectEvent,
    RawBlock,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingStart,
    ToolEnd,
)

__all__ = ["InbandScanner", "read_arguments"]


def read_arguments(
    body: str, recipient: str, start: int, end: int
) -> tuple[dict[str, Any], Diagnostic | None]:
    """A call's body as a JSON object, or ``{}`` and a diagnostic saying why not: the
    parser's judge of a body (``arguments_problem``), so HG180 when it is no JSON object and
    HG182-HG184 when it is beyond the JSON limits. An empty body is a call without
    arguments: ``{}``, no diagnostic."""
    if not body.strip():
        return {}, None
    found = arguments_problem(body, None)
    if found is None:
        value: dict[str, Any] = loads_bounded(body)
        return value, None
    code, why = found
    message = f"{why} (the call to {recipient!r}): read as {{}}"
    return {}, make_diagnostic(code, message, start, end)


class InbandScanner:
    """Model output in, the dialect's events out (sans-IO, like the parser beneath it).

    ``feed(text)`` or ``feed_tokens(ids)`` (not both), then ``close()``; each returns the
    events that became known. ``lenient=True`` (the default) repairs what real models write
    (``strict``, its former spelling, negated, still works for one release with a warning);
    ``tools`` checks call arguments as they stream (their diagnostics arrive as
    :class:`DiagnosticEvent`); ``call_id`` makes call ids (default ``call_1``, ``call_2``, …).
    """

    def __init__(
        self,
        *,
        lenient: bool = True,
        tools: ToolsArgument = None,
        call_id: Callable[[], str] | None = None,
        role: str | Role = "assistant",
        strict: bool | None = None,
    ) -> None:
        if strict is not None:
            renamed_keyword(
                "InbandScanner", f"strict={strict!r}", f"lenient={not strict!r}", stacklevel=2
            )
            lenient = not strict
        self._parser = StreamParser(lenient=lenient, tools=tools, call_id=call_id, role=role)
        self._kind: str | None = None  # call, thinking, text or skip: the open message
        self._call: ToolCallStart | None = None
        self._thinking: list[str] = []
        self._buffer: list[Any] = []  # input since the open message's start (a raw block)
        self._offset = 0  # the input position of _buffer[0]
        self._aborted = False
        self._forged: Diagnostic | None = None

    @property
    def aborted(self) -> bool:
        """True once the model began forging a tool result."""
        return self._aborted

    def feed(self, text: str) -> list[DialectEvent]:
        """Read a chunk of text."""
        if self._aborted:
            return []
        self._buffer.append(text)
        return self._translate(self._parser.feed(text))

    def feed_tokens(self, ids: Sequence[int]) -> list[DialectEvent]:
        """Read more o200k_harmony token ids."""
        if self._aborted:
            return []
        self._buffer.append(tuple(ids))
        return self._translate(self._parser.feed_tokens(ids))

    def close(self) -> list[DialectEvent]:
        """End of input: what is open ends (a call with ``complete=False``)."""
        if self._aborted:
            return []
        return self._translate(self._parser.close())

    # ------------------------------------------------------------------ translation
    def _translate(self, events: list[Event]) -> list[DialectEvent]:
        out: list[DialectEvent] = []
        for event in events:
            if self._aborted:
                break
            self._one(event, out)
        return out

    def _one(self, event: Event, out: list[DialectEvent]) -> None:
        if isinstance(event, HeaderComplete):
            self._open(event, out)
        elif isinstance(event, ToolCallStart):
            self._call = event
            out.append(event)
        elif isinstance(event, ContentDelta):
            if self._kind == "thinking":
                self._thinking.append(event.text)
                out.append(ThinkingDelta(event.text))
            elif self._kind == "text":
                out.append(event)
        elif isinstance(event, MessageEnd):
            self._end(event.message, out)
        elif isinstance(event, StopGeneration):
            if event.reason == "abort":
                assert self._forged is not None  # the parser reports HG170 before it stops
                self._aborted = True
                self._buffer = []
                out.append(Aborted(event.position, self._forged))
            else:
                out.append(event)
        elif isinstance(event, DiagnosticEvent):
            if CATALOGUE[event.diagnostic.code].forged_tool_result:
                self._forged = event.diagnostic
            else:
                out.append(event)

    def _open(self, header: HeaderComplete, out: list[DialectEvent]) -> None:
        self._call = None
        if header.role is not Role.ASSISTANT:
            self._kind = "skip"
        elif header.recipient is not None:
            self._kind = "call"  # ToolCallStart follows
        elif header.channel == "analysis":
            self._kind = "thinking"
            self._thinking = []
            out.append(ThinkingStart())
        else:
            self._kind = "text"

    def _end(self, message: Message, out: list[DialectEvent]) -> None:
        kind, self._kind = self._kind, None
        if kind == "thinking":
            out.append(ThinkingEnd("".join(self._thinking)))
        elif kind == "call" and self._call is not None:
            start, end = (message.span.start, message.span.end) if message.span else (0, 0)
            arguments, diagnostic = read_arguments(
                message.content, self._call.recipient, start, end
            )
            out.append(
                ToolEnd(
                    self._call.call_id,
                    self._call.name,
                    arguments,
                    message.content,
                    message.terminator is not None,
                    diagnostic,
                )
            )
        out.append(RawBlock(self._raw(message), message))

    def _raw(self, message: Message) -> str | tuple[int, ...]:
        """The message's input, and the buffer trimmed to what follows it."""
        tokens = bool(self._buffer) and isinstance(self._buffer[0], tuple)
        joined: Any = (
            tuple(i for piece in self._buffer for i in piece) if tokens else "".join(self._buffer)
        )
        span = message.span
        if span is None:  # pragma: no cover - the parser sets a span on every message
            return joined[:0]  # type: ignore[no-any-return]
        raw = joined[span.start - self._offset : span.end - self._offset]
        rest = joined[span.end - self._offset :]
        self._buffer = [rest] if rest else []
        self._offset = span.end
        return raw  # type: ignore[no-any-return]
