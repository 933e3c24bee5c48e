"""Lenient recoveries of rejected control tokens and unlexable header text (rows of
:mod:`.repairs`), and the reports more than one row shares.

The engine asks the LALR table whether it accepts a piece before feeding it. When it does
not, the rows of the repair table run in order (``REJECTED_TOKEN`` for a control token,
``UNLEXABLE_TEXT`` for header text the contextual lexer cannot read); the first that
applies repairs the input by feeding synthetic zero-width terminals at the rejected piece,
and reports its own warning code (docs/diagnostics.md). The last row of each hook always
applies, so lenient parsing never skips input: a control token nothing accepts is the one
thing discarded (HG175), header debris stays in its header (HG156).

Recoveries never know the syntax themselves: they ask the parser which terminals it would
accept and feed terminals of ``harmony.lark``, so the grammar stays the only definition.
Codes that two rows report (HG150, HG159, HG160, HG171) are emitted by one function here.
"""

from __future__ import annotations

import re
from typing import Protocol

from .draft import Draft
from .grammar import HeaderLexer
from .lalr import LalrDriver
from .model import Message, RecipientPosition, Role, Terminator
from .tokens import CHANNEL_WORD, TERMINATORS, ControlToken

__all__ = [
    "Repairable",
    "close_duplicate_channel",
    "end_open_body",
    "open_empty_body",
    "recover_channel_word",
    "recover_duplicate_channel",
    "recover_echoed_start",
    "recover_header_garbage",
    "recover_misplaced_recipient",
    "recover_missing_message",
    "recover_missing_start",
    "recover_missing_terminator",
    "recover_space_without_type",
    "recover_spelled_constrain",
    "recover_stray_control_token",
    "recover_stripped_message",
    "report_before_header",
    "report_call_like",
    "report_garbage",
    "report_stripped",
    "start_missing",
]

_START = ControlToken.START.terminal
_MESSAGE = ControlToken.MESSAGE.terminal
_CHANNEL = ControlToken.CHANNEL.terminal
_TERMINATOR_TERMINALS = frozenset(token.terminal for token in TERMINATORS)
_CONSTRAIN = ControlToken.CONSTRAIN.terminal
_CONSTRAIN_SPELLING = ControlToken.CONSTRAIN.value
_CONTENT = "CONTENT"
_CHANNEL_WORD = re.compile(r"[^\s<>|]*")
#: A word in any script (``\w`` is Unicode): what a channel name with non-ASCII letters is.
_WORD = re.compile(r"[\w\-]+")
#: A recipient with a name (`` to=`` alone is garbage).
_RECIPIENT_AHEAD = re.compile(r" to=[^\s<>|]")
#: A known channel word with non-ASCII text glued on (``commentary東京``).
_KNOWN_CHANNEL_GLUED = re.compile(CHANNEL_WORD + r"(?=[^\x00-\x7f])")
#: A call's recipient with its arguments right after it: ``to=functions.f json{``.
CALL_LIKE = re.compile(
    r"to=functions\.[A-Za-z0-9_.\-]+[ \t]*(?:<\|constrain\|>)?(?:json|code)?[ \t]*[{\[]"
)


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
    #: The token range of a second ``<|channel|>`` whose name is still to be read.
    duplicate_channel: tuple[int, int] | None
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

    def route_text(self, text: str, start: int, end: int) -> None:
        """Route text: message content, or pending header text."""
        ...

    def lex_header_text(self, text: str, start: int, end: int) -> None:
        """Lex ``text`` as header text from the parser's state (with the repairs)."""
        ...

    def lexes_as_header_after_start(self, text: str) -> bool:
        """Whether ``<|start|>`` then ``text`` would lex as header text here (untouched)."""
        ...

    def header_prefix(self, text: str) -> int:
        """How much of ``text`` reads as header fields here (the parser is untouched)."""
        ...

    def discard(self, start: int, end: int) -> None:
        """Record ``[start, end)`` as held by no message."""
        ...

    def fill_header_words(self, at: int) -> bool:
        """Feed empty header words (role, no channel, no content type) until
        ``<|message|>`` is acceptable; False when it never is."""
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


