"""The engine as the modules it drives see it (protocols, no code).

The repairs (:mod:`.recoveries`, :mod:`.readings`), the actions (:mod:`.actions`) and the
header reader (:mod:`.header_reader`) work on the engine's state without importing
:mod:`.engine` (which imports them): :class:`Repairable` is what every repair may use,
:class:`EngineView` what the actions and the header reader may use on top of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .diagnostics import LineIndex
from .draft import Draft, PendingText
from .events import Event
from .grammar import HeaderLexer
from .lalr import LalrDriver
from .ledger_book import LedgerBook
from .model import Message, Role, Terminator
from .options import ArgumentCheck, CallArguments
from .repair_table import RepairTable
from .tokens import ControlToken

__all__ = ["EngineView", "Repairable"]


class Repairable(Protocol):
    """The engine as a recovery sees it."""

    #: The LALR driver: which terminals are acceptable now, and feeding them.
    parser: LalrDriver
    #: The grammar's contextual lexer for header text.
    lexer: HeaderLexer
    #: The message being parsed (None between messages).
    draft: Draft | None
    #: The author of a message whose ``<|start|>{author}`` is missing.
    role: Role
    #: The messages parsed so far.
    messages: list[Message]
    #: Whether ordinary text may be read as stripped control tokens.
    reads_stripped: bool

    @property
    def completion(self) -> bool:
        """True when parsing a completion (model output), not a stored conversation."""
        ...

    @property
    def at_completion_start(self) -> bool:
        """True while nothing of a completion's first header has been read."""
        ...

    @property
    def stopped(self) -> bool:
        """True once ``<|call|>`` or ``<|return|>`` (or an abort) ended the turn."""
        ...

    @property
    def tool_names(self) -> frozenset[str]:
        """The names of the known functions."""
        ...

    def lexes_as_header(self, text: str) -> bool:
        """Whether the whole of ``text`` lexes as header text here."""
        ...

    def restart(self, start: str) -> None:
        """Drop the message being parsed and parse on from the grammar's ``start`` symbol."""
        ...

    @property
    def resync_start(self) -> str:
        """The grammar's start symbol a message may begin from again."""
        ...

    #: Stream events, when recording them (None: batch parsing).
    events: list[Any] | None

    def route_text(self, text: str, start: int, end: int) -> None:
        """Route text: message content, or pending header text."""
        ...

    def lexes_as_header_after_start(self, text: str) -> bool:
        """Whether ``<|start|>`` then ``text`` would lex as header text here (untouched)."""
        ...

    def hold(self, token: ControlToken | None, text: str, start: int, end: int) -> None:
        """Keep a piece of header text for its header (read whole when it ends)."""
        ...

    #: The conservation ledger being written (``book.discard``: input held by no message).
    book: LedgerBook

    #: The longest header text before HG104.
    max_header_length: int

    def take_pending(self) -> PendingText:
        """Hand over the pending header text, leaving none."""
        ...

    def complete_header(self, draft: Draft, at: int) -> None:
        """Run the repairs of a complete header (``HEADER_COMPLETE``) on ``draft``."""
        ...

    @property
    def exact_positions(self) -> bool:
        """True for text input (character offsets), False for token ids (whole runs)."""
        ...

    def diagnose(
        self, code: str, message: str, start: int, end: int, expected: tuple[str, ...] = ()
    ) -> None:
        """Report a diagnostic."""
        ...

    def feed(self, terminal: str, value: str, start: int, end: int) -> None:
        """Feed a terminal (real or synthetic) and run its action."""
        ...

    def finish(self, terminator: Terminator | None, end: int) -> None:
        """End the message being parsed."""
        ...


class EngineView(Repairable, Protocol):
    """The engine's state and operations beyond a repair's."""

    #: The repair table (strict mode: the empty one).
    repairs: RepairTable
    #: Where events go (None: nobody listens).
    events: list[Event] | None
    #: Makes the id of the next tool call.
    new_call_id: Callable[[], str]
    #: The tools a call's arguments are checked against (None: not checked).
    tools: Mapping[str, Any] | None
    #: The declared namespaces' tools by recipient (``NAMESPACE.fn``), checked as well.
    namespaced: Mapping[str, Any]
    #: How call arguments are checked (None: only that the function is declared, HG181).
    argument_check: ArgumentCheck | None
    #: The check of the call being read (None when none is open).
    call_check: CallArguments | None
    #: True after an error, until the next ``<|start|>`` (strict mode).
    skipping: bool
    #: Line starts of text input, for line and column (None for token ids).
    lines: LineIndex | None
    #: The author a prompt's trailing ``<|start|>{author}`` hands the turn to.
    next_turn: str | None

    def text(self, text: str, start: int, end: int) -> None:
        """Text at ``[start, end)`` (any part of a message body, header or gap)."""
        ...

    @property
    def header_open(self) -> bool:
        """Whether a header is being read."""
        ...

    def act(self, terminal: str, value: str, start: int, end: int) -> None:
        """Run the action of a terminal the parser already took."""
        ...

    def control(self, token: ControlToken, start: int, end: int) -> None:
        """A control token at ``[start, end)`` (fed anew)."""
        ...

    def flush_pending(self, closer: str) -> None:
        """Read the pending header text, ended by ``closer``."""
        ...

    #: ``call``, ``return`` or ``abort`` once generation must stop (None until then).
    stop_reason: str | None

    def stop(self, reason: str, position: int) -> None:
        """Generation must stop (``call``, ``return`` or ``abort``)."""
        ...

    def declarations_changed(self) -> None:
        """A developer message ended: the declared tool names are read again when asked."""
        ...

    def error(
        self, code: str, message: str, start: int, end: int, expected: tuple[str, ...] = ()
    ) -> None:
        """An unrecoverable error: report it and skip to the next ``<|start|>``."""
        ...

    def expected_terminals(self) -> tuple[str, ...]:
        """What the grammar would accept here, in readable form."""
        ...
