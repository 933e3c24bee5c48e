"""The one Ray engine: the same pieces and the same batch function, run as Ray Data tasks.

Theory of operation
-------------------
The driver plans the dataset (:func:`.pieces.plan`: metadata only), cuts it into pieces
(:func:`.pieces.split`) and makes a Ray Dataset of the pieces' descriptions, one block each.
``map_batches`` runs :func:`.task.run_piece` on them in Ray's workers: each reads its piece
and runs the task's batch function, yielding the task's packed results (a ``pyarrow.Table``
per piece). :func:`results_dataset` is that lazy dataset: :func:`run_ray` streams it back to
the driver with ``iter_batches`` (its memory holds a few blocks whatever the dataset's size);
a caller can instead have the workers write it (``write_parquet``) and bring back aggregates
only (validation's ``--output DIR``).

Pieces rather than ``ray.data.read_parquet``: a piece is read where it is processed, like
``read_parquet``'s own tasks, but it knows its file and first row, so every result carries the
input's row identity without ordering tricks on the driver, and JSON Lines and ``save_to_disk``
directories (Arrow streams, which Ray has no reader for) take the same path; and a piece that
cannot be read is a result, where Ray's readers would fail the run. The files must be readable
at the same path on every node (a shared file system), as for ``read_parquet``.

Ray is imported only here, and only when the engine runs. Usage statistics stay off (no
network at all) unless the caller set ``RAY_USAGE_STATS_ENABLED`` themselves.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Iterator, Sequence
from typing import Any

from ..base.errors import HarmonyGrammarError
from .pieces import Piece, split
from .read import DEFAULT_CHUNK
from .task import BatchTask, R, run_piece

__all__ = [
    "RAY_PIECE",
    "RayUnavailableError",
    "configure_data_context",
    "import_ray",
    "ray_session",
    "results_dataset",
    "run_ray",
]

#: Records per Ray task. Larger than the local engine's pieces: a Ray task costs tens of
#: milliseconds to schedule and its worker may sit on another node, so a piece is one to two
#: seconds of work (a typical row group of 10,000 rows is one piece), and the shards that
#: ``write_parquet`` writes, one per piece, are of a useful size.
RAY_PIECE = 10_000


class RayUnavailableError(HarmonyGrammarError, ImportError):
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


def _start(ray: Any, address: str | None, jobs: int) -> bool:
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


class ray_session:
    """``with ray_session(address=..., jobs=...) as ray:`` Ray started quietly (no dashboard,
    no worker logs on the driver) unless it is running, Ray Data configured, and shut down at
    the end if this started it. ``address`` joins a running cluster; without it a local
    instance gets ``jobs`` CPUs (0: all)."""

    def __init__(self, *, address: str | None = None, jobs: int = 0, progress: bool = False):
        self._address, self._jobs, self._progress = address, jobs, progress
        self._started = False
        self.ray: Any = None

    def __enter__(self) -> Any:
        self.ray = import_ray()
        self._started = _start(self.ray, self._address, self._jobs)
        configure_data_context(self.ray, progress=self._progress)
        return self.ray

    def __exit__(self, *exc: object) -> None:
        if self._started:
            self.ray.shutdown()


def _run_pieces(batch: Any, task: BatchTask[Any], chunk_size: int) -> Iterator[Any]:
    """Ray task: read and run the pieces in ``batch`` (a pyarrow table of piece rows)."""
    for row in batch.to_pylist():
        # one table per piece: Ray's per-block cost (buffering, sizing, the object store) is
        # paid once per piece rather than once per chunk
        yield run_piece(task, Piece(**row), chunk_size)


def results_dataset(
    ray: Any,
    pieces: Sequence[Piece],
    task: BatchTask[Any],
    *,
    jobs: int = 0,
    chunk_size: int = DEFAULT_CHUNK,
    piece_records: int = RAY_PIECE,
) -> Any:
    """The lazy Ray Dataset of the task's packed results (one table per piece, in input
    order): one Ray task per piece, at most ``jobs`` (0: as many as the cluster runs) at once.
    Nothing runs until it is consumed (iterated, or written where it is computed)."""
    rows = [dataclasses.asdict(piece) for piece in split(pieces, piece_records)]
    return ray.data.from_items(rows, override_num_blocks=len(rows)).map_batches(
        _run_pieces,
        fn_kwargs={"task": task, "chunk_size": chunk_size},
        batch_size=1,
        batch_format="pyarrow",
        compute=ray.data.TaskPoolStrategy(size=jobs or None),
    )


def run_ray(
    pieces: Sequence[Piece],
    task: BatchTask[R],
    *,
    address: str | None = None,
    jobs: int = 0,
    chunk_size: int = DEFAULT_CHUNK,
    piece_records: int = RAY_PIECE,
    progress: bool = False,
) -> Iterator[R]:
    """Run ``task`` on every record of ``pieces`` on Ray Data; its results, in input order.

    ``address`` is a running cluster's (``ray://host:10001`` or ``auto``); without it a local
    Ray instance is started with ``jobs`` CPUs (0: all) and shut down at the end. ``jobs``
    also caps the tasks running at once. ``progress`` shows Ray's progress bars.
    """
    with ray_session(address=address, jobs=jobs, progress=progress) as ray:
        if not pieces:
            return
        dataset = results_dataset(
            ray, pieces, task, jobs=jobs, chunk_size=chunk_size, piece_records=piece_records
        )
        for table in dataset.iter_batches(batch_size=None, batch_format="pyarrow"):
            yield from task.unpack(table)
