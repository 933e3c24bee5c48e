"""The repair table's mechanism: its hooks, its rows, and their grouping for the engine.

The rows themselves (the lenient table, and strict mode's empty one) are :mod:`.repairs`;
this module imports none of them, so the engine's protocols (:mod:`.engine_view`) can name
the table's type without importing the repairs that use those protocols.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .costs import COSTS

__all__ = ["Hook", "Repair", "RepairTable", "Where"]


class Hook(str, enum.Enum):
    """Where the engine asks the table for help (see the module docstring)."""

    REJECTED_TOKEN = "rejected-token"
    UNLEXABLE_TEXT = "unlexable-text"
    PENDING_TEXT = "pending-text"
    HEADER = "header"
    LONG_HEADER = "long-header"
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
    #: The cost records (``format/costs.json``) of the moves a ``HEADER`` row offers: the
    #: reading of least total cost wins.
    costs: tuple[str, ...] = ()


class RepairTable:
    """The rows, grouped by hook in order, as tuples of functions the engine calls."""

    def __init__(self, rows: tuple[Repair, ...]) -> None:
        self.rows = rows
        by_hook = {hook: tuple(r.apply for r in rows if r.hook is hook) for hook in Hook}
        self.rejected_token = by_hook[Hook.REJECTED_TOKEN]
        self.unlexable_text = by_hook[Hook.UNLEXABLE_TEXT]
        #: The PENDING_TEXT rows, by where the text stands.
        self.pending_text = {
            where: tuple(r.apply for r in rows if r.hook is Hook.PENDING_TEXT and where in r.where)
            for where in Where
        }
        self.header_complete = by_hook[Hook.HEADER_COMPLETE]
        self.long_header = by_hook[Hook.LONG_HEADER]
        #: The HEADER rows, in order (ties go to the earlier row); each move carries its
        #: cost from the cost table (format/costs.json).
        self.header = tuple(r.apply for r in rows if r.hook is Hook.HEADER)
        self.end_of_input = by_hook[Hook.END_OF_INPUT]

    def __bool__(self) -> bool:
        return bool(self.rows)

    def codes(self) -> frozenset[str]:
        """Every code a row of this table may report."""
        return frozenset(code for row in self.rows for code in row.codes)

    def markdown(self) -> str:
        """The table as docs/diagnostics.md shows it: one line per row, in order."""
        lines = [
            "| codes | hook | cost | reads | produces | row |",
            "|---|---|---|---|---|---|",
        ]
        for row in self.rows:
            module = row.apply.__module__.rsplit(".", 1)[-1]
            hook = row.hook.value
            if row.where != _ANYWHERE:
                hook += " (" + ", ".join(w.value for w in Where if w in row.where) + ")"
            cost = ", ".join(f"{name} {COSTS[name]}" for name in row.costs)
            lines.append(
                f"| {', '.join(row.codes) or '—'} | `{hook}` | {cost} | {_cell(row.reads)} |"
                f" {_cell(row.produces)} | `{module}.{row.apply.__name__}` |"
            )
        return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
