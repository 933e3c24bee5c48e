"""The data model shared by the parsers, the validator and the renderer.

Field names follow ``openai_harmony`` where the concept is the same (role, name, recipient,
channel, content_type), so code that moves between the two reads the same.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..base.enums import StrEnum

__all__ = [
    "Accounting",
    "Diagnostic",
    "Ledger",
    "Message",
    "ParseResult",
    "RecipientPosition",
    "Role",
    "Severity",
    "Span",
    "Terminator",
    "author_text",
    "is_tool_call",
]


_E = TypeVar("_E", bound=enum.Enum)


class Role(StrEnum):
    """The author's role. Compares equal to its string value (``Role.USER == "user"``)."""

    SYSTEM = "system"
    DEVELOPER = "developer"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"

    @classmethod
    def of_author(cls, author: str) -> Role:
        """The role of a header's author word: a known role, or ``tool`` for a tool's name."""
        # "tool" is never written as an author; a literal "tool" author is a tool named so.
        # (The members by value: a look-up, not the enum's call and its ValueError.)
        return cls._value2member_map_.get(author, cls.TOOL)  # type: ignore[return-value]


class Terminator(StrEnum):
    """How a message ended: ``<|end|>``, ``<|call|>`` or ``<|return|>``."""

    END = "end"
    CALL = "call"
    RETURN = "return"


class RecipientPosition(StrEnum):
    """Where ``to=`` stood: after the author (role section) or after the channel name."""

    ROLE = "role"
    CHANNEL = "channel"


