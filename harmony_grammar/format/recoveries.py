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

Pending header text gets one more chance before it is lexed (:func:`read_dialect`): text
whose control tokens were stripped is read with the dialect grammar
``harmony_stripped.lark`` (:mod:`.stripped`, HG160) and turned into the same terminals;
prose written where a header should end becomes content (HG161); text with no header at
all stays content of a message of its own (HG163, HG164). Nothing is dropped there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

from .draft import Draft
from .grammar import HeaderLexer
from .lalr import LalrDriver
from .model import Message, RecipientPosition, Role, Terminator
from .stripped import read_free_header, read_stripped, stripped_evidence
from .tokens import TERMINATORS, ControlToken

__all__ = [
    "TEXT_RECOVERIES",
    "TOKEN_RECOVERIES",
    "Repairable",
    "close_duplicate_channel",
    "header_at_end",
    "misplaced_recipient",
    "read_dialect",
    "repair_header",
    "tool_in_channel_slot",
]

_START = ControlToken.START.terminal
_MESSAGE = ControlToken.MESSAGE.terminal
_CHANNEL = ControlToken.CHANNEL.terminal
_TERMINATOR_TERMINALS = frozenset(token.terminal for token in TERMINATORS)
_CHANNEL_WORD = re.compile(r"[^\s<>|]*")
_END = ControlToken.END.terminal
_CALL = ControlToken.CALL.terminal
_SPELLING = {token.terminal: token.value for token in ControlToken}
#: Terminals that continue a header: text they close is header text, never a message.
_HEADER_CLOSERS = frozenset({_CHANNEL, _MESSAGE, ControlToken.CONSTRAIN.terminal})
#: The channel a message with no header most likely had, by the token that ended it.
_CHANNEL_BY_CLOSER = {_END: "analysis", ControlToken.RETURN.terminal: "final"}
#: A content type glued onto the recipient by the model: ``to=functions.shelljson``.
_GLUED_JSON = re.compile(r"^(?P<recipient>.*[A-Za-z0-9])json$")
#: A tool's dotted name where the channel name belongs: ``<|channel|>functions.read``.
_DOTTED_NAME = re.compile(
    r"(?!(?:analysis|commentary|final)\.)[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z_][A-Za-z0-9_\-]*)+"
    r"(?![^\s<>|])"
)
_FUNCTIONS = "functions."


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
    return len(text)


