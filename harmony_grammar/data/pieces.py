"""Planning a dataset: which files a path names, and the pieces an engine reads on their own.

Theory of operation
-------------------
:func:`plan` turns a path into :class:`Piece` s: a Parquet row group, one Arrow file of a
Hugging Face ``save_to_disk`` directory, a whole JSON Lines file, or a whole JSON array file.
Planning reads metadata only and checks that the columns exist, so a wrong ``--field`` is one
message before any work. :func:`split` cuts pieces into work pieces of about ``records``
records each (a slice of a row group or Arrow file; a byte range of a JSON Lines file, cut at
line ends, with the number of lines before it, found by counting newlines and parsing
nothing), so that a worker reads a piece on its own (:mod:`.read`) and results stay small.

The directory rule (docs/datasets.md), the same for every command and engine:

* a directory with ``dataset_dict.json`` is a ``DatasetDict`` (its splits, in order); one
  with ``state.json`` is a ``Dataset`` (its Arrow files, in order);
* any other directory is searched recursively, in name order; a file is read by its suffix
  (any case): ``.parquet``, ``.parq``, ``.pq`` as Parquet, ``.jsonl``, ``.ndjson`` as JSON
  Lines, ``.json`` as a JSON array of records; a directory such as Spark's ``x.parquet/`` is
  searched like any other;
* names starting with ``.`` or ``_`` (``_SUCCESS``, ``.part-0.crc``) are metadata: skipped,
  and listed in :attr:`DatasetPlan.skipped` for the caller to say so;
* any other file is an error before any work (:class:`DataSourceError`): nothing is skipped
  silently.

A file inside a directory whose metadata cannot be read is not an error: it is planned as an
``unreadable`` piece, reported as one result by every engine, and the run goes on. A file
named on its own that cannot be read is an error (the user named it: nothing else to do).

Record identity: ``file`` is the file as the user named it (a split's directory for a
``save_to_disk`` dataset), made printable (:func:`display_name`); ``record`` is 1-based: the
line number in a JSON Lines file, the position in a JSON array, the row number (pyarrow's and
``datasets``' index plus one) in a Parquet file or a ``save_to_disk`` dataset.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..base.deprecation import moved_names
from ..base.errors import HarmonyGrammarError

__all__ = [
    "DEFAULT_PIECE",
    "DEFAULT_PIECE_BYTES",
    "JSONL_SUFFIXES",
    "JSON_SUFFIXES",
    "PARQUET_SUFFIXES",
    "DataSourceError",
    "DatasetPlan",
    "Piece",
    "count_records",
    "display_name",
    "first_line",
    "is_seekable",
    "plan",
    "split",
]

#: Records per work piece (:func:`split`): a few hundred milliseconds of work, so a piece's
#: start-up (opening its file, skipping to its rows) is noise, its results stay well under a
#: megabyte, and a few pieces per worker in flight keep every worker busy.
DEFAULT_PIECE = 2048

#: Bytes per JSON Lines piece when records' sizes are unknown before reading (about 2,000
#: records of a few hundred bytes to a few kilobytes each).
DEFAULT_PIECE_BYTES = 4 << 20

PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
JSON_SUFFIXES = (".json",)


class DataSourceError(HarmonyGrammarError, ValueError):
    """A path that is no dataset this layer reads, or lacks a column; the message is one
    line that names the path."""


@dataclass(frozen=True, slots=True)
class Piece:
    """A part of a dataset that is read on its own (and so can be read anywhere).

    ``kind`` is ``"jsonl"``, ``"json"`` (a JSON array, always one piece), ``"parquet"``
    (``part`` is the row group), ``"arrow"`` (one Arrow stream of a ``save_to_disk``
    directory) or ``"unreadable"`` (``reason`` says why; reading it gives one failure);
    ``path`` is absolute (a worker's working directory need not be the driver's); ``label``
    is the identity reported as ``file``; ``rows`` is the piece's record count when known.

    A piece of a row group or Arrow stream skips its first ``offset`` rows; ``first`` is the
    0-based index (in the file or dataset) of its first row. A piece of a JSON Lines file is
    the bytes ``offset:stop`` (``stop`` None: to the end), and ``first`` is the number of
    lines before ``offset``, so line numbers stay those of the whole file.
    """

    kind: str
    path: str
    label: str
    part: int = 0
    first: int = 0
    rows: int | None = None
    offset: int = 0
    stop: int | None = None
    reason: str | None = None

    def describe(self) -> str:
        """The piece in words, for a message: ``row group 2 of x.parquet``."""
        if self.kind == "parquet":
            return f"row group {self.part} of {self.label}"
        inside = self.path not in (self.label, os.path.abspath(self.label))
        if self.kind == "arrow" or (self.kind == "unreadable" and inside):
            return f"{display_name(os.path.basename(self.path))} of {self.label}"
        if self.kind == "jsonl" and (self.offset or self.stop is not None):
            return f"{self.label} (bytes {self.offset}-{self.stop or 'end'})"
        return self.label


@dataclass(slots=True)
class DatasetPlan:
    """What :func:`plan` found: the pieces in order and the metadata files it skipped."""

    pieces: list[Piece] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def display_name(path: str | os.PathLike[str]) -> str:
    """A file name as text that can be printed and stored: bytes that are not UTF-8 (kept by
    the file system as surrogate escapes) become ``\\xNN``."""
    raw = os.fsencode(path)
    return raw.decode("utf-8", "backslashreplace")


# ---------------------------------------------------------------------------------- planning


def _columns(names: Sequence[str], needed: Sequence[str], where: str) -> None:
    for column in needed:
        if column not in names:
            shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
            raise DataSourceError(f"{where}: no column {column!r} (columns: {shown})")


def _parquet_pieces(path: Path, needed: Sequence[str], inside: bool) -> list[Piece]:
    import pyarrow.parquet as pq

    label = display_name(path)
    try:
        metadata = pq.ParquetFile(path).metadata
        names = metadata.schema.to_arrow_schema().names
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        reason = f"not a readable Parquet file ({first_line(exc)})"
        if not inside:
            raise DataSourceError(f"{label}: {reason}") from None
        return [Piece("unreadable", os.path.abspath(path), label, reason=reason)]
    _columns(names, needed, label)
    pieces, first = [], 0
    for group in range(metadata.num_row_groups):
        rows = metadata.row_group(group).num_rows
        pieces.append(Piece("parquet", os.path.abspath(path), label, group, first, rows))
        first += rows
    return pieces


def _arrow_rows(path: Path) -> tuple[int, list[str]]:
    import pyarrow as pa

    with pa.memory_map(str(path)) as source:
        reader = pa.ipc.open_stream(source)
        rows = sum(batch.num_rows for batch in reader)  # mapped, so nothing is held
        return rows, reader.schema.names


def _saved_pieces(directory: Path, needed: Sequence[str]) -> list[Piece]:
    """A ``save_to_disk`` directory: its ``state.json`` lists the Arrow files in order."""
    label = display_name(directory)
    try:
        state = json.loads((directory / "state.json").read_text("utf-8"))
        files = [directory / entry["filename"] for entry in state["_data_files"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataSourceError(f"{label}: unreadable state.json ({first_line(exc)})") from None
    pieces, first = [], 0
    for path in files:
        try:
            rows, names = _arrow_rows(path)
        except (OSError, ValueError) as exc:
            # Its rows are unknown, so the records after it cannot keep their numbers.
            reason = f"not a readable Arrow stream ({first_line(exc)}); later files not read"
            pieces.append(Piece("unreadable", os.path.abspath(path), label, reason=reason))
            return pieces
        _columns(names, needed, label)
        pieces.append(Piece("arrow", os.path.abspath(path), label, 0, first, rows))
        first += rows
    return pieces


def first_line(exc: BaseException) -> str:
    """An exception as one line of at most 300 characters (its type when it says nothing)."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def _kind(path: Path) -> str | None:
    suffix = path.suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        return "parquet"
    if suffix in JSONL_SUFFIXES:
        return "jsonl"
    if suffix in JSON_SUFFIXES:
        return "json"
    return None


