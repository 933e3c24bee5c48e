"""Making diagnostics: the catalogue's codes (:mod:`.codes`), positions, the overflow cap.

Every code is one record of :data:`~.codes.CATALOGUE` (data in ``format/codes.json``), documented in
docs/diagnostics.md, which is generated from the records. :func:`make_diagnostic` is the one
way a diagnostic is made: from a catalogued code, with the record's severity unless told.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping

from .codes import CATALOGUE, Code
from .model import Diagnostic, Severity

__all__ = ["CATALOGUE", "MAX_DIAGNOSTICS", "Code", "LineIndex", "Overflow", "make_diagnostic"]

#: The most diagnostics one input keeps (parse, stream, validate, each dataset record): a flood
#: of problems is one input's story told a thousand times, and keeping it all is unbounded
#: memory. The rest are counted in one HG107 at the end.
MAX_DIAGNOSTICS = 1000

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
    facts: Mapping[str, int] | None = None,
) -> Diagnostic:
    """A :class:`Diagnostic` for a catalogued code (line and column when ``lines`` is given).

    ``facts`` are the counts the code's record names (``Code.facts``), no others.
    """
    entry = CATALOGUE[code]
    line = column = None
    if lines is not None:
        line, column = lines.locate(start)
    named = tuple((facts or {}).items())
    unknown = [name for name, _ in named if name not in entry.facts]
    if unknown:
        raise ValueError(f"{code} carries no facts named {unknown} (it has {entry.facts})")
    return Diagnostic(
        code=code,
        severity=severity or entry.severity,
        message=message,
        start=start,
        end=end,
        line=line,
        column=column,
        expected=expected,
        facts=named,
    )


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
            dropped = diagnostic.fact("dropped")  # an earlier cap's count (HG107's fact)
            if dropped is not None:
                self.dropped += dropped
                self.errors += diagnostic.fact("errors") or 0
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
                    facts={"dropped": self.dropped, "errors": self.errors},
                )
            )
        return tuple(kept)
