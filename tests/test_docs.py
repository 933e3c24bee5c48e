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
