"""Executes notebooks/*.ipynb with nbclient; each notebook ends with its own checks.

A notebook fails the test when any cell raises. Outputs are not written back: the notebooks
are committed without outputs and stay deterministic (seeded, offline).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebooks extra is not installed")
nbclient = pytest.importorskip("nbclient", reason="the notebooks extra is not installed")
pytest.importorskip("ipykernel", reason="the notebooks extra is not installed")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

#: Modules each notebook needs beyond the notebooks extra (a missing one skips, saying which).
NEEDS = {
    "01_validate_completions.ipynb": ["pandas", "matplotlib", "harmony_grammar.validate"],
    "02_constrained_generation.ipynb": [
        "torch",
        "outlines",
        "harmony_grammar.outlines_export",
    ],
    "03_conformance_report.ipynb": ["pandas", "matplotlib", "openai_harmony"],
}


def test_every_notebook_is_listed():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(NEEDS)


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_notebook_runs(name):
    missing = [module for module in NEEDS[name] if importlib.util.find_spec(module) is None]
    if missing:
        pytest.skip(f"{name} needs {', '.join(missing)}, which is not importable")
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error", output
        # "Small outputs": no cell prints pages of text.
        text = "".join(o.get("text", "") for o in cell.get("outputs", []))
        assert len(text) < 5_000, f"a cell of {name} printed {len(text)} characters"
