"""What most likely produced a deviation, and how to fix it at the source: read from the codes.

A diagnostic's code says *what* the parser saw; its record in :mod:`.codes` says what most
likely produced it and the fix where the output is produced (:class:`~.codes.Cause`).
``validate`` prints each hint once per run; ``harmony-grammar repair`` prints it beside the
diagnostics. This module only reads the records: a new cause is a field of a code's record.
"""

from __future__ import annotations

from collections.abc import Iterable

from .codes import CATALOGUE, Cause

__all__ = ["CAUSES", "Cause", "cause_of", "causes_of"]

#: Code -> most likely cause, for the codes whose record names one (every lenient repair).
CAUSES: dict[str, Cause] = {
    code: entry.cause for code, entry in CATALOGUE.items() if entry.cause is not None
}


def cause_of(code: str) -> Cause | None:
    """The most likely cause of diagnostic ``code`` and its fix, or None when none is known."""
    return CAUSES.get(code)


def causes_of(codes: Iterable[str]) -> list[tuple[tuple[str, ...], Cause]]:
    """Each distinct cause among ``codes``, with the codes that point to it, in first-seen order.

    A cause shared by several codes (a stripped stop token is HG102 or HG159) is listed once,
    so a summary prints each hint once; codes without a cause are left out.
    """
    grouped: dict[Cause, list[str]] = {}
    for code in dict.fromkeys(codes):
        cause = CAUSES.get(code)
        if cause is not None:
            grouped.setdefault(cause, []).append(code)
    return [(tuple(group), cause) for cause, group in grouped.items()]
