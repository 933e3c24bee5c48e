"""The catalogue of diagnostic codes: one table, documented in ``docs/diagnostics.md``.

Codes are stable: ``HG1xx`` come from parsing (the grammar and its recoveries), ``HG2xx`` from
the validator's rules, ``HG3xx`` from preparing fine-tuning data (docs/training.md). A code
keeps its meaning forever; retired codes are not reused.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .model import Diagnostic, Severity

__all__ = ["CATALOGUE", "MAX_DIAGNOSTICS", "Code", "LineIndex", "Overflow", "make_diagnostic"]

#: The most diagnostics one input keeps (parse, stream, validate, each dataset record): a flood
#: of problems is one input's story told a thousand times, and keeping it all is unbounded
#: memory. The rest are counted in one HG107 at the end.
MAX_DIAGNOSTICS = 1000


@dataclass(frozen=True, slots=True)
class Code:
    """A catalogue entry: the code, a short slug, its default severity and a summary."""

    code: str
    slug: str
    severity: Severity
    summary: str


_E, _W = Severity.ERROR, Severity.WARNING

#: Every parser diagnostic. Lenient recoveries (HG15x-HG17x) are warnings: the input was
#: repaired. HG170 is a warning from the parser (the messages parsed) and an error from the
#: validator: a model forging a tool's result is a safety problem, not a syntax one.
CATALOGUE: dict[str, Code] = {
    c.code: c
    for c in (
        Code("HG100", "unexpected-token", _E, "a control token the grammar does not allow here"),
        Code("HG101", "unexpected-text", _E, "header text the grammar does not allow here"),
        Code("HG102", "unexpected-end", _E, "the input ends inside a message"),
        Code("HG103", "unknown-special-token", _E, "a special token id that is not Harmony"),
        Code("HG104", "header-too-long", _E, "a header longer than the configured limit"),
        Code("HG105", "invalid-utf8", _W, "token ids whose bytes are not valid UTF-8"),
        Code("HG106", "not-a-token-id", _E, "an element of the ids that is not an integer"),
        Code("HG107", "too-many-diagnostics", _W, "diagnostics past the limit were counted only"),
        Code("HG110", "spelled-control-token", _W, "a control-token spelling in ordinary text"),
        Code("HG150", "missing-message-token", _W, "a header ended without <|message|>"),
        Code("HG151", "missing-start-token", _W, "a message began without <|start|>"),
        Code("HG152", "text-between-messages", _W, "text outside the turn kept as a message"),
        Code("HG153", "call-not-ended-by-call", _W, "a tool call that did not end in <|call|>"),
        Code("HG154", "glued-content-type", _W, "a content type glued onto the recipient"),
        Code("HG155", "content-type-case", _W, "a content type not in lower case"),
        Code("HG156", "header-garbage", _W, "stray characters in a header, read as no field"),
        Code("HG157", "duplicate-channel", _W, "a second <|channel|> in one header"),
        Code("HG158", "duplicate-recipient", _W, "a second to= in one header"),
        Code("HG159", "missing-terminator", _W, "the input ended before the message's terminator"),
        Code("HG160", "stripped-control-tokens", _W, "a header whose control tokens were stripped"),
        Code("HG161", "prose-in-header", _W, "prose where a header should end, no <|message|>"),
        Code("HG162", "call-like-text", _E, "a call written in text that could not be read"),
        Code("HG163", "headerless-completion", _W, "a completion with no header: one message"),
        Code("HG164", "headerless-message", _W, "text between messages kept as a message"),
        Code("HG165", "call-without-channel", _W, "a call with no channel read on commentary"),
        Code("HG166", "tool-in-channel-slot", _W, "a tool's name where the channel belongs"),
        Code("HG167", "stray-to-assistant", _W, "a stray to=assistant in the assistant's header"),
        Code("HG168", "call-shaped-as-reply", _W, "a call written in a tool reply's header"),
        Code("HG169", "recipient-without-namespace", _W, "a declared function without functions."),
        Code("HG171", "junk-before-header", _W, "text or an echoed <|start|> before the header"),
        Code("HG175", "stray-control-token", _W, "a control token nothing accepts, discarded"),
        Code("HG176", "leading-recipient", _W, "a completion that began with its recipient"),
        Code("HG177", "glued-word", _W, "a Harmony word glued to text, read as that word"),
        Code("HG178", "header-text-as-content", _W, "header text no field reads, as content"),
        Code("HG179", "field-out-of-order", _W, "a header field written after a later one"),
        Code("HG170", "forged-tool-result", _W, "the model began writing a tool's result itself"),
        Code("HG172", "recipient-after-content-type", _W, "a to= written after the content type"),
        Code("HG173", "non-ascii-channel", _W, "a channel name with non-ASCII letters, kept whole"),
        Code("HG174", "spelled-constrain", _W, "ordinary ids spelling <|constrain|> in a header"),
        Code(
            "HG180", "arguments-off-schema", _E, "tool-call arguments no valid document can follow"
        ),
        Code("HG181", "unknown-tool", _E, "a call to a function that is not among the tools"),
        Code("HG182", "arguments-too-deep", _E, "call arguments nested deeper than the limit"),
        Code("HG183", "number-too-long", _E, "a number in call arguments with too many digits"),
        Code("HG184", "lone-surrogate", _E, "call arguments holding a lone surrogate"),
        Code("HG200", "missing-channel", _E, "an assistant message without a channel"),
        Code("HG201", "unknown-channel", _E, "a channel the system message does not declare"),
        Code("HG202", "call-on-analysis", _W, "a function call on the analysis channel"),
        Code("HG203", "result-without-call", _E, "a tool result that answers no pending call"),
        Code("HG204", "result-out-of-order", _E, "a tool result that overtakes an earlier call"),
        Code("HG205", "result-from-role", _E, "a tool result whose author is not a tool"),
        Code("HG206", "unanswered-call", _E, "the conversation moves on from a call unanswered"),
        Code("HG207", "fenced-call", _E, "Markdown fences around a call's arguments"),
        Code("HG208", "html-entities", _W, "HTML entities in a call's JSON arguments"),
        Code("HG209", "reserved-spelling", _W, "a special-token spelling inside content"),
        Code("HG210", "preamble-not-ended", _E, "a commentary preamble not ended by <|end|>"),
        Code("HG211", "misplaced-return", _E, "<|return|> anywhere but a completion's final end"),
        Code("HG212", "dropped-analysis", _W, "a pending call whose analysis was dropped"),
        Code("HG213", "call-token-without-call", _E, "<|call|> ending a message that is no call"),
        Code("HG214", "forged-declaration", _E, "a tools section declaring what no tool declared"),
        Code("HG290", "invalid-record", _E, "a dataset record that holds no Harmony input"),
        Code("HG300", "unimportable-record", _E, "a record that cannot be read as a conversation"),
        Code("HG301", "example-too-long", _E, "a training example over the length limit, skipped"),
        Code("HG302", "example-truncated", _W, "a training example cut to the length limit"),
        Code("HG303", "nothing-to-train", _E, "a training example with no token masked in"),
        Code("HG304", "unrenderable-record", _E, "a conversation the renderer cannot render"),
    )
}


class LineIndex:
    """Maps character offsets to 1-based (line, column), fed text as it passes by.

    Only newline offsets are kept, never the text, so a stream can use it too.
    """

    def __init__(self) -> None:
        self._newlines: list[int] = []

    def add(self, text: str, offset: int) -> None:
        """Record the newlines of ``text``, which starts at ``offset`` of the input."""
        if "\n" in text:
            find = text.find
            i = find("\n")
            while i >= 0:
                self._newlines.append(offset + i)
                i = find("\n", i + 1)

    def locate(self, offset: int) -> tuple[int, int]:
        """The (line, column) of ``offset``."""
        line = bisect.bisect_left(self._newlines, offset)
        line_start = self._newlines[line - 1] + 1 if line else 0
        return line + 1, offset - line_start + 1


def make_diagnostic(
    code: str,
    message: str,
    start: int,
    end: int,
    *,
    lines: LineIndex | None = None,
    expected: tuple[str, ...] = (),
    severity: Severity | None = None,
) -> Diagnostic:
    """A :class:`Diagnostic` for a catalogued code (line and column when ``lines`` is given)."""
    entry = CATALOGUE[code]
    line = column = None
    if lines is not None:
        line, column = lines.locate(start)
    return Diagnostic(
        code=code,
        severity=severity or entry.severity,
        message=message,
        start=start,
        end=end,
        line=line,
        column=column,
        expected=expected,
    )


_OVERFLOW_COUNT = re.compile(r"\A(\d+) more diagnostics \((\d+) errors\)")


class Overflow:
    """Keeps the first :data:`MAX_DIAGNOSTICS` diagnostics and counts the rest (HG107).

    The HG107 diagnostic says how many were dropped and how many of those were errors; its
    severity is error when any was, so ``ok`` answers as if nothing had been dropped.
    """

    def __init__(self, limit: int = MAX_DIAGNOSTICS) -> None:
        self.limit = limit
        self.dropped = 0
        self.errors = 0

    def full(self, kept: int, code: str) -> bool:
        """True (and the diagnostic of ``code`` counted) when ``kept`` reached the limit."""
        if kept < self.limit:
            return False
        self.dropped += 1
        self.errors += CATALOGUE[code].severity is Severity.ERROR
        return True

    def cap(self, diagnostics: Iterable[Diagnostic], end: int) -> tuple[Diagnostic, ...]:
        """The first ``limit`` of ``diagnostics`` (an earlier HG107 merged in), then HG107."""
        kept: list[Diagnostic] = []
        for diagnostic in diagnostics:
            if diagnostic.code == "HG107":
                match = _OVERFLOW_COUNT.match(diagnostic.message)
                if match is not None:
                    self.dropped += int(match.group(1))
                    self.errors += int(match.group(2))
                    continue
            if len(kept) < self.limit:
                kept.append(diagnostic)
            else:
                self.dropped += 1
                self.errors += diagnostic.severity is Severity.ERROR
        if self.dropped:
            kept.append(
                make_diagnostic(
                    "HG107",
                    f"{self.dropped} more diagnostics ({self.errors} errors) after the first"
                    f" {self.limit} were counted, not kept",
                    end,
                    end,
                    severity=Severity.ERROR if self.errors else None,
                )
            )
        return tuple(kept)
