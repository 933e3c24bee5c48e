"""Lenient recoveries: how the engine repairs real-model deviations, one warning code each.

Theory of operation
-------------------
The engine asks the LALR table whether it accepts a piece before feeding it. When it does
not, and the engine is lenient, the recoveries here run in order (token recoveries for a
rejected control token, text recoveries for header text the contextual lexer cannot read);
the first that applies repairs the input, by dropping pieces or feeding synthetic
zero-width terminals at the rejected piece, and reports its own warning code (HG15x,
docs/diagnostics.md). A recovery that declines returns a falsy value; when all decline, the
engine reports an error and skips to the next ``<|start|>``.

Recoveries never know the syntax themselves: they ask the parser which terminals it would
accept and feed terminals of ``harmony.lark``, so the grammar stays the only definition.

Pending header text gets one more chance before it is lexed, and a complete header one more
look before its content opens: :mod:`.readings` (HG160-HG169).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

from .draft import Draft
from .grammar import HeaderLexer
from .lalr import LalrDriver
from .model import Message, RecipientPosition, Role, Terminator
from .tokens import TERMINATORS, ControlToken

__all__ = [
    "TEXT_RECOVERIES",
    "TOKEN_RECOVERIES",
    "Repairable",
    "close_duplicate_channel",
    "misplaced_recipient",
    "report_call_like",
]

_START = ControlToken.START.terminal
_MESSAGE = ControlToken.MESSAGE.terminal
_CHANNEL = ControlToken.CHANNEL.terminal
_TERMINATOR_TERMINALS = frozenset(token.terminal for token in TERMINATORS)
_CONSTRAIN = ControlToken.CONSTRAIN.terminal
_CONSTRAIN_SPELLING = ControlToken.CONSTRAIN.value
_CHANNEL_WORD = re.compile(r"[^\s<>|]*")
#: A word in any script (``\w`` is Unicode): what a channel name with non-ASCII letters is.
_WORD = re.compile(r"[\w\-]+")
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


def _recover_echoed_start(
    engine: Repairable, terminal: str, value: str, start: int, end: int
) -> bool:
    """HG171: a completion that begins with ``<|start|>``: the prompt's last tokens echoed."""
    if terminal != _START or not engine.at_completion_start:
        return False
    engine.diagnose(
        "HG171",
        "the completion began with <|start|> (the prompt's '<|start|>assistant' was echoed):"
        " read as a continuation",
        start,
        end,
    )
    engine.restart("continuation")
    engine.feed(terminal, value, start, end)
    return True


def _recover_missing_message(
    engine: Repairable, terminal: str, value: str, start: int, end: int
) -> bool:
    """HG150: a terminator (or the next ``<|start|>``) arrived while the header was open."""
    if (
        terminal in _TERMINATOR_TERMINALS or terminal == _START
    ) and _MESSAGE in engine.parser.choices():
        engine.diagnose("HG150", f"{value} arrived before <|message|>", start, start)
        engine.feed(_MESSAGE, "", start, start)
        engine.feed(terminal, value, start, end)
        return True
    return False


def _recover_missing_terminator(
    engine: Repairable, terminal: str, value: str, start: int, end: int
) -> bool:
    """HG159: ``<|start|>`` arrived inside a message body."""
    draft = engine.draft
    if terminal != _START or draft is None or draft.content is None:
        return False
    if ControlToken.END.terminal not in engine.parser.choices():
        return False
    engine.diagnose("HG159", "a new message began before this one's terminator", start, start)
    engine.parser.feed(ControlToken.END.terminal)
    engine.finish(None, start)
    engine.feed(terminal, value, start, end)
    return True


