"""The cost table of lenient header reading, as data (``format/costs.json``).

One record per priced move: its name, what it reads, its cost and the diagnostic code it
reports. The rows of :mod:`.headers` offer moves at these costs; :func:`.header_search.
read_header` finds the reading of least total cost. A move the grammar reads as written
costs 0 and is in no record. Strict mode is the empty table: it never searches.

``benchmarks/fit_costs.py`` scores a table on the real-output corpus and the other engines'
test strings and writes the one in the repository; :data:`COSTS` is read at each move, so
a fitting run may try another table in place (:func:`use`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["COSTS", "RECORDS", "CostRecord", "use"]

_PATH = Path(__file__).with_name("costs.json")


@dataclass(frozen=True, slots=True)
class CostRecord:
    """One priced move: ``move`` (its name), what it ``reads``, its ``cost``, its ``code``."""

    move: str
    reads: str
    cost: int
    code: str | None


def _load() -> tuple[CostRecord, ...]:
    data = json.loads(_PATH.read_text(encoding="utf-8"))
    return tuple(CostRecord(**record) for record in data["moves"])


#: The records, in the file's order.
RECORDS: tuple[CostRecord, ...] = _load()
#: Each move's cost by name (read at every move: see :func:`use`).
COSTS: dict[str, int] = {record.move: record.cost for record in RECORDS}


def use(costs: Mapping[str, int]) -> dict[str, int]:
    """Price the moves by ``costs`` from now on (names as in :data:`COSTS`); returns the
    table it replaced, so a caller can put it back."""
    unknown = set(costs) - set(COSTS)
    if unknown:
        raise ValueError(f"no such move in the cost table: {', '.join(sorted(unknown))}")
    before = dict(COSTS)
    COSTS.update(costs)
    return before
