"""The engine's header side: header text held until its header ends, then read whole.

The engine (:mod:`.engine`) feeds the grammar; this mixin holds what it does with text
outside a message body. In strict mode header text is lexed by the grammar's contextual
lexer as it stands. In lenient mode a header's pieces (its text and its own control tokens)
wait until the header ends, and are then read whole: by the grammar alone when it can (the
reading of cost 0), else by the least-cost reading of :mod:`.headers`, whose rows are the
repair table's ``HEADER`` hook. What a reading chose is applied here: fields through the
engine's actions, unread text to :attr:`.model.Message.unread`, debris to the discarded
ranges, text no field reads to the content.
"""

from __future__ import annotations

import re
from typing import Any

from .draft import Draft, supersede
from .engine_view import EngineView
from .header_search import ROLES, HeaderState, HeaderText, Move, read_header
from .headers import AUTHOR, GLUED_CHANNEL, GLUED_ROLE, RECIPIENT
from .lalr import LalrDriver
from .memo import Memo
from .model import RecipientPosition, Role
from .repairs import Where
from .tokens import ControlToken

__all__ = [
    "HEADER_TOKENS",
    "lex_header_text",
    "lex_pending",
    "lexes_as_header",
    "read_pending",
    "release_early",
]

_MESSAGE = ControlToken.MESSAGE.terminal
_CHANNEL = ControlToken.CHANNEL.terminal
_CONSTRAIN = ControlToken.CONSTRAIN.terminal
_END = ControlToken.END.terminal
#: Control tokens that belong to a header: in lenient mode they wait with its text.
HEADER_TOKENS = frozenset({ControlToken.CHANNEL, ControlToken.CONSTRAIN})
_BARE_TYPES = frozenset({"json", "code"})
#: The channel of content in a header that has none, by the token that ended it: an
#: answer that simply stops is a final one; reasoning must never reach the user.
_CHANNEL_BY_CLOSER = {ControlToken.RETURN.terminal: "final", "$END": "final"}
_EMPTY_WORDS = ("AUTHOR", "CHANNEL_NAME", "CONTENT_TYPE")
_TERMINAL_OF = {token: token.terminal for token in ControlToken}
#: The terminals whose grammar reading a lenient reading may judge otherwise (_holds).
_JUDGED = frozenset(
    {"AUTHOR", "CHANNEL_NAME", "CONTENT_TYPE", "ROLE_RECIPIENT", "CHANNEL_RECIPIENT"}
)

Piece = tuple[Any, str, int, int]
#: Ordinary ids spelling ``<|constrain|>`` in a header are read as the token (HG174): the
#: spelling means nothing else there, and the ids then read as the same text does.
_SPELLED_HEADER_TOKEN = re.compile(re.escape(ControlToken.CONSTRAIN.value))


def lex_pending(engine: EngineView, pieces: list[Piece], closer: str) -> None:
    """Strict mode: pending text lexed by the grammar alone, as it stands."""
    text = pieces[0][1] if len(pieces) == 1 else "".join(p[1] for p in pieces)
    lex_header_text(engine, text, pieces[0][2], pieces[-1][3])


def read_pending(engine: EngineView, pieces: list[Piece], closer: str) -> None:
    """Read held pieces now that the token that ends them (``closer``) is known."""
    start, end = pieces[0][2], pieces[-1][3]
    if not engine.header_open:
        text = _joined(pieces)
        if not text.strip():
            return  # whitespace between messages: syntax (the grammar's optional _SEP)
        for repair in engine.repairs.pending_text[Where.BETWEEN]:
            if repair(engine, text, start, end, closer):
                return
        lex_header_text(engine, text, start, end)
        return
    if engine.at_completion_start and all(p[0] is None for p in pieces):
        text = _joined(pieces)
        if closer != _MESSAGE and not text.lstrip().startswith("to="):
            for repair in engine.repairs.pending_text[Where.COMPLETION_START]:
                if repair(engine, text, start, end, closer):
                    return
    read_whole_header(engine, pieces, closer)


# ------------------------------------------------------------------ whole headers