def report_before_header(engine: Repairable, what: str, start: int, end: int) -> None:
    """HG171 (the one place it is reported): something stood before a completion's header."""
    engine.diagnose("HG171", what, start, end)


def report_stripped(engine: Repairable, what: str, start: int, end: int) -> None:
    """HG160 (the one place it is reported): control tokens a detokenizer stripped."""
    engine.diagnose("HG160", f"control tokens were stripped: {what}", start, end)


def open_empty_body(engine: Repairable, why: str, at: int, *, keep: bool = False) -> bool:
    """HG150 (the one place it is reported): the header ended without ``<|message|>``.

    Feeds an empty ``<|message|>`` where the grammar takes one. Where it does not yet
    (``<|start|>assistant<|channel|>`` at the end of input) and ``keep`` is set, the message
    is kept as far as its header was read, with an empty body; else False.
    """
    draft = engine.draft
    if keep and engine.at_completion_start:
        engine.diagnose("HG150", "the completion is empty: no message", at, at)
        engine.restart("continuation")
        return True
    if _MESSAGE in engine.parser.choices():
        engine.diagnose("HG150", why, at, at)
        engine.feed(_MESSAGE, "", at, at)
        return True
    if not keep or draft is None or draft.content is not None:
        return False
    engine.diagnose("HG150", f"{why}, inside the header: kept as far as it was read", at, at)
    engine.complete_header(draft, at)
    draft.content = []
    engine.finish(None, at)
    return True


def end_open_body(engine: Repairable, why: str, at: int) -> bool:
    """HG159 (the one place it is reported): a body ended with no terminator at ``at``."""
    draft = engine.draft
    if draft is None or draft.content is None:
        return False
    if ControlToken.END.terminal in engine.parser.choices():
        engine.parser.feed(ControlToken.END.terminal)
    engine.diagnose("HG159", why, at, at)
    engine.finish(None, at)
    return True


def recover_echoed_start(
    engine: Repairable, terminal: str, value: str, start: int, end: int
) -> bool:
    """HG171: a completion that begins with ``<|start|>``: the prompt's last tokens echoed."""
    if terminal != _START or not engine.at_completion_start:
        return False
    report_before_header(
        engine,
        "the completion began with <|start|> (the prompt's '<|start|>assistant' was echoed):"
        " read as a continuation",
        start,
        end,
    )
    engine.restart("continuation")
    engine.feed(terminal, value, start, end)
    return True


def recover_missing_message(
    engine: Repairable, terminal: str, value: str, start: int, end: int
) -> bool:
    """HG150: a terminator (or the next ``<|start|>``) arrived while the header was open."""
    if terminal not in _TERMINATOR_TERMINALS and terminal != _START:
        return False
    if not open_empty_body(engine, f"{value} arrived before <|message|>", start):
        return False
    engine.feed(terminal, value, start, end)
    return True


def recover_missing_terminator(
    engine: Repairable, terminal: str, value: str, start: int, end: int
) -> bool:
    """HG159: ``<|start|>`` or ``<|channel|>`` arrived inside a message body.

    The body ends there with no terminator, and the token is fed again: ``<|start|>``
    begins the next message, ``<|channel|>`` one whose ``<|start|>`` was lost as well
    (HG151, the next row), as when a detokenizer drops ``<|end|><|start|>assistant``.
    """
    if terminal != _START and terminal != _CHANNEL:
        return False
    if ControlToken.END.terminal not in engine.parser.choices():
        return False
    why = f"{value} began a new message before this one's terminator"
    if not end_open_body(engine, why, start):
        return False
    engine.feed(terminal, value, start, end)
    return True


