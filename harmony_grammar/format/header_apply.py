"""A header's reading, written into the message being read.

:mod:`.header_reader` chooses how a held header reads (the grammar's own reading, or the
least-cost one of the ``HEADER`` rows); :func:`apply_reading` writes the chosen moves: fields
through the engine's actions (or, for what the grammar has no terminal for, the draft's
fields directly), unread text to :attr:`.model.Message.unread`, debris to the ledger's
discarded ranges, text no field reads to the content before the body, and prose before a
completion's first header to a message of its own.
"""

from __future__ import annotations

from .draft import Draft, supersede
from .engine_view import EngineView
from .header_search import HeaderText, Move, Piece, positions
from .model import RecipientPosition, Role
from .tokens import ControlToken

__all__ = ["apply_reading", "release_early"]

_MESSAGE = ControlToken.MESSAGE.terminal
_CHANNEL = ControlToken.CHANNEL.terminal
#: The channel of content in a header that has none, by the token that ended it: an
#: answer that simply stops is a final one; reasoning must never reach the user.
_CHANNEL_BY_CLOSER = {ControlToken.RETURN.terminal: "final", "$END": "final"}
_EMPTY_WORDS = ("AUTHOR", "CHANNEL_NAME", "CONTENT_TYPE")


def apply_reading(
    engine: EngineView, moves: list[Move], header: HeaderText, pieces: list[Piece], closer: str
) -> None:
    """Apply a reading's moves to the message being read (``closer``: what ended it)."""
    draft = engine.draft
    assert draft is not None
    at, till = positions(header, pieces, engine.exact_positions)
    constrained = False
    content_at: int | None = None
    content_code: str | None = None
    for move in moves:
        if move.code is not None and move.kind not in ("content", "prose"):
            engine.diagnose(move.code, _what(move, header), at(move.start), till(move.end))
        if move.expect is not None:
            constrained = move.expect == "content_type" and move.start in header.controls
        if move.kind == "field":
            for name, value, start, end in move.fields:
                _set_field(engine, draft, name, value, at(start), till(end), start < 0, constrained)
            constrained = False
        elif move.kind == "unread":
            draft.unread.append(header.text[move.start : move.end])
            draft.unread_spans += (at(move.start), till(move.end))
        elif move.kind == "debris":
            engine.book.discard(at(move.start), till(move.end))
        elif move.kind == "content":
            if content_at is None:
                content_at, content_code = move.start, move.code
            _early(engine, draft, header, pieces, move.start, move.end, move.code)
        elif move.kind == "prose":
            _prose(engine, header, pieces, move, closer)
            return
    if engine.parser.at_start and _CHANNEL in engine.parser.choices():
        engine.parser.feed(_CHANNEL)  # a completion's header was read: it is not empty
    _reach_message(engine)
    if closer == _MESSAGE or content_at is None:
        return
    # A header that never reached <|message|>: its content began where no field read.
    here = at(content_at)
    if draft.channel is None and draft.role.value == "assistant" and draft.recipient is None:
        channel = _CHANNEL_BY_CLOSER.get(closer, "analysis")
        draft.channel = channel
        draft.fields.append(("channel", -1, -1))
    if content_code is not None:  # its own code said it (HG160: a call's arguments)
        engine.feed(_MESSAGE, "", here, here)
        return
    reasoning = ""
    if draft.channel == "commentary" and draft.recipient is None and draft.role is Role.ASSISTANT:
        # Prose written into a broken commentary header with no recipient is the model's
        # reasoning (every such output reported from real servers): channel analysis, the
        # written word kept in Message.superseded.
        while any(name == "channel" for name, _, _ in draft.fields):  # each time written
            supersede(draft, "channel", draft.channel)
        draft.channel = "analysis"
        draft.fields.append(("channel", -1, -1))
        reasoning = " (prose in a broken 'commentary' header with no recipient: reasoning)"
    engine.diagnose(
        "HG161",
        f"the header holds text and no <|message|>: {header.text[:content_at]!r} read as"
        f" channel {draft.channel!r}{reasoning}, the rest as its content",
        at(0),
        here if engine.exact_positions else till(len(header.text)),
    )
    engine.feed(_MESSAGE, "", here, here)


