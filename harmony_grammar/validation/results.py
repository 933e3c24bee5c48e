"""What a dataset engine hands back: result columns for a run of records with their identity.

Every engine (:mod:`harmony_grammar.data.pool`, :mod:`harmony_grammar.data.ray_engine`, fed
:class:`.engine.ValidateTask`) yields :class:`ResultBatch` es, so the summary, the
``--output`` file and the HTML report consume one shape whatever ran the validation. A batch
converts to the ``--output`` Parquet schema (:func:`output_schema`): the input's identity
(``file``, ``record``) followed by :data:`~.batch.RESULT_COLUMNS`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..format.model import Diagnostic, Severity
from .batch import RESULT_COLUMNS, diagnostics_from_json, result_schema

__all__ = ["IDENTITY_COLUMNS", "ItemResult", "ResultBatch", "concat_tables", "output_schema"]

#: The input's row identity, first in every result table (see :mod:`harmony_grammar.data`):
#: the file and the 1-based record.
IDENTITY_COLUMNS = ("file", "record")


@dataclass(frozen=True, slots=True)
class ItemResult:
    """The diagnostics of one input (``key``: a record number, or a file name for a plain
    file); ``size`` is its share of a progress bar's total."""

    key: int | str
    diagnostics: tuple[Diagnostic, ...]
    size: int = 1

    @property
    def ok(self) -> bool:
        """True when no diagnostic has error severity."""
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)


def output_schema() -> Any:
    """The pyarrow schema of ``--output`` files and of the Ray engine's result blocks."""
    import pyarrow as pa

    return pa.schema([("file", pa.string()), ("record", pa.int64()), *result_schema()])


def concat_tables(tables: Iterable[Any]) -> Any:
    """Result tables of :func:`output_schema` as one (an empty one for none)."""
    import pyarrow as pa

    parts = list(tables)
    return pa.concat_tables(parts) if parts else output_schema().empty_table()


class _Columns(Mapping[str, list[Any]]):
    """A result table's columns as Python lists, each converted when first read: a consumer
    that needs two columns (a progress count, ``ok``) pays for those two only."""

    def __init__(self, table: Any) -> None:
        self._table = table
        self._lists: dict[str, list[Any]] = {}

    def __getitem__(self, name: str) -> list[Any]:
        if name not in RESULT_COLUMNS:
            raise KeyError(name)
        if name not in self._lists:
            self._lists[name] = self._table.column(name).to_pylist()
        return self._lists[name]

    def __iter__(self) -> Iterator[str]:
        return iter(RESULT_COLUMNS)

    def __len__(self) -> int:
        return len(RESULT_COLUMNS)


@dataclass(slots=True)
class ResultBatch:
    """``columns`` (each of :data:`~.batch.RESULT_COLUMNS`) for the records ``records`` of
    ``file``, one list entry per record; ``table``, when the batch came as Arrow, is the
    same as a table of :func:`output_schema` (written as it is, never rebuilt)."""

    file: str
    records: list[int]
    columns: Mapping[str, list[Any]]
    table: Any = None

    def __len__(self) -> int:
        return len(self.records)

    def item_results(self) -> Iterator[ItemResult]:
        """One :class:`ItemResult` per record, as the CLI's summary takes them."""
        # size 1: progress over a dataset counts records
        for record, text in zip(self.records, self.columns["diagnostics"], strict=True):
            # most records have no diagnostic: skip the JSON parser for them
            diagnostics = () if text == "[]" else diagnostics_from_json(text)
            yield ItemResult(record, diagnostics)

    def to_arrow(self) -> Any:
        """The batch as a ``pyarrow.Table`` of :func:`output_schema`."""
        import pyarrow as pa

        if self.table is not None:
            return self.table
        data = {"file": [self.file] * len(self.records), "record": self.records}
        data.update({name: self.columns[name] for name in RESULT_COLUMNS})
        return pa.Table.from_pydict(data, schema=output_schema())

    @classmethod
    def from_arrow(cls, table: Any) -> Iterator[ResultBatch]:
        """Batches of :func:`output_schema` rows back, one per run of rows of one file."""
        files = table.column("file").to_pylist()
        start = 0
        while start < len(files):
            stop = start
            while stop < len(files) and files[stop] == files[start]:
                stop += 1
            part = table.slice(start, stop - start)
            yield cls(files[start], part.column("record").to_pylist(), _Columns(part), part)
            start = stop
