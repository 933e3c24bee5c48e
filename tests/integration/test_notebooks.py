"""Executes notebooks/*.ipynb and checks their committed outputs are what a fresh run gives.

The notebooks are committed with their outputs (tables, text and plots), so a reader sees them
without running anything. For each notebook, the test executes a fresh copy with nbclient
(kernel python3, cwd notebooks/), fails on any error output (each notebook ends with its own
checks) and on any cell printing 5,000 characters or more, then compares the committed outputs
with the fresh ones, cell by cell:

* compared: ``stream`` text (per stream name) and the ``text/plain``, ``text/html`` and
  ``text/markdown`` data of ``execute_result``/``display_data`` outputs, after stripping trailing
  whitespace from each line (and trailing empty lines), nothing else;
* images (``image/png``) are not compared byte for byte, but each cell must have as many;
* a cell tagged ``nondeterministic`` is not compared; a cell tagged ``shared-data`` reads
  ../shared/data and is compared only where that folder exists.

The rules are those of ``scripts/refresh_notebooks.py``. When a notebook or what it shows changes
on purpose, refresh the committed outputs from the repository root with
``python scripts/refresh_notebooks.py`` (or name notebooks: ``python scripts/refresh_notebooks.py
02_constrained_generation.ipynb``) and review the diff. The notebooks are seeded and offline.
"""

from __future__ import annotations

import copy
import importlib.util
import json

import pytest

from scripts.refresh_notebooks import (
    NOTEBOOKS,
    REFRESH_HINT,
    ROOT,
    SHARED_DATA,
    clean,
    compare,
    errors,
    execute,
    normalise,
)

#: Modules each notebook needs beyond the notebooks extra (a missing one skips, saying which).
NEEDS = {
    "01_validate_completions.ipynb": [
        "pandas",
        "matplotlib",
        "harmony_grammar.validation.validator",
    ],
    "02_constrained_generation.ipynb": [
        "torch",
        "outlines",
        "harmony_grammar.generation.outlines_export",
    ],
    "03_conformance_report.ipynb": ["pandas", "matplotlib", "openai_harmony"],
}


def committed(name):
    """The committed notebook as plain JSON (no nbformat needed)."""
    return json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))


def test_every_notebook_is_listed():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(NEEDS)


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_notebook_is_committed_with_clean_outputs(name):
    path = NOTEBOOKS / name
    assert path.stat().st_size < 1_000_000, f"{name} is {path.stat().st_size:,} bytes"
    notebook = committed(name)
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert any(cell["outputs"] for cell in code), f"{name} is committed without outputs"
    assert not errors(notebook), f"{name} is committed with errors: {errors(notebook)}"
    for index, cell in enumerate(notebook["cells"]):
        assert "execution" not in cell["metadata"], f"{name}, cell {index}: execution timestamps"
    # No path of this machine in the text (images are base64 and would match by chance only).
    text = json.dumps(
        [
            {k: v for k, v in output.get("data", {}).items() if k != "image/png"}
            | {"text": output.get("text", "")}
            for cell in code
            for output in cell["outputs"]
        ]
    )
    if len(ROOT.parent.parts) > 1:  # a checkout directly under / has no telling path
        assert str(ROOT.parent) not in text, f"{name}: an output shows a path of this machine"


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_notebook_runs_and_matches_its_committed_outputs(name):
    reason = "the notebooks extra is not installed"
    nbformat = pytest.importorskip("nbformat", reason=reason)
    pytest.importorskip("nbclient", reason=reason)
    pytest.importorskip("ipykernel", reason=reason)
    missing = [module for module in NEEDS[name] if importlib.util.find_spec(module) is None]
    if missing:
        pytest.skip(f"{name} needs {', '.join(missing)}, which is not importable")
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    fresh = execute(notebook)
    assert not errors(fresh), f"{name} raised: {'; '.join(errors(fresh))}"
    for index, cell in enumerate(fresh.cells):
        # "Small outputs": no cell prints pages of text.
        text = "".join(o.get("text", "") for o in cell.get("outputs", []))
        assert len(text) < 5_000, f"{name}, cell {index} printed {len(text)} characters"
    mismatches = compare(name, notebook, fresh, have_shared_data=SHARED_DATA.is_dir())
    assert not mismatches, "\n\n".join([*mismatches, REFRESH_HINT.format(name=name)])


# The comparison itself: it must report what changed, and only that.

NAME = "01_validate_completions.ipynb"


def first_output(notebook, kind, mime=None):
    """(cell index, output) of the first output of ``kind`` ("stream", "execute_result", ...),
    with data of type ``mime`` if given."""
    return next(
        (index, output)
        for index, cell in enumerate(notebook["cells"])
        for output in cell.get("outputs", [])
        if output["output_type"] == kind and (mime is None or mime in output["data"])
    )


