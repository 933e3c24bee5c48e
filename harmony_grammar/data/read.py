"""Reading one piece into records, each with its identity, in bounded memory.

:func:`read_piece` yields :class:`Chunk` s of at most ``batch_size`` records: each record is
a ``dict`` (a JSON object, or an Arrow row of the columns asked for) or None with an error
saying why it could not be read (not JSON, invalid UTF-8, a lone surrogate, a line over the
size limit, a value Arrow cannot convert). A bad record never ends a piece. A piece that
cannot be read from some point on (a corrupt data page, a truncated shard, a file gone) ends
with one :class:`Failure` that names the piece and the records it leaves unread; records
read before it have been yielded. Nothing here raises for bad data.

pyarrow is imported only where Parquet or Arrow is read: JSON Lines needs nothing extra.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from ..tools.json_limits import JsonLimitError, json_message, loads_bounded
from .pieces import Piece, first_line

__all__ = [
    "DEFAULT_CHUNK",
    "DEFAULT_MAX_RECORD_BYTES",
    "PIECE_PREFIX",
    "Chunk",
    "Failure",
    "field_value",
    "parse_record",
    "read_piece",
    "without_nulls",
]

#: Records per chunk: large enough to amortise per-chunk costs, small enough that the chunks
#: in flight stay a few megabytes.
DEFAULT_CHUNK = 256
#: The longest JSONL line read; a longer one is that record's error, and is never held.
DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024
_DRAIN = 1 << 20
#: How every unreadable piece's message starts (a summary prints it once per piece).
PIECE_PREFIX = "unreadable piece "


@dataclass(slots=True)
class Chunk:
    """Records of one piece: ``records[i]`` (1-based, :mod:`.pieces`) of ``file``, read as
    ``values[i]`` (a dict, or None when ``errors[i]`` says why it could not be read);
    ``arrow`` when they came from Arrow (where a null key may stand for an absent one)."""

    file: str
    records: list[int] = field(default_factory=list)
    values: list[dict[str, Any] | None] = field(default_factory=list)
    errors: list[str | None] = field(default_factory=list)
    arrow: bool = False

    def __len__(self) -> int:
        return len(self.records)

    def append(self, record: int, value: dict[str, Any] | None, error: str | None) -> None:
        """One more record."""
        self.records.append(record)
        self.values.append(value)
        self.errors.append(error)


@dataclass(frozen=True, slots=True)
class Failure:
    """A piece, or its rest, that could not be read: ``count`` records from ``first``
    (1-based) of ``file`` are unread (``count`` None: unknown), because of ``reason``."""

    file: str
    first: int
    count: int | None
    piece: str
    reason: str

    @property
    def message(self) -> str:
        """One line naming the piece, the records and the cause."""
        if self.count is None:
            which = f"records from {self.first} on (how many is unknown)"
        elif self.count == 1:
            which = f"record {self.first}"
        else:
            which = f"records {self.first}-{self.first + self.count - 1}"
        reason = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in self.reason)
        return f"{PIECE_PREFIX}{self.piece}: {which} not read ({reason})"[:600]


def field_value(record: Any, path: str) -> Any:
    """``record[path]``, or the nested value of a dotted path (``output.text``);
    KeyError when there is none."""
    if isinstance(record, dict) and path in record:
        return record[path]
    value = record
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(path)
        value = value[part]
    return value


def without_nulls(value: Any) -> Any:
    """A record read from Arrow with every null-valued object key removed.

    Arrow stores a column of objects as one struct type, the union of every record's keys,
    and fills the keys a record lacks with null: a tool schema would gain the properties of
    other records' tools, and call arguments other calls' arguments. Arrow cannot tell those
    from a real null, so for Arrow inputs a null key reads as absent; JSON inputs keep their
    nulls. Store tools and arguments as JSON text to keep both.
    """
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def parse_record(line: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """One JSON Lines line as a record, or None and why it is none."""
    try:
        value = loads_bounded(line.decode(json.detect_encoding(line)))
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 at byte {exc.start}"
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({json_message(exc)} at column {exc.colno})"
    except JsonLimitError as exc:  # nesting, a number Python's json would fail on, surrogates
        return None, f"not readable: {exc.limit.message}"
    if not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__}, not an object"
    return value, None


# ---------------------------------------------------------------------------------- JSON Lines


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


def _jsonl_stream(piece: Piece) -> IO[bytes]:
    if piece.path == "-":
        return os.fdopen(0, "rb", closefd=False)
    raw = open(piece.path, "rb", buffering=0)  # noqa: SIM115 - closed with the window
    if piece.offset == 0 and piece.stop is None:
        return io.BufferedReader(raw)
    return io.BufferedReader(_Window(raw, piece.offset, piece.stop))


def _lines(stream: IO[bytes], limit: int) -> Iterator[tuple[bytes | None, int]]:
    """Each line (None for one over ``limit`` bytes, drained without being kept) with its
    size in bytes."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            size = len(line)
            while not line.endswith(b"\n"):
                line = stream.readline(_DRAIN)
                if not line:
                    break
                size += len(line)
            yield None, size
            continue
        yield line, len(line)


