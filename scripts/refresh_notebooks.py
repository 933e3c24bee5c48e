"""Re-executes notebooks/*.ipynb and saves them with their outputs, for readers.

    python scripts/refresh_notebooks.py                                  # every notebook
    python scripts/refresh_notebooks.py 02_constrained_generation.ipynb  # some of them

Run it from the repository root after changing a notebook or what it shows, then review the diff:
tests/integration/test_notebooks.py fails while a committed output differs from what a fresh run
gives.
The helpers that test uses (execute, clean, compare) live here so both run the notebooks alike.

Comparison rules (see ``compare``):

* compared, per code cell: ``stream`` text joined per stream name (stdout, stderr), and the
  ``text/plain``, ``text/html`` and ``text/markdown`` data of each ``execute_result`` and
  ``display_data`` output, in order; an ``error`` output (its name and value), should one be
  committed;
* the only normalisation: trailing spaces, tabs and carriage returns are stripped from each line,
  and trailing empty lines are dropped;
* images (``image/png``) are counted, not compared byte for byte (PNG bytes vary with the
  matplotlib and libpng versions);
* a cell tagged ``nondeterministic`` is never compared (none is today: write notebooks so that
  none has to be); a cell tagged ``shared-data`` reads ../shared/data and is compared only where
  that folder exists. A notebook with ``shared-data`` cells is refreshed only where it exists.
"""

from __future__ import annotations

import copy
import difflib
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
#: Third-party data, read beside the checkout (as in tests/conftest.py).
SHARED_DATA = ROOT.parent / "shared" / "data"

#: Cells with this tag are executed but their outputs are never compared.
NONDETERMINISTIC = "nondeterministic"
#: Cells with this tag read ../shared/data; compared only where that folder exists.
SHARED_DATA_TAG = "shared-data"
#: The parts of rich outputs compared as text.
COMPARED_MIME = ("text/plain", "text/html", "text/markdown")
#: At most this many lines of diff are shown per mismatch.
DIFF_LINES = 20

REFRESH_HINT = (
    "If the change is intended, refresh the committed outputs with "
    "`python scripts/refresh_notebooks.py {name}` (from the repository root) and review the diff."
)


def execute(notebook: Any) -> Any:
    """A fresh copy of ``notebook``, outputs cleared, executed in notebooks/ (kernel python3)."""
    import nbclient

    fresh = copy.deepcopy(notebook)
    for cell in fresh.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    client = nbclient.NotebookClient(
        fresh,
        timeout=600,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()
    return fresh


def clean(executed: Any, original: Any) -> Any:
    """``executed`` ready to commit: ``original``'s notebook metadata (not the kernel's Python
    version), no execution timestamps, consecutive stream outputs of one name merged."""
    executed.metadata = copy.deepcopy(original.metadata)
    for cell in executed.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        merged: list[Any] = []
        for output in cell.outputs:
            previous = merged[-1] if merged else None
            if (
                output.output_type == "stream"
                and previous is not None
                and previous.output_type == "stream"
                and previous.name == output.name
            ):
                previous.text = _text(previous.text) + _text(output.text)
            else:
                merged.append(output)
        cell.outputs = merged
    return executed


def _text(value: str | Sequence[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


def normalise(text: str | Sequence[str]) -> str:
    """Trailing spaces, tabs and carriage returns stripped from each line; trailing empty lines
    dropped. Nothing else: any other change is a change."""
    lines = [line.rstrip(" \t\r") for line in _text(text).split("\n")]
    return "\n".join(lines).rstrip("\n")


def tags(cell: Mapping[str, Any]) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def comparable(cell: Mapping[str, Any]) -> dict[str, str]:
    """What of a cell's outputs is compared, by label, normalised."""
    parts: dict[str, str] = {}
    images = rich = 0
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream":
            label = f"stream {output.get('name')}"
            parts[label] = parts.get(label, "") + _text(output.get("text", ""))
        elif kind in ("execute_result", "display_data"):
            data = output.get("data", {})
            images += "image/png" in data
            for mime in COMPARED_MIME:
                if mime in data:
                    parts[f"output {rich} ({kind}) {mime}"] = _text(data[mime])
            rich += 1
        elif kind == "error":
            parts["error"] = f"{output.get('ename')}: {output.get('evalue')}"
    parts = {label: normalise(text) for label, text in parts.items()}
    parts["images (image/png)"] = str(images)
    return parts


def _diff(committed: str, fresh: str) -> str:
    lines = list(
        difflib.unified_diff(
            committed.split("\n"), fresh.split("\n"), "committed", "fresh", lineterm="", n=1
        )
    )
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"... ({len(lines) - DIFF_LINES} more diff lines)"]
    return "\n".join(lines)


def compare(
    name: str, committed: Any, fresh: Any, *, have_shared_data: bool | None = None
) -> list[str]:
    """One message per code cell whose committed outputs differ from the fresh run's (empty:
    they agree). Each message names the notebook and the cell index and shows a short diff."""
    if have_shared_data is None:
        have_shared_data = SHARED_DATA.is_dir()
    old_cells, new_cells = committed["cells"], fresh["cells"]
    if len(old_cells) != len(new_cells):
        return [f"{name}: {len(old_cells)} committed cells, {len(new_cells)} executed"]
    mismatches = []
    for index, (old, new) in enumerate(zip(old_cells, new_cells, strict=True)):
        if old.get("cell_type") != "code":
            continue
        if NONDETERMINISTIC in tags(old):
            continue
        if SHARED_DATA_TAG in tags(old) and not have_shared_data:
            continue
        mine, theirs = comparable(old), comparable(new)
        for label in [*mine, *(label for label in theirs if label not in mine)]:
            before, after = mine.get(label), theirs.get(label)
            if before == after:
                continue
            if before is None or after is None:
                diff = f"{label}: {'absent' if before is None else 'present'} in the committed "
                diff += f"notebook, {'absent' if after is None else 'present'} in the fresh run"
                diff += "\n" + _diff(before or "", after or "")
            else:
                diff = f"{label}:\n{_diff(before, after)}"
            mismatches.append(f"{name}, cell {index}: the committed output is stale\n{diff}")
    return mismatches


def shared_data_cells(notebook: Any) -> list[int]:
    return [i for i, cell in enumerate(notebook["cells"]) if SHARED_DATA_TAG in tags(cell)]


def errors(notebook: Any) -> list[str]:
    """``cell N: Name: value`` for each error output."""
    return [
        f"cell {index}: {output.get('ename')}: {output.get('evalue')}"
        for index, cell in enumerate(notebook["cells"])
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]


def main(argv: Iterable[str] = ()) -> int:
    import nbformat

    names = list(argv) or sorted(path.name for path in NOTEBOOKS.glob("*.ipynb"))
    for name in names:
        path = NOTEBOOKS / Path(name).name
        notebook = nbformat.read(path, as_version=4)
        if shared_data_cells(notebook) and not SHARED_DATA.is_dir():
            print(
                f"{name}: not refreshed: cells {shared_data_cells(notebook)} read {SHARED_DATA}, "
                "which is absent here",
                file=sys.stderr,
            )
            return 1
        fresh = execute(notebook)
        if errors(fresh):
            print(f"{name}: not refreshed, it raised: {'; '.join(errors(fresh))}", file=sys.stderr)
            return 1
        nbformat.write(clean(fresh, notebook), path)
        print(f"{name}: {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
