"""The message being parsed, and header text waiting for the next control token.

Both are mutable working state of the engine (:mod:`.engine`); the lenient recoveries
(:mod:`.recoveries`) read and repair them. The finished message is an immutable
:class:`.model.Message`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .model import RecipientPosition, Role, is_tool_call

__all__ = ["Draft", "PendingText", "supersede"]


@dataclass
class Draft:
    """The message being parsed: its header so far, then its content."""

    start: int
    role: Role = Role.ASSISTANT
    name: str | None = None
    recipient: str | None = None
    recipient_position: RecipientPosition | None = None
    channel: str | None = None
    content_type: str | None = None
    constrained: bool = False
    content: list[str] | None = None  # None until <|message|>: the header is still open
    content_fed: bool = False
    call_id: str | None = None
    #: Where the content came from: flat ``[start, end, start, end, ...]`` input ranges,
    #: adjacent ranges merged (the conservation ledger, :class:`.model.Accounting`).
    content_spans: list[int] = field(default_factory=list)
    #: Where the body began (the end of ``<|message|>``, or where a repair opened it).
    body_start: int = -1
    #: The body's delta events by text, shared: deltas are frozen, so the same text in one
    #: message is one object (a token's text recurs; building a delta is the hot path's cost).
    deltas: dict[str, object] = field(default_factory=dict)
    #: Where the header's fields were read: ``(field, start, end)``, ``-1`` for a default
    #: (the conservation ledger's field slices, :attr:`.model.Accounting.fields`).
    fields: list[tuple[str, int, int]] = field(default_factory=list)
    #: Header text read as no field (no letter) and its input ranges (flat).
    unread: list[str] = field(default_factory=list)
    unread_spans: list[int] = field(default_factory=list)
    #: Header words the message's own fields replaced (:attr:`.model.Message.superseded`).
    superseded: list[str] = field(default_factory=list)
    #: Header text read as content before the body opened: ``(text, start, end)``.
    early: list[tuple[str, int, int]] = field(default_factory=list)
    #: The header's event, held until the body holds something (lenient, the assistant's
    #: own header with no recipient): a header begun again right after ``<|message|>``
    #: (HG185) is then one message in a stream as in a batch, never announced twice.
    held_header: object | None = None

    @property
    def is_tool_call(self) -> bool:
        return is_tool_call(self.role, self.recipient)


@dataclass
class PendingText:
    """Header (or between-message) text waiting for the token that ends it; in lenient
    mode a header's own control tokens (``<|channel|>``, ``<|constrain|>``) wait with it,
    so that the header is read whole (:mod:`.headers`)."""

    #: ``(control token or None, text, start, end)`` in input order.
    pieces: list[tuple[object, str, int, int]] = field(default_factory=list)
    start: int = -1
    end: int = -1
    length: int = 0


def supersede(draft: Draft, name: str, value: str) -> None:
    """The last ``name`` field of ``draft``'s ledger becomes a superseded word: ``value``,
    the word the model wrote there, is kept in :attr:`.model.Message.superseded` (a default
    the input never spelled is simply dropped)."""
    for index in range(len(draft.fields) - 1, -1, -1):
        field_name, start, end = draft.fields[index]
        if field_name == name:
            if start >= 0:
                draft.fields[index] = ("superseded", start, end)
                draft.superseded.append(value)
            else:
                del draft.fields[index]
            return