def recover_stray_control_token(
    engine: Repairable, terminal: str, value: str, start: int, end: int
) -> bool:
    """HG175: a control token the grammar takes nowhere here is debris, and discarded.

    The last row of its hook: a stray, duplicated or misplaced control token carries no
    text, so discarding it loses nothing a message could hold. One case keeps the parser's
    state instead: a control token with nothing after it that it needs (``<|start|>``,
    ``<|channel|>`` or ``<|constrain|>`` right before ``<|message|>``) is read as the
    parser's role, no channel, no content type, and the token that came is fed again.
    """
    if terminal == _CONTENT:
        return False
    choices = engine.parser.choices()
    needed = next((word for word in _WORD_AFTER if word in choices), None)
    if needed is not None and _accepts_after(engine, needed, terminal):
        engine.diagnose(
            "HG175",
            f"{_WORD_AFTER[needed]} with nothing after it before {value}: read as none",
            start,
            start,
        )
        engine.feed(needed, "", start, start)
        engine.feed(terminal, value, start, end)
        return True
    engine.diagnose("HG175", f"a stray {value} was discarded", start, end)
    engine.discard(start, end)
    return True


#: The word a control token needs after it, and the token (``<|start|><|message|>``,
#: ``<|channel|><|message|>``, ``<|constrain|><|message|>``): fed empty, the actions read
#: it as the parser's role, no channel, no content type.
_WORD_AFTER = {
    "AUTHOR": "<|start|>",
    "CHANNEL_NAME": "<|channel|>",
    "CONTENT_TYPE": "<|constrain|>",
}


def _accepts_after(engine: Repairable, word: str, terminal: str) -> bool:
    driver = engine.parser.copy()
    return driver.feed(word) and driver.feed(terminal)


def start_missing(engine: Repairable, why: str, at: int) -> None:
    """HG151 (the one place it is reported): a message began without ``<|start|>``."""
    engine.diagnose("HG151", why, at, at)
    engine.feed(_START, "", at, at)


def recover_missing_start(
    engine: Repairable, terminal: str, value: str, start: int, end: int
) -> bool:
    """HG151: a header (``<|channel|>``, ``<|message|>``) began without ``<|start|>``."""
    choices = engine.parser.choices()
    if terminal not in (_CHANNEL, _MESSAGE) or _START not in choices:
        return False
    role = engine.role.value
    start_missing(
        engine, f"{value} began a message without <|start|>; read as <|start|>{role}", start
    )
    engine.feed("AUTHOR", role, start, start)
    engine.feed(terminal, value, start, end)
    return True


def recover_duplicate_channel(
    engine: Repairable, terminal: str, value: str, start: int, end: int
) -> bool:
    """HG157: a second ``<|channel|>`` in one header; its name replaces the first's."""
    draft = engine.draft
    if terminal != _CHANNEL or draft is None or draft.channel is None or draft.content is not None:
        return False
    engine.duplicate_channel = (start, end)
    return True


def recover_space_without_type(
    engine: Repairable, text: str, pos: int, start: int, end: int
) -> int | None:
    """HG156: a space that no content type follows (``assistant to=<|channel|>``).

    Lexed, it would commit the header to a content type; header garbage instead. A space
    at the end of the text is left to the token that follows (``<|constrain|>`` may).
    """
    if text[pos] != " " or pos + 1 >= len(text) or "SPACE" not in engine.parser.choices():
        return None
    if _RECIPIENT_AHEAD.match(text, pos) or text.startswith(_CONSTRAIN_SPELLING, pos + 1):
        return None
    if engine.lexer.terminal_regex("CONTENT_TYPE").match(text, pos + 1):
        return None
    report_garbage(engine, " ", start, end)
    return pos + 1


