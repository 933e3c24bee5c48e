"""Reading dataset records: JSON Lines, a JSON array, Parquet, or a saved Hugging Face dataset.

Records come out one at a time with their 1-based row (the line of a JSONL file, the index in
the others), so memory stays bounded and every problem can name its row. A JSONL line that is
not JSON is yielded as an :class:`Unreadable` record, never dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "InputError",
    "Unreadable",
    "input_kind",
    "parse_json_line",
    "read_records",
    "without_nulls",
]

#: Records read from Parquet per arrow batch.
_PARQUET_BATCH = 1024


class InputError(ValueError):
    """The input cannot be opened or is of an unknown kind (one line, with the path)."""


@dataclass(frozen=True)
class Unreadable:
    """A record that is not even JSON; :func:`prepare_batch` reports it as HG300."""

    reason: str


def input_kind(path: str) -> str:
    """``jsonl``, ``json``, ``parquet`` or ``hf`` (a ``save_to_disk`` folder), by the path."""
    p = Path(path)
    if p.is_dir():
        if (p / "dataset_info.json").is_file() or (p / "state.json").is_file():
            return "hf"
        if any(p.glob("*.parquet")):
            return "parquet"
        raise InputError(f"{path}: a folder that is neither a saved dataset nor Parquet files")
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".json":
        return "json"
    if suffix == ".parquet":
        return "parquet"
    raise InputError(
        f"{path}: unknown input kind (use .jsonl, .json, .parquet or a dataset folder)"
    )


def parse_json_line(line: bytes) -> Any:
    """One JSONL line's record, or :class:`Unreadable` saying why it is none."""
    try:
        return json.loads(line)
    except UnicodeDecodeError as exc:
        return Unreadable(f"invalid UTF-8 at byte {exc.start}")
    except json.JSONDecodeError as exc:
        return Unreadable(f"not JSON ({exc.msg} at column {exc.colno})")


def without_nulls(value: Any) -> Any:
    """A record read from Arrow with every null-valued object key removed.

    Arrow stores a column of objects as one struct type, the union of every record's keys,
    and fills the keys a record lacks with null: a tool schema would gain the properties of
    other records' tools, and call arguments other calls' arguments. Arrow cannot tell those
    from a real null, so for Arrow inputs (Parquet, saved datasets) a null key reads as
    absent; JSON inputs keep their nulls. Store tools and arguments as JSON text to keep both.
    """
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def _jsonl(path: str) -> Iterator[tuple[int, Any]]:
    with open(path, "rb") as stream:
        for number, line in enumerate(stream, 1):
            if line.strip():
                yield number, parse_json_line(line)


def _json(path: str) -> Iterator[tuple[int, Any]]:
    try:
        value = json.loads(Path(path).read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not JSON ({exc})") from None
    if not isinstance(value, list):
        raise InputError(f"{path}: a .json input must be an array of records")
    yield from enumerate(value, 1)


def _parquet(path: str) -> Iterator[tuple[int, Any]]:
    import pyarrow.parquet as pq

    p = Path(path)
    files = sorted(p.glob("*.parquet")) if p.is_dir() else [p]
    row = 0
    for file in files:
        for batch in pq.ParquetFile(file).iter_batches(batch_size=_PARQUET_BATCH):
            for record in batch.to_pylist():
                row += 1
                yield row, without_nulls(record)


def _hf(path: str) -> Iterator[tuple[int, Any]]:
    import datasets

    dataset = datasets.load_from_disk(path)
    if isinstance(dataset, datasets.DatasetDict):
        raise InputError(f"{path}: a DatasetDict; pass one split's folder")
    for row, record in enumerate(dataset, 1):
        yield row, without_nulls(record)


_READERS = {"jsonl": _jsonl, "json": _json, "parquet": _parquet, "hf": _hf}


def read_records(path: str) -> Iterator[tuple[int, Any]]:
    """``(row, record)`` pairs of the input at ``path``, in order.

    Raises :class:`InputError` for an input that cannot be opened at all.
    """
    kind = input_kind(path)
    try:
        yield from _READERS[kind](path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from None
