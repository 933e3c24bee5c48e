"""Reading the records to audit, through the dataset readers ``validate`` uses.

Everything ``audit-masks`` reads goes through :func:`read_tables`, the one place that knows
the reading API (today :mod:`harmony_grammar.validation.sources`): JSON Lines, Parquet files
and directories of shards, and ``datasets`` ``save_to_disk`` directories, in bounded memory,
with validate's record identity (the JSONL line, 1-based; the row, 0-based).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..validation.sources import DataSourceError, plan, read_unit

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
    # validate's readers take one field and one optional side column (its tools column):
    # the ids are the field, the mask rides as the side column.
    for unit in plan(path, ids, mask):
        for chunk in read_unit(unit, ids, mask, batch_size):
            errors = chunk.errors or [None] * len(chunk.records)
            masks = chunk.tools if chunk.tools is not None else [None] * len(chunk.records)
            yield RecordTable(chunk.file, chunk.records, {ids: chunk.values, mask: masks}, errors)
