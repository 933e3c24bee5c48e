"""The search for a header's least-cost reading: the data it reads and the search itself.

Theory of operation
-------------------
A buffered header (:class:`HeaderText`) is read from a :class:`HeaderState` by the rows of
the repair table's ``HEADER`` hook (:mod:`.headers`): at a position each row offers at most
one :class:`Move`, at a cost. :func:`read_header` is a uniform-cost (Dijkstra) search over
(position, state): every move a row offers is a branch with its own copy of the state, the
complete reading of least total cost wins, and ties go to the reading whose rows come first
in the table, move by move (CPCT+'s least-cost repair sequences, in Diekmann and Tratt's
grmtools, are the prior art; here the "repairs" are the table's rows). A branch reaching a
position in a state another branch reached as cheaply is pruned: what follows can only be
read as that one reads it, so the work is the positions times the few states a header can
be in (headers are capped by the engine's ``max_header_length``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from heapq import heappop, heappush
from itertools import count
from typing import Any

from .tokens import ControlToken

__all__ = [
    "ROLES",
    "HeaderRow",
    "HeaderState",
    "HeaderText",
    "Move",
    "Piece",
    "Reading",
    "advance",
    "header_text_of",
    "joined",
    "positions",
    "read_header",
]


#: The roles: ``:NAME`` names one of them (``user:alice``); after a tool's name a ``:`` is
#: no separator (the grammar's AUTHOR_NAME would overwrite the tool's name).
ROLES = frozenset({"system", "developer", "user", "assistant"})
#: A held piece of a header: its control token (None for text), its text, its input range.
Piece = tuple[Any, str, int, int]
#: Ordinary ids spelling ``<|constrain|>`` in a header are read as the token (HG174): the
#: spelling means nothing else there, and the ids then read as the same text does.
_SPELLED_HEADER_TOKEN = re.compile(re.escape(ControlToken.CONSTRAIN.value))


@dataclass
class HeaderText:
    """A buffered header: its text with control tokens spelled, and where each piece was.

    ``controls`` maps the offset of each control token to the token and its end offset.
    ``closed`` says that ``<|message|>`` ended the header.
    """

    text: str
    controls: dict[int, tuple[ControlToken, int]]
    closed: bool
    #: ``(offset, input start, input end)`` per piece, in order (positions of token ids).
    pieces: list[tuple[int, int, int]] = field(default_factory=list)
    #: Offsets of control tokens spelled by ordinary token ids (HG174).
    spelled: list[int] = field(default_factory=list)
    #: Declared recipients whose names hold a space (``functions.Web Search``), longest
    #: first: a recipient may be one of them.
    spaced_names: tuple[str, ...] = ()

    def control_after(self, pos: int, token: ControlToken | None = None) -> int:
        """The offset of the first control token at or after ``pos`` (``token`` only, if
        given); ``len(text)`` when none."""
        found = [o for o, (t, _) in self.controls.items() if o >= pos and token in (None, t)]
        return min(found, default=len(self.text))


@dataclass
class HeaderState:
    """What the header holds so far, as the reading goes on."""

    author_open: bool = False
    author: bool = False
    #: Where the author ended: ``:NAME`` must follow it right there (the grammar's
    #: ``AUTHOR (":" AUTHOR_NAME)?``), never after another field.
    author_end: int = -1
    name: bool = False
    recipient: str | None = None
    channel: str | None = None
    #: Whether the channel is a default the input does not spell (HG166's ``commentary``):
    #: a ``<|channel|>`` may still write it.
    channel_default: bool = False
    content_type: str | None = None
    #: ``channel`` after ``<|channel|>``, ``content_type`` after ``<|constrain|>``.
    expect: str | None = None
    #: Whether a field was read in this reading (a completion's prose comes before any).
    read_any: bool = False
    #: Whether this header is a completion's first, before anything was read.
    completion_start: bool = False
    #: The completion's role (its author, a default): written before the first header
    #: (``assistant<|channel|>final``), the word is that field.
    completion_role: str = ""


@dataclass(frozen=True, slots=True)
class Move:
    """One step of a reading: what ``[start, end)`` of the header is, and what it costs.

    ``kind`` is ``field``, ``syntax``, ``unread``, ``debris``, ``content`` (text no field
    reads; ``stop`` says that everything after it is content too), ``prose`` (a message of
    its own) or ``split`` (this header ends; the next message begins at ``start``).
    ``fields`` holds ``(field, value, start, end)``, start -1 for a default.
    """

    kind: str
    start: int
    end: int
    cost: int = 0
    code: str | None = None
    what: str = ""
    fields: tuple[tuple[str, str, int, int], ...] = ()
    expect: str | None = None
    stop: bool = False


@dataclass
class Reading:
    """The chosen reading: its moves in order, their total cost, and the final state."""

    moves: list[Move]
    cost: int
    state: HeaderState


#: A row of the ``HEADER`` hook: the move it offers at a position, or None.
HeaderRow = Callable[[HeaderText, int, HeaderState], "Move | None"]


def read_header(header: HeaderText, state: HeaderState, rows: Sequence[HeaderRow]) -> Reading:
    """The least-cost reading of ``header`` from ``state``: a uniform-cost search.

    ``rows`` are the table's rows in order; at each position each row offers at most one
    move, at the cost the cost table gives it (:mod:`.costs`). Every move a row offers is a
    branch, with its own copy of the state; the reading of least total cost wins, ties going
    to the reading whose rows come first in the table, move by move (a fixed order). A
    branch that reaches a position in a state another reached as cheaply is pruned (it
    can only read the rest as that one does), so the work is bounded by the positions
    times the few states a header can be in. Every position is read: the last rows always
    apply.
    """
    text = header.text
    order = count()
    # (cost, rows in order, tie, position, state, moves)
    frontier: list[tuple[int, tuple[int, ...], int, int, HeaderState, tuple[Move, ...]]] = [
        (0, (), next(order), 0, replace(state), ())
    ]
    settled: set[tuple[int, tuple[object, ...]]] = set()
    budget = _SEARCH_BUDGET + _SEARCH_BUDGET_PER_CHAR * len(text)
    while frontier:
        total, path, _, pos, here, moves = heappop(frontier)
        if pos >= len(text) or (moves and _ends(moves[-1])):
            return Reading(list(moves), total, here)
        key = (pos, tuple(vars(here).values()))
        if key in settled:
            continue
        settled.add(key)
        budget -= 1
        if budget < 0:  # pragma: no cover - a bound, never reached by a capped header
            return _greedy(header, here, rows, list(moves), total, pos)
        for index, move in enumerate(_offers(header, pos, here, rows)):
            if move is None:
                continue
            after = replace(here)
            advance(after, move)
            heappush(
                frontier,
                (
                    total + move.cost,
                    (*path, index),
                    next(order),
                    move.end,
                    after,
                    (*moves, move),
                ),
            )
    raise AssertionError(f"no header row read {text!r}")  # pragma: no cover


#: How many search steps a header may take: a bound, far above what any reading needs.
_SEARCH_BUDGET = 256
_SEARCH_BUDGET_PER_CHAR = 64


def _offers(
    header: HeaderText, pos: int, state: HeaderState, rows: Sequence[HeaderRow]
) -> list[Move | None]:
    """Each row's move at ``pos`` (None where it offers none), at the cost it carries (the
    cost table's); a move that reads nothing and ends nothing is none."""
    offers: list[Move | None] = []
    for row in rows:
        move = row(header, pos, state)
        if move is not None and move.end <= pos and not _ends(move):
            move = None
        offers.append(move)
    return offers