def _jsonl(piece: Piece, batch_size: int, limit: int) -> Iterator[Chunk | Failure]:
    chunk = Chunk(piece.label)
    number = piece.first
    try:
        with _jsonl_stream(piece) as stream:
            for line, _size in _lines(stream, limit):
                number += 1
                if line is None:
                    chunk.append(number, None, f"the line is longer than {limit} bytes")
                elif line.strip():
                    chunk.append(number, *parse_record(line))
                else:
                    continue  # a blank line is no record (its number is still counted)
                if len(chunk) >= batch_size:
                    yield chunk
                    chunk = Chunk(piece.label)
    except OSError as exc:
        if chunk.records:
            yield chunk
        yield Failure(piece.label, number + 1, None, piece.describe(), first_line(exc))
        return
    if chunk.records:
        yield chunk


def _json_array(piece: Piece, batch_size: int) -> Iterator[Chunk | Failure]:
    try:
        with open(piece.path, "rb") as f:
            data = f.read()
        value = loads_bounded(data.decode(json.detect_encoding(data)))
    except (OSError, ValueError) as exc:  # JSONDecodeError, JsonLimitError, UnicodeDecodeError
        reason = f"not readable JSON: {first_line(exc)}"
        yield Failure(piece.label, 1, None, piece.describe(), reason)
        return
    if not isinstance(value, list):
        reason = f"a JSON {type(value).__name__}, not an array of records"
        yield Failure(piece.label, 1, None, piece.describe(), reason)
        return
    for start in range(0, len(value), batch_size):
        chunk = Chunk(piece.label)
        for number, item in enumerate(value[start : start + batch_size], start + 1):
            if isinstance(item, dict):
                chunk.append(number, item, None)
            else:
                chunk.append(number, None, f"a JSON {type(item).__name__}, not an object")
        yield chunk


# ---------------------------------------------------------------------------------- Arrow


def _stored_batches(piece: Piece, columns: list[str] | None, batch_size: int) -> Iterator[Any]:
    """The record batches of the row group or Arrow stream the piece lies in, from its start."""
    if piece.kind == "parquet":
        import pyarrow.parquet as pq

        yield from pq.ParquetFile(piece.path).iter_batches(
            batch_size=batch_size, row_groups=[piece.part], columns=columns
        )
        return
    import pyarrow as pa

    with pa.memory_map(piece.path) as source:  # mapped: skipped rows are never copied
        for batch in pa.ipc.open_stream(source):
            yield batch if columns is None else batch.select(columns)


def _arrow_batches(piece: Piece, columns: list[str] | None, batch_size: int) -> Iterator[Any]:
    """The piece's rows (``offset`` skipped, at most ``rows`` taken) in batches."""
    skip = piece.offset
    left = piece.rows
    for batch in _stored_batches(piece, columns, batch_size):
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


def _rows(batch: Any) -> list[tuple[dict[str, Any] | None, str | None]]:
    """A batch's rows as dicts; a row Arrow cannot convert (a string that is not UTF-8) is
    that row's error, found row by row only when the whole batch fails."""
    try:
        return [(row, None) for row in batch.to_pylist()]
    except Exception:
        pass
    out: list[tuple[dict[str, Any] | None, str | None]] = []
    for i in range(batch.num_rows):
        try:
            (row,) = batch.slice(i, 1).to_pylist()
            out.append((row, None))
        except Exception as exc:
            names = [name for name in batch.schema.names if not _column_ok(batch, name, i)]
            where = f" in field {names[0]!r}" if names else ""
            out.append((None, f"a value Arrow cannot read{where} ({first_line(exc)})"))
    return out


def _column_ok(batch: Any, name: str, i: int) -> bool:
    try:
        batch.column(name).slice(i, 1).to_pylist()
    except Exception:
        return False
    return True


def _arrow(piece: Piece, columns: list[str] | None, batch_size: int) -> Iterator[Chunk | Failure]:
    done = 0
    try:
        for batch in _arrow_batches(piece, columns, batch_size):
            chunk = Chunk(piece.label, arrow=True)
            for offset, (value, error) in enumerate(_rows(batch)):
                chunk.append(piece.first + done + offset + 1, value, error)
            done += batch.num_rows
            yield chunk
    except Exception as exc:
        left = None if piece.rows is None else piece.rows - done
        if left == 0:
            return
        yield Failure(piece.label, piece.first + done + 1, left, piece.describe(), first_line(exc))


def read_piece(
    piece: Piece,
    columns: Sequence[str] | None = None,
    batch_size: int = DEFAULT_CHUNK,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
) -> Iterator[Chunk | Failure]:
    """The records of ``piece`` in chunks of at most ``batch_size``, in order, then a
    :class:`Failure` if the piece could not be read to its end. ``columns`` limits what is
    read of Parquet and Arrow (None: every column); JSON records are read whole."""
    if piece.kind == "unreadable":
        yield Failure(piece.label, 1, piece.rows, piece.describe(), piece.reason or "unreadable")
    elif piece.kind == "jsonl":
        yield from _jsonl(piece, batch_size, max_record_bytes)
    elif piece.kind == "json":
        yield from _json_array(piece, batch_size)
    else:
        yield from _arrow(piece, None if columns is None else list(columns), batch_size)
