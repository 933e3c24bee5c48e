"""The agent-side events of the in-band dialect: what a host that owns the tool protocol
needs from a stream of model output (harmony-format.md §8, oh-my-pi's scanner events), as
small frozen, slotted dataclasses.

Where the dialect and the streaming parser mean the same thing, the event is the parser's
own (one vocabulary): visible text is a :class:`~harmony_grammar.format.events.ContentDelta`,
a call's header a :class:`~harmony_grammar.format.events.ToolCallStart`, a stop token a
:class:`~harmony_grammar.format.events.StopGeneration` and a diagnostic a
:class:`~harmony_grammar.format.events.DiagnosticEvent`. The events here are the dialect's
own: reasoning as a start, deltas and an end, a call with its arguments read, a message's
raw block, and the abort at a forged tool result. The dialect's former names (``Text``,
``ToolStart``, ``Stopped``, ``Problem``) still work for one release, with a warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..base.deprecation import moved_names
from ..format.events import ContentDelta, DiagnosticEvent, StopGeneration, ToolCallStart
from ..format.model import Diagnostic, Message

__all__ = [
    "Aborted",
    "ContentDelta",
    "DiagnosticEvent",
    "DialectEvent",
    "RawBlock",
    "StopGeneration",
    "ThinkingDelta",
    "ThinkingEnd",
    "ThinkingStart",
    "ToolCallStart",
    "ToolEnd",
]


@dataclass(frozen=True, slots=True)
class ThinkingStart:
    """An ``analysis`` message began."""


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of reasoning."""

    text: str


@dataclass(frozen=True, slots=True)
class ThinkingEnd:
    """An ``analysis`` message ended; ``text`` is all of it."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolEnd:
    """A call is complete. ``arguments`` is its body read as a JSON object, or ``{}`` when it
    cannot be read as one (then ``diagnostic`` says why); ``raw_arguments`` is the body as
    written. ``complete`` is False when the stream ended inside the call, with no terminator:
    a host should not dispatch such a call."""

    call_id: str
    name: str
    arguments: Mapping[str, Any]
    raw_arguments: str
    complete: bool = True
    diagnostic: Diagnostic | None = None


@dataclass(frozen=True, slots=True)
class RawBlock:
    """A message ended: ``raw`` is its block exactly as the model wrote it (text, or token
    ids when ids were fed), kept for audit; ``message`` is how it was read."""

    raw: str | tuple[int, ...]
    message: Message


@dataclass(frozen=True, slots=True)
class Aborted:
    """The model began writing a tool's result itself (``<|start|>functions.…``): the turn is
    over, keep the output before ``cut``. Nothing is read after this event."""

    cut: int
    diagnostic: Diagnostic


DialectEvent = (
    ContentDelta
    | ThinkingStart
    | ThinkingDelta
    | ThinkingEnd
    | ToolCallStart
    | ToolEnd
    | RawBlock
    | StopGeneration
    | Aborted
    | DiagnosticEvent
)

#: The dialect's own names for the parser's events, kept for one release.
FORMER_NAMES = {
    "Text": ("harmony_grammar.format.events.ContentDelta", ContentDelta),
    "ToolStart": ("harmony_grammar.format.events.ToolCallStart", ToolCallStart),
    "Stopped": ("harmony_grammar.format.events.StopGeneration", StopGeneration),
    "Problem": ("harmony_grammar.format.events.DiagnosticEvent", DiagnosticEvent),
}
__getattr__ = moved_names(__name__, FORMER_NAMES)