def _recover_missing_start(
    engine: Repairable, terminal: str, value: str, start: int, end: int
) -> bool:
    """HG151: a header (``<|channel|>``, ``<|message|>``) began without ``<|start|>``."""
    choices = engine.parser.choices()
    if terminal not in (_CHANNEL, _MESSAGE) or _START not in choices:
        return False
    engine.diagnose(
        "HG151",
        f"{value} began a message without <|start|>; read as <|start|>{engine.role.value}",
        start,
        start,
    )
    engine.feed(_START, "", start, start)
    engine.feed("AUTHOR", engine.role.value, start, start)
    engine.feed(terminal, value, start, end)
    return True


def _recover_duplicate_channel(
    engine: Repairable, terminal: str, value: str, start: int, end: int
) -> bool:
    """HG157: a second ``<|channel|>`` in one header; its name replaces the first's."""
    draft = engine.draft
    if terminal != _CHANNEL or draft is None or draft.channel is None or draft.content is not None:
        return False
    engine.duplicate_channel = (start, end)
    return True


def _recover_stray_text(
    engine: Repairable, text: str, pos: int, start: int, end: int
) -> int | None:
    """HG152: text between messages is dropped."""
    if _START not in engine.parser.choices():
        return None
    engine.diagnose(
        "HG152", f"text outside any message was dropped: {text[pos : pos + 40]!r}", start, end
    )
    report_call_like(engine, text[pos:], start, end)
    return len(text)


def _recover_misplaced_recipient(
    engine: Repairable, text: str, pos: int, start: int, end: int
) -> int | None:
    """HG158/HG172: a `` to=`` where the grammar takes no recipient.

    A second recipient in one header is dropped: the first stands (HG158). One after the
    content type (``commentary <|constrain|>json to=functions.f``) is the header's only
    recipient, written out of order (HG172): it is kept, so the call is read as the call it
    is; dropping it would lose the call and leave ``<|call|>`` ending a message to nobody.
    """
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
            f"a second recipient {recipient!r} after {draft.recipient!r} was dropped",
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


def _recover_stripped_message(
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
    engine.diagnose(
        "HG160",
        f"control tokens were stripped: <|message|> before the arguments of {draft.recipient!r}",
        here,
        here if engine.exact_positions else end,
    )
    engine.feed(_MESSAGE, "", here, here)
    engine.route_text(text[pos:], here, end)
    return len(text)


def _recover_channel_word(
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
    there = start + len(word.group()) if engine.exact_positions else end
    engine.diagnose(
        "HG173", f"channel name {word.group()!r} has non-ASCII letters: kept whole", start, there
    )
    engine.feed("CHANNEL_NAME", word.group(), start, there)
    return word.end()


def _recover_spelled_constrain(
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


def _recover_header_garbage(
    engine: Repairable, text: str, pos: int, start: int, end: int
) -> int | None:
    """HG156: stray characters in a header are dropped up to where lexing can resume."""
    scanner = engine.lexer.scanner(engine.parser.position, engine.parser.choices())
    resume = pos + 1
    while resume < len(text) and (scanner is None or scanner.match(text, resume) is None):
        resume += 1
    engine.diagnose(
        "HG156",
        f"stray characters {text[pos:resume]!r} in the header were dropped",
        start,
        start + (resume - pos) if engine.exact_positions else end,
    )
    return resume


TOKEN_RECOVERIES: tuple[Callable[[Repairable, str, str, int, int], bool], ...] = (
    _recover_echoed_start,
    _recover_missing_terminator,
    _recover_missing_message,
    _recover_missing_start,
    _recover_duplicate_channel,
)
#: Each is called as ``(engine, text, pos, start, end)``: ``start`` is already the input offset
#: of ``text[pos]`` (token ids: of the whole run), ``end`` the end of the text.
TEXT_RECOVERIES: tuple[Callable[[Repairable, str, int, int, int], int | None], ...] = (
    _recover_stray_text,
    _recover_misplaced_recipient,
    _recover_stripped_message,
    _recover_channel_word,
    _recover_spelled_constrain,
    _recover_header_garbage,
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
    name = _CHANNEL_WORD.match(text)
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
