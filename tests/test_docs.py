"""The documentation lists every diagnostic code the code can emit."""

from __future__ import annotations

import re
from pathlib import Path

from harmony_grammar.format.diagnostics import CATALOGUE

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_code_is_documented():
    documented = set()
    for name in ("diagnostics.md", "rules.md"):
        path = DOCS / name
        if path.is_file():
            documented |= set(re.findall(r"\bHG\d{3}\b", path.read_text(encoding="utf-8")))
    missing = sorted(set(CATALOGUE) - documented)
    assert not missing, f"undocumented diagnostic codes: {missing}"


def test_parser_codes_documented_with_their_severity():
    text = (DOCS / "diagnostics.md").read_text(encoding="utf-8")
    for code, entry in CATALOGUE.items():
        if code.startswith("HG1"):
            row = next(line for line in text.splitlines() if line.startswith(f"| {code} |"))
            assert f"| {entry.slug} | {entry.severity.value} |" in row


def test_the_repair_table_is_documented_as_it_is():
    from harmony_grammar.format.repairs import LENIENT

    text = (DOCS / "diagnostics.md").read_text(encoding="utf-8")
    shown = text.split("<!-- repair-table:start -->\n", 1)[1].split("<!-- repair-table:end -->")[0]
    assert shown == LENIENT.markdown(), "docs/diagnostics.md: paste LENIENT.markdown()"


def test_every_lenient_code_is_reported_by_a_row():
    """HG15x-HG17x are the repairs' codes; each is a row's (the engine itself reports
    HG153 and HG170, which are findings of a well-read message, not repairs)."""
    from harmony_grammar.format.repairs import LENIENT

    repair_codes = {c for c in CATALOGUE if "HG150" <= c <= "HG179"} - {"HG153", "HG162", "HG170"}
    assert repair_codes - LENIENT.codes() == set()
