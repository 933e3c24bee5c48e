"""The parsing engine: Lark's LALR parser of ``harmony.lark`` driven over lexed pieces.

Theory of operation
-------------------
The lexers (``lexer.py``) push three kinds of pieces: control tokens, text, and (for token
ids) special ids that are not Harmony. The engine owns one Lark interactive parser.

* A control token is fed to the parser as its own terminal.
* Text inside a message body is fed as a single ``CONTENT`` terminal the first time and then
  only appended to the message: content is never lexed, so it can stream.
* Any other text (a header, or the gap between messages) waits until the next control token
  or the end of input and is then lexed by the grammar's contextual lexer: the terminals the
  parser state accepts decide what the text may be.

Whether the parser accepts a terminal is asked before it is fed, so a rejected token leaves
the parser untouched. Then, in lenient mode, the recovery table (bottom of this module) may
repair the input by dropping pieces or feeding synthetic terminals, each with its own
warning code; anything else is an error, after which everything is skipped up to the next
``<|start|>`` and parsing resumes from a fresh parser there.

What a terminal *means* (this one is the author, that one the channel) is the table
``_ACTIONS``: one small function per terminal. The order in which terminals may come is the
grammar's alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .arguments import ArgumentChecker
from .diagnostics import LineIndex, make_diagnostic
from .events import (
    ContentDelta,
    DiagnosticEvent,
    Event,
    HeaderComplete,
    MessageEnd,
    MessageStart,
    StopGeneration,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from .grammar import expected_description, harmony_parser, header_lexer
from .lalr import LalrDriver, parse_table
from .lexer import TextRun
from .model import (
    Diagnostic,
    Message,
    RecipientPosition,
    Role,
    Span,
    Terminator,
    author_text,
    is_tool_call,
)
from .tokens import (
    FIRST_SPECIAL_ID,
    LAST_SPECIAL_ID,
    TERMINATORS,
    ControlToken,
    special_token_spelling,
)

__all__ = ["DEFAULT_MAX_HEADER_LENGTH", "Engine"]

#: Longest header (characters of header text) accepted before it is an error.
DEFAULT_MAX_HEADER_LENGTH = 4096

_TERMINATOR_OF = {
    ControlToken.END.terminal: Terminator.END,
    ControlToken.CALL.terminal: Terminator.CALL,
    ControlToken.RETURN.terminal: Terminator.RETURN,
}
# Enum attribute access is slow on the hot path; these plain dicts answer the same.
_TERMINAL_OF = {token: token.terminal for token in ControlToken}
_SPELLING_OF = {token: token.value for token in ControlToken}
_TERMINATOR_BY_SPELLING = {token.value: _TERMINATOR_OF[token.terminal] for token in TERMINATORS}
_START = ControlToken.START.terminal
#: The start symbol to resume with after an error, for each mode.
_RESYNC_START = {
    "conversation": "conversation",
    "completion": "continuation",
    "prompt": "prompt",
}
_MESSAGE = ControlToken.MESSAGE.terminal
_CHANNEL = ControlToken.CHANNEL.terminal
_CONTENT = "CONTENT"
#: A content type glued onto the recipient by the model: ``to=functions.shelljson``.
_GLUED_JSON = re.compile(r"^(?P<recipient>.*[A-Za-z0-9])json$")


@dataclass
class _Draft:
    """The message being parsed."""

    start: int
    role: Role = Role.ASSISTANT
    name: str | None = None
    recipient: str | None = None
    recipient_position: RecipientPosition | None = None
    channel: str | None = None
    content_type: str | None = None
    constrained: bool = False
    content: list[str] | None = None  # None until <|message|>: the header is still open
    content_fed: bool = False
    call_id: str | None = None

    @property
    def is_tool_call(self) -> bool:
        return is_tool_call(self.role, self.recipient)


@dataclass
class _Pending:
    """Header (or between-message) text waiting for the next control token."""

    parts: list[str] = field(default_factory=list)
    start: int = -1
    end: int = -1
    length: int = 0


class Engine:
    """Parses pieces into messages and diagnostics; optionally records stream events.

    ``start`` is ``conversation`` or ``completion``; ``role`` is the author of a completion's
    first message. ``token_units`` says that positions are token indexes (no line/column).
    ``events`` is a list to append :mod:`events` to, or None when nobody listens.
    """

    def __init__(
        self,
        *,
        start: str = "conversation",
        role: Role = Role.ASSISTANT,
        strict: bool = True,
        token_units: bool = False,
        max_header_length: int = DEFAULT_MAX_HEADER_LENGTH,
        events: list[Event] | None = None,
        call_id: Callable[[], str] | None = None,
        tools: Mapping[str, Any] | None = None,
    ) -> None:
        if start not in _RESYNC_START:
            raise ValueError(f"start must be one of {', '.join(_RESYNC_START)}, not {start!r}")
        self._table = parse_table(harmony_parser())
        self._lexer = header_lexer()
        self._ip = LalrDriver(self._table, start)
        self._resync_start = _RESYNC_START[start]
        self._completion = start == "completion"
        self._role = role
        self._strict = strict
        self._max_header = max_header_length
        self._lines: LineIndex | None = None if token_units else LineIndex()
        #: Where events go (None: nobody listens); the stream parser swaps in fresh lists.
        self.events = events
        self._call_id = call_id or _counter_ids()
        self._tools = tools
        self._checker: ArgumentChecker | None = None
        self._argument_chars = 0
        self._pending = _Pending()
        self._skipping = False
        self._duplicate_channel: tuple[int, int] | None = None
        self.messages: list[Message] = []
        self.diagnostics: list[Diagnostic] = []
        #: The author a prompt's trailing ``<|start|>{author}`` hands the turn to.
        self.next_turn: str | None = None
        #: ``call``, ``return`` or ``abort`` once generation must stop.
        self.stop_reason: str | None = None
        self._draft: _Draft | None = None
        if self._completion:
            self._begin(0)

    # ------------------------------------------------------------------ pieces in
    def control(self, token: ControlToken, start: int, end: int) -> None:
        """A control token at ``[start, end)``."""
        self._flush_pending()
        if self._skipping:
            if token is not ControlToken.START:
                return
            self._skipping = False
            self._ip = LalrDriver(self._table, self._resync_start)
        self._feed(_TERMINAL_OF[token], _SPELLING_OF[token], start, end)

    def text(self, text: str, start: int, end: int) -> None:
        """Text at ``[start, end)`` (any part of a message body, header or gap)."""
        if self._lines is not None:
            self._lines.add(text, start)
        if self._skipping:
            return
        draft = self._draft
        if draft is not None and draft.content is not None:
            if not draft.content_fed:
                self._feed(_CONTENT, "", start, start)
                if self._skipping:
                    return
            draft.content.append(text)
            if self._checker is not None:
                self._check_arguments(text, start, end)
            if self.events is not None:
                if draft.call_id is not None:
                    self.events.append(ToolCallDelta(text, draft.call_id))
                else:
                    self.events.append(ContentDelta(text, draft.channel))
            return
        pending = self._pending
        if pending.start < 0:
            pending.start = start
        pending.parts.append(text)
        pending.end = end
        pending.length += len(text)
        if pending.length > self._max_header:
            self._error(
                "HG104",
                f"header text is longer than {self._max_header} characters",
                pending.start,
                end,
            )

    def special(self, token_id: int, index: int) -> None:
        """A special id that is not a Harmony control token (token input only)."""
        if FIRST_SPECIAL_ID <= token_id <= LAST_SPECIAL_ID:
            spelling = special_token_spelling(token_id)
            what = f"special token {token_id} ({spelling}) is not part of Harmony"
        else:
            what = f"{token_id} is not an o200k_harmony token id"
        self._diagnose("HG103", f"{what}; it was skipped", index, index + 1)

    def run_end(self, run: TextRun) -> None:
        """Facts about a run of ordinary token ids that just ended."""
        if run.invalid_utf8:
            self._diagnose(
                "HG105",
                "these token ids do not decode as UTF-8; invalid bytes became U+FFFD",
                run.start,
                run.end,
            )
        if run.spellings:
            self._diagnose(
                "HG110",
                f"ordinary text tokens spell {', '.join(run.spellings)}: read as text, not as"
                " control tokens",
                run.start,
                run.end,
            )

    def eof(self, end: int) -> None:
        """The end of input at offset ``end``."""
        self._flush_pending()
        if self._skipping:
            return
        draft = self._draft
        if not self._ip.feed_eof():
            if not self._strict and draft is not None and draft.content is not None:
                self._diagnose("HG159", "the input ended before the message's terminator", end, end)
                self._finish(None, end)
            else:
                self._error(
                    "HG102",
                    "the input ends inside a message",
                    end,
                    end,
                    expected=self._expected(),
                )
            return
        if draft is not None and draft.content is not None:
            self._finish(None, end)  # a completion's last message, its stop token stripped
        elif draft is not None:  # a prompt's trailing <|start|>{author}
            self.next_turn = author_text(draft.role, draft.name)
            self._draft = None

    # ------------------------------------------------------------------ feeding
    def _feed(self, terminal: str, value: str, start: int, end: int) -> None:
        if not self._ip.feed(terminal):
            self._unexpected_token(terminal, value, start, end)
            return
        action = _ACTIONS.get(terminal)
        if action is not None:
            action(self, value, start, end)

    def _expected(self) -> tuple[str, ...]:
        return expected_description(
            {name for name in self._ip.choices() if name.isupper() or name.startswith(("$", "_"))}
        )

    def _flush_pending(self) -> None:
        pending = self._pending
        if pending.start < 0:
            self._close_duplicate_channel("")
            return
        text = "".join(pending.parts)
        start, end = pending.start, pending.end
        self._pending = _Pending()
        if self._skipping:
            return
        text = self._close_duplicate_channel(text, start)
        self._lex_header_text(text, start, end)

    def _lex_header_text(self, text: str, start: int, end: int) -> None:
        # Character offsets within ``text`` map to input offsets only for text input;
        # for token ids the whole run's range is the position.
        exact = self._lines is not None
        pos = 0
        while pos < len(text) and not self._skipping:
            choices = self._ip.choices()
            scanner = self._lexer.scanner(self._ip.position, choices)
            match = scanner.match(text, pos) if scanner is not None else None
            if match is not None and self._misplaced_recipient(text, pos, choices):
                match = None  # let the recovery see the whole " to=..." (HG158)
            if match is None:
                at = (start + pos, end) if exact else (start, end)
                pos = self._unexpected_text(text, pos, *at)
                continue
            value = match.group()
            here = start + pos if exact else start
            self._feed(match.lastgroup or "", value, here, here + len(value) if exact else end)
            pos += len(value)

    def _misplaced_recipient(self, text: str, pos: int, choices: object) -> bool:
        """Lenient only: a `` to=`` where no recipient may stand, though a separator may.

        The contextual lexer would read its space as the separator before a content type and
        only then fail; the duplicate-recipient repair needs the ``to=`` whole.
        """
        return (
            not self._strict
            and text.startswith(" to=", pos)
            and isinstance(choices, dict)
            and "ROLE_RECIPIENT" not in choices
            and "CHANNEL_RECIPIENT" not in choices
        )

    # ------------------------------------------------------------------ actions
    def _begin(self, start: int) -> None:
        self._draft = _Draft(start=start, role=self._role)
        if self.events is not None:
            self.events.append(MessageStart(start))

    def _on_start(self, value: str, start: int, end: int) -> None:
        self._draft = _Draft(start=start)
        if self.events is not None:
            self.events.append(MessageStart(start))

    def _on_author(self, value: str, start: int, end: int) -> None:
        draft = self._require_draft(start)
        draft.role = Role.of_author(value)
        if draft.role is Role.TOOL:
            draft.name = value
            if self._completion:
                self._diagnose(
                    "HG170",
                    f"the model began a message from the tool {value!r}: it is forging the"
                    " tool's result; stop the turn here",
                    draft.start,
                    end,
                )
                self._stop("abort", draft.start)

    def _on_author_name(self, value: str, start: int, end: int) -> None:
        self._require_draft(start).name = value

    def _on_role_recipient(self, value: str, start: int, end: int) -> None:
        draft = self._require_draft(start)
        draft.recipient = value.split("=", 1)[1]
        draft.recipient_position = RecipientPosition.ROLE

    def _on_channel_recipient(self, value: str, start: int, end: int) -> None:
        draft = self._require_draft(start)
        draft.recipient = value.split("=", 1)[1]
        draft.recipient_position = RecipientPosition.CHANNEL

    def _on_channel_name(self, value: str, start: int, end: int) -> None:
        self._require_draft(start).channel = value

    def _on_constrain(self, value: str, start: int, end: int) -> None:
        self._require_draft(start).constrained = True

    def _on_content_type(self, value: str, start: int, end: int) -> None:
        draft = self._require_draft(start)
        if not self._strict and value != value.lower():
            self._diagnose("HG155", f"content type {value!r} read as {value.lower()!r}", start, end)
            value = value.lower()
        draft.content_type = ControlToken.CONSTRAIN.value + value if draft.constrained else value

    def _on_message(self, value: str, start: int, end: int) -> None:
        draft = self._require_draft(start)
        if not self._strict and draft.content_type is None and draft.recipient:
            glued = _GLUED_JSON.match(draft.recipient)
            if glued:
                self._diagnose(
                    "HG154",
                    f"recipient {draft.recipient!r} read as {glued['recipient']!r} with"
                    " content type 'json'",
                    draft.start,
                    start,
                )
                draft.recipient, draft.content_type = glued["recipient"], "json"
        draft.content = []
        if draft.is_tool_call:
            draft.call_id = self._call_id()
            if self._tools is not None:
                self._start_argument_check(draft, start, end)
        if self.events is not None:
            self.events.append(
                HeaderComplete(
                    draft.role, draft.name, draft.recipient, draft.channel, draft.content_type
                )
            )
            if draft.call_id is not None and draft.recipient is not None:
                name = draft.recipient.removeprefix("functions.")
                self.events.append(ToolCallStart(name, draft.recipient, draft.call_id))

    def _start_argument_check(self, draft: _Draft, start: int, end: int) -> None:
        recipient = draft.recipient or ""
        if not recipient.startswith("functions.") or self._tools is None:
            return  # built-in tools (browser.*, python) have no schema here
        name = recipient.removeprefix("functions.")
        if name not in self._tools:
            self._diagnose(
                "HG181",
                f"{name!r} is not among the tools ({', '.join(sorted(self._tools)) or 'none'})",
                draft.start,
                end,
            )
            return
        self._checker = ArgumentChecker(self._tools[name])
        self._argument_chars = 0

    def _check_arguments(self, text: str, start: int, end: int) -> None:
        assert self._checker is not None
        bad = self._checker.feed(text)
        if bad is not None:
            within = bad - self._argument_chars
            at = start + within if self._lines is not None else start
            self._diagnose(
                "HG180",
                f"the arguments stop being a JSON object at character {bad}"
                f" ({text[within : within + 12]!r})",
                at,
                at + 1 if self._lines is not None else end,
            )
        self._argument_chars += len(text)

    def _on_content(self, value: str, start: int, end: int) -> None:
        self._require_draft(start).content_fed = True

    def _on_terminator(self, value: str, start: int, end: int) -> None:
        self._finish(_TERMINATOR_BY_SPELLING[value], end)

    def _require_draft(self, start: int) -> _Draft:
        if self._draft is None:  # only a synthetic repair can get here without <|start|>
            self._draft = _Draft(start=start, role=self._role)
        return self._draft

    def _finish(self, terminator: Terminator | None, end: int) -> None:
        draft = self._draft
        if draft is None:
            return
        self._draft = None
        message = Message(
            role=draft.role,
            content="".join(draft.content or ()),
            name=draft.name,
            recipient=draft.recipient,
            channel=draft.channel,
            content_type=draft.content_type,
            terminator=terminator,
            recipient_position=draft.recipient_position,
            span=Span(draft.start, end),
        )
        self.messages.append(message)
        checker, self._checker = self._checker, None
        if checker is not None and checker.failed_at is None:
            problem = (
                checker.schema_error(message.content)
                if checker.complete()
                else "they end before the JSON object is complete"
            )
            if problem is not None:
                self._diagnose(
                    "HG180",
                    f"the arguments do not match the tool's schema: {problem}",
                    draft.start,
                    end,
                )
        if draft.is_tool_call and terminator is not Terminator.CALL:
            how = f"<|{terminator.value}|>" if terminator else "the end of input"
            self._diagnose(
                "HG153",
                f"the tool call to {draft.recipient!r} ended with {how}, not <|call|>",
                draft.start,
                end,
            )
        events = self.events
        if events is not None:
            recovered = not self._strict and terminator is not None
            if draft.call_id is not None and (terminator is Terminator.CALL or recovered):
                events.append(ToolCallEnd(draft.call_id, message.content))
            events.append(MessageEnd(message))
        if terminator is Terminator.CALL or terminator is Terminator.RETURN:
            self._stop(terminator.value, end)

    def _stop(self, reason: str, position: int) -> None:
        if self.stop_reason is None or reason == "abort":
            first = self.stop_reason is None
            self.stop_reason = reason
            if self.events is not None and (first or reason == "abort"):
                self.events.append(StopGeneration(reason, position))

    # ------------------------------------------------------------------ diagnostics
    def _diagnose(
        self, code: str, message: str, start: int, end: int, expected: tuple[str, ...] = ()
    ) -> None:
        diagnostic = make_diagnostic(
            code, message, start, end, lines=self._lines, expected=expected
        )
        self.diagnostics.append(diagnostic)
        if self.events is not None:
            self.events.append(DiagnosticEvent(diagnostic))

    def _error(
        self, code: str, message: str, start: int, end: int, expected: tuple[str, ...] = ()
    ) -> None:
        """An unrecoverable error: report it and skip to the next ``<|start|>``."""
        skip = "" if code == "HG102" else "; skipped to the next <|start|>"
        self._diagnose(code, message + skip, start, end, expected)
        self._skipping = True
        self._draft = None
        self._pending = _Pending()

    def _unexpected_token(self, terminal: str, value: str, start: int, end: int) -> None:
        if not self._strict:
            for recovery in _TOKEN_RECOVERIES:
                if recovery(self, terminal, value, start, end):
                    return
        if terminal == _CONTENT:
            described = "message content"
        else:
            described = value if terminal in _CONTROL_TERMINALS else f"{terminal} {value!r}"
        self._error("HG100", f"unexpected {described}", start, end, expected=self._expected())

    def _unexpected_text(self, text: str, pos: int, start: int, end: int) -> int:
        """Handle unlexable header text at ``text[pos:]``; returns where lexing resumes."""
        if not self._strict:
            for recovery in _TEXT_RECOVERIES:
                resume = recovery(self, text, pos, start, end)
                if resume is not None:
                    return resume
        shown = text[pos : pos + 24]
        self._error("HG101", f"unexpected text {shown!r}", start, end, expected=self._expected())
        return len(text)

    def _close_duplicate_channel(self, text: str, start: int = 0) -> str:
        """Finish the HG157 repair: drop the second channel's name from ``text``."""
        if self._duplicate_channel is None:
            return text
        token_start, token_end = self._duplicate_channel
        self._duplicate_channel = None
        name = re.match(r"[^\s<>|]*", text)
        word = name.group() if name else ""
        shown = f"<|channel|>{word}"
        current = self._draft.channel if self._draft else None
        self._diagnose(
            "HG157",
            f"a second {shown!r} after channel {current!r} was dropped",
            token_start,
            max(token_end, start + len(word)) if self._lines else token_end,
        )
        return text[len(word) :]


