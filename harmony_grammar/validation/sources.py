"""Dataset inputs: JSON Lines, Parquet files, directories of Parquet shards, ``save_to_disk``
directories, read in bounded memory as chunks of records with their identity.

Theory of operation
-------------------
:func:`plan` turns a path into :class:`Unit` s, the pieces an engine reads independently: a
Parquet row group, one Arrow file of a Hugging Face ``save_to_disk`` directory, or a whole
JSON Lines file (line numbers are counted from its start). Planning reads metadata only and
checks that the columns exist, so a wrong ``--field`` is one message before any work.
:func:`split` cuts units into work pieces of about ``records`` records each (a slice of a row
group or Arrow file; a byte range of a JSON Lines file, cut at line ends, with the number of
lines before it, found by counting newlines and parsing nothing), so that a worker reads and
validates a piece on its own and results stay small. :func:`read_unit` reads a unit or piece
as :class:`Chunk` s of at most ``batch_size`` records. Every engine reads through these
functions, in its workers, so every engine sees the same records under the same identity:

* ``file``: the JSONL or Parquet file, or the ``save_to_disk`` directory (a split's
  directory for a ``DatasetDict``);
* ``record``: the JSONL line number (1-based, as the text output prints it), or the row index
  (0-based, as pyarrow and ``datasets`` index rows) in the Parquet file or the dataset.

pyarrow is imported only where Parquet or Arrow is read: JSON Lines needs nothing extra.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .dataset import read_jsonl

__all__ = [
    "DEFAULT_CHUNK",
    "DEFAULT_PIECE",
    "Chunk",
    "DataSourceError",
    "Unit",
    "count_records",
    "plan",
    "read_unit",
    "split",
]

#: Records per chunk: large enough to amortise a round trip to a worker, small enough that
#: the chunks in flight stay a few megabytes.
DEFAULT_CHUNK = 256

#: Records per work piece (:func:`split`): a few hundred milliseconds of validation, so a
#: piece's start-up (opening its file, skipping to its rows) is noise, its results stay well
#: under a megabyte, and a few pieces per worker in flight keep every worker busy.
DEFAULT_PIECE = 2048

#: Bytes per JSON Lines piece when records' sizes are unknown before reading (about 2,000
#: records of a few hundred bytes to a few kilobytes each).
DEFAULT_PIECE_BYTES = 4 << 20


class DataSourceError(ValueError):
    """A path that is no dataset this module reads, or lacks a column; the message is one
    line that names the path."""


@dataclass(frozen=True, slots=True)
class Unit:
    """A piece of a dataset that is read on its own (and so can be read anywhere).

    ``kind`` is ``"jsonl"``, ``"parquet"`` (``part`` is the row group) or ``"arrow"`` (one
    Arrow stream of a ``save_to_disk`` directory); ``path`` is absolute (a worker's working
    directory need not be the driver's); ``label`` is the identity reported as ``file``, as
    the user named it; ``rows`` is the unit's record count when known.

    A piece of a row group or Arrow stream (:func:`split`) skips its first ``offset`` rows;
    ``first`` is the row index (in the file or dataset) of its first row. A piece of a JSON
    Lines file is the bytes ``offset:stop`` (``stop`` None: to the end), and ``first`` is the
    number of lines before ``offset``, so line numbers stay those of the whole file.
    """

    kind: str
    path: str
    label: str
    part: int = 0
    first: int = 0
    rows: int | None = None
    offset: int = 0
    stop: int | None = None


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
            units.append(Unit("parquet", os.path.abspath(path), str(path), group, first, rows))
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
        units.append(Unit("arrow", os.path.abspath(path), str(directory), 0, first, rows))
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
    return [Unit("jsonl", os.path.abspath(path), path)]


def count_records(units: Sequence[Unit]) -> int | None:
    """How many records the units hold, or None when a JSONL file makes it unknown."""
    total = 0
    for unit in units:
        if unit.rows is None:
            return None
        total += unit.rows
    return total


# ---------------------------------------------------------------------------------- pieces


def split(
    units: Sequence[Unit], records: int = DEFAULT_PIECE, jsonl_bytes: int | None = None
) -> Iterator[Unit]:
    """The units cut into pieces of at most ``records`` rows (Parquet, Arrow) or about
    ``jsonl_bytes`` bytes (JSON Lines, cut after a newline; by default
    :data:`DEFAULT_PIECE_BYTES` scaled as ``records`` is to :data:`DEFAULT_PIECE`), in order.

    Standard input cannot be cut (nor read by another process) and is one piece.
    """
    if jsonl_bytes is None:
        jsonl_bytes = max(DEFAULT_PIECE_BYTES * records // DEFAULT_PIECE, 1)
    for unit in units:
        if unit.kind == "jsonl":
            if unit.path == "-":
                yield unit
            else:
                yield from _jsonl_pieces(unit, jsonl_bytes)
        elif unit.rows is None or unit.rows <= records:
            yield unit
        else:
            for skip in range(0, unit.rows, records):
                take = min(records, unit.rows - skip)
                yield Unit(
                    unit.kind,
                    unit.path,
                    unit.label,
                    unit.part,
                    unit.first + skip,
                    take,
                    unit.offset + skip,
                )


def _jsonl_pieces(unit: Unit, size: int) -> Iterator[Unit]:
    """Byte ranges of about ``size`` bytes that end after a newline, with their line counts.

    Only newlines are counted (``bytes.count``, at memory speed): a worker parses its piece.
    A piece ends at the first newline at or after ``size`` bytes from its start, so a line is
    never cut; the last piece runs to the end of the file.
    """
    block_size = 1 << 20
    start = position = 0  # the piece's first byte; the block's first byte
    lines_before = lines = 0  # lines before the piece; newlines in it so far
    with open(unit.path, "rb") as f:
        while block := f.read(block_size):
            cursor = 0  # the block's bytes before this are counted
            while (want := start + size - position) < len(block):
                newline = block.find(b"\n", max(want, cursor))
                if newline < 0:
                    break  # the piece ends in a later block
                lines += block.count(b"\n", cursor, newline + 1)
                stop = position + newline + 1
                yield Unit(
                    "jsonl", unit.path, unit.label, first=lines_before, offset=start, stop=stop
                )
                start, lines_before, lines, cursor = stop, lines_before + lines, 0, newline + 1
            lines += block.count(b"\n", cursor)
            position += len(block)
    if position > start or start == 0:  # the rest, or an empty file's one empty piece
        yield Unit("jsonl", unit.path, unit.label, first=lines_before, offset=start)


# ---------------------------------------------------------------------------------- reading


def _stored_batches(unit: Unit, columns: list[str], batch_size: int) -> Iterator[Any]:
    """The record batches of the row group or Arrow stream the unit lies in, from its start."""
    if unit.kind == "parquet":
        import pyarrow.parquet as pq

        yield from pq.ParquetFile(unit.path).iter_batches(
            batch_size=batch_size, row_groups=[unit.part], columns=columns
        )
        return
    import pyarrow as pa

    with pa.memory_map(unit.path) as source:  # mapped: skipped rows are never copied
        for batch in pa.ipc.open_stream(source):
            yield batch.select(columns)


def _arrow_batches(unit: Unit, columns: list[str], batch_size: int) -> Iterator[Any]:
    """The unit's rows (``offset`` skipped, at most ``rows`` taken) in batches."""
    skip = unit.offset
    left = unit.rows
    for batch in _stored_batches(unit, columns, batch_size):
        if skip >= batch.num_rows:
            skip -= batch.num_rows
            continue
        batch = batch.slice(skip)
        skip = 0
        if left is not None:
            batch = batch.slice(0, left)
            left -= batch.num_rows
        for start in range(0, batch.num_rows, batch_size):
            yield batch.slice(start, batch_size)
        if left is not None and left <= 0:
            return


def read_unit(
    unit: Unit, field: str, tools_field: str | None = None, batch_size: int = DEFAULT_CHUNK
) -> Iterator[Chunk]:
    """The records of ``unit`` (or of a piece, :func:`split`) in chunks of at most
    ``batch_size``, in order."""
    if unit.kind == "jsonl":
        yield from _jsonl_chunks(unit, field, tools_field, batch_size)
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


class _Window(io.RawIOBase):
    """The bytes ``offset:stop`` of a file, as a file of their own (a JSON Lines piece)."""

    def __init__(self, raw: io.FileIO, offset: int, stop: int | None) -> None:
        super().__init__()
        raw.seek(offset)
        self._raw = raw
        self._left = None if stop is None else stop - offset

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._raw.close()
        super().close()

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._left is not None:
            view = view[: self._left]
        count = self._raw.readinto(view) or 0
        if self._left is not None:
            self._left -= count
        return count


def _jsonl_stream(unit: Unit) -> IO[bytes]:
    if unit.path == "-":
        return os.fdopen(0, "rb", closefd=False)
    raw = open(unit.path, "rb", buffering=0)  # noqa: SIM115 - closed with the window
    if unit.offset == 0 and unit.stop is None:
        return io.BufferedReader(raw)
    return io.BufferedReader(_Window(raw, unit.offset, unit.stop))


def _jsonl_chunks(
    unit: Unit, field: str, tools_field: str | None, batch_size: int
) -> Iterator[Chunk]:
    def empty() -> Chunk:
        return Chunk(unit.label, [], [], [] if tools_field else None, [])

    chunk = empty()
    with _jsonl_stream(unit) as f:
        for item in read_jsonl(f, field, tools_field=tools_field):
            chunk.records.append(unit.first + int(item.key))
            chunk.values.append(item.source)
            if chunk.tools is not None:
                chunk.tools.append(item.tools)
            chunk.errors.append(item.error)  # type: ignore[union-attr]
            if len(chunk.records) >= batch_size:
                yield chunk
                chunk = empty()
    if chunk.records:
        yield chunk
