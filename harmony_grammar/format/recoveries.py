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

from .engine_view import Repairable
from .events import MessageStart
from .model import Role
from .tokens import BARE_CONTENT_TYPES, CHANNEL_WORD, TERMINATORS, ControlToken

__all__ = [
    "end_open_body",
    "open_empty_body",
    "recover_echoed_start",
    "recover_missing_message",
    "recover_missing_start",
    "recover_missing_terminator",
    "recover_stray_control_token",
    "report_before_header",
    "report_call_like",
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
    r"to=functions\.[A-Za-z0-9_.\-]+[ \t]*(?:<\|constrain\|>)?"
    rf"(?:{'|'.join(sorted(BARE_CONTENT_TYPES))})?[ \t]*[{{\[]"
)


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


def recover_restarted_header(
    engine: Repairable, terminal: str, value: str, start: int, end: int
) -> bool:
    """HG185: a header begun again before any content: ``<|start|>`` while a header with no
    recipient is open (``<|start|>assistant<|start|>assistant<|channel|>final<|message|>``),
    or ``<|start|>``/``<|channel|>`` right after such a header's ``<|message|>``, its body
    still empty (``<|start|>assistant<|message|><|channel|>analysis<|message|>``).

    One message, begun where the first header was: the words of the header written over
    are kept in :attr:`.model.Message.superseded` (after an empty body the author stays the
    author: ``<|channel|>`` writes the header on), never an empty message of their own. A
    header naming a recipient is left to HG150/HG159 (a call is never dropped).
    """
    old = engine.draft
    if old is None or old.recipient or terminal not in (_START, _CHANNEL):
        return False
    # An empty body: only the assistant's own, unnamed (a user's empty turn is a turn).
    empty_body = (
        old.content == []
        and not old.content_spans
        and not old.content_fed
        and old.role is Role.ASSISTANT
        and old.name is None
    )
    if not (old.content is None and terminal == _START) and not empty_body:
        return False
    if old.early:
        return False  # the header held prose (content): not written over before any
    words = {
        "author": old.name if old.role is Role.TOOL and old.name else old.role.value,
        "name": old.name or "",
        "channel": old.channel or "",
        "content_type": (old.content_type or "").removeprefix(ControlToken.CONSTRAIN.value),
    }
    carried = ("author",) if terminal == _CHANNEL else ()
    engine.restart(engine.resync_start)
    if terminal == _CHANNEL:  # the header goes on: its author as written, then the channel
        engine.feed(_START, "", start, start)
        engine.feed("AUTHOR", words["author"], start, start)
    engine.feed(terminal, value, start, end)
    draft = engine.draft
    if draft is None:  # pragma: no cover - the resynced grammar always takes <|start|>
        return True
    if engine.events and isinstance(engine.events[-1], MessageStart):
        engine.events.pop()  # the message began with the first header: one start
    draft.start = old.start
    if carried:
        draft.fields = [f for f in draft.fields if f[0] not in carried]
    earlier = iter(old.superseded)  # a header written over more than once
    author_last = False
    for name, a, b in old.fields:
        if name in carried:
            draft.fields.append((name, a, b))
        elif a >= 0 and name == "name" and author_last:
            # ``assistant:bob`` was written as one word: kept as one, its ':' with it.
            draft.fields[-1] = ("superseded", draft.fields[-1][1], b)
            draft.superseded[-1] += ":" + words["name"]
        elif a >= 0:
            draft.fields.append(("superseded", a, b))
            draft.superseded.append(next(earlier) if name == "superseded" else words.get(name, ""))
        author_last = name == "author" and a >= 0 and name not in carried
    draft.unread += old.unread
    draft.unread_spans += old.unread_spans
    draft.early += old.early
    engine.diagnose(
        "HG185",
        f"{value} began the header again before any content: one message (the header"
        " written over kept in Message.superseded)",
        start,
        end,
    )
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
    engine.book.discard(start, end)
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