def _counter_ids() -> Callable[[], str]:
    counter = iter(range(1, 1 << 62))
    return lambda: f"call_{next(counter)}"


_CONTROL_TERMINALS = frozenset(token.terminal for token in ControlToken)

_ACTIONS: dict[str, Callable[[Engine, str, int, int], None]] = {
    _START: Engine._on_start,
    "AUTHOR": Engine._on_author,
    "AUTHOR_NAME": Engine._on_author_name,
    "ROLE_RECIPIENT": Engine._on_role_recipient,
    "CHANNEL_RECIPIENT": Engine._on_channel_recipient,
    "CHANNEL_NAME": Engine._on_channel_name,
    ControlToken.CONSTRAIN.terminal: Engine._on_constrain,
    "CONTENT_TYPE": Engine._on_content_type,
    _MESSAGE: Engine._on_message,
    _CONTENT: Engine._on_content,
    **{token.terminal: Engine._on_terminator for token in TERMINATORS},
}


# ---------------------------------------------------------------------- lenient recoveries
# Each recovery looks at a rejected piece and either repairs the input (returning a truthy
# value) or declines. They run in order; the first that applies wins. Synthetic terminals are
# zero-width at the rejected piece.


def _recover_missing_message(
    engine: Engine, terminal: str, value: str, start: int, end: int
) -> bool:
    """HG150: a terminator (or the next ``<|start|>``) arrived while the header was open."""
    if (terminal in _TERMINATOR_OF or terminal == _START) and _MESSAGE in engine._ip.choices():
        engine._diagnose("HG150", f"{value} arrived before <|message|>", start, start)
        engine._feed(_MESSAGE, "", start, start)
        engine._feed(terminal, value, start, end)
        return True
    return False


