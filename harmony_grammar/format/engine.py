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
the parser untouched. Then the repair table (:mod:`.repairs`; empty in strict mode) may
repair the input by feeding synthetic terminals, each repair with its own warning code;
anything else is an error, after which everything is skipped up to the next ``<|start|>``
and parsing resumes from a fresh parser there (strict mode only: the lenient table always
has a last row that applies).

Every piece of input is accounted for (:class:`.model.Accounting`): control tokens and
header text belong to the message whose header they are, body text to its content (with
the input ranges it came from), and what no message holds is *discarded* and named by a
diagnostic: control-token debris in lenient mode, an error's skip in strict mode.

What a terminal *means* (this one is the author, that one the channel) is the table
``_ACTIONS``: one small function per terminal. The order in which terminals may come is the
grammar's alone.

Why this module stays whole (about 600 lines): the feeding loop, the action table and the
message state they mutate change together, and moving the actions out would need a protocol
as wide as the class. The parts that change on their own live apart: the repair table
(:mod:`.repairs`, its rows in :mod:`.recoveries` and :mod:`.readings`), the draft
(:mod:`.draft`) and call checks (:mod:`.call_check`).
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Mapping
from typing import Any

from ..tools.names import MAX_HEADER_LENGTH
from .call_check import CallCheck
from .diagnostics import LineIndex, Overflow, make_diagnostic
from .draft import Draft, PendingText
from .events import (
    DiagnosticEvent,
    Event,
    HeaderComplete,
    MessageEnd,
    MessageStart,
    StopGeneration,
    ToolCallEnd,
    ToolCallStart,
    content_delta,
    tool_call_delta,
)
from .from_typescript import tools_from_typescript
from .grammar import expected_description, harmony_parser, header_lexer
from .lalr import LalrDriver, parse_table
from .lexer import TextRun
from .model import (
    Diagnostic,
    Ledger,
    Message,
    RecipientPosition,
    Role,
    Span,
    Terminator,
    author_text,
)
from .readings import DOTTED_NAME
from .recoveries import close_duplicate_channel, misplaced_recipient
from .repairs import LENIENT, STRICT, Where
from .tokens import (
    FIRST_SPECIAL_ID,
    LAST_SPECIAL_ID,
    TERMINATORS,
    ControlToken,
    special_token_spelling,
)

__all__ = ["DEFAULT_MAX_HEADER_LENGTH", "Engine"]

#: Longest header (characters of header text) accepted before it is an error: the limit the
#: renderer also keeps (tools/names.py), so what renders parses back.
DEFAULT_MAX_HEADER_LENGTH = MAX_HEADER_LENGTH

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
#: How many distinct delta events one message shares (Draft.deltas): bounded memory.
_SHARED_DELTAS = 4096
#: Header words a repair may feed empty, to reach ``<|message|>`` (the actions read them).
_EMPTY_WORDS = ("AUTHOR", "CHANNEL_NAME", "CONTENT_TYPE")
#: Bare content types a header holds even when it never reached ``<|message|>``.
_BARE_CONTENT_TYPES = frozenset({"json", "code"})