def _set_field(
    engine: EngineView,
    draft: Draft,
    name: str,
    value: str,
    start: int,
    end: int,
    default: bool,
    constrained: bool,
) -> None:
    if name == "author":
        if "AUTHOR" in engine.parser.choices():
            engine.act("AUTHOR", value, start, end)
        else:  # a completion's role, written: the default's field, now spelled
            draft.fields = [f for f in draft.fields if f != ("author", -1, -1)]
            draft.fields.append(("author", start, end))
        return
    if name == "name":
        engine.act("AUTHOR_NAME", value, start, end)
        return
    if name == "superseded":
        if value == "channel" and default:  # the channel read so far is written over
            supersede(draft, "channel", draft.channel or "")
            draft.channel = None
        else:  # a stray word of the header (``to=assistant`` after a tool's name)
            draft.superseded.append(value)
            draft.fields.append((name, start, end))
        return
    if default:
        start = end = -1
    if name == "recipient":
        if draft.recipient is None:
            draft.recipient = value
            draft.recipient_position = (
                RecipientPosition.ROLE if draft.channel is None else RecipientPosition.CHANNEL
            )
    elif name == "channel":
        draft.channel = value
    elif name == "content_type":
        draft.constrained = constrained
        prefix = ControlToken.CONSTRAIN.value if constrained else ""
        draft.content_type = prefix + value
    draft.fields.append((name, start, end))


def _early(
    engine: EngineView,
    draft: Draft,
    header: HeaderText,
    pieces: list[Piece],
    first: int,
    last: int,
    code: str | None,
) -> None:
    """Header text from ``first`` to ``last`` that no field reads: content, before the
    body (control tokens inside it are debris)."""
    at, till = positions(header, pieces, engine.exact_positions)
    pos = first
    while pos < last:
        control = header.controls.get(pos)
        if control is not None:
            engine.diagnose(
                "HG175", f"a stray {control[0].value} was discarded", at(pos), till(control[1])
            )
            engine.book.discard(at(pos), till(control[1]))
            pos = control[1]
            continue
        stop = min(last, header.control_after(pos))
        draft.early.append((header.text[pos:stop], at(pos), till(stop)))
        pos = stop
    if code is not None:
        shown = header.text[first:last]
        engine.diagnose(
            code, f"header text {shown[:60]!r} read as the message's content", at(first), till(last)
        )


def _prose(
    engine: EngineView, header: HeaderText, pieces: list[Piece], move: Move, closer: str
) -> None:
    """Text before a completion's first header: a message of its own."""
    from .readings import own_message

    at, till = positions(header, pieces, engine.exact_positions)
    own_message(
        engine, header.text[move.start : move.end], at(move.start), till(move.end), _CHANNEL
    )
    _reinject(engine, header, pieces, move.end, closer)


def _reinject(
    engine: EngineView, header: HeaderText, pieces: list[Piece], offset: int, closer: str
) -> None:
    """Feed the header's pieces from ``offset`` on again (a new message begins there)."""
    for (token, text, start, end), (begin, _, _) in zip(pieces, header.pieces, strict=True):
        if begin + len(text) <= offset:
            continue
        if token is not None:
            engine.control(token, start, end)
            continue
        cut = max(0, offset - begin)
        if cut and engine.exact_positions:
            start += cut
        engine.route_text(text[cut:], start, end)
    engine.flush_pending(closer)


def _reach_message(engine: EngineView) -> None:
    """Feed empty header words (no actions) until the grammar takes ``<|message|>``."""
    for _ in range(4):
        choices = engine.parser.choices()
        if _MESSAGE in choices:
            return
        word = next((w for w in _EMPTY_WORDS if w in choices), None)
        if word is None:
            return
        engine.parser.feed(word)


def release_early(engine: EngineView, draft: Draft) -> None:
    """Route header text read as content once the body opened (first in its content)."""
    early, draft.early = draft.early, []
    for text, start, end in early:
        engine.route_text(text, start, end)


def _what(move: Move, header: HeaderText) -> str:
    return move.what or header.text[move.start : move.end]
