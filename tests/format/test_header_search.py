"""The least-cost reading of a header is a global minimum.

``read_header`` (``format/header_search.py``) searches readings by uniform cost over (position, header state), pruning a
branch that reaches a position in a state another reached as cheaply. The properties, on
small generated headers and every starting state:

* its total equals the minimum a brute force finds over *every* reading the repair table's
  ``HEADER`` rows allow (each row's move at each position a branch; no pruning);
* its reading tiles the header: each move starts where the last ended, from 0, and the
  reading ends at the header's end or with a move that ends it (content to the end, a
  message of its own, the next message);
* among readings of that least total, it is the first in the table's row order.
"""

from __future__ import annotations

import os
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harmony_grammar.format.header_search import HeaderState, HeaderText, Move, advance, read_header
from harmony_grammar.format.repairs import LENIENT
from harmony_grammar.format.tokens import ControlToken

PROPERTY = settings(
    max_examples=int(os.environ.get("HG_FUZZ_EXAMPLES", "60")) * 2,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
ROWS = LENIENT.header
PIECES = st.lists(
    st.sampled_from(
        [
            ControlToken.CHANNEL,
            ControlToken.CONSTRAIN,
            "assistant",
            "user:bob",
            "functions.f",
            "analysis",
            "finalOK",
            "commentary",
            " to=functions.f",
            " json",
            "json",
            " ",
            "?",
            ":",
            "42",
            "{}",
            "The",
            "🙂",
            "!",
            "final",
        ]
    ),
    min_size=1,
    max_size=5,
)
STATES = st.builds(
    HeaderState,
    author_open=st.booleans(),
    channel=st.sampled_from([None, None, "analysis"]),
    expect=st.sampled_from([None, None, "channel", "content_type"]),
    read_any=st.booleans(),
    completion_start=st.booleans(),
    completion_role=st.sampled_from(["", "assistant"]),
)


def _header(pieces: list[object], closed: bool) -> HeaderText:
    text, controls = "", {}
    for piece in pieces:
        if isinstance(piece, ControlToken):
            controls[len(text)] = (piece, len(text) + len(piece.value))
            text += piece.value
        else:
            text += str(piece)
    return HeaderText(text, controls, closed)


def _ends(move: Move) -> bool:
    return move.kind in ("split", "prose") or move.stop


def _offers(header: HeaderText, pos: int, state: HeaderState) -> list[tuple[int, Move]]:
    """Every row's move at ``pos`` with its index, at the cost the table gives it."""
    found = []
    for index, row in enumerate(ROWS):
        move = row(header, pos, state)
        if move is None or (move.end <= pos and not _ends(move)):
            continue
        found.append((index, move))
    return found


def _readings(
    header: HeaderText, pos: int, state: HeaderState
) -> list[tuple[int, tuple[int, ...]]]:
    """Every complete reading from ``pos``: ``(total cost, row indices)``, by brute force."""
    if pos >= len(header.text):
        return [(0, ())]
    out = []
    for index, move in _offers(header, pos, state):
        after = replace(state)
        advance(after, move)
        rest = [(0, ())] if _ends(move) else _readings(header, move.end, after)
        out += [(move.cost + cost, (index, *path)) for cost, path in rest]
    return out


def _path(header: HeaderText, state: HeaderState, moves: list[Move]) -> tuple[int, ...]:
    """The row indices of a reading (the first row that offers each move)."""
    path, here = [], replace(state)
    for move in moves:
        index = next(i for i, m in _offers(header, move.start, here) if m == move)
        path.append(index)
        advance(here, move)
    return tuple(path)


@PROPERTY
@given(pieces=PIECES, closed=st.booleans(), state=STATES)
def test_the_reading_is_the_least_cost_one_and_tiles_the_header(
    pieces: list[object], closed: bool, state: HeaderState
) -> None:
    header = _header(pieces, closed)
    reading = read_header(header, replace(state), ROWS)
    # It tiles the header.
    pos = 0
    for move in reading.moves:
        assert move.start == pos, (header.text, reading.moves)
        pos = move.end
    assert pos >= len(header.text) or _ends(reading.moves[-1]), (header.text, reading.moves)
    assert reading.cost == sum(m.cost for m in reading.moves)
    # Its total is the brute force's minimum, and among those it comes first in row order.
    every = _readings(header, 0, replace(state))
    best = min(cost for cost, _ in every)
    assert reading.cost == best, (header.text, reading.moves, best)
    first = min(path for cost, path in every if cost == best)
    assert _path(header, state, reading.moves) == first, (header.text, reading.moves)