class Engine:
    """Parses pieces into messages and diagnostics; optionally records stream events.

    ``start`` is ``conversation`` or ``completion``; ``role`` is the author of a completion's
    first message. ``token_units`` says that positions are token indexes (no line/column).
    ``events`` is a list to append :mod:`events` to, or None when nobody listens.
    ``stripped_dialect`` says whether lenient mode reads ordinary text as stripped control
    tokens (:mod:`.stripped`); None means for text input only (token ids are authoritative:
    only special ids are structure).
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
        stripped_dialect: bool | None = None,
    ) -> None:
        if start not in _RESYNC_START:
            raise ValueError(f"start must be one of {', '.join(_RESYNC_START)}, not {start!r}")
        self._table = parse_table(harmony_parser())
        self.lexer = header_lexer()
        self.parser = LalrDriver(self._table, start)
        self._resync_start = _RESYNC_START[start]
        self._completion = start == "completion"
        self.role = role
        self._strict = strict
        self._repairs = STRICT if strict else LENIENT
        #: Whether ordinary text may be read as stripped control tokens (lenient only).
        self.reads_stripped = not strict and (
            not token_units if stripped_dialect is None else stripped_dialect
        )
        self._max_header = max_header_length
        self._lines: LineIndex | None = None if token_units else LineIndex()
        #: Where events go (None: nobody listens); the stream parser swaps in fresh lists.
        self.events = events
        self._call_id = call_id or _counter_ids()
        self._tools = tools
        self._call_check: CallCheck | None = None
        self._pending = PendingText()
        self._skipping = False
        self.duplicate_channel: tuple[int, int] | None = None
        self.messages: list[Message] = []
        self.diagnostics: list[Diagnostic] = []
        #: Diagnostics past MAX_DIAGNOSTICS, counted only (bounded memory on hostile input).
        self.overflow = Overflow()
        #: The author a prompt's trailing ``<|start|>{author}`` hands the turn to.
        self.next_turn: str | None = None
        #: ``call``, ``return`` or ``abort`` once generation must stop.
        self.stop_reason: str | None = None
        self.draft: Draft | None = None
        #: The conservation ledger: content ranges per finished message, discarded ranges.
        self._content_spans: list[list[int]] = []
        self._bodies: list[int] = []
        self._next_turn_span: Span | None = None
        self._discarded: list[int] = []  # flat [start, end, ...], adjacent ranges merged
        if self._completion:
            self._begin(0)

    @property
    def exact_positions(self) -> bool:
        """True for text input (character offsets), False for token ids (whole runs)."""
        return self._lines is not None

    # ------------------------------------------------------------------ pieces in
    def control(self, token: ControlToken, start: int, end: int) -> None:
        """A control token at ``[start, end)``."""
        self._flush_pending(_TERMINAL_OF[token])
        if self._skipping:
            if token is not ControlToken.START:
                self.discard(start, end)
                return
            self._skipping = False
            self.parser = LalrDriver(self._table, self._resync_start)
        self.feed(_TERMINAL_OF[token], _SPELLING_OF[token], start, end)

    def text(self, text: str, start: int, end: int) -> None:
        """Text at ``[start, end)`` (any part of a message body, header or gap)."""
        if self._lines is not None:
            self._lines.add(text, start)
        draft = self.draft
        if draft is not None and draft.content_fed and self._call_check is None:
            # The hot path: more of a body already open (see route_text for the rest).
            draft.content.append(text)  # type: ignore[union-attr]
            spans = draft.content_spans
            if spans[-1] == start:
                spans[-1] = end
            else:
                spans += (start, end)
            events = self.events
            if events is not None:
                deltas = draft.deltas
                delta = deltas.get(text)
                if delta is None:
                    call_id = draft.call_id
                    if call_id is None:
                        delta = content_delta(text, draft.channel)
                    else:
                        delta = tool_call_delta(text, call_id)
                    if len(deltas) < _SHARED_DELTAS:
                        deltas[text] = delta
                events.append(delta)  # type: ignore[arg-type]
            return
        if self._skipping:
            self.discard(start, end)
            return
        self.route_text(text, start, end)

    def route_text(self, text: str, start: int, end: int) -> None:
        """Route text already counted for positions: message content, or pending header text."""
        draft = self.draft
        if draft is not None and draft.content is not None:
            if not draft.content_fed:
                self.feed(_CONTENT, "", start, start)
                if self._skipping:
                    return
            draft.content.append(text)
            spans = draft.content_spans
            if spans and spans[-1] == start:
                spans[-1] = end
            else:
                spans += (start, end)
            if self._call_check is not None:
                self._call_check.feed(text, start, end)
            if self.events is not None:
                if draft.call_id is not None:
                    self.events.append(tool_call_delta(text, draft.call_id))
                else:
                    self.events.append(content_delta(text, draft.channel))
            return
        pending = self._pending
        if pending.start < 0:
            pending.start = start
        pending.parts.append(text)
        pending.end = end
        pending.length += len(text)
        if pending.length > self._max_header and (self._strict or not self._may_be_prose()):
            # In text, end at the first character past the limit: where the chunk that crossed
            # it ends depends on how the input was fed, and stream must equal batch.
            over = pending.start + self._max_header + 1 if self.exact_positions else end
            what = f"header text is longer than {self._max_header} characters"
            if not self._strict and self.fill_header_words(pending.start):
                # Lenient keeps it: the header ends, and its text is the content (bounded
                # memory all the same: content streams).
                what += ": read as the message's content"
                self.diagnose("HG104", what, pending.start, over)
                self._pending = PendingText()
                self.feed(_MESSAGE, "", pending.start, pending.start)
                self.route_text("".join(pending.parts), pending.start, end)
                return
            self._error("HG104", what, pending.start, over)

    def special(self, token_id: object, index: int) -> None:
        """A special id that is not a Harmony control token, or an element of the ids that
        is not an integer at all (token input only)."""
        self.discard(index, index + 1)
        if type(token_id) is not int:
            what = f"{type(token_id).__name__} {reprlib.repr(token_id)} is not a token id (an int)"
            self.diagnose("HG106", f"{what}; it was skipped", index, index + 1)
            return
        if FIRST_SPECIAL_ID <= token_id <= LAST_SPECIAL_ID:
            spelling = special_token_spelling(token_id)
            what = f"special token {token_id} ({spelling}) is not part of Harmony"
        elif token_id.bit_length() > 64:  # never convert a huge int to text (quadratic, limited)
            what = f"an integer of {token_id.bit_length()} bits is not an o200k_harmony token id"
        else:
            what = f"{token_id} is not an o200k_harmony token id"
        self.diagnose("HG103", f"{what}; it was skipped", index, index + 1)

    def run_end(self, run: TextRun) -> None:
        """Facts about a run of ordinary token ids that just ended."""
        if run.invalid_utf8:
            self.diagnose(
                "HG105",
                "these token ids do not decode as UTF-8; invalid bytes became U+FFFD",
                run.start,
                run.end,
            )
        if run.spellings:
            self.diagnose(
                "HG110",
                f"ordinary text tokens spell {', '.join(run.spellings)}: read as text, not as"
                " control tokens",
                run.start,
                run.end,
            )

    def eof(self, end: int) -> None:
        """The end of input at offset ``end``."""
        self._flush_pending("$END")
        if self._skipping:
            return
        # A prompt's trailing <|start|>{author} is complete input (next_turn), not a header
        # cut short: only input the grammar cannot end here is repaired.
        if not self.parser.feed_eof() and not any(
            repair(self, end) for repair in self._repairs.end_of_input
        ):
            self._error(
                "HG102", "the input ends inside a message", end, end, expected=self._expected()
            )
            return
        draft = self.draft
        if draft is not None and draft.content is not None:
            self.finish(None, end)  # a completion's last message, its stop token stripped
        elif draft is not None:  # a prompt's trailing <|start|>{author}
            self.next_turn = author_text(draft.role, draft.name)
            self._next_turn_span = Span(draft.start, end)
            self.draft = None

    # ------------------------------------------------------------------ feeding
    def feed(self, terminal: str, value: str, start: int, end: int) -> None:
        if not self.parser.feed(terminal):
            if start == end:
                # A repair's zero-width terminal the grammar refuses: the repair misjudged
                # the state. Say so as an error (never a silent skip of real input).
                self._error("HG100", f"a repair could not feed {terminal} here", start, end)
                return
            self._unexpected_token(terminal, value, start, end)
            return
        action = _ACTIONS.get(terminal)
        if action is not None:
            action(self, value, start, end)

    def _expected(self) -> tuple[str, ...]:
        return expected_description(
            {
                name
                for name in self.parser.choices()
                if name.isupper() or name.startswith(("$", "_"))
            }
        )

    def _flush_pending(self, closer: str) -> None:
        """Lex the pending header text; ``closer`` is the terminal that ends it (or $END)."""
        pending = self._pending
        if pending.start < 0:
            if self.duplicate_channel is not None:
                close_duplicate_channel(self, "")
            return
        parts = pending.parts
        text = parts[0] if len(parts) == 1 else "".join(parts)
        start, end = pending.start, pending.end
        self._pending = PendingText()
        if self._skipping:
            return
        if self.duplicate_channel is not None:  # HG157: the second channel's name comes first
            rest = close_duplicate_channel(self, text, start)
            if self.exact_positions:
                start += len(text) - len(rest)
            text = rest
            if not text:
                return
        if self._repairs:  # strict mode has no rows: never ask where the text stands
            if self.draft is None:
                where = Where.BETWEEN
            elif self.at_completion_start:
                where = Where.COMPLETION_START
            else:
                where = Where.OPEN_HEADER
            for repair in self._repairs.pending_text[where]:
                if repair(self, text, start, end, closer):
                    return
        self.lex_header_text(text, start, end)

    @property
    def completion(self) -> bool:
        """True when parsing a completion (model output), not a stored conversation."""
        return self._completion

    @property
    def at_completion_start(self) -> bool:
        """True while nothing of a completion's first header has been read."""
        return self._completion and not self.messages and self.parser.at_start

    @property
    def tool_names(self) -> frozenset[str]:
        """The names of the known functions: ``tools=``, else the developer message's."""
        if self._tools is not None:
            return frozenset(self._tools)
        for message in reversed(self.messages):
            if message.role is Role.DEVELOPER:
                declared = tools_from_typescript(message.content)
                return frozenset(tool.name for tool in declared or ())
        return frozenset()

    @property
    def stopped(self) -> bool:
        """True once ``<|call|>`` or ``<|return|>`` (or an abort) ended the turn."""
        return self.stop_reason is not None

    def _may_be_prose(self) -> bool:
        """Pending text that may be a whole message (lenient: no header-length limit)."""
        return self.at_completion_start or _START in self.parser.choices()

    def restart(self, start: str) -> None:
        """Drop the message being parsed and parse on from the grammar's ``start`` symbol."""
        self.parser = LalrDriver(self._table, start)
        self.draft = None

    def lexes_as_header(self, text: str) -> bool:
        """Whether the whole of ``text`` lexes as header text here (the parser is untouched)."""
        driver = self.parser.copy()
        pos = 0
        while pos < len(text):
            scanner = self.lexer.scanner(driver.position, driver.choices())
            match = scanner.match(text, pos) if scanner is not None else None
            if match is None or not driver.feed(match.lastgroup or ""):
                return False
            pos = match.end()
        return True

    def header_prefix(self, text: str) -> int:
        """How much of ``text`` reads as header fields here (the parser is untouched).

        Lexing stops where no terminal the parser accepts matches, and before a bare
        content type other than ``json`` or ``code`` (in a header that never reached
        ``<|message|>`` such a word is the first word of text). A separator counts only with
        the field after it; a tool's dotted name in the channel slot (HG166) is one field.
        """
        driver = self.parser.copy()
        constrained = self.draft is not None and self.draft.constrained
        pos = good = 0
        while pos < len(text):
            choices = driver.choices()
            if "CHANNEL_NAME" in choices:
                dotted = DOTTED_NAME.match(text, pos)
                if dotted is not None and driver.feed("CHANNEL_NAME"):
                    driver.feed("CHANNEL_RECIPIENT")
                    pos = good = dotted.end()
                    continue
            if text.startswith(" to=", pos) and misplaced_recipient(text, pos, choices):
                misplaced = self.lexer.terminal_regex("CHANNEL_RECIPIENT").match(text, pos)
                if misplaced is not None:  # HG158/HG172 keep it in the header
                    pos = good = misplaced.end()
                    continue
            scanner = self.lexer.scanner(driver.position, choices)
            match = scanner.match(text, pos) if scanner is not None else None
            name = match.lastgroup or "" if match is not None else ""
            if match is None or not driver.feed(name):
                break
            bare = name == "CONTENT_TYPE" and not constrained
            if bare and match.group().lower() not in _BARE_CONTENT_TYPES:
                break
            constrained = False
            pos = match.end()
            if name != "SPACE":
                good = pos
        return good

    def fill_header_words(self, at: int) -> bool:
        """Feed empty header words until ``<|message|>`` is acceptable; False if it never is
        (the parser untouched then only if it already was).

        An empty author is the parser's role, an empty channel name or content type none
        (the actions read them so); used where lenient mode must open a body now.
        """
        for _ in range(3):
            choices = self.parser.choices()
            if _MESSAGE in choices:
                return True
            word = next((w for w in _EMPTY_WORDS if w in choices), None)
            if word is None:
                return False
            self.feed(word, "", at, at)
        return _MESSAGE in self.parser.choices()

    def lexes_as_header_after_start(self, text: str) -> bool:
        """Whether ``<|start|>`` then ``text`` would lex as header text here (untouched)."""
        saved = self.parser
        self.parser = saved.copy()
        try:
            return self.parser.feed(_START) and self.lexes_as_header(text)
        finally:
            self.parser = saved

    def lex_header_text(self, text: str, start: int, end: int) -> None:
        """Lex ``text`` as header text from the parser's state, with the repairs.

        Character offsets within ``text`` map to input offsets only for text input; for
        token ids the whole run's range is the position.
        """
        exact = self._lines is not None
        before_lex = self._repairs.before_lex
        pos = 0
        while pos < len(text) and not self._skipping:
            scanner = self.lexer.scanner(self.parser.position, self.parser.choices())
            match = scanner.match(text, pos) if scanner is not None else None
            if before_lex and (
                match is None
                or match.lastgroup == "SPACE"
                or (match.lastgroup == "CHANNEL_NAME" and text.startswith(".", match.end()))
            ):
                # The BEFORE_LEX rows see text the lexer reads as no field yet: nothing, a
                # separator, or a channel name that a dotted tool name goes on from.
                resume = None
                for repair in before_lex:
                    resume = repair(self, text, pos, start + pos if exact else start, end)
                    if resume is not None:
                        break
                if resume is not None:
                    pos = resume
                    continue
            if match is None:
                at = (start + pos, end) if exact else (start, end)
                pos = self._unexpected_text(text, pos, *at)
                continue
            value = match.group()
            here = start + pos if exact else start
            self.feed(match.lastgroup or "", value, here, here + len(value) if exact else end)
            pos += len(value)

    # ------------------------------------------------------------------ actions
    def _begin(self, start: int) -> None:
        self.draft = Draft(start=start, role=self.role)
        if self.events is not None:
            self.events.append(MessageStart(start))

    def _on_start(self, value: str, start: int, end: int) -> None:
        self.draft = Draft(start=start)
        if self.events is not None:
            self.events.append(MessageStart(start))

    def _on_author(self, value: str, start: int, end: int) -> None:
        draft = self._require_draft(start)
        if not value:  # a repair's: a header with no author is the parser's role's (HG175)
            draft.role = self.role
            return
        draft.role = Role.of_author(value)
        if draft.role is Role.TOOL:
            draft.name = value
            if self._completion:
                self.diagnose(
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
        # A repair's empty name (a <|channel|> with none, HG175) is no channel.
        self._require_draft(start).channel = value or None

    def _on_constrain(self, value: str, start: int, end: int) -> None:
        self._require_draft(start).constrained = True

    def _on_content_type(self, value: str, start: int, end: int) -> None:
        draft = self._require_draft(start)
        if not value:  # a repair's: <|constrain|> that no content type followed (HG175)
            draft.content_type, draft.constrained = None, False
            return
        draft.content_type = ControlToken.CONSTRAIN.value + value if draft.constrained else value

    def _on_message(self, value: str, start: int, end: int) -> None:
        draft = self._require_draft(start)
        if self._repairs and (draft.recipient is not None or draft.content_type is not None):
            # The HEADER_COMPLETE rows read a recipient or a content type (repairs.py): a
            # header with neither has nothing for them.
            self.complete_header(draft, start)
        draft.content = []
        draft.body_start = end
        if draft.is_tool_call:
            draft.call_id = self._call_id()
            if self._tools is not None and draft.recipient is not None:
                self._call_check = CallCheck.open(
                    self._tools,
                    draft.recipient,
                    self.diagnose,
                    exact=self.exact_positions,
                    start=draft.start,
                    end=end,
                )
        if self.events is not None:
            self.events.append(
                HeaderComplete(
                    draft.role, draft.name, draft.recipient, draft.channel, draft.content_type
                )
            )
            if draft.call_id is not None and draft.recipient is not None:
                name = draft.recipient.removeprefix("functions.")
                self.events.append(ToolCallStart(name, draft.recipient, draft.call_id))

    def complete_header(self, draft: Draft, at: int) -> None:
        """Run the repairs of a complete header (the ``HEADER_COMPLETE`` rows)."""
        for repair in self._repairs.header_complete:
            repair(self, draft, at)

    def _on_content(self, value: str, start: int, end: int) -> None:
        self._require_draft(start).content_fed = True

    def _on_terminator(self, value: str, start: int, end: int) -> None:
        self.finish(_TERMINATOR_BY_SPELLING[value], end)

    def _require_draft(self, start: int) -> Draft:
        if self.draft is None:  # only a synthetic repair can get here without <|start|>
            self.draft = Draft(start=start, role=self.role)
        return self.draft

    def finish(self, terminator: Terminator | None, end: int) -> None:
        draft = self.draft
        if draft is None:
            return
        self.draft = None
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
        self._content_spans.append(draft.content_spans)  # the draft is done with it
        self._bodies.append(draft.body_start)
        call_check, self._call_check = self._call_check, None
        if call_check is not None:
            call_check.close(message.content, draft.start, end)
        if draft.is_tool_call and terminator is not Terminator.CALL:
            how = f"<|{terminator.value}|>" if terminator else "the end of input"
            self.diagnose(
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

    # ------------------------------------------------------------------ accounting
    def discard(self, start: int, end: int) -> None:
        """Record ``[start, end)`` as held by no message (a diagnostic must name it)."""
        if end <= start:
            return
        spans = self._discarded
        if spans and spans[-1] >= start:
            spans[-1] = max(spans[-1], end)
        else:
            spans += (start, end)

    def ledger(self, length: int) -> Ledger:
        """The ledger of the parse so far (``length``: the input's length in its units); a
        snapshot: parsing on does not change it."""
        return Ledger(
            length,
            list(self._content_spans),
            list(self._discarded),
            list(self._bodies),
            self._next_turn_span,
        )

    # ------------------------------------------------------------------ diagnostics
    def diagnose(
        self, code: str, message: str, start: int, end: int, expected: tuple[str, ...] = ()
    ) -> None:
        if self.overflow.full(len(self.diagnostics), code):
            return
        diagnostic = make_diagnostic(
            code, message, start, max(start, end), lines=self._lines, expected=expected
        )
        self.diagnostics.append(diagnostic)
        if self.events is not None:
            self.events.append(DiagnosticEvent(diagnostic))

    def _error(
        self, code: str, message: str, start: int, end: int, expected: tuple[str, ...] = ()
    ) -> None:
        """An unrecoverable error: report it and skip to the next ``<|start|>``."""
        skip = "" if code == "HG102" else "; skipped to the next <|start|>"
        self.diagnose(code, message + skip, start, end, expected)
        # What the error abandons is discarded: the message being read, the pending text.
        draft, pending = self.draft, self._pending
        first = min(
            draft.start if draft is not None else start,
            pending.start if pending.start >= 0 else start,
            start,
        )
        self.discard(first, max(end, pending.end))
        self._skipping = True
        self.draft = None
        self._pending = PendingText()

    def _unexpected_token(self, terminal: str, value: str, start: int, end: int) -> None:
        for repair in self._repairs.rejected_token:
            if repair(self, terminal, value, start, end):
                return
        if terminal == _CONTENT:
            described = "message content"
        else:
            described = value if terminal in _CONTROL_TERMINALS else f"{terminal} {value!r}"
        self._error("HG100", f"unexpected {described}", start, end, expected=self._expected())

    def _unexpected_text(self, text: str, pos: int, start: int, end: int) -> int:
        """Handle unlexable header text at ``text[pos:]``; returns where lexing resumes."""
        for repair in self._repairs.unlexable_text:
            resume = repair(self, text, pos, start, end)
            if resume is not None:
                return int(resume)
        shown = text[pos : pos + 24]
        self._error("HG101", f"unexpected text {shown!r}", start, end, expected=self._expected())
        return len(text)


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
