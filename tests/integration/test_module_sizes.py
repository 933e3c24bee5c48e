"""Small modules with one job: the subpackages issues 39 and 40 split stay split.

The reader (``format``: the strict core and the lenient engine) and the gateway were each
once a few modules of 500–600 lines that did several jobs; each module is now at most
400 lines, and this keeps it so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "harmony_grammar"
#: The longest a module of these subpackages may be (issues 39 and 40).
MAX_LINES = 400


@pytest.mark.parametrize("subpackage", ["format", "gateway"])
def test_every_module_is_at_most_400_lines(subpackage: str) -> None:
    root = PACKAGE / subpackage
    long = {
        str(path.relative_to(root)): lines
        for path in root.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"{subpackage} modules past {MAX_LINES} lines: {long}"
