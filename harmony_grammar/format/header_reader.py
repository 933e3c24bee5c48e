"""The engine's header side: header text held until its header ends, then read whole.

The engine (:mod:`.engine`) feeds the grammar; this mixin holds what it does with text
outside a message body. In strict mode header text is lexed by the grammar's contextual
lexer as it stands. In lenient mode a header's pieces (its text and its own control tokens)
wait until the header ends, and are then read whole: by the grammar alone when it can (the
reading of cost 0), else by the least-cost reading of :mod:`.headers`, whose rows are the
repair table's ``HEADER`` hook. What a reading chose is written by :mod:`.header_apply`.
"""

from __future__ import annotations

from .engine_view import EngineView
from .header_apply import apply_reading
from .header_search import (
    ROLES,
    HeaderState,
    Piece,
    header_text_of,
    joined,
    positions,
    read_header,
)
from .header_words import AUTHOR, GLUED_CHANNEL, GLUED_ROLE, RECIPIENT
from .lalr import LalrDriver
from .memo import Memo
from .repair_table import Where
from .tokens import BARE_CONTENT_TYPES, ControlToken

__all__ = [
    "HEADER_TOKENS",
    "lex_header_text",
    "lex_pending",
    "lexes_as_header",
    "read_pending",
]

_MESSAGE = ControlToken.MESSAGE.terminal
_CHANNEL = ControlToken.CHANNEL.terminal
_CONSTRAIN = ControlToken.CONSTRAIN.terminal
_END = ControlToken.END.terminal
#: Control tokens that belong to a header: in lenient mode they wait with its text.
HEADER_TOKENS = frozenset({ControlToken.CHANNEL, ControlToken.CONSTRAIN})
_TERMINAL_OF = {token: token.terminal for token in ControlToken}
#: The terminals whose grammar reading a lenient reading may judge otherwise (_holds).
_JUDGED = frozenset(
    {"AUTHOR", "CHANNEL_NAME", "CONTENT_TYPE", "ROLE_RECIPIENT", "CHANNEL_RECIPIENT"}
)


def lex_pending(engine: EngineView, pieces: list[Piece], closer: str) -> None:
    """Strict mode: pending text lexed by the grammar alone, as it stands."""
    text = pieces[0][1] if len(pieces) == 1 else "".join(p[1] for p in pieces)
    lex_header_text(engine, text, pieces[0][2], pieces[-1][3])


def read_pending(engine: EngineView, pieces: list[Piece], closer: str) -> None:
    """Read held pieces now that the token that ends them (``closer``) is known."""
    start, end = pieces[0][2], pieces[-1][3]
    if not engine.header_open:
        text = joined(pieces)
        if not text.strip():
            return  # whitespace between messages: syntax (the grammar's optional _SEP)
        for repair in engine.repairs.pending_text[Where.BETWEEN]:
            if repair(engine, text, start, end, closer):
                return
        lex_header_text(engine, text, start, end)
        return
    if engine.at_completion_start and all(p[0] is None for p in pieces):
        text = joined(pieces)
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
    header = header_text_of(pieces, closer == _MESSAGE)
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
    at, till = positions(header, pieces, engine.exact_positions)
    for offset in header.spelled:
        spelling = header.text[offset : header.controls[offset][1]]
        engine.diagnose(
            "HG174",
            f"ordinary token ids spelling {spelling} in the header were read as the control token",
            at(offset),
            till(header.controls[offset][1]),
        )
    reading = read_header(header, state, engine.repairs.header)
    apply_reading(engine, reading.moves, header, pieces, closer)


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


def _holds(name: str, value: str, constrained: bool, closed: bool) -> bool:
    """Whether a terminal the grammar read stands as the grammar reads it: a Harmony word
    glued to text is that word (the least-cost reading decides), and in a header that never
    reached ``<|message|>`` a bare content type is only a word of
    :data:`.tokens.BARE_CONTENT_TYPES`."""
    if name == "CONTENT_TYPE" and not constrained and not closed:
        return value.lower() in BARE_CONTENT_TYPES
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
