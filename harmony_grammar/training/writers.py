"""Writing training rows: Parquet row groups as batches arrive, or a saved HF dataset.

The Parquet schema is fixed (:data:`SCHEMA`), so an empty output still has the columns TRL
looks for, and every batch appends one row group: memory holds one batch, not the dataset.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

from .batch import BatchResult

__all__ = ["OUTPUT_FORMATS", "TrainingWriter", "arrow_schema"]

#: ``parquet``: one file; ``hf``: a folder written by ``datasets.Dataset.save_to_disk``.
OUTPUT_FORMATS = ("parquet", "hf")


def arrow_schema() -> Any:
    """The output columns' Arrow types: ids and labels int32 (o200k_harmony has 201k ids),
    masks int8, the rendered text, and the record's identity (file, 1-based record)."""
    import pyarrow as pa

    return pa.schema(
        [
            ("input_ids", pa.list_(pa.int32())),
            ("assistant_masks", pa.list_(pa.int8())),
            ("labels", pa.list_(pa.int32())),
            ("text", pa.string()),
            ("file", pa.string()),
            ("record", pa.int64()),
        ]
    )


class TrainingWriter:
    """A context manager that writes batches to ``path`` in ``output_format``."""

    def __init__(self, path: str, output_format: str = "parquet") -> None:
        if output_format not in OUTPUT_FORMATS:
            raise ValueError(
                f"output format must be one of {OUTPUT_FORMATS}, not {output_format!r}"
            )
        import pyarrow.parquet as pq

        self.path, self.output_format = path, output_format
        self._tmp: str | None = None
        target = path
        if output_format == "hf":
            self._tmp = tempfile.mkdtemp(prefix="hg-prepare-")
            target = str(Path(self._tmp) / "data.parquet")
        self._parquet_path = target
        self._writer = pq.ParquetWriter(target, arrow_schema())

    def write(self, batch: BatchResult) -> None:
        """Append one batch (nothing for an empty one)."""
        if len(batch):
            import pyarrow as pa

            table = pa.Table.from_pydict(batch.columns, schema=arrow_schema())
            self._writer.write_table(table)

    def close(self) -> None:
        """Finish the file; for ``hf``, convert it into a saved dataset folder."""
        self._writer.close()
        if self._tmp is None:
            return
        try:
            import datasets

            dataset = datasets.Dataset.from_parquet(self._parquet_path)
            dataset.save_to_disk(self.path)
        finally:
            shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> TrainingWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if kind is None:
            self.close()
        else:
            self._writer.close()
            if self._tmp is not None:
                shutil.rmtree(self._tmp, ignore_errors=True)