def read_whole_header(engine: EngineView, pieces: list[Piece], closer: str) -> None:
    """Read a whole header: the grammar's reading if it holds, else the least-cost one."""
    if _grammar_reading(engine, pieces, closer):
        return
    draft = engine.draft
    assert draft is not None
    header = _header_text(pieces, closer == _MESSAGE)
    header.spaced_names = _spaced_names(engine)
    choices = engine.parser.choices()
    state = HeaderState(
        author_open="AUTHOR" in choices,
        recipient=draft.recipient,
        channel=draft.channel,
        content_type=draft.content_type,
        expect="channel" if "CHANNEL_NAME" in choices else None,
        read_any=bool(draft.fields) and not engine.at_completion_start,
        completion_start=engine.at_completion_start,
        completion_role=draft.role.value if engine.at_completion_start else "",
    )
    if "CONTENT_TYPE" in choices and "SPACE" not in choices:
        state.expect = "content_type"
    at, till = _positions(header, pieces, engine.exact_positions)
    for offset in header.spelled:
        spelling = header.text[offset : header.controls[offset][1]]
        engine.diagnose(
            "HG174",
            f"ordinary token ids spelling {spelling} in the header were read as the control token",
            at(offset),
            till(header.controls[offset][1]),
        )
    reading = read_header(header, state, engine.repairs.header)
    _apply(engine, reading.moves, header, pieces, closer)


def _spaced_names(engine: EngineView) -> tuple[str, ...]:
    """The declared recipients whose names hold a space, longest first."""
    tools = engine.tools
    if not tools:
        return ()
    names = [f"functions.{name}" for name in tools if " " in name]
    return tuple(sorted(names, key=len, reverse=True))


def _grammar_reading(engine: EngineView, pieces: list[Piece], closer: str) -> bool:
    """Feed the header as the grammar reads it, if it does (whole, with ``closer``).

    The hot path of lenient reading: every well-formed header comes through here once.
    A header that may call a declared name with a space is the search's to read.
    """
    spaced = _spaced_names(engine)
    if spaced and any(name in p[1] for p in pieces for name in spaced):
        return False
    # The reading depends only on the stack, the pieces and the closer: memoised.
    closed = closer == _MESSAGE
    key = (engine.parser.stack, closed, tuple([p[:2] for p in pieces]))
    found = _READINGS.get(key, _UNREAD)
    if found is _UNREAD:
        found = _grammar_terminals(engine, pieces, closed)
        _READINGS.keep(key, found, sum(len(p[1]) for p in pieces))
    if found is None:
        return False
    reading: _Reading = found  # type: ignore[assignment]
    engine.parser.stack, fed = reading
    exact, act = engine.exact_positions, engine.act
    for terminal, value, index, offset in fed:
        _, _, start, end = pieces[index]
        if offset >= 0 and exact:
            act(terminal, value, start + offset, start + offset + len(value))
        else:
            act(terminal, value, start, end)
    return True


#: A header's grammar reading: the stack after it, and each terminal as ``(terminal, value,
#: piece index, offset in the piece's text or -1 for a control token)``.
_Reading = tuple[tuple[int, ...], tuple[tuple[str, str, int, int], ...]]
_READINGS: Memo[object, _Reading | None] = Memo()
_UNREAD = object()


def _grammar_terminals(engine: EngineView, pieces: list[Piece], closed: bool) -> _Reading | None:
    driver = engine.parser.copy()
    fed: list[tuple[str, str, int, int]] = []
    scanner_of = engine.lexer.scanner
    feed = driver.feed
    constrained = False
    for index, (token, text, _, _) in enumerate(pieces):
        if token is not None:
            terminal = _TERMINAL_OF[token]
            if not feed(terminal):
                return None
            fed.append((terminal, text, index, -1))
            constrained = token is ControlToken.CONSTRAIN
            continue
        pos = 0
        while pos < len(text):
            scanner = scanner_of(driver.position, driver.choices())
            match = scanner.match(text, pos) if scanner is not None else None
            if match is None:
                return None
            name = match.lastgroup or ""
            if not feed(name):
                return None
            value = match.group()
            if name in _JUDGED and not _holds(name, value, constrained, closed):
                return None
            if name == "AUTHOR_NAME" and fed[-2][1] not in ROLES:
                return None  # ``:NAME`` names a role only (``functions.f:x`` is no name)
            fed.append((name, value, index, pos))
            pos = match.end()
            if name != "SPACE":
                constrained = False
    if closed and _MESSAGE not in driver.choices():
        return None
    if fed and fed[-1][0] == "COLON":
        return None  # a name's ':' with no name: no field reads it (the rows decide)
    return driver.stack, tuple(fed)


