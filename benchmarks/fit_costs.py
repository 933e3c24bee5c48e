"""Score the header search's cost table on real output, and fit it.

The table is ``harmony_grammar/format/costs.json`` (one record per priced move). A table is
scored on:

* the project's real-output corpus: ``tests/fixtures/wild/collected.jsonl`` and, when
  present, ``../shared/data/wild-gptoss/dev.jsonl`` (read with ``tests/support/wild_corpus``,
  scored with its ``match``: exact / partial / failed per record);
* the other engines' test strings (``tests/format/test_engine_strings.py``'s ``CASES``,
  with their intended readings): exact when the reading equals the intended one.

A table's score is (exact records, then partial ones). ``--fit`` searches one move at a time
(coordinate descent over each cost from 0 to ``--max``, keeping a change only when it scores
strictly better, ties keeping the current cost) until no single change helps; ``--write``
writes the result back into costs.json (the repository's table is this script's output).
Every candidate is also held to the corpus's zero targets: a table that loses a character of
any record (the ledger check) scores as failing that record.

Run: ``python benchmarks/fit_costs.py`` (score the table in the repository, one line per
record), ``python benchmarks/fit_costs.py --fit [--write]``. Offline; seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harmony_grammar import parse  # noqa: E402
from harmony_grammar.format import costs  # noqa: E402
from harmony_grammar.format.accounting import conservation_problems  # noqa: E402
from tests.format.test_engine_strings import CASES  # noqa: E402
from tests.support.wild_corpus import load_records, match  # noqa: E402

COSTS_PATH = ROOT / "harmony_grammar" / "format" / "costs.json"


def _records() -> list[dict[str, Any]]:
    return load_records()


def _grade_record(record: Mapping[str, Any]) -> str:
    start = "completion" if record["mode"] == "completion" else "conversation"
    try:
        result = parse(record["text"], start=start, strict=False)
    except Exception:
        return "failed"
    if conservation_problems(record["text"], result):
        return "failed"
    return match(record["intended"], result.messages)


def _grade_case(case: Any) -> str:
    try:
        result = parse(case.text, start=case.start, strict=False)
    except Exception:
        return "failed"
    if conservation_problems(case.text, result):
        return "failed"
    got = [(m.author, m.channel, m.recipient, m.content_type, m.content) for m in result.messages]
    if got == case.want:
        return "exact"
    same = sum(1 for g, w in zip(got, case.want, strict=False) if g == w)
    return "partial" if same else "failed"


def grades(table: Mapping[str, int]) -> dict[str, str]:
    """Each record's and engine string's grade under ``table``."""
    before = costs.use(table)
    try:
        out = {f"{r['file']}:{r['id']}": _grade_record(r) for r in _records()}
        out.update({f"engine:{case.name}": _grade_case(case) for case in CASES})
    finally:
        costs.use(before)
    return out


def score(found: Mapping[str, str]) -> tuple[int, int]:
    """(exact, partial): higher is better, compared in that order."""
    values = list(found.values())
    return values.count("exact"), values.count("partial")


def fit(table: dict[str, int], most: int) -> dict[str, int]:
    """Coordinate descent: change one cost at a time while the score strictly improves."""
    best = score(grades(table))
    improved = True
    while improved:
        improved = False
        for move in sorted(table):
            for value in range(0, most + 1):
                if value == table[move]:
                    continue
                trial = {**table, move: value}
                got = score(grades(trial))
                if got > best:
                    print(f"  {move}: {table[move]} -> {value}: {best} -> {got}")
                    table, best, improved = trial, got, True
    return table


def _write(table: Mapping[str, int]) -> None:
    data = json.loads(COSTS_PATH.read_text(encoding="utf-8"))
    for record in data["moves"]:
        record["cost"] = table[record["move"]]
    lines = ["{", f'  "about": {json.dumps(data["about"], ensure_ascii=False)},', '  "moves": [']
    rows = [f"    {json.dumps(record, ensure_ascii=False)}" for record in data["moves"]]
    lines += [",\n".join(rows), "  ]", "}"]
    COSTS_PATH.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fit", action="store_true", help="search for a better table")
    parser.add_argument("--write", action="store_true", help="write the fitted table")
    parser.add_argument("--max", type=int, default=8, help="the largest cost tried")
    args = parser.parse_args(argv)
    table = dict(costs.COSTS)
    if args.fit:
        table = fit(table, args.max)
        if args.write:
            _write(table)
    found = grades(table)
    for name, grade in found.items():
        print(f"{grade:8} {name}")
    exact, partial = score(found)
    print(
        f"\n{exact} exact, {partial} partial, {len(found) - exact - partial} failed"
        f" of {len(found)} (records and engine strings)"
    )
    print("table:", json.dumps(table, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