def _ends(move: Move) -> bool:
    """Whether the reading stops after ``move`` (the rest is content, or another message)."""
    return move.kind in ("split", "prose") or move.stop


def _greedy(
    header: HeaderText,
    state: HeaderState,
    rows: Sequence[HeaderRow],
    moves: list[Move],
    total: int,
    pos: int,
) -> Reading:
    """The rest of a reading, the cheapest move at each position (the search's bound)."""
    while pos < len(header.text):
        offers = [m for m in _offers(header, pos, state, rows) if m is not None]
        best = min(offers, key=lambda m: m.cost)  # the first of the cheapest
        moves.append(best)
        total += best.cost
        advance(state, best)
        if _ends(best):
            break
        pos = best.end
    return Reading(moves, total, state)


def advance(state: HeaderState, move: Move) -> None:
    """Apply ``move`` to ``state``: the fields it read, what the header expects next."""
    if move.expect is not None:
        state.expect = move.expect
        state.author_open = False  # a control token the header took: the author is past
    for name, value, start, end in move.fields:
        state.read_any = True
        if name == "author":
            state.author, state.author_open = True, False
            state.author_end = end if value in ROLES else -1
            continue
        state.author_open = False
        if name == "name":
            state.name = True
        elif name == "recipient":
            state.recipient = value
        elif name == "channel":
            state.channel, state.expect = value, None
            state.channel_default = start < 0
        elif name == "superseded" and value == "channel":  # written over: read again
            state.channel, state.channel_default = None, False
        elif name == "content_type":
            state.content_type, state.expect = value, None
    if move.kind == "content":
        state.author_open = False


# ------------------------------------------------------------------ a header's text
def joined(pieces: list[Piece]) -> str:
    """The pieces' text, joined."""
    return pieces[0][1] if len(pieces) == 1 else "".join(p[1] for p in pieces)


def header_text_of(pieces: list[Piece], closed: bool) -> HeaderText:
    """A buffered header's pieces as one :class:`HeaderText` (``closed``: ``<|message|>``
    ended it)."""
    controls: dict[int, tuple[ControlToken, int]] = {}
    offsets: list[tuple[int, int, int]] = []
    spelled: list[int] = []
    offset = 0
    for token, text, start, end in pieces:
        offsets.append((offset, start, end))
        if token is not None:
            controls[offset] = (token, offset + len(text))
        elif "<|" in text:  # ordinary ids spelling <|constrain|> (HG110): read as it
            for match in _SPELLED_HEADER_TOKEN.finditer(text):
                token = ControlToken.from_spelling(match.group())
                controls[offset + match.start()] = (token, offset + match.end())
                spelled.append(offset + match.start())
        offset += len(text)
    return HeaderText(joined(pieces), controls, closed, offsets, spelled)


def positions(header: HeaderText, pieces: list[Piece], exact: bool) -> tuple[Any, Any]:
    """Input positions of header offsets: exact for text, whole pieces for token ids."""
    base = header.pieces[0][1] if header.pieces else 0
    if exact:
        return (lambda offset: base + offset), (lambda offset: base + offset)
    spans = header.pieces

    def at(offset: int) -> int:
        found = base
        for begin, start, _ in spans:
            if begin > offset:
                break
            found = start
        return found

    def till(offset: int) -> int:
        found = base
        for begin, _, end in spans:
            if begin >= offset and offset > 0:
                break
            found = end
        return found

    return at, till