def _recover_missing_terminator(
    engine: Engine, terminal: str, value: str, start: int, end: int
) -> bool:
    """HG159: ``<|start|>`` arrived inside a message body."""
    draft = engine._draft
    if terminal != _START or draft is None or draft.content is None:
        return False
    if ControlToken.END.terminal not in engine._ip.choices():
        return False
    engine._diagnose("HG159", "a new message began before this one's terminator", start, start)
    engine._ip.feed(ControlToken.END.terminal)
    engine._finish(None, start)
    engine._feed(terminal, value, start, end)
    return True


def _recover_missing_start(engine: Engine, terminal: str, value: str, start: int, end: int) -> bool:
    """HG151: a header (``<|channel|>``, ``<|message|>``) began without ``<|start|>``."""
    choices = engine._ip.choices()
    if terminal not in (_CHANNEL, _MESSAGE) or _START not in choices:
        return False
    engine._diagnose(
        "HG151",
        f"{value} began a message without <|start|>; read as <|start|>{engine._role.value}",
        start,
        start,
    )
    engine._feed(_START, "", start, start)
    engine._feed("AUTHOR", engine._role.value, start, start)
    engine._feed(terminal, value, start, end)
    return True


def _recover_duplicate_channel(
    engine: Engine, terminal: str, value: str, start: int, end: int
) -> bool:
    """HG157: a second ``<|channel|>`` in one header; it and its name are dropped."""
    draft = engine._draft
    if terminal != _CHANNEL or draft is None or draft.channel is None or draft.content is not None:
        return False
    engine._duplicate_channel = (start, end)
    return True


