"""Reading the records to audit, through the one data layer (:mod:`harmony_grammar.data`).

Everything ``audit-masks`` reads goes through :func:`read_tables`: JSON Lines, JSON arrays,
Parquet files and directories of shards, and ``datasets`` ``save_to_disk`` directories, in
bounded memory, with the record identity every command uses (file and 1-based record). A
record that cannot be read, or the records of a piece that cannot be read at all, come back
with their errors, so every input record is accounted for.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..data.pieces import DataSourceError, plan
from ..data.read import Failure, field_value, read_piece

__all__ = ["DataSourceError", "RecordTable", "read_tables"]


@dataclass(frozen=True, slots=True)
class RecordTable:
    """A batch of records from one file: ``columns`` maps the ids and mask column names to
    equally long lists; ``records`` are their identities in ``file``; ``errors[i]`` says why
    record ``i`` could not be read at all (None when it could)."""

    file: str
    records: list[int]
    columns: dict[str, list[Any]]
    errors: list[str | None]


def read_tables(path: str, ids: str, mask: str, batch_size: int = 256) -> Iterator[RecordTable]:
    """The records at ``path`` in tables of at most ``batch_size``; raises
    :class:`DataSourceError` (one line naming the path) for a path or column that is not there.
    """
    columns = sorted({ids.split(".", 1)[0], mask.split(".", 1)[0]})
    for piece in plan(path, columns).pieces:
        for part in read_piece(piece, columns, batch_size):
            if isinstance(part, Failure):
                # A piece that could not be read: one error row standing for its records.
                yield RecordTable(
                    part.file, [part.first], {ids: [None], mask: [None]}, [part.message]
                )
                continue
            values: list[Any] = []
            masks: list[Any] = []
            errors: list[str | None] = []
            for value, error in zip(part.values, part.errors, strict=True):
                if value is None:  # the record could not be read
                    values.append(None)
                    masks.append(None)
                    errors.append(error)
                    continue
                try:
                    values.append(field_value(value, ids))
                    errors.append(None)
                except KeyError:
                    values.append(None)
                    errors.append(f"the record has no field {ids!r}")
                # A record without a mask is audited as one (the finding mask-invalid).
                masks.append(_optional(value, mask))
            yield RecordTable(part.file, part.records, {ids: values, mask: masks}, errors)


def _optional(record: dict[str, Any], name: str) -> Any:
    try:
        return field_value(record, name)
    except KeyError:
        return None