def recover_misplaced_recipient(
    engine: Repairable, text: str, pos: int, start: int, end: int
) -> int | None:
    """HG158/HG172: a `` to=`` where the grammar takes no recipient.

    A second recipient in one header is dropped: the first stands (HG158). One after the
    content type (``commentary <|constrain|>json to=functions.f``) is the header's only
    recipient, written out of order (HG172): it is kept, so the call is read as the call it
    is; dropping it would lose the call and leave ``<|call|>`` ending a message to nobody.
    """
    if not text.startswith(" to=", pos) or not misplaced_recipient(
        text, pos, engine.parser.choices()
    ):
        return None
    draft = engine.draft
    if draft is None or (draft.recipient is None and draft.content_type is None):
        return None
    match = engine.lexer.terminal_regex("CHANNEL_RECIPIENT").match(text, pos)
    if match is None:
        return None
    length = len(match.group())
    recipient = match.group().split("=", 1)[1]
    there = start + length if engine.exact_positions else end
    if draft.recipient is not None:
        engine.diagnose(
            "HG158",
            f"a second recipient {recipient!r} after {draft.recipient!r} was not read (the"
            " first stands)",
            start,
            there,
        )
        return pos + length
    engine.diagnose(
        "HG172",
        f"recipient {recipient!r} after the content type {draft.content_type!r}: read as"
        f" 'to={recipient} {draft.content_type}'",
        start,
        there,
    )
    draft.recipient = recipient
    draft.recipient_position = (
        RecipientPosition.CHANNEL if draft.channel is not None else RecipientPosition.ROLE
    )
    return pos + length


def recover_stripped_message(
    engine: Repairable, text: str, pos: int, start: int, end: int
) -> int | None:
    """HG160: a call's header runs straight into its arguments: ``<|message|>`` was stripped.

    ``…to=functions.f <|constrain|>json{"a":1}``: the arguments become the content rather
    than header garbage, so a call never loses them.
    """
    draft = engine.draft
    if draft is None or not draft.recipient or text[pos] not in "{[":
        return None
    if _MESSAGE not in engine.parser.choices():
        return None
    here = start
    report_stripped(
        engine,
        f"<|message|> before the arguments of {draft.recipient!r}",
        here,
        here if engine.exact_positions else end,
    )
    engine.feed(_MESSAGE, "", here, here)
    engine.route_text(text[pos:], here, end)
    return len(text)


def recover_channel_word(
    engine: Repairable, text: str, pos: int, start: int, end: int
) -> int | None:
    """HG173: a channel name with non-ASCII letters (``réponse``) is kept whole.

    The grammar's ``CHANNEL_NAME`` is ASCII and never matches a prefix of a longer word, so
    the word reaches the recoveries whole; it is fed as the channel, never cut to a fragment.
    Whether the channel is one the conversation declares is the validator's question (HG201).
    """
    if "CHANNEL_NAME" not in engine.parser.choices():
        return None
    word = _WORD.match(text, pos)
    if word is None:
        return None
    known = _KNOWN_CHANNEL_GLUED.match(text, pos)
    if known is not None:  # ``commentary東京``: a channel word with prose glued on
        engine.feed(
            "CHANNEL_NAME",
            known.group(),
            start,
            start + len(known.group()) if engine.exact_positions else end,
        )
        return known.end()
    there = start + len(word.group()) if engine.exact_positions else end
    engine.diagnose(
        "HG173", f"channel name {word.group()!r} has non-ASCII letters: kept whole", start, there
    )
    engine.feed("CHANNEL_NAME", word.group(), start, there)
    return word.end()


