"""Events of the streaming parser: small frozen, slotted dataclasses (h11's shape)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from .model import Diagnostic, Message, Role

__all__ = [
    "ContentDelta",
    "DiagnosticEvent",
    "Event",
    "HeaderComplete",
    "MessageEnd",
    "MessageStart",
    "StopGeneration",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "content_delta",
    "tool_call_delta",
]

_Delta = TypeVar("_Delta", "ContentDelta", "ToolCallDelta")


@dataclass(frozen=True, slots=True)
class MessageStart:
    """A message began (at ``<|start|>``, or at the first byte of a completion)."""

    position: int


@dataclass(frozen=True, slots=True)
class HeaderComplete:
    """The header is complete (``<|message|>`` arrived): the message's metadata is known."""

    role: Role
    name: str | None
    recipient: str | None
    channel: str | None
    content_type: str | None
    #: Whether the content begins with header text that no field reads (a lenient repair:
    #: ``<|channel|>commentary... The user asks`` never reached ``<|message|>``).
    content_in_header: bool = False


@dataclass(frozen=True, slots=True)
class ContentDelta:
    """A piece of a non-tool message's content."""

    text: str
    channel: str | None


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A tool call's header is complete. ``name`` drops the ``functions.`` namespace."""

    name: str
    recipient: str
    call_id: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call's argument body."""

    text: str
    call_id: str


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """A tool call ended in ``<|call|>``; ``arguments`` is its body, verbatim."""

    call_id: str
    arguments: str


def _builder(cls: type[_Delta]) -> Callable[[str, Any], _Delta]:
    """A constructor of ``cls`` (a two-field frozen, slotted dataclass) for the hot path.

    It makes the very object ``cls(a, b)`` makes, equal and hashed the same, setting the
    slots through their descriptors instead of the frozen ``__init__``'s per-field
    ``object.__setattr__``: a delta is built per streamed token, and this halves its cost.
    """
    first, second = (getattr(cls, f.name).__set__ for f in fields(cls))
    new = object.__new__

    def build(a: str, b: Any) -> _Delta:
        event = new(cls)
        first(event, a)
        second(event, b)
        return event

    return build


@dataclass(frozen=True, slots=True)
class MessageEnd:
    """A message is complete."""

    message: Message


@dataclass(frozen=True, slots=True)
class DiagnosticEvent:
    """A diagnostic, as soon as it is known."""

    diagnostic: Diagnostic


@dataclass(frozen=True, slots=True)
class StopGeneration:
    """Generation must stop: ``reason`` is ``call``, ``return`` or ``abort``."""

    reason: str
    position: int


Event = (
    MessageStart
    | HeaderComplete
    | ContentDelta
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | MessageEnd
    | DiagnosticEvent
    | StopGeneration
)

#: ``ContentDelta(text, channel)`` and ``ToolCallDelta(text, call_id)``, built fast.
content_delta = _builder(ContentDelta)
tool_call_delta = _builder(ToolCallDelta)
