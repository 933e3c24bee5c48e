"""The shared driver of both bridges: the streaming parser, the turn's kinds and its end.

:class:`BridgeStream` sits on :class:`~harmony_grammar.format.stream.StreamParser` and keeps
its sans-IO shape: ``feed(text)`` / ``feed_tokens(ids)`` return the payloads that became
known, ``close()`` ends the stream with the last ones. It classifies each message with
:func:`~.turn.item_kind`, stops reading at a message the model should not write, and decides
each message's end with :func:`~.turn.message_cut`; the Chat Completions and Responses
streams only say what payloads each event becomes. A whole response is this stream fed the
whole completion and closed (:func:`~.chat.to_chat_completion`, :func:`~.responses.to_responses`),
so the two can never disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..format.events import (
    ContentDelta,
    Event,
    HeaderComplete,
    MessageEnd,
    ToolCallDelta,
)
from ..format.lexer import token_sequence
from ..format.model import Diagnostic, Message
from ..format.options import ParseKeywords, ParseOptions
from ..format.stream import StreamParser
from .turn import FUNCTION_CALL, finish_reason, item_kind, message_cut

__all__ = ["BRIDGE_DEFAULTS", "BridgeStream", "bridge_options", "feed_whole"]

#: The bridges' parse options when none are given: a completion, read leniently.
BRIDGE_DEFAULTS = ParseOptions(start="completion", lenient=True)


def bridge_options(options: ParseOptions | None, keywords: ParseKeywords) -> ParseOptions:
    """The parse options of a bridge entry point: ``options`` (default
    :data:`BRIDGE_DEFAULTS`) with the keywords applied. A bridge reads a completion, so any
    ``start`` but ``completion`` is a ``ValueError``."""
    chosen = ParseOptions.of(BRIDGE_DEFAULTS if options is None else options, keywords)
    if chosen.start != "completion":
        raise ValueError(
            f"a bridge reads a completion: start must be 'completion', not {chosen.start!r}"
        )
    return chosen


class BridgeStream:
    """The driver both bridge streams share (see the module docstring).

    Subclasses turn events into payloads by overriding the ``_on_*`` hooks. State they may
    read: :attr:`kind` (the current message's kind), :attr:`calls` (calls made so far),
    :attr:`last_cut` (whether the turn's last message was cut; None before any).
    """

    def __init__(self, options: ParseOptions, namespaces: Iterable[str] = ()) -> None:
        # Token ids are authoritative unless the caller opts in (docs/parser.md): ordinary
        # ids that spell a stripped call stay content, so a tool result cannot make a call.
        self.parser = StreamParser(options)
        #: The request's namespaces besides ``functions``: calls into them are calls.
        self.namespaces = frozenset(namespaces)
        self.kind: str | None = None  # the current message's kind
        self.ended = False  # the model began a message it should not write: ignore the rest
        self.calls = 0
        self.last_cut: bool | None = None
        self._closing = False
        self._truncated = False
        self._closed = False
        self._finish: str | None = None

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

    @property
    def closed(self) -> bool:
        """True once the stream was closed."""
        return self._closed

    @property
    def finish(self) -> str | None:
        """The turn's end after :meth:`close` (``tool_calls``, ``length`` or ``stop``)."""
        return self._finish

    def parse_diagnostics(self) -> tuple[Diagnostic, ...]:
        """What the parse found or repaired so far."""
        return self.parser.result().diagnostics

    def _end(self, truncated: bool) -> list[dict[str, Any]]:
        """The remaining payloads at the end of output, and the turn's end (:attr:`finish`).

        ``truncated``: the output stopped at the token limit, not at a stop token (the
        server's word), so a message it ends inside was cut, a call included.
        """
        if self._closed:
            return []
        self._closing, self._truncated = True, truncated
        out = self._payloads(self.parser.close())
        self._closed = True
        self._finish = finish_reason(self.calls, self.last_cut, truncated=truncated)
        return out

    def _payloads(self, events: list[Event]) -> list[dict[str, Any]]:
        out = self._on_open()
        for event in events:
            if self.ended:
                break
            if isinstance(event, HeaderComplete):
                self.kind = item_kind(
                    event.role,
                    event.recipient,
                    event.channel,
                    self.namespaces,
                    content_in_header=event.content_in_header,
                )
                if self.kind is None:
                    self.ended = True
                    break
                out += self._on_header(event)
            elif isinstance(event, (ContentDelta, ToolCallDelta)) and event.text:
                out += self._on_delta(event.text)
            elif isinstance(event, MessageEnd) and self.kind is not None:
                cut = message_cut(event.message, truncated=self._closing and self._truncated)
                self.last_cut = cut
                if self.kind == FUNCTION_CALL and not cut:
                    self.calls += 1
                out += self._on_message_end(event.message, cut)
        return out

    def _on_open(self) -> list[dict[str, Any]]:
        return []

    def _on_header(self, event: HeaderComplete) -> list[dict[str, Any]]:
        return []

    def _on_delta(self, text: str) -> list[dict[str, Any]]:
        return []

    def _on_message_end(self, message: Message, cut: bool) -> list[dict[str, Any]]:
        return []


def feed_whole(
    stream: BridgeStream, source: str | Sequence[int], caller: str
) -> list[dict[str, Any]]:
    """Feed a whole completion (text or ids) to ``stream``; returns the payloads so far.

    A ``source`` that is neither raises ``TypeError`` naming ``caller``, as ``parse`` does.
    """
    if isinstance(source, str):
        return stream.feed(source)
    if isinstance(source, (bytes, bytearray)):
        raise TypeError(f"{caller} takes str or a sequence of token ids; decode bytes first")
    return stream.feed_tokens(token_sequence(source, caller))  # type: ignore[arg-type]