def recover_spelled_constrain(
    engine: Repairable, text: str, pos: int, start: int, end: int
) -> int | None:
    """HG174: ordinary token ids spelling ``<|constrain|>`` in a header, read as the token.

    Only token-id input gets here (in text the spelling *is* the token). The ids are a
    rendering bug (special tokens encoded as text, HG110); where a header takes
    ``<|constrain|>``, the spelling means nothing else, so it is read as the same text would be
    and text and token ids give the same message.
    """
    if not text.startswith(_CONSTRAIN_SPELLING, pos) or _CONSTRAIN not in engine.parser.choices():
        return None
    there = start + len(_CONSTRAIN_SPELLING) if engine.exact_positions else end
    engine.diagnose(
        "HG174",
        f"ordinary token ids spelling {_CONSTRAIN_SPELLING} in the header were read as the"
        " control token",
        start,
        there,
    )
    engine.feed(_CONSTRAIN, _CONSTRAIN_SPELLING, start, there)
    return pos + len(_CONSTRAIN_SPELLING)


def recover_header_garbage(
    engine: Repairable, text: str, pos: int, start: int, end: int
) -> int | None:
    """HG156: stray characters in a header, up to where lexing can resume.

    They stay in the header's part of the input (its span), read as no field; prose never
    gets here (the ``PENDING_TEXT`` rows make it content).
    """
    scanner = engine.lexer.scanner(engine.parser.position, engine.parser.choices())
    resume = pos + 1
    while resume < len(text) and (scanner is None or scanner.match(text, resume) is None):
        resume += 1
    report_garbage(engine, text[pos:resume], start, end)
    return resume


def report_garbage(engine: Repairable, shown: str, start: int, end: int) -> None:
    """HG156 (the one place it is reported): header text read as no field."""
    engine.diagnose(
        "HG156",
        f"stray characters {shown!r} in the header were read as no header field",
        start,
        start + len(shown) if engine.exact_positions else end,
    )


def close_duplicate_channel(engine: Repairable, text: str, start: int = 0) -> str:
    """Finish the HG157 repair: the second channel's name replaces the first.

    The second ``<|channel|>`` token was dropped by :func:`_recover_duplicate_channel`; its
    name is the start of the header text that follows it. The channel nearest
    ``<|message|>`` is the one the model wrote last, so it stands; what the first one
    carried (a recipient) is kept and judged on its own.
    """
    if engine.duplicate_channel is None:
        return text
    token_start, token_end = engine.duplicate_channel
    engine.duplicate_channel = None
    # The channel word as HG173 reads one: a known word glued to non-ASCII text is that word
    # (``analysisΣ``), any other word is kept whole.
    name = _KNOWN_CHANNEL_GLUED.match(text) or _CHANNEL_WORD.match(text)
    word = name.group() if name else ""
    shown = f"<|channel|>{word}"
    draft = engine.draft
    current = draft.channel if draft else None
    if draft is not None and word:
        draft.channel = word
    engine.diagnose(
        "HG157",
        f"a second {shown!r} after channel {current!r}: the later channel stands",
        token_start,
        max(token_end, start + len(word)) if engine.exact_positions else token_end,
    )
    return text[len(word) :]


def misplaced_recipient(text: str, pos: int, choices: object) -> bool:
    """A `` to=`` where no recipient may stand, though a separator may (lenient only).

    The contextual lexer would read its space as the separator before a content type and
    only then fail; the misplaced-recipient repair (HG158, HG172) needs the ``to=`` whole.
    """
    return (
        text.startswith(" to=", pos)
        and isinstance(choices, dict)
        and "ROLE_RECIPIENT" not in choices
        and "CHANNEL_RECIPIENT" not in choices
    )


def report_call_like(engine: Repairable, text: str, start: int, end: int) -> None:
    """HG162 (error): a call written in text that no reading could make a call.

    Text kept as content (or dropped) must never hide a call silently: the host would not
    dispatch it and the agent would stall.
    """
    found = CALL_LIKE.search(text)
    if found is None:
        return
    here = start + found.start() if engine.exact_positions else start
    there = start + found.end() if engine.exact_positions else end
    engine.diagnose(
        "HG162",
        f"call-like text {found.group()!r} could not be read as a call; it was not dispatched",
        here,
        there,
    )
