"""The agent-side events of the in-band dialect: what a host that owns the tool protocol
needs from a stream of model output (harmony-format.md §8, oh-my-pi's scanner events), as
small frozen, slotted dataclasses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..format.model import Diagnostic, Message

__all__ = [
    "Aborted",
    "DialectEvent",
    "Problem",
    "RawBlock",
    "Stopped",
    "Text",
    "ThinkingDelta",
    "ThinkingEnd",
    "ThinkingStart",
    "ToolEnd",
    "ToolStart",
]


@dataclass(frozen=True, slots=True)
class Text:
    """Visible text: a piece of a ``commentary`` (preamble) or ``final`` message."""

    text: str
    channel: str | None


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
class ToolStart:
    """A call's header is complete: dispatch may be prepared. ``call_id`` is synthesised
    (Harmony has none); ``name`` drops the ``functions.`` prefix; ``recipient`` is whole."""

    call_id: str
    name: str
    recipient: str


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
class Stopped:
    """The model emitted a stop token: ``reason`` is ``call`` or ``return``."""

    reason: str
    position: int


@dataclass(frozen=True, slots=True)
class Aborted:
    """The model began writing a tool's result itself (``<|start|>functions.…``): the turn is
    over, keep the output before ``cut``. Nothing is read after this event."""

    cut: int
    diagnostic: Diagnostic


@dataclass(frozen=True, slots=True)
class Problem:
    """A diagnostic of the (lenient) parser: a repair it made, or input it could not read."""

    diagnostic: Diagnostic


DialectEvent = (
    Text
    | ThinkingStart
    | ThinkingDelta
    | ThinkingEnd
    | ToolStart
    | ToolEnd
    | RawBlock
    | Stopped
    | Aborted
    | Problem
)
