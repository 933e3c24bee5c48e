"""The repair table: every lenient repair, one row each, keyed by where the engine asks.

Theory of operation
-------------------
The engine (:mod:`.engine`) parses by the grammar alone. At five points it may ask for help,
and each point is a *hook* of this table:

``REJECTED_TOKEN``
    the LALR table refused a control token;
``BEFORE_LEX``
    header text is about to be lexed where the lexer reads no field yet (no match, a
    separating space, or a channel name a dotted tool name may go on from): a repair sees
    it first;
``UNLEXABLE_TEXT``
    header text that no terminal the parser accepts can lex;
``PENDING_TEXT``
    text outside a message body is complete (the token that ends it is known) and about to
    be lexed as a header: the place to read what it really is; a row runs only where it can
    apply (:class:`Where`: inside an open header, between messages, a completion's start);
``HEADER_COMPLETE``
    ``<|message|>`` arrived: the whole header is known (its rows read a recipient or a
    content type, so a header with neither is not asked: tests/format/test_lossless.py checks it);
``END_OF_INPUT``
    the input ended where the grammar cannot end.

A row names the codes it reports, the shape it reads and what it produces, and points at
its function (in :mod:`.recoveries` or :mod:`.readings`). At a hook the rows run in order
and the first that applies wins; a row that declines returns a falsy value. Strict mode is
the empty table: every deviation is then an error with its position.

The rows never know the syntax themselves: they ask the parser which terminals it accepts
and feed terminals of ``harmony.lark``. And none of them drops text: what a header cannot
hold becomes the content of a message; only control-token debris is discarded
(:class:`.model.Accounting`). Each code is reported by one function; the rows below say which.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import readings, recoveries

__all__ = ["LENIENT", "STRICT", "Hook", "Repair", "RepairTable", "Where"]


class Hook(str, enum.Enum):
    """Where the engine asks the table for help (see the module docstring)."""

    REJECTED_TOKEN = "rejected-token"
    BEFORE_LEX = "before-lex"
    UNLEXABLE_TEXT = "unlexable-text"
    PENDING_TEXT = "pending-text"
    HEADER_COMPLETE = "header-complete"
    END_OF_INPUT = "end-of-input"


class Where(str, enum.Enum):
    """Where pending text stands (``PENDING_TEXT`` rows run only where they can apply)."""

    OPEN_HEADER = "open-header"  # inside a header that ``<|start|>`` (or a repair) opened
    BETWEEN = "between"  # outside any message
    COMPLETION_START = "completion-start"  # nothing of a completion's first header read yet


_ANYWHERE = frozenset(Where)


@dataclass(frozen=True, slots=True)
class Repair:
    """One row: the codes it reports, where it runs, what it reads and produces."""

    codes: tuple[str, ...]
    hook: Hook
    reads: str
    produces: str
    apply: Callable[..., Any]
    where: frozenset[Where] = _ANYWHERE


class RepairTable:
    """The rows, grouped by hook in order, as tuples of functions the engine calls."""

    def __init__(self, rows: tuple[Repair, ...]) -> None:
        self.rows = rows
        by_hook = {hook: tuple(r.apply for r in rows if r.hook is hook) for hook in Hook}
        self.rejected_token = by_hook[Hook.REJECTED_TOKEN]
        self.before_lex = by_hook[Hook.BEFORE_LEX]
        self.unlexable_text = by_hook[Hook.UNLEXABLE_TEXT]
        #: The PENDING_TEXT rows, by where the text stands.
        self.pending_text = {
            where: tuple(r.apply for r in rows if r.hook is Hook.PENDING_TEXT and where in r.where)
            for where in Where
        }
        self.header_complete = by_hook[Hook.HEADER_COMPLETE]
        self.end_of_input = by_hook[Hook.END_OF_INPUT]

    def __bool__(self) -> bool:
        return bool(self.rows)

    def codes(self) -> frozenset[str]:
        """Every code a row of this table may report."""
        return frozenset(code for row in self.rows for code in row.codes)

    def markdown(self) -> str:
        """The table as docs/diagnostics.md shows it: one line per row, in order."""
        lines = ["| codes | hook | reads | produces | row |", "|---|---|---|---|---|"]
        for row in self.rows:
            module = row.apply.__module__.rsplit(".", 1)[-1]
            hook = row.hook.value
            if row.where != _ANYWHERE:
                hook += " (" + ", ".join(w.value for w in Where if w in row.where) + ")"
            lines.append(
                f"| {', '.join(row.codes)} | `{hook}` | {_cell(row.reads)} |"
                f" {_cell(row.produces)} | `{module}.{row.apply.__name__}` |"
            )
        return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


_T, _B, _U, _P, _H, _E = (
    Hook.REJECTED_TOKEN,
    Hook.BEFORE_LEX,
    Hook.UNLEXABLE_TEXT,
    Hook.PENDING_TEXT,
    Hook.HEADER_COMPLETE,
    Hook.END_OF_INPUT,
)

#: The lenient table. Order matters within a hook: the first row that applies wins.
LENIENT = RepairTable(
    (
        # -- a control token the grammar refuses
        Repair(
            ("HG171",),
            _T,
            "<|start|> at a completion's very start (the prompt echoed)",
            "a continuation from that <|start|>",
            recoveries.recover_echoed_start,
        ),
        Repair(
            ("HG159",),
            _T,
            "<|start|> or <|channel|> inside an open body",
            "the body ended there (no terminator); the token begins the next message",
            recoveries.recover_missing_terminator,
        ),
        Repair(
            ("HG150",),
            _T,
            "a terminator or <|start|> while the header is open",
            "an empty <|message|>, then the token",
            recoveries.recover_missing_message,
        ),
        Repair(
            ("HG151",),
            _T,
            "<|channel|> or <|message|> where a message must start",
            "<|start|>{role} before it",
            recoveries.recover_missing_start,
        ),
        Repair(
            ("HG157",),
            _T,
            "a second <|channel|> in one header",
            "the later channel name stands",
            recoveries.recover_duplicate_channel,
        ),
        Repair(
            ("HG175",),
            _T,
            "any other control token the grammar refuses",
            "the token discarded as debris (the one thing ever discarded)",
            recoveries.recover_stray_control_token,
        ),
        # -- header text, before it is lexed
        Repair(
            ("HG166",),
            _B,
            "a tool's dotted name where the channel belongs",
            "channel commentary to=NAME",
            readings.tool_in_channel_slot,
        ),
        Repair(
            ("HG156",),
            _B,
            "a space that no content type follows",
            "header garbage",
            recoveries.recover_space_without_type,
        ),
        Repair(
            ("HG158", "HG172"),
            _B,
            "' to=' where the header takes no recipient",
            "the recipient (after the content type) or a duplicate kept in the header",
            recoveries.recover_misplaced_recipient,
        ),
        # -- header text no accepted terminal can lex
        Repair(
            ("HG164", "HG152"),
            _U,
            "text between messages that is not a header",
            "a message of its own",
            readings.recover_stray_text,
        ),
        Repair(
            ("HG160",),
            _U,
            "a call's header running into its arguments",
            "<|message|> before the arguments",
            recoveries.recover_stripped_message,
        ),
        Repair(
            ("HG173",),
            _U,
            "a channel name with non-ASCII letters",
            "the whole word as the channel",
            recoveries.recover_channel_word,
        ),
        Repair(
            ("HG174",),
            _U,
            "ordinary ids spelling <|constrain|> in a header",
            "the control token",
            recoveries.recover_spelled_constrain,
        ),
        Repair(
            ("HG156",),
            _U,
            "stray characters in a header (no prose)",
            "kept in the header region, not read as any field",
            recoveries.recover_header_garbage,
        ),
        # -- pending text, once the token that ends it is known
        Repair(
            ("HG160",),
            _P,
            "a detokenizer's stripped headers (text input, or opt-in)",
            "the control tokens of each header",
            readings.read_stripped_headers,
        ),
        Repair(
            ("HG156",),
            _P,
            "whitespace ending a header's text before <|message|> or <|channel|>",
            "the header as written, the whitespace header garbage",
            readings.read_header_before_space,
            frozenset({Where.OPEN_HEADER, Where.COMPLETION_START}),
        ),
        Repair(
            ("HG176",),
            _P,
            "'to=NAME' with no space at a completion's start",
            "the role-section recipient",
            readings.read_leading_recipient,
            frozenset({Where.COMPLETION_START}),
        ),
        Repair(
            ("HG160",),
            _P,
            "a channel word where <|channel|> was stripped",
            "<|channel|> before it",
            readings.read_channel_without_token,
            frozenset({Where.OPEN_HEADER, Where.COMPLETION_START}),
        ),
        Repair(
            ("HG151",),
            _P,
            "an author between messages, its <|start|> lost",
            "<|start|> before it",
            readings.read_author_without_start,
            frozenset({Where.BETWEEN}),
        ),
        Repair(
            ("HG161",),
            _P,
            "prose or a body where a header should end, no <|message|>",
            "the header as far as it reads, the rest as content",
            readings.read_free_header,
            frozenset({Where.OPEN_HEADER, Where.COMPLETION_START}),
        ),
        Repair(
            ("HG163", "HG164", "HG152", "HG171"),
            _P,
            "text outside any header",
            "a message of its own",
            readings.read_headerless,
            frozenset({Where.BETWEEN, Where.COMPLETION_START}),
        ),
        # -- a complete header
        Repair(
            ("HG155",),
            _H,
            "a content type not in lower case",
            "the content type lower-cased",
            readings.repair_content_type_case,
        ),
        Repair(
            ("HG168",),
            _H,
            "a tool's reply header around a call's content type",
            "the assistant's call",
            readings.repair_call_shaped_as_reply,
        ),
        Repair(
            ("HG167",),
            _H,
            "to=assistant in the assistant's own header",
            "no recipient",
            readings.repair_stray_to_assistant,
        ),
        Repair(
            ("HG154",),
            _H,
            "a content type glued onto the recipient",
            "recipient and content type apart",
            readings.repair_glued_content_type,
        ),
        Repair(
            ("HG169",),
            _H,
            "a declared function named without functions.",
            "functions.NAME",
            readings.repair_bare_function_name,
        ),
        Repair(
            ("HG165",),
            _H,
            "a functions.* call with no channel",
            "channel commentary",
            readings.repair_call_without_channel,
        ),
        # -- the end of input where the grammar cannot end
        Repair(
            ("HG150",),
            _E,
            "a header still open",
            "the message as read, content empty",
            readings.header_at_end,
        ),
        Repair(
            ("HG159",), _E, "a body still open", "the message, no terminator", readings.body_at_end
        ),
    )
)

#: Strict mode: no repairs at all.
STRICT = RepairTable(())
