"""Dataset inputs: JSON Lines, Parquet files, directories of Parquet shards, ``save_to_disk``
directories, read in bounded memory as chunks of records with their identity.

Theory of operation
-------------------
:func:`plan` turns a path into :class:`Unit` s, the pieces an engine reads independently: a
Parquet row group, one Arrow file of a Hugging Face ``save_to_disk`` directory, or a whole
JSON Lines file (line numbers are counted from its start). Planning reads metadata only and
checks that the columns exist, so a wrong ``--field`` is one message before any work.
:func:`read_unit` reads a unit as :class:`Chunk` s of at most ``batch_size`` records. Every
engine reads through these two functions (the local one in the driver, Ray in its tasks),
so every engine sees the same records under the same identity:

* ``file``: the JSONL or Parquet file, or the ``save_to_disk`` directory (a split's
  directory for a ``DatasetDict``);
* ``record``: the JSONL line number (1-based, as the text output prints it), or the row index
  (0-based, as pyarrow and ``datasets`` index rows) in the Parquet file or the dataset.

pyarrow is imported only where Parquet or Arrow is read: JSON Lines needs nothing extra.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .dataset import read_jsonl

__all__ = [
    "DEFAULT_CHUNK",
    "Chunk",
    "DataSourceError",
    "Unit",
    "count_records",
    "plan",
    "read_unit",
]

#: Records per chunk: large enough to amortise a round trip to a worker, small enough that
#: the chunks in flight stay a few megabytes.
DEFAULT_CHUNK = 256


class DataSourceError(ValueError):
    """A path that is no dataset this module reads, or lacks a column; the message is one
    line that names the path."""


@dataclass(frozen=True, slots=True)
class Unit:
    """A piece of a dataset that is read on its own (and so can be read anywhere).

    ``kind`` is ``"jsonl"``, ``"parquet"`` (``part`` is the row group) or ``"arrow"`` (one
    Arrow stream of a ``save_to_disk`` directory, whose rows start at ``first``); ``label`` is
    the identity reported as ``file``; ``rows`` is the unit's record count when known.
    """

    kind: str
    path: str
    label: str
    part: int = 0
    first: int = 0
    rows: int | None = None


@dataclass(slots=True)
class Chunk:
    """Records read from one unit: ``values`` of the field, their ``records`` (line numbers
    or row indexes), per-record ``tools`` when a tools column was asked for, and
    ``errors[i]`` when record ``i`` could not be read at all."""

    file: str
    records: list[int]
    values: list[Any]
    tools: list[Any] | None = None
    errors: list[str | None] | None = None


# ---------------------------------------------------------------------------------- planning


def _columns(names: Sequence[str], needed: list[str], where: str) -> None:
    for column in needed:
        if column not in names:
            shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
            raise DataSourceError(f"{where}: no column {column!r} (columns: {shown})")


def _parquet_units(paths: list[Path], needed: list[str]) -> list[Unit]:
    import pyarrow.parquet as pq

    units = []
    for path in paths:
        try:
            metadata = pq.ParquetFile(path).metadata
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise DataSourceError(f"{path}: not a readable Parquet file ({exc})") from None
        _columns(metadata.schema.to_arrow_schema().names, needed, str(path))
        first = 0
        for group in range(metadata.num_row_groups):
            rows = metadata.row_group(group).num_rows
            units.append(Unit("parquet", str(path), str(path), group, first, rows))
            first += rows
    return units


def _arrow_rows(path: Path) -> tuple[int, list[str]]:
    import pyarrow as pa

    with pa.memory_map(str(path)) as source:
        reader = pa.ipc.open_stream(source)
        rows = sum(batch.num_rows for batch in reader)  # mapped, so nothing is held
        return rows, reader.schema.names


def _saved_units(directory: Path, needed: list[str]) -> list[Unit]:
    """A ``save_to_disk`` directory: its ``state.json`` lists the Arrow files in order."""
    try:
        state = json.loads((directory / "state.json").read_text("utf-8"))
        files = [directory / entry["filename"] for entry in state["_data_files"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataSourceError(f"{directory}: unreadable state.json ({exc})") from None
    units, first = [], 0
    for path in files:
        try:
            rows, names = _arrow_rows(path)
        except (OSError, ValueError) as exc:
            raise DataSourceError(f"{path}: not a readable Arrow stream ({exc})") from None
        _columns(names, needed, str(directory))
        units.append(Unit("arrow", str(path), str(directory), 0, first, rows))
        first += rows
    return units


def plan(path: str, field: str, tools_field: str | None = None) -> list[Unit]:
    """The units of the dataset at ``path``: a ``.jsonl`` file (any other file name is read as
    JSON Lines too), a ``.parquet`` file, a directory of ``.parquet`` shards (searched
    recursively, in name order), or a ``datasets`` ``save_to_disk`` directory (a ``Dataset``
    or a ``DatasetDict``, whose splits follow each other)."""
    if path == "-":
        return [Unit("jsonl", path, path)]
    where = Path(path)
    needed = [field] + ([tools_field] if tools_field else [])
    if not where.exists():
        raise DataSourceError(f"{path}: no such file or directory")
    if where.is_dir():
        if (where / "dataset_dict.json").is_file():
            try:
                splits = json.loads((where / "dataset_dict.json").read_text("utf-8"))["splits"]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise DataSourceError(f"{path}: unreadable dataset_dict.json ({exc})") from None
            return [u for split in splits for u in _saved_units(where / str(split), needed)]
        if (where / "state.json").is_file():
            return _saved_units(where, needed)
        shards = sorted(p for p in where.rglob("*.parquet") if p.is_file())
        if not shards:
            raise DataSourceError(
                f"{path}: a directory with neither .parquet shards nor a save_to_disk dataset"
            )
        return _parquet_units(shards, needed)
    if where.suffix == ".parquet":
        return _parquet_units([where], needed)
    if tools_field is not None:
        raise DataSourceError(f"{path}: a tools column is read from Parquet or Arrow only")
    return [Unit("jsonl", path, path)]


def count_records(units: Sequence[Unit]) -> int | None:
    """How many records the units hold, or None when a JSONL file makes it unknown."""
    total = 0
    for unit in units:
        if unit.rows is None:
            return None
        total += unit.rows
    return total


# ---------------------------------------------------------------------------------- reading


def _arrow_batches(unit: Unit, columns: list[str], batch_size: int) -> Iterator[Any]:
    if unit.kind == "parquet":
        import pyarrow.parquet as pq

        yield from pq.ParquetFile(unit.path).iter_batches(
            batch_size=batch_size, row_groups=[unit.part], columns=columns
        )
        return
    import pyarrow as pa

    with pa.memory_map(unit.path) as source:
        for batch in pa.ipc.open_stream(source):
            for offset in range(0, batch.num_rows, batch_size):
                yield batch.slice(offset, batch_size).select(columns)


def read_unit(
    unit: Unit, field: str, tools_field: str | None = None, batch_size: int = DEFAULT_CHUNK
) -> Iterator[Chunk]:
    """The records of ``unit`` in chunks of at most ``batch_size``, in order."""
    if unit.kind == "jsonl":
        yield from _jsonl_chunks(unit, field, batch_size)
        return
    columns = [field] + ([tools_field] if tools_field else [])
    record = unit.first
    for batch in _arrow_batches(unit, columns, batch_size):
        rows = batch.num_rows
        yield Chunk(
            unit.label,
            list(range(record, record + rows)),
            batch.column(0).to_pylist(),
            batch.column(1).to_pylist() if tools_field else None,
        )
        record += rows


def _jsonl_chunks(unit: Unit, field: str, batch_size: int) -> Iterator[Chunk]:
    chunk = Chunk(unit.label, [], [], errors=[])
    with open(unit.path, "rb") if unit.path != "-" else os.fdopen(0, "rb", closefd=False) as f:
        for item in read_jsonl(f, field):
            assert chunk.errors is not None
            chunk.records.append(int(item.key))
            chunk.values.append(item.source)
            chunk.errors.append(item.error)
            if len(chunk.records) >= batch_size:
                yield chunk
                chunk = Chunk(unit.label, [], [], errors=[])
    if chunk.records:
        yield chunk
