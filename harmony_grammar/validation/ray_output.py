"""``--engine ray --output DIR``: the workers write the results; the driver gets aggregates.

Theory of operation
-------------------
On a cluster the results of millions of records should not funnel through the driver. Here
the results dataset (:func:`harmony_grammar.data.ray_engine.results_dataset` of
:class:`.engine.ValidateTask`: pieces read and validated on the workers) is written by Ray
Data's own ``write_parquet`` into a directory of Parquet shards, from the workers that
computed them. The summary and the HTML report only need aggregates, so
a second, cheap pass reads back the result columns they use (never the records, never the
diagnostics as objects) and folds each block into a :class:`.html_report.ReportData` on a
worker; the driver receives one small JSON row per block (counts, fixed bins and at most
:data:`.html_report.SAMPLE_SIZE` failing samples) and merges them. What the driver holds is
bounded by the number of blocks' partials in flight, never by the number of records.

Rows in the directory carry their identity (``file``, ``record``), so the shards' order and
names (Ray's ``{uuid}_{block}``) do not matter for joining them back to the input. The
directory must be writable at the same path from every node (a shared file system or an
object store URI such as ``s3://bucket/results/``), as the input must be readable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..data.pieces import Piece
from ..data.ray_engine import ray_session, results_dataset
from .batch import BatchOptions
from .engine import ValidateTask
from .html_report import ReportData
from .results import IDENTITY_COLUMNS, ResultBatch

__all__ = ["REPORT_COLUMNS", "write_results_ray"]

#: The columns the summary and the report read back (not ``codes``, ``errors``, ``warnings``:
#: the ``diagnostics`` carry every code with its severity and position).
REPORT_COLUMNS = (
    *IDENTITY_COLUMNS,
    "ok",
    "first_error",
    "recovered",
    "diagnostics",
    "length",
    "excerpt",
)


def _has_files(directory: str) -> bool:
    """Whether ``directory`` (a local path or a URI pyarrow knows) holds any file."""
    import pyarrow.fs as fs

    filesystem, path = fs.FileSystem.from_uri(directory)
    found = filesystem.get_file_info(fs.FileSelector(path, allow_not_found=True))
    return any(info.type == fs.FileType.File for info in found)


def _partial(batch: Any) -> Any:
    """Ray task: one block of results folded into one row of :class:`ReportData` JSON."""
    import pyarrow as pa

    data = ReportData()
    for results in ResultBatch.from_arrow(batch):
        data.add(results)
    return pa.table({"partial": [data.to_json()]})


def write_results_ray(
    pieces: Sequence[Piece],
    options: BatchOptions,
    directory: str,
    *,
    address: str | None = None,
    jobs: int = 0,
    progress: bool = False,
) -> ReportData:
    """Validate ``pieces`` on Ray, have the workers write the results under ``directory``
    (Parquet shards of :func:`.results.output_schema`), and return the run's aggregates.

    ``directory`` is an absolute path (every node must find it) or a URI (``s3://...``).

    ``address`` and ``jobs`` are :func:`harmony_grammar.data.ray_engine.run_ray`'s.
    """
    total = ReportData()
    with ray_session(address=address, jobs=jobs, progress=progress) as ray:
        if not pieces:
            return total
        results_dataset(ray, pieces, ValidateTask(options), jobs=jobs).write_parquet(directory)
        if not _has_files(directory):  # no record at all: nothing was written
            return total
        written = ray.data.read_parquet(directory).select_columns(list(REPORT_COLUMNS))
        rank = {label: i for i, label in enumerate(dict.fromkeys(p.label for p in pieces))}
        # Ray sizes this pass itself: it reads a few small columns, fused with the folding
        partials = written.map_batches(_partial, batch_size=None, batch_format="pyarrow")
        for table in partials.iter_batches(batch_size=None, batch_format="pyarrow"):
            for text in table.column("partial").to_pylist():
                total.merge(
                    ReportData.from_json(text),
                    order=lambda sample: (rank[sample["file"]], sample["record"]),
                )
        return total