def _file_pieces(path: Path, kind: str, needed: Sequence[str], inside: bool) -> list[Piece]:
    if kind == "parquet":
        return _parquet_pieces(path, needed, inside)
    return [Piece(kind, os.path.abspath(path), display_name(path))]


def _directory(where: Path, needed: Sequence[str], found: DatasetPlan) -> None:
    if (where / "dataset_dict.json").is_file():
        try:
            splits = json.loads((where / "dataset_dict.json").read_text("utf-8"))["splits"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise DataSourceError(
                f"{display_name(where)}: unreadable dataset_dict.json ({first_line(exc)})"
            ) from None
        for name in splits:
            found.pieces += _saved_pieces(where / str(name), needed)
        return
    if (where / "state.json").is_file():
        found.pieces += _saved_pieces(where, needed)
        return
    files = []
    for root, directories, names in os.walk(where):
        for name in list(directories):
            if name.startswith((".", "_")):
                directories.remove(name)
                found.skipped.append(display_name(Path(root, name)))
        for name in names:
            path = Path(root, name)
            if name.startswith((".", "_")):
                found.skipped.append(display_name(path))
            elif path.is_file():
                files.append(path)
    files.sort(key=lambda p: os.fsencode(p.relative_to(where)))
    for path in files:
        kind = _kind(path)
        if kind is None:
            raise DataSourceError(
                f"{display_name(path)}: not a dataset file; a directory holds .parquet, .parq, "
                ".pq, .jsonl, .ndjson or .json files (move this one out, or name files)"
            )
        found.pieces += _file_pieces(path, kind, needed, inside=True)
    if not files:
        raise DataSourceError(
            f"{display_name(where)}: a directory with no dataset files and no save_to_disk dataset"
        )


def plan(path: str, columns: Sequence[str] = ()) -> DatasetPlan:
    """The pieces of the dataset at ``path`` (``-``: JSON Lines on standard input), checking
    that Parquet and Arrow pieces have ``columns``. A file is read by its suffix (see the
    module's directory rule); a file named on its own with another suffix is JSON Lines."""
    found = DatasetPlan()
    if path == "-":
        found.pieces.append(Piece("jsonl", path, "-"))
        return found
    where = Path(path)
    if not where.exists():
        raise DataSourceError(f"{display_name(path)}: no such file or directory")
    if where.is_dir():
        _directory(where, columns, found)
    else:
        found.pieces += _file_pieces(where, _kind(where) or "jsonl", columns, inside=False)
    return found


def is_seekable(piece: Piece) -> bool:
    """Whether the piece's file can be read by any process from any offset: a regular file,
    not standard input, a FIFO or a device (those are read once, in order, by the driver)."""
    return piece.path != "-" and os.path.isfile(piece.path)


def count_records(pieces: Sequence[Piece]) -> int | None:
    """How many records the pieces hold, or None when a JSON file makes it unknown."""
    total = 0
    for piece in pieces:
        if piece.rows is None:
            return None
        total += piece.rows
    return total


# ---------------------------------------------------------------------------------- pieces


def split(
    pieces: Sequence[Piece], records: int = DEFAULT_PIECE, jsonl_bytes: int | None = None
) -> Iterator[Piece]:
    """The pieces cut into work pieces of at most ``records`` rows (Parquet, Arrow) or about
    ``jsonl_bytes`` bytes (JSON Lines, cut after a newline; by default
    :data:`DEFAULT_PIECE_BYTES` scaled as ``records`` is to :data:`DEFAULT_PIECE`), in order.

    Standard input, a FIFO or a device (``/dev/stdin``, a shell's ``<(...)``) cannot be cut
    (nor read by another process) and is one piece; so is a JSON array file and an unreadable
    piece.
    """
    if jsonl_bytes is None:
        jsonl_bytes = max(DEFAULT_PIECE_BYTES * records // DEFAULT_PIECE, 1)
    for piece in pieces:
        if piece.kind == "jsonl" and is_seekable(piece):
            yield from _jsonl_pieces(piece, jsonl_bytes)
        elif (
            piece.kind in ("jsonl", "json", "unreadable")
            or piece.rows is None
            or piece.rows <= records
        ):
            yield piece
        else:
            for skip in range(0, piece.rows, records):
                take = min(records, piece.rows - skip)
                yield Piece(
                    piece.kind,
                    piece.path,
                    piece.label,
                    piece.part,
                    piece.first + skip,
                    take,
                    piece.offset + skip,
                )


def _jsonl_pieces(piece: Piece, size: int) -> Iterator[Piece]:
    """Byte ranges of about ``size`` bytes that end after a newline, with their line counts.

    Only newlines are counted (``bytes.count``, at memory speed): a worker parses its piece.
    A piece ends at the first newline at or after ``size`` bytes from its start, so a line is
    never cut; the last piece runs to the end of the file.
    """
    block_size = 1 << 20
    start = position = 0  # the piece's first byte; the block's first byte
    lines_before = lines = 0  # lines before the piece; newlines in it so far
    try:
        f = open(piece.path, "rb")  # noqa: SIM115 - closed below, errors become a piece
    except OSError as exc:
        yield Piece("unreadable", piece.path, piece.label, reason=exc.strerror or str(exc))
        return
    with f:
        while block := f.read(block_size):
            cursor = 0  # the block's bytes before this are counted
            while (want := start + size - position) < len(block):
                newline = block.find(b"\n", max(want, cursor))
                if newline < 0:
                    break  # the piece ends in a later block
                lines += block.count(b"\n", cursor, newline + 1)
                stop = position + newline + 1
                yield Piece(
                    "jsonl", piece.path, piece.label, first=lines_before, offset=start, stop=stop
                )
                start, lines_before, lines, cursor = stop, lines_before + lines, 0, newline + 1
            lines += block.count(b"\n", cursor)
            position += len(block)
    if position > start or start == 0:  # the rest, or an empty file's one empty piece
        yield Piece("jsonl", piece.path, piece.label, first=lines_before, offset=start)


__getattr__ = moved_names(
    __name__, {"Plan": ("harmony_grammar.data.pieces.DatasetPlan", DatasetPlan)}
)