def _recover_stray_text(engine: Engine, text: str, pos: int, start: int, end: int) -> int | None:
    """HG152: text between messages is dropped."""
    if _START not in engine._ip.choices():
        return None
    engine._diagnose(
        "HG152", f"text outside any message was dropped: {text[pos : pos + 40]!r}", start, end
    )
    return len(text)


def _recover_duplicate_recipient(
    engine: Engine, text: str, pos: int, start: int, end: int
) -> int | None:
    """HG158: a second ``to=`` in one header is dropped."""
    draft = engine._draft
    if draft is None or draft.recipient is None:
        return None
    match = engine._lexer.terminal_regex("CHANNEL_RECIPIENT").match(text, pos)
    if match is None:
        return None
    length = len(match.group())
    second = match.group().split("=", 1)[1]
    engine._diagnose(
        "HG158",
        f"a second recipient {second!r} after {draft.recipient!r} was dropped",
        start,
        start + length if engine._lines else end,
    )
    return pos + length


def _recover_header_garbage(
    engine: Engine, text: str, pos: int, start: int, end: int
) -> int | None:
    """HG156: stray characters in a header are dropped up to where lexing can resume."""
    scanner = engine._lexer.scanner(engine._ip.position, engine._ip.choices())
    resume = pos + 1
    while resume < len(text) and (scanner is None or scanner.match(text, resume) is None):
        resume += 1
    engine._diagnose(
        "HG156",
        f"stray characters {text[pos:resume]!r} in the header were dropped",
        start,
        start + (resume - pos) if engine._lines else end,
    )
    return resume


_TOKEN_RECOVERIES: tuple[Callable[[Engine, str, str, int, int], bool], ...] = (
    _recover_missing_terminator,
    _recover_missing_message,
    _recover_missing_start,
    _recover_duplicate_channel,
)
_TEXT_RECOVERIES: tuple[Callable[[Engine, str, int, int, int], int | None], ...] = (
    _recover_stray_text,
    _recover_duplicate_recipient,
    _recover_header_garbage,
)
