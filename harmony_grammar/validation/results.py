"""What a dataset engine hands back: result columns for a run of records with their identity.

Every engine (:mod:`.local_engine`, :mod:`.ray_engine`) yields :class:`ResultBatch` es, so
the summary, the ``--output`` file and the HTML report consume one shape whatever ran the
validation. A batch converts to the ``--output`` Parquet schema (:func:`output_schema`):
the input's identity (``file``, ``record``) followed by :data:`~.batch.RESULT_COLUMNS`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .batch import RESULT_COLUMNS, diagnostics_from_json, result_schema
from .dataset import ItemResult

__all__ = ["IDENTITY_COLUMNS", "ResultBatch", "output_schema"]

#: The input's row identity, first in every result table (see :mod:`.sources`).
IDENTITY_COLUMNS = ("file", "record")


def output_schema() -> Any:
    """The pyarrow schema of ``--output`` files and of the Ray engine's result blocks."""
    import pyarrow as pa

    return pa.schema([("file", pa.string()), ("record", pa.int64()), *result_schema()])


@dataclass(slots=True)
class ResultBatch:
    """``columns`` (each of :data:`~.batch.RESULT_COLUMNS`) for the records ``records`` of
    ``file``, one list entry per record."""

    file: str
    records: list[int]
    columns: dict[str, list[Any]]

    def __len__(self) -> int:
        return len(self.records)

    def item_results(self) -> Iterator[ItemResult]:
        """One :class:`~.dataset.ItemResult` per record, as the CLI's summary takes them."""
        # size 1: progress over a dataset counts records
        for record, text in zip(self.records, self.columns["diagnostics"], strict=True):
            yield ItemResult(record, diagnostics_from_json(text), tokens=False, size=1)

    def to_arrow(self) -> Any:
        """The batch as a ``pyarrow.Table`` of :func:`output_schema`."""
        import pyarrow as pa

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
            yield cls(
                files[start],
                part.column("record").to_pylist(),
                {name: part.column(name).to_pylist() for name in RESULT_COLUMNS},
            )
            start = stop