def test_comparison_accepts_the_committed_outputs():
    for name in NEEDS:
        notebook = committed(name)
        assert compare(name, notebook, copy.deepcopy(notebook), have_shared_data=True) == []


def test_comparison_reports_an_altered_table():
    notebook = committed(NAME)
    altered = copy.deepcopy(notebook)
    index, output = first_output(altered, "execute_result")
    plain = "".join(output["data"]["text/plain"])
    output["data"]["text/plain"] = plain.replace("1", "7", 1) if "1" in plain else plain + "!"
    [mismatch] = compare(NAME, notebook, altered)
    assert mismatch.startswith(f"{NAME}, cell {index}: ")
    assert "text/plain" in mismatch
    assert "--- committed" in mismatch and "+++ fresh" in mismatch
    assert any(line.startswith("-") and not line.startswith("---") for line in mismatch.split("\n"))


def test_comparison_reports_an_altered_stream_and_html():
    notebook = committed(NAME)
    altered = copy.deepcopy(notebook)
    stream_index, stream = first_output(altered, "stream")
    stream["text"] = "".join(stream["text"]).replace("valid", "invalid")
    changed = next(line for line in stream["text"].splitlines() if "invalid" in line)
    html_index, table = first_output(altered, "execute_result", "text/html")
    table["data"]["text/html"] = "".join(table["data"]["text/html"]).replace("<td>", "<td>x", 1)
    mismatches = compare(NAME, notebook, altered)
    assert len(mismatches) == 2, mismatches
    assert any(f"cell {stream_index}:" in m and f"+{changed.rstrip()}" in m for m in mismatches)
    assert any(f"cell {html_index}:" in m and "text/html" in m for m in mismatches)


def test_comparison_counts_images_but_not_their_bytes():
    notebook = committed(NAME)
    altered = copy.deepcopy(notebook)
    index, figure = first_output(altered, "display_data")
    figure["data"]["image/png"] = "iVBORw0KGgo="  # other bytes: not a mismatch
    assert compare(NAME, notebook, altered) == []
    del figure["data"]["image/png"]
    [mismatch] = compare(NAME, notebook, altered)
    assert mismatch.startswith(f"{NAME}, cell {index}: ") and "images" in mismatch


def test_comparison_reports_a_missing_or_extra_output():
    notebook = committed(NAME)
    altered = copy.deepcopy(notebook)
    index, _ = first_output(altered, "stream")
    altered["cells"][index]["outputs"] = []  # e.g. a cell committed without running it
    [mismatch] = compare(NAME, notebook, altered)
    assert f"cell {index}:" in mismatch and "absent in the fresh run" in mismatch
    [mismatch] = compare(NAME, altered, notebook)
    assert "absent in the committed notebook" in mismatch


def test_comparison_skips_tagged_cells_only():
    notebook = committed(NAME)
    altered = copy.deepcopy(notebook)
    index, stream = first_output(altered, "stream")
    stream["text"] = "something else\n"
    assert len(compare(NAME, notebook, altered)) == 1
    tagged = copy.deepcopy(notebook)
    tagged["cells"][index]["metadata"]["tags"] = ["nondeterministic"]
    assert compare(NAME, tagged, altered) == []
    tagged["cells"][index]["metadata"]["tags"] = ["shared-data"]
    assert compare(NAME, tagged, altered, have_shared_data=False) == []
    assert len(compare(NAME, tagged, altered, have_shared_data=True)) == 1


def test_normalisation_strips_trailing_whitespace_only():
    assert normalise("a  \nb\t\r\n\n\n") == normalise(["a\n", "b"]) == "a\nb"
    assert normalise("a b") != normalise("a  b")
    assert normalise(" a") != normalise("a")
    assert normalise("a\n\nb") != normalise("a\nb")
    assert normalise("a\u00a0") != normalise("a")  # only spaces, tabs and carriage returns


def test_clean_drops_timestamps_and_merges_streams():
    nbformat = pytest.importorskip("nbformat", reason="the notebooks extra is not installed")
    original = nbformat.v4.new_notebook(metadata={"language_info": {"name": "python"}})
    executed = copy.deepcopy(original)
    executed.metadata["language_info"]["version"] = "3.99.0"
    cell = nbformat.v4.new_code_cell("print(1); print(2)")
    cell.metadata["execution"] = {"iopub.status.busy": "2026-01-01T00:00:00Z"}
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="1\n"),
        nbformat.v4.new_output("stream", name="stdout", text="2\n"),
        nbformat.v4.new_output("stream", name="stderr", text="!\n"),
    ]
    executed.cells = [cell]
    cleaned = clean(executed, original)
    assert cleaned.metadata == original.metadata
    assert "execution" not in cleaned.cells[0].metadata
    assert [(o.name, o.text) for o in cleaned.cells[0].outputs] == [
        ("stdout", "1\n2\n"),
        ("stderr", "!\n"),
    ]