def _apply(
    engine: EngineView, moves: list[Move], header: HeaderText, pieces: list[Piece], closer: str
) -> None:
    """Apply a reading's moves to the message being read."""
    draft = engine.draft
    assert draft is not None
    at, till = _positions(header, pieces, engine.exact_positions)
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
            engine.discard(at(move.start), till(move.end))
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
    if content_code != "HG161":  # its own code said it (HG160: a call's arguments)
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
    at, till = _positions(header, pieces, engine.exact_positions)
    pos = first
    while pos < last:
        control = header.controls.get(pos)
        if control is not None:
            engine.diagnose(
                "HG175", f"a stray {control[0].value} was discarded", at(pos), till(control[1])
            )
            engine.discard(at(pos), till(control[1]))
            pos = control[1]
            continue
        stop = min(last, header.control_after(pos))
        draft.early.append((header.text[pos:stop], at(pos), till(stop)))
        pos = stop
    if code is not None and code != "HG161":
        shown = header.text[first:last]
        engine.diagnose(
            code, f"header text {shown[:60]!r} read as the message's content", at(first), till(last)
        )


def _prose(
    engine: EngineView, header: HeaderText, pieces: list[Piece], move: Move, closer: str
) -> None:
    """Text before a completion's first header: a message of its own."""
    from .readings import own_message

    at, till = _positions(header, pieces, engine.exact_positions)
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


def _joined(pieces: list[Piece]) -> str:
    return pieces[0][1] if len(pieces) == 1 else "".join(p[1] for p in pieces)


def _header_text(pieces: list[Piece], closed: bool) -> HeaderText:
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
    return HeaderText(_joined(pieces), controls, closed, offsets, spelled)


def _positions(header: HeaderText, pieces: list[Piece], exact: bool) -> tuple[Any, Any]:
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


def _holds(name: str, value: str, constrained: bool, closed: bool) -> bool:
    """Whether a terminal the grammar read stands as the grammar reads it: a Harmony word
    glued to text is that word (the least-cost reading decides), and in a header that never
    reached ``<|message|>`` a bare content type is only ``json`` or ``code``."""
    if name == "CONTENT_TYPE" and not constrained and not closed:
        return value.lower() in _BARE_TYPES
    if name.endswith("RECIPIENT"):  # a name; not its arguments, not stray punctuation
        return RECIPIENT.fullmatch(value.lstrip()) is not None
    if name == "CHANNEL_NAME":
        glued = GLUED_CHANNEL.match(value)
        return glued is None or glued.end() == len(value)
    if name == "AUTHOR":
        if AUTHOR.fullmatch(value) is None:
            return False  # JSON, prose or punctuation is no author
        glued = GLUED_ROLE.match(value)
        return glued is None or glued.end() == len(value)
    return True


def _what(move: Move, header: HeaderText) -> str:
    return move.what or header.text[move.start : move.end]


# ------------------------------------------------------------------ the grammar's lexing
def lexes_as_header(engine: EngineView, driver: LalrDriver, text: str) -> bool:
    """Whether the whole of ``text`` lexes as header text from ``driver``'s state (on a
    copy: ``driver`` is untouched)."""
    return engine.lexer.read(driver, text) is not None


def lex_header_text(engine: EngineView, text: str, start: int, end: int) -> None:
    """Lex ``text`` as header text from the parser's state (strict mode; in lenient mode
    text between messages no row read), with the ``UNLEXABLE_TEXT`` rows.

    Character offsets within ``text`` map to input offsets only for text input; for
    token ids the whole run's range is the position.
    """
    exact = engine.exact_positions
    pos = 0
    while pos < len(text) and not engine.skipping:
        parser = engine.parser
        scanner = engine.lexer.scanner(parser.position, parser.choices())
        match = scanner.match(text, pos) if scanner is not None else None
        if match is None:
            at = (start + pos, end) if exact else (start, end)
            pos = _unexpected_text(engine, text, pos, *at)
            continue
        value = match.group()
        here = start + pos if exact else start
        engine.feed(match.lastgroup or "", value, here, here + len(value) if exact else end)
        pos += len(value)


def _unexpected_text(engine: EngineView, text: str, pos: int, start: int, end: int) -> int:
    """Unlexable header text at ``text[pos:]``: a row, else HG101; where lexing resumes."""
    for repair in engine.repairs.unlexable_text:
        resume = repair(engine, text, pos, start, end)
        if resume is not None:
            return int(resume)
    shown = text[pos : pos + 24]
    expected = engine.expected_terminals()
    engine.error("HG101", f"unexpected text {shown!r}", start, end, expected=expected)
    return len(text)