class Severity(StrEnum):
    """How bad a diagnostic is; only ``error`` makes a result not ``ok``."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


def author_text(role: Role, name: str | None) -> str:
    """The author as a header spells it: ``user``, ``user:alice``, ``functions.f``."""
    if role is Role.TOOL:
        return name or "tool"
    return f"{role.value}:{name}" if name else role.value


def is_tool_call(role: Role, recipient: str | None) -> bool:
    """Whether a message from ``role`` to ``recipient`` is a tool call."""
    return role is Role.ASSISTANT and recipient is not None


def _enum_field(kind: type[_E], name: str, value: object) -> _E:
    """``value`` as a member of ``kind`` (its string accepted), or a TypeError/ValueError
    that lists the accepted values."""
    accepted = ", ".join(repr(member.value) for member in kind)
    if not isinstance(value, str):
        raise TypeError(
            f"Message {name} must be a {kind.__name__} or one of {accepted},"
            f" not {type(value).__name__}"
        )
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"Message {name} {value!r} is not one of {accepted}") from None


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open range ``[start, end)``: characters of a text, or indexes of token ids."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Message:
    """One Harmony message.

    ``name`` is the tool author for tool messages (``functions.get_weather``) or the name of a
    ``role:name`` author, else None. ``content_type`` is spelled as openai-harmony reports it
    (``<|constrain|>json``, ``json``, ``code``). ``terminator`` is None when a completion ended
    without a stop token. ``span`` is where the message stood in the parsed input; it does not
    take part in equality, so messages parsed from text and from token ids compare equal.
    ``unread`` is lenient reading's header text read as no field, verbatim: stray
    punctuation (no letter; a number only with closing punctuation right after a broken
    header's channel word, ``commentary 7) We…``); text with a letter is always a field or
    content.
    ``superseded`` holds the header words (lenient only) that this message's own fields
    replaced, verbatim and space-separated: a header the model wrote over before any content
    (``<|channel|>commentary<|channel|>analysis``: ``commentary``), a stray
    ``to=assistant`` (``assistant``).
    """

    role: Role
    content: str
    name: str | None = None
    recipient: str | None = None
    channel: str | None = None
    content_type: str | None = None
    terminator: Terminator | None = None
    recipient_position: RecipientPosition | None = None
    span: Span | None = field(default=None, compare=False)
    #: Header text read as no field, verbatim (lenient only): stray punctuation with no
    #: letter and no digit (text with a letter or a digit is always a field or content).
    unread: str = ""
    #: Header words this message's fields replaced (lenient only), space-separated: a
    #: header written over before any content (HG157/HG158), a stray ``to=assistant`` (HG167).
    superseded: str = ""

    def __post_init__(self) -> None:
        # Checked when made, not when rendered: Message(role="user", content="hi") works, and
        # a wrong field fails here with the fix, not later as "'str' has no attribute 'value'".
        # The common case (the parsers' own enums and strings) costs three type checks.
        if type(self.role) is not Role:
            object.__setattr__(self, "role", _enum_field(Role, "role", self.role))
        if type(self.content) is not str:
            raise TypeError(
                f"Message content must be a str, not {type(self.content).__name__}"
                " (a call's arguments are their JSON text: json.dumps(arguments))"
            )
        for name in ("name", "recipient", "channel", "content_type"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(
                    f"Message {name} must be a str or None, not {type(value).__name__}"
                )
        if self.terminator is not None and type(self.terminator) is not Terminator:
            object.__setattr__(
                self, "terminator", _enum_field(Terminator, "terminator", self.terminator)
            )
        if self.recipient_position is not None and (
            type(self.recipient_position) is not RecipientPosition
        ):
            object.__setattr__(
                self,
                "recipient_position",
                _enum_field(RecipientPosition, "recipient_position", self.recipient_position),
            )

    @property
    def author(self) -> str:
        """The author as written in the header: ``user``, ``user:alice``, ``functions.f``."""
        return author_text(self.role, self.name)

    @property
    def is_tool_call(self) -> bool:
        """An assistant message with a recipient: a call to a tool."""
        return is_tool_call(self.role, self.recipient)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict (enums as strings, span as ``[start, end]``)."""
        return {
            "role": self.role.value,
            "name": self.name,
            "recipient": self.recipient,
            "channel": self.channel,
            "content_type": self.content_type,
            "content": self.content,
            "terminator": self.terminator.value if self.terminator else None,
            "recipient_position": (
                self.recipient_position.value if self.recipient_position else None
            ),
            "span": [self.span.start, self.span.end] if self.span else None,
            "unread": self.unread,
            "superseded": self.superseded,
        }


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A problem found in the input, with a stable code and a position.

    ``start``/``end`` are character offsets for text and token indexes for token ids;
    ``line``/``column`` (1-based) are set for text only. ``expected`` lists what the grammar
    would have accepted at ``start``, in readable form. ``facts`` are named counts the code's
    catalogue record declares (HG107: ``dropped``, ``errors``), read with :meth:`fact`, so a
    reader never parses the message.
    """

    code: str
    severity: Severity
    message: str
    start: int
    end: int
    line: int | None = None
    column: int | None = None
    expected: tuple[str, ...] = ()
    facts: tuple[tuple[str, int], ...] = ()

    def fact(self, name: str) -> int | None:
        """The count ``name`` this diagnostic carries, or None when it carries none."""
        return next((value for key, value in self.facts if key == name), None)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "start": self.start,
            "end": self.end,
            "line": self.line,
            "column": self.column,
            "expected": list(self.expected),
            # Only a code that has facts says so: every other diagnostic keeps its shape.
            **({"facts": dict(self.facts)} if self.facts else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Diagnostic:
        """The diagnostic :meth:`to_dict` gave (the one inverse: every reader of stored
        diagnostics uses it). ``line``, ``column``, ``expected`` and ``facts`` may be absent."""
        line, column = data.get("line"), data.get("column")
        facts = data.get("facts") or {}
        return cls(
            str(data["code"]),
            Severity(data["severity"]),
            str(data["message"]),
            int(data["start"]),
            int(data["end"]),
            None if line is None else int(line),
            None if column is None else int(column),
            tuple(str(e) for e in data.get("expected") or ()),
            tuple((str(k), int(v)) for k, v in facts.items()),
        )

    def format(self, filename: str = "<input>") -> str:
        """A compiler-style line: ``file:line:col: CODE message`` (``file:@index`` for ids)."""
        where = f"{self.line}:{self.column}" if self.line is not None else f"@{self.start}"
        return f"{filename}:{where}: {self.code} {self.severity.value}: {self.message}"


@dataclass(frozen=True, slots=True)
class Accounting:
    """Where every part of the input went: the conservation ledger of one parse.

    Positions are in the input's units (characters of text, indexes of token ids). Each
    message's :attr:`Message.span` covers its header, content and terminator;
    ``content[i]`` lists the input ranges that ``messages[i].content`` was read from, in
    order (for text input their characters, joined, are the content exactly); ``discarded``
    lists what no message holds. In lenient mode only control-token debris (a stray,
    duplicated or unknown control token, or one cut short at the end of text) is ever
    discarded; in strict mode an error's skip to the next ``<|start|>`` is discarded too,
    and the error names it. ``fields`` and ``unread`` place each header field and each
    message's unread text: with the content ranges, the discarded ranges and the syntax
    (whitespace, control tokens, ``to=``, ``:``) they tile text input exactly.
    :func:`harmony_grammar.format.accounting.conservation_problems` checks all of this.
    """

    length: int
    content: tuple[tuple[Span, ...], ...] = ()
    discarded: tuple[Span, ...] = ()
    #: Where each message's body began (-1: it never opened); after it, a message's span
    #: holds only its content and its terminator.
    bodies: tuple[int, ...] = ()
    #: A prompt's trailing ``<|start|>{author}`` (``next_turn``): a header with no message.
    next_turn: Span | None = None
    #: Where each message's header fields were read: ``(field, span)`` pairs in input order,
    #: ``field`` one of ``author``, ``name``, ``recipient``, ``channel``, ``content_type``;
    #: a span of None marks a default the input does not spell (a completion's role, a
    #: channel a repair assigned). For text input each span's characters are the field's
    #: value as written (a repair's reading of it, such as lower case, is in a diagnostic).
    fields: tuple[tuple[tuple[str, Span | None], ...], ...] = ()
    #: Where each message's :attr:`Message.unread` text came from, in order.
    unread: tuple[tuple[Span, ...], ...] = ()


def _spans(flat: Sequence[int]) -> tuple[Span, ...]:
    return tuple(Span(flat[i], flat[i + 1]) for i in range(0, len(flat), 2))


class Ledger:
    """The engine's raw ledger, turned into an :class:`Accounting` only when asked for
    (:attr:`ParseResult.accounting`): parsing builds no span objects it may never need."""

    __slots__ = ("_bodies", "_content", "_discarded", "_fields", "_length", "_next_turn", "_unread")

    def __init__(
        self,
        length: int,
        content: Sequence[Sequence[int]],
        discarded: Sequence[int],
        bodies: Sequence[int],
        next_turn: Span | None,
        fields: Sequence[Sequence[tuple[str, int, int]]] = (),
        unread: Sequence[Sequence[int]] = (),
    ) -> None:
        self._length, self._content, self._discarded = length, content, discarded
        self._bodies, self._next_turn = bodies, next_turn
        self._fields, self._unread = fields, unread

    def accounting(self) -> Accounting:
        """The ledger as :class:`Accounting`."""
        return Accounting(
            self._length,
            tuple(_spans(flat) for flat in self._content),
            _spans(self._discarded),
            tuple(self._bodies),
            self._next_turn,
            tuple(
                tuple((name, Span(a, b) if a >= 0 else None) for name, a, b in fields)
                for fields in self._fields
            ),
            tuple(_spans(flat) for flat in self._unread),
        )


@dataclass(frozen=True, slots=True)
class ParseResult:
    """What a parse found: the messages and every diagnostic, in input order."""

    messages: tuple[Message, ...]
    diagnostics: tuple[Diagnostic, ...]
    #: For ``start="prompt"``: the author of the turn the prompt hands over to.
    next_turn: str | None = None
    #: The engine's raw ledger (not part of equality: the same messages read from text and
    #: from token ids have their ledgers in different units); see :attr:`accounting`.
    ledger: Ledger | None = field(default=None, compare=False, repr=False)

    @property
    def accounting(self) -> Accounting | None:
        """Where every part of the input went (:class:`Accounting`), None when not parsed."""
        return self.ledger.accounting() if self.ledger is not None else None

    @property
    def ok(self) -> bool:
        """True when no diagnostic has error severity."""
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)

    def to_dict(self) -> dict[str, object]:
        """``{"ok", "messages", "diagnostics"}``, JSON-ready."""
        document: dict[str, object] = {
            "ok": self.ok,
            "messages": [m.to_dict() for m in self.messages],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }
        if self.next_turn is not None:
            document["next_turn"] = self.next_turn
        return document
