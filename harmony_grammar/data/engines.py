"""One entry point for both engines: run a batch task on pieces, here or on Ray Data.

Every dataset job that offers ``--engine local|ray`` (training's ``prepare``, the mask
audit) calls :func:`run_task`, so the choice and its options are read in one place.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from .pieces import Piece
from .pool import run_local
from .ray_engine import run_ray
from .read import DEFAULT_CHUNK
from .task import BatchTask, R

__all__ = ["ENGINES", "run_task"]

#: The engines a dataset job runs on: the local process pool, or Ray Data.
ENGINES = ("local", "ray")


def run_task(
    pieces: Sequence[Piece],
    task: BatchTask[R],
    *,
    engine: str = "local",
    jobs: int = 1,
    address: str | None = None,
    chunk_size: int = DEFAULT_CHUNK,
    progress: bool = False,
) -> Iterator[R]:
    """``task``'s results for every record of ``pieces``, in input order, on ``engine``.

    ``local``: ``jobs`` processes (0: one per CPU); ``ray``: Ray Data (``address`` a running
    cluster, else a local Ray with ``jobs`` CPUs, 0: all; ``progress`` shows Ray's bars).
    ValueError for an unknown engine.
    """
    if engine == "local":
        return run_local(pieces, task, jobs=jobs, chunk_size=chunk_size)
    if engine == "ray":
        return run_ray(
            pieces, task, address=address, jobs=jobs, chunk_size=chunk_size, progress=progress
        )
    raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")
