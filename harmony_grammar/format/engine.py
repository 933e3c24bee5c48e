"""The parsing engine: Lark's LALR parser of ``harmony.lark`` driven over lexed pieces.

Theory of operation
-------------------
The lexers (``lexer.py``) push three kinds of pieces: control tokens, text, and (for token
ids) special ids that are not Harmony. The engine owns one Lark interactive parser.

* A control token is fed to the parser as its own terminal.
* Text inside a message body is fed as a single ``CONTENT`` terminal the first time and then
  only appended to the message: content is never lexed, so it can stream.
* Any other text (a header, or the gap between messages) waits until the token that ends
  it; in lenient mode a header's own ``<|channel|>``/``<|constrain|>`` wait with it, and the
  header is read whole (:mod:`.header_reader`, :mod:`.headers`).

A rejected token leaves the parser untouched; the repair table (:mod:`.repairs`; empty in
strict mode) may then repair the input with synthetic terminals, each repair with its own
code; anything else is an error, and everything up to the next ``<|start|>`` is skipped.

Every piece of input is accounted for (:class:`.model.Accounting`): header fields with
their slices, unread header text, content ranges, and what no message holds is discarded
and named by a diagnostic. What a terminal *means* is :mod:`.actions`; the order in which
terminals may come is the grammar's alone.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..declarations.typescript import declared_names
from .actions import ACTIONS
from .diagnostics import LineIndex, Overflow, make_diagnostic
from .draft import Draft, PendingText
from .events import (
    DiagnosticEvent,
    Event,
    MessageEnd,
    MessageStart,
    StopGeneration,
    ToolCallEnd,
    content_delta,
    tool_call_delta,
)
from .grammar import expected_description, harmony_parser, header_lexer
from .header_reader import HEADER_TOKENS, lex_pending, lexes_as_header, read_pending
from .lalr import LalrDriver, parse_table
from .lexer import TextRun
from .model import (
    Diagnostic,
    Ledger,
    Message,
    Role,
    Span,
    Terminator,
    author_text,
    parsed_message,
)
from .options import DEFAULT_MAX_HEADER_LENGTH, CallArguments, ParseKeywords, ParseOptions
from .repairs import LENIENT, STRICT
from .tokens import (
    FIRST_SPECIAL_ID,
    LAST_SPECIAL_ID,
    TERMINATORS,
    ControlToken,
    special_token_spelling,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["DEFAULT_MAX_HEADER_LENGTH", "Engine"]

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
_CONSTRAIN = ControlToken.CONSTRAIN.terminal
#: Tokens a row may leave held with the header text it opened (they join that header).
_HELD_CLOSERS = frozenset({_CHANNEL, _CONSTRAIN})
_CONTENT = "CONTENT"
#: How many distinct delta events one message shares (Draft.deltas): bounded memory.
_SHARED_DELTAS = 4096
#: Bare content types a header holds even when it never reached ``<|message|>``.
_BARE_CONTENT_TYPES = frozenset({"json", "code"})


class Engine:
    """Parses pieces into messages and diagnostics; optionally records stream events.

    The options are one :class:`~.options.ParseOptions` and its fields as keywords, as for
    :func:`~.parser.parse`. ``token_units`` says that positions are token indexes (no
    line/column). ``events`` is a list to append :mod:`events` to, or None when nobody listens.
    ``stripped_dialect`` says whether lenient mode reads ordinary text as stripped control
    tokens (:mod:`.stripped`); None means for text input only (token ids are authoritative:
    only special ids are structure).
    """

    def __init__(
        self,
        options: ParseOptions | None = None,
        *,
        token_units: bool = False,
        events: list[Event] | None = None,
        **keywords: Unpack[ParseKeywords],
    ) -> None:
        opts = ParseOptions.of(options, keywords)
        start, role, strict = opts.start, opts.author, not opts.lenient
        max_header_length, call_id, tools = opts.max_header_length, opts.call_id, opts.schemas
        stripped_dialect = opts.stripped_dialect
        if start not in _RESYNC_START:
            raise ValueError(f"start must be one of {', '.join(_RESYNC_START)}, not {start!r}")
        self._table = parse_table(harmony_parser())
        self.lexer = header_lexer()
        self.parser = LalrDriver(self._table, start)
        self._resync_start = _RESYNC_START[start]
        self._completion = start == "completion"
        self.role = role
        #: The repair table: strict mode is the empty one.
        self.repairs = STRICT if strict else LENIENT
        #: The control tokens that wait with their header's text (lenient: read whole).
        self._held_tokens = HEADER_TOKENS if self.repairs else frozenset()
        #: How pending text is read: whole headers with the table, or the grammar's lexing.
        self._read_pending = read_pending if self.repairs else lex_pending
        #: Whether ordinary text may be read as stripped control tokens (lenient only).
        self.reads_stripped = not strict and (
            not token_units if stripped_dialect is None else stripped_dialect
        )
        self.max_header_length = max_header_length
        self._lines: LineIndex | None = None if token_units else LineIndex()
        #: Where events go (None: nobody listens); the stream parser swaps in fresh lists.
        self.events = events
        self.new_call_id = call_id or _counter_ids()
        self.tools = tools
        #: The namespaces' tools by recipient (``NAMESPACE.fn``): their calls are checked too.
        self.namespaced: Mapping[str, Any] = opts.namespaced
        #: How call arguments are checked (None: only that the function is declared).
        self.argument_check = opts.argument_check
        self.call_check: CallArguments | None = None
        self._pending = PendingText()
        self.skipping = False
        self.messages: list[Message] = []
        self._tool_names: frozenset[str] | None = None  # once per declaration, not per header
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
        self._fields: list[list[tuple[str, int, int]]] = []
        self._unread: list[list[int]] = []
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
        if token in self._held_tokens:
            # Lenient: a header's own tokens wait with its text; it is read whole.
            if not self.header_open:
                self.flush_pending(_TERMINAL_OF[token])  # text before it may open one
            if self.header_open:
                self.hold(token, _SPELLING_OF[token], start, end)
                return
        self.flush_pending(_TERMINAL_OF[token])
        if self.skipping:
            if token is not ControlToken.START:
                self.discard(start, end)
                return
            self.skipping = False
            self.parser = LalrDriver(self._table, self._resync_start)
        self.feed(_TERMINAL_OF[token], _SPELLING_OF[token], start, end)

    def text(self, text: str, start: int, end: int) -> None:
        """Text at ``[start, end)`` (any part of a message body, header or gap)."""
        if self._lines is not None:
            self._lines.add(text, start)
        draft = self.draft
        if draft is not None and draft.content_fed and self.call_check is None:
            # The hot path: more of a body already open (see route_text for the rest).
            draft.content.append(text)  # type: ignore[union-attr]
            spans = draft.content_spans
            if spans[-1] >= start:  # ids: a split character's ids overlap the last range
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
        if self.skipping:
            self.discard(start, end)
            return
        self.route_text(text, start, end)

    def route_text(self, text: str, start: int, end: int) -> None:
        """Route text already counted for positions: message content, or pending header text."""
        draft = self.draft
        if draft is not None and draft.content is not None:
            if not draft.content_fed:
                self.feed(_CONTENT, "", start, start)
                if self.skipping:
                    return
            draft.content.append(text)
            spans = draft.content_spans
            if spans and spans[-1] >= start:
                spans[-1] = end
            else:
                spans += (start, end)
            if self.call_check is not None:
                self.call_check.feed(text, start, end)
            if self.events is not None:
                if draft.call_id is not None:
                    self.events.append(tool_call_delta(text, draft.call_id))
                else:
                    self.events.append(content_delta(text, draft.channel))
            return
        self.hold(None, text, start, end)
        pending = self._pending
        pending.length += len(text)
        if pending.length > self.max_header_length:
            # In text, end at the first character past the limit: where the chunk that crossed
            # it ends depends on how the input was fed, and stream must equal batch.
            over = pending.start + self.max_header_length + 1 if self.exact_positions else end
            if not any(repair(self, pending, over) for repair in self.repairs.long_header):
                what = f"header text is longer than {self.max_header_length} characters"
                self.error("HG104", what, pending.start, over)

    def hold(self, token: ControlToken | None, text: str, start: int, end: int) -> None:
        """Keep a piece of header text (or, lenient, a header's control token) for its
        header: it is read when the header ends."""
        pending = self._pending
        if pending.start < 0:
            pending.start = start
        pieces = pending.pieces
        if token is None and pieces and pieces[-1][0] is None:
            # One piece per run of text, however it was chunked (token ids: positions are
            # whole runs, and stream must equal batch; a split UTF-8 character's ids may
            # leave the parts' ranges apart).
            last = pieces[-1]
            pieces[-1] = (None, last[1] + text, last[2], end)
        else:
            pieces.append((token, text, start, end))
        pending.end = end

    @property
    def header_open(self) -> bool:
        """Whether a header is being read (its ``<|message|>`` not yet come)."""
        draft = self.draft
        return draft is not None and draft.content is None

    def take_pending(self) -> PendingText:
        """Hand over the pending header text (a repair reads it), leaving none."""
        pending, self._pending = self._pending, PendingText()
        return pending

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

    def partial(self, text: str, start: int, end: int) -> None:
        """The start of a control token's spelling at the end of input (text only): text,
        as the grammar reads it, in strict mode (no repair); debris in lenient mode."""
        if not self.repairs:
            self.text(text, start, end)
            return
        if self._lines is not None:
            self._lines.add(text, start)
        self.flush_pending("$END")
        self.discard(start, end)
        self.diagnose("HG175", f"{text!r}, a control token cut short, was discarded", start, end)

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
        self.flush_pending("$END")
        if self.skipping:
            return
        # A prompt's trailing <|start|>{author} is complete input (next_turn), not a header
        # cut short: only input the grammar cannot end here is repaired.
        if not self.parser.feed_eof() and not any(
            repair(self, end) for repair in self.repairs.end_of_input
        ):
            self.error(
                "HG102",
                "the input ends inside a message",
                end,
                end,
                expected=self.expected_terminals(),
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
                self.error("HG100", f"a repair could not feed {terminal} here", start, end)
                return
            self._unexpected_token(terminal, value, start, end)
            return
        action = ACTIONS.get(terminal)
        if action is not None:
            action(self, value, start, end)

    def act(self, terminal: str, value: str, start: int, end: int) -> None:
        """Run the action of a terminal the parser already took."""
        action = ACTIONS.get(terminal)
        if action is not None:
            action(self, value, start, end)

    def expected_terminals(self) -> tuple[str, ...]:
        return expected_description(
            {
                name
                for name in self.parser.choices()
                if name.isupper() or name.startswith(("$", "_"))
            }
        )

    def flush_pending(self, closer: str) -> None:
        """Read the pending header text; ``closer`` is the terminal that ends it (or $END)."""
        while self._pending.start >= 0:
            pending = self._pending
            self._pending = PendingText()
            if self.skipping:
                return
            self._read_pending(self, pending.pieces, closer)
            if closer in _HELD_CLOSERS and self.header_open:
                return  # a row opened a header and held its text: the token joins them

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
        if self._tool_names is None:
            self._tool_names = (
                frozenset(self.tools) if self.tools is not None else declared_names(self.messages)
            )
        return self._tool_names

    @property
    def stopped(self) -> bool:
        """True once ``<|call|>`` or ``<|return|>`` (or an abort) ended the turn."""
        return self.stop_reason is not None

    @property
    def resync_start(self) -> str:
        """The grammar's start symbol a message may begin from again (after an error)."""
        return self._resync_start

    def restart(self, start: str) -> None:
        """Drop the message being parsed and parse on from the grammar's ``start`` symbol."""
        self.parser = LalrDriver(self._table, start)
        self.draft = None

    def lexes_as_header(self, text: str) -> bool:
        """Whether the whole of ``text`` lexes as header text here (the parser is untouched)."""
        return lexes_as_header(self, self.parser, text)

    def lexes_as_header_after_start(self, text: str) -> bool:
        """Whether ``<|start|>`` then ``text`` would lex as header text here (untouched)."""
        driver = self.parser.copy()
        return driver.feed(_START) and lexes_as_header(self, driver, text)

    # ------------------------------------------------------------------ actions
    def _begin(self, start: int) -> None:
        self.draft = Draft(start=start, role=self.role)
        self.draft.fields.append(("author", -1, -1))  # a completion's role: a default
        if self.events is not None:
            self.events.append(MessageStart(start))

    def complete_header(self, draft: Draft, at: int) -> None:
        """Run the repairs of a complete header (the ``HEADER_COMPLETE`` rows)."""
        for repair in self.repairs.header_complete:
            repair(self, draft, at)

    def finish(self, terminator: Terminator | None, end: int) -> None:
        draft = self.draft
        if draft is None:
            return
        self.draft = None
        message = parsed_message(
            role=draft.role,
            content="".join(draft.content or ()),
            name=draft.name,
            recipient=draft.recipient,
            channel=draft.channel,
            content_type=draft.content_type,
            terminator=terminator,
            recipient_position=draft.recipient_position,
            span=Span(draft.start, end),
            unread="".join(draft.unread),
            superseded=" ".join(draft.superseded),
        )
        self.messages.append(message)
        if message.role is Role.DEVELOPER:
            self._tool_names = None  # a new declaration: read again when next asked
        self._fields.append(draft.fields)
        self._unread.append(draft.unread_spans)
        self._content_spans.append(draft.content_spans)  # the draft is done with it
        self._bodies.append(draft.body_start)
        call_check, self.call_check = self.call_check, None
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
            # A call ended otherwise (HG153) is still a call wherever the table recovers it.
            recovered = bool(self.repairs) and terminator is not None
            if draft.call_id is not None and (terminator is Terminator.CALL or recovered):
                events.append(ToolCallEnd(draft.call_id, message.content))
            events.append(MessageEnd(message))
        if terminator is Terminator.CALL or terminator is Terminator.RETURN:
            self.stop(terminator.value, end)

    def stop(self, reason: str, position: int) -> None:
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
        if spans and start < spans[-2]:  # held text discarded after a later token: re-sort
            pairs = sorted([*zip(spans[::2], spans[1::2], strict=True), (start, end)])
            spans.clear()
            for first, last in pairs:
                self.discard(first, last)
        elif spans and spans[-1] >= start:
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
            list(self._fields),
            list(self._unread),
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

    def error(
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
        self.skipping = True
        self.draft = None
        self._pending = PendingText()

    def _unexpected_token(self, terminal: str, value: str, start: int, end: int) -> None:
        for repair in self.repairs.rejected_token:
            if repair(self, terminal, value, start, end):
                return
        if terminal == _CONTENT:
            described = "message content"
        else:
            described = value if terminal in _CONTROL_TERMINALS else f"{terminal} {value!r}"
        self.error(
            "HG100", f"unexpected {described}", start, end, expected=self.expected_terminals()
        )


def _counter_ids() -> Callable[[], str]:
    counter = iter(range(1, 1 << 62))
    return lambda: f"call_{next(counter)}"


_CONTROL_TERMINALS = frozenset(token.terminal for token in ControlToken)