def _recover_duplicate_recipient(
    engine: Repairable, text: str, pos: int, start: int, end: int
) -> int | None:
    """HG158: a second ``to=`` in one header is dropped."""
    draft = engine.draft
    if draft is None or draft.recipient is None:
        return None
    match = engine.lexer.terminal_regex("CHANNEL_RECIPIENT").match(text, pos)
    if match is None:
        return None
    length = len(match.group())
    second = match.group().split("=", 1)[1]
    engine.diagnose(
        "HG158",
        f"a second recipient {second!r} after {draft.recipient!r} was dropped",
        start,
        start + length if engine.exact_positions else end,
    )
    return pos + length


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
    _recover_missing_terminator,
    _recover_missing_message,
    _recover_missing_start,
    _recover_duplicate_channel,
)
TEXT_RECOVERIES: tuple[Callable[[Repairable, str, int, int, int], int | None], ...] = (
    _recover_stray_text,
    _recover_duplicate_recipient,
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
    only then fail; the duplicate-recipient repair needs the ``to=`` whole.
    """
    return (
        text.startswith(" to=", pos)
        and isinstance(choices, dict)
        and "ROLE_RECIPIENT" not in choices
        and "CHANNEL_RECIPIENT" not in choices
    )


# --------------------------------------------------------------------- pending header text
def _positions(engine: Repairable, start: int, end: int) -> Callable[[int], int]:
    """Input offset of an offset into pending text (token ids: the whole run's range)."""
    if engine.exact_positions:
        return lambda offset: start + offset
    return lambda offset: start


def read_dialect(engine: Repairable, text: str, start: int, end: int, closer: str) -> bool:
    """Lenient: read pending header text as what it really is, before it is lexed.

    ``closer`` is the terminal that ended the text (``$END`` at the end of input). True when
    the text was consumed: stripped control tokens (HG160), prose where a header should end
    (HG161), or text with no header (HG163, HG164).
    """
    return (
        _read_stripped(engine, text, start, end, closer)
        or _read_free_header(engine, text, start, end, closer)
        or _read_headerless(engine, text, start, end, closer)
    )


def _close_open_message(engine: Repairable, at: int) -> None:
    """End the message whose body is open with the terminator that was stripped."""
    draft = engine.draft
    if draft is None or draft.content is None:
        return
    terminal = _CALL if draft.is_tool_call else _END
    engine.feed(terminal, _SPELLING[terminal], at, at)


def _read_stripped(engine: Repairable, text: str, start: int, end: int, closer: str) -> bool:
    """HG160: headers whose control tokens were stripped, read with the dialect grammar."""
    at_start = engine.at_completion_start
    choices = engine.parser.choices()
    if not (at_start or "AUTHOR" in choices or _START in choices):
        return False
    if not stripped_evidence(text, at_start=at_start, closed=closer != "$END"):
        return False
    headers = read_stripped(text, at_start=at_start)
    if headers is None:
        return False
    at = _positions(engine, start, end)
    for index, header in enumerate(headers):
        here, there = at(header.start), at(header.end)
        _close_open_message(engine, here)
        if _START in engine.parser.choices():
            engine.feed(_START, "", here, here)
        if "AUTHOR" in engine.parser.choices():
            engine.feed("AUTHOR", Role.ASSISTANT.value, here, here)
        engine.feed(_CHANNEL, _SPELLING[_CHANNEL], here, here)
        engine.feed("CHANNEL_NAME", header.channel, here, there)
        shown = f"<|start|>assistant<|channel|>{header.channel}"
        if header.recipient:
            engine.feed("CHANNEL_RECIPIENT", f" to={header.recipient}", here, there)
            shown += f" to={header.recipient}"
        if header.content_type:
            engine.feed("SPACE", " ", here, here)
            engine.feed("CONTENT_TYPE", header.content_type, here, there)
            shown += f" {header.content_type}"
        engine.diagnose(
            "HG160",
            f"control tokens were stripped: {text[header.start : header.end]!r} read as"
            f" {shown + '<|message|>'!r}",
            here,
            there if engine.exact_positions else end,
        )
        engine.feed(_MESSAGE, _SPELLING[_MESSAGE], there, there)
        following = headers[index + 1].start if index + 1 < len(headers) else len(text)
        if following > header.end:
            engine.route_text(text[header.end : following], there, at(following))
    return True


def _read_free_header(engine: Repairable, text: str, start: int, end: int, closer: str) -> bool:
    """HG161: ``<|channel|>commentary... The user asks: …<|end|>``: prose in the header.

    The model wrote its reasoning where the header should have ended and never wrote
    ``<|message|>``. The channel word stands (``commentary`` with no recipient is read as
    ``analysis``: it is reasoning, not a preamble for the user); the prose is the content.
    """
    draft = engine.draft
    if closer in _HEADER_CLOSERS or draft is None or draft.content is not None:
        return False
    if "CHANNEL_NAME" not in engine.parser.choices() or engine.lexes_as_header(text):
        return False
    free = read_free_header(text)
    if free is None:
        return False
    channel = "analysis" if free.channel in ("analysis", "commentary") else free.channel
    at = _positions(engine, start, end)
    prose = at(free.prose_start)
    engine.feed("CHANNEL_NAME", channel, at(0), prose)
    engine.diagnose(
        "HG161",
        f"the header holds prose and no <|message|>: {text[: free.prose_start]!r} read as"
        f" channel {channel!r}, the rest as its content",
        at(0),
        prose if engine.exact_positions else end,
    )
    engine.feed(_MESSAGE, "", prose, prose)
    engine.route_text(text[free.prose_start :], prose, end)
    return True


def _read_headerless(engine: Repairable, text: str, start: int, end: int, closer: str) -> bool:
    """HG163/HG164: text with no header becomes the content of a message of its own.

    At a completion's start (HG163) that is text the server returned without its header
    (or an ordinary answer): one message, its content the whole text; its channel is
    ``analysis`` when ``<|end|>`` ended it, ``final`` for ``<|return|>``, else unknown.
    Between a completion's messages, before it stopped (HG164), it is a message of its
    own; after the stop or in a stored conversation it stays outside (HG152).
    """
    if closer in _HEADER_CLOSERS or not text.strip():
        return False
    at = _positions(engine, start, end)
    if engine.at_completion_start:
        if text.lstrip().startswith("to=") or engine.lexes_as_header(text):
            return False
        code = "HG163"
        what = "a completion with no header: its text was read as the content of one message"
    elif _START in engine.parser.choices() and engine.completion and not engine.stopped:
        engine.feed(_START, "", at(0), at(0))
        engine.feed("AUTHOR", engine.role.value, at(0), at(0))
        code = "HG164"
        what = "text between messages was kept as the content of a message of its own"
    else:
        return False
    draft = engine.draft
    if draft is None:
        return False
    draft.channel = _CHANNEL_BY_CLOSER.get(closer)
    if draft.channel:
        what += f" on channel {draft.channel!r} (it ended with {_SPELLING[closer]})"
    engine.diagnose(code, what, at(0), end)
    engine.feed(_MESSAGE, "", at(0), at(0))
    engine.route_text(text, at(0), end)
    return True


def header_at_end(engine: Repairable, end: int) -> None:
    """HG150 at the end of input: the header never reached ``<|message|>``; content empty."""
    if _MESSAGE in engine.parser.choices():
        engine.diagnose("HG150", "the input ended before <|message|>", end, end)
        engine.feed(_MESSAGE, "", end, end)


def tool_in_channel_slot(
    engine: Repairable, text: str, pos: int, start: int, end: int
) -> int | None:
    """HG166: ``<|channel|>functions.read``: a tool's name where the channel belongs.

    Read as ``<|channel|>commentary to=functions.read`` (calls go to commentary); returns
    where lexing resumes, or None when no dotted name stands at ``pos``.
    """
    match = _DOTTED_NAME.match(text, pos)
    if match is None:
        return None
    name = match.group()
    at = _positions(engine, start, end)
    here, there = at(pos), at(match.end()) if engine.exact_positions else end
    engine.feed("CHANNEL_NAME", "commentary", here, here)
    engine.feed("CHANNEL_RECIPIENT", f" to={name}", here, there)
    engine.diagnose(
        "HG166",
        f"the tool name {name!r} stood where the channel belongs: read as channel"
        f" 'commentary' to={name}",
        here,
        there,
    )
    return match.end()


# ------------------------------------------------------------------ header, complete
def repair_header(engine: Repairable, draft: Draft, at: int) -> None:
    """Lenient repairs of a complete header, when ``<|message|>`` arrives."""
    if draft.role is Role.TOOL and draft.recipient == Role.ASSISTANT.value:
        if draft.recipient_position is RecipientPosition.CHANNEL and draft.content_type:
            # HG168: <|start|>functions.f<|channel|>commentary to=assistant code<|message|>
            engine.diagnose(
                "HG168",
                f"a header shaped like {draft.name!r}'s reply but with a content type in the"
                f" channel section: read as the assistant's call to {draft.name!r}",
                draft.start,
                at,
            )
            draft.role, draft.recipient, draft.name = Role.ASSISTANT, draft.name, None
    elif draft.role is Role.ASSISTANT and draft.recipient == Role.ASSISTANT.value:
        engine.diagnose(
            "HG167",
            "a stray 'to=assistant' in the assistant's own header was dropped",
            draft.start,
            at,
        )
        draft.recipient = draft.recipient_position = None
    if draft.recipient and draft.content_type is None:
        _split_glued_content_type(engine, draft, at)
    recipient = draft.recipient
    bare = recipient and draft.role is not Role.TOOL and "." not in recipient
    if bare and recipient in engine.tool_names:
        engine.diagnose(
            "HG169",
            f"recipient {recipient!r} is a declared function: read as 'functions.{recipient}'",
            draft.start,
            at,
        )
        draft.recipient = recipient = _FUNCTIONS + str(recipient)
    if draft.is_tool_call and draft.channel is None and (recipient or "").startswith(_FUNCTIONS):
        engine.diagnose(
            "HG165",
            f"the call to {draft.recipient!r} had no channel: read on 'commentary'",
            draft.start,
            at,
        )
        draft.channel = "commentary"


def _split_glued_content_type(engine: Repairable, draft: Draft, at: int) -> None:
    """HG154: ``to=functions.fs_readjson``: a content type glued onto the recipient.

    With known tools the name is split after the longest declared name it starts with
    (``message_agentresponse`` → ``message_agent`` + ``response``); otherwise only a
    trailing ``json`` is split off.
    """
    recipient = draft.recipient or ""
    names = engine.tool_names
    rest = ""
    if recipient.startswith(_FUNCTIONS) and names:
        name = recipient[len(_FUNCTIONS) :]
        if name in names:
            return
        prefixes = [n for n in names if name.startswith(n) and name[len(n) :].isalpha()]
        if prefixes:
            best = max(prefixes, key=len)
            recipient, rest = _FUNCTIONS + best, name[len(best) :].lower()
    if not rest:
        glued = _GLUED_JSON.match(recipient)
        if glued is None:
            return
        recipient, rest = glued["recipient"], "json"
    engine.diagnose(
        "HG154",
        f"recipient {draft.recipient!r} read as {recipient!r} with content type {rest!r}",
        draft.start,
        at,
    )
    draft.recipient, draft.content_type = recipient, rest
