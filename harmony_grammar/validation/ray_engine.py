"""The Ray engine: the same units and the same batch function, run as Ray Data tasks.

Theory of operation
-------------------
The driver plans the dataset (:func:`.sources.plan`: metadata only), cuts it into pieces
(:func:`.sources.split`: slices of row groups, byte ranges of JSON Lines files) and makes a
Ray Dataset of the pieces' descriptions, one block each. ``map_batches`` runs
:func:`_validate_units` on them in Ray's workers: each reads its piece
(:func:`.sources.read_unit`) and validates it chunk by chunk with
:func:`.batch.validate_values`, yielding result tables of :func:`.results.output_schema`
(identity and results; never the records' text). :func:`results_dataset` is that lazy
dataset: :func:`validate_ray` streams it back to the driver with ``iter_batches`` (its memory
holds a few blocks whatever the dataset's size), and the CLI can instead have the workers
write it (``write_parquet``) and bring back aggregates only (:mod:`.ray_output`).

Pieces rather than ``ray.data.read_parquet``: a piece is read where it is validated, like
``read_parquet``'s own tasks, but it knows its file and first row, so every result carries
the input's row identity without ordering tricks on the driver, and JSON Lines and
``save_to_disk`` directories (Arrow streams, which Ray has no reader for) take the same path.
The files must be readable at the same path on every node (a shared file system), as for
``read_parquet``.

Ray is imported only here, and only when the engine runs: everything else works without it.
Usage statistics stay off (no network at all) unless the caller set
``RAY_USAGE_STATS_ENABLED`` themselves.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Iterator, Sequence
from typing import Any

from .batch import BatchOptions
from .local_engine import validate_piece
from .results import ResultBatch
from .sources import DEFAULT_CHUNK, Unit, split

__all__ = [
    "RAY_PIECE",
    "RayUnavailableError",
    "configure_data_context",
    "import_ray",
    "results_dataset",
    "start_ray",
    "validate_ray",
]


#: Records per Ray task. Larger than the local engine's pieces: a Ray task costs tens of
#: milliseconds to schedule and its worker may sit on another node, so a piece is one to two
#: seconds of work (a typical row group of 10,000 rows is one piece), and the shards that
#: ``write_parquet`` writes, one per piece, are of a useful size.
RAY_PIECE = 10_000


class RayUnavailableError(ImportError):
    """Ray Data is not installed; the message says what to install."""


def import_ray() -> Any:
    """Ray with Ray Data, usage statistics off (nothing leaves the machine unasked);
    :class:`RayUnavailableError` when it is not installed."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
        import ray.data  # Ray Data is a separate extra of ray
    except ImportError as exc:
        raise RayUnavailableError(
            f"the ray engine needs Ray Data: pip install 'harmony-grammar[scale]' ({exc})"
        ) from None
    return ray


def start_ray(ray: Any, *, address: str | None = None, jobs: int = 0) -> bool:
    """Start Ray quietly (no dashboard, no worker logs on the driver) unless it is running.

    ``address`` joins a running cluster; without it a local instance gets ``jobs`` CPUs (0:
    all). Returns whether this call started it (so the caller knows whether to shut it down).
    Shared with the ``prepare`` Ray engine (:mod:`harmony_grammar.training.ray_engine`).
    """
    if ray.is_initialized():
        return False
    local = {"num_cpus": jobs} if address is None and jobs > 0 else {}
    ray.init(
        address=address,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.WARNING,
        **local,
    )
    return True


def configure_data_context(ray: Any, *, progress: bool = False) -> None:
    """Ray Data keeps input order, and shows progress (bars, per-run INFO lines) only if asked.

    Our engines report in input order, and their stderr is where problems are reported.
    """
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True  # results in input order
    context.enable_progress_bars = progress
    if not progress:  # Ray Data's per-run INFO lines are its progress report too
        logging.getLogger("ray.data").setLevel(logging.WARNING)


def _validate_units(batch: Any, options: BatchOptions, chunk_size: int) -> Iterator[Any]:
    """Ray task: read and validate the pieces in ``batch`` (a pyarrow table of unit rows)."""
    for row in batch.to_pylist():
        # one table per piece: Ray's per-block cost (buffering, sizing, the object store) is
        # paid once per piece rather than once per chunk
        yield validate_piece(Unit(**row), options, chunk_size)


def results_dataset(
    ray: Any,
    units: Sequence[Unit],
    options: BatchOptions,
    *,
    jobs: int = 0,
    chunk_size: int = DEFAULT_CHUNK,
    piece_records: int = RAY_PIECE,
) -> Any:
    """The lazy Ray Dataset of the results (rows of :func:`.results.output_schema`, in input
    order): one task per piece, at most ``jobs`` (0: as many as the cluster runs) at once.
    Nothing runs until it is consumed (iterated, or written where it is computed)."""
    pieces = [dataclasses.asdict(piece) for piece in split(units, piece_records)]
    return ray.data.from_items(pieces, override_num_blocks=len(pieces)).map_batches(
        _validate_units,
        fn_kwargs={"options": options, "chunk_size": chunk_size},
        batch_size=1,
        batch_format="pyarrow",
        compute=ray.data.TaskPoolStrategy(size=jobs or None),
    )


def validate_ray(
    units: Sequence[Unit],
    options: BatchOptions,
    *,
    address: str | None = None,
    jobs: int = 0,
    chunk_size: int = DEFAULT_CHUNK,
    piece_records: int = RAY_PIECE,
    progress: bool = False,
) -> Iterator[ResultBatch]:
    """Validate every record of ``units`` on Ray Data, in input order.

    ``address`` is a running cluster's (``ray://host:10001`` or ``auto``); without it a local
    Ray instance is started with ``jobs`` CPUs (0: all) and shut down at the end. ``jobs``
    also caps the tasks running at once. ``progress`` shows Ray's progress bars.
    """
    ray = import_ray()
    started = start_ray(ray, address=address, jobs=jobs)
    try:
        configure_data_context(ray, progress=progress)
        if not units:
            return
        dataset = results_dataset(
            ray, units, options, jobs=jobs, chunk_size=chunk_size, piece_records=piece_records
        )
        for table in dataset.iter_batches(batch_size=None, batch_format="pyarrow"):
            yield from ResultBatch.from_arrow(table)
    finally:
        if started:
            ray.shutdown()
