"""The one bounded process pool: work in, results out in input order, memory bounded.

Every job that fans out over processes uses :func:`ordered_map`: dataset pieces
(:func:`run_local`, which validation, training and audits run through) and ``validate``'s
plain files alike. At most ``jobs * IN_FLIGHT_PER_JOB`` items are in flight, so memory stays
bounded whatever the input's size, and results are yielded in input order. With one job
nothing is sent anywhere: the work runs here.

Theory of operation for datasets: the driver only plans, orders and consumes. It cuts the
pieces (:func:`.pieces.split`) and hands each worker a piece's description, a few dozen
bytes; the worker reads the piece itself (:func:`.read.read_piece`), runs the task's batch
function on it and returns the packed results (:class:`.task.BatchTask`). Standard input, a
FIFO or a device is read here (another process cannot read it in order).
"""

from __future__ import annotations

import functools
import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, TypeVar

from .pieces import DEFAULT_PIECE, Piece, is_seekable, split
from .read import DEFAULT_CHUNK
from .task import BatchTask, R, results_of, run_piece

__all__ = ["IN_FLIGHT_PER_JOB", "ordered_map", "run_local", "worker_count"]

#: Work items queued per worker: keeps workers busy while bounding memory.
IN_FLIGHT_PER_JOB = 4

W = TypeVar("W")
T = TypeVar("T")


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the CPUs this process may run on
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_count(requested: int, inputs: int | None = None) -> int:
    """How many processes to run in: ``requested`` (0: one per CPU), at most one per CPU and
    one per input (``inputs``, when known). More would only cost start-up time."""
    cpus = _cpus()
    jobs = min(requested or cpus, cpus)
    if inputs is not None:
        jobs = min(jobs, inputs)
    return max(jobs, 1)


def ordered_map(
    function: Callable[[W], T],
    work: Iterable[W],
    *,
    jobs: int,
    here: Callable[[W], bool] | None = None,
) -> Iterator[T]:
    """``function`` of each item of ``work``, in order, in ``jobs`` processes (1: here).

    ``function`` must be picklable (a module-level function or a ``functools.partial`` of
    one). An item for which ``here(item)`` is true runs in this process, after everything
    before it (standard input).
    """
    if jobs <= 1:
        yield from map(function, work)
        return
    # The workers ignore SIGINT: Ctrl-C reaches the whole process group, and this process
    # alone answers it (each worker would print its own KeyboardInterrupt traceback).
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_ignore_interrupts)
    try:
        in_flight: deque[Future[T]] = deque()
        for item in work:
            if here is not None and here(item):
                while in_flight:
                    yield in_flight.popleft().result()
                yield function(item)
                continue
            in_flight.append(pool.submit(function, item))
            while len(in_flight) >= jobs * IN_FLIGHT_PER_JOB:
                yield in_flight.popleft().result()
        while in_flight:
            yield in_flight.popleft().result()
    except BaseException:
        # Ctrl-C, a failure, or a reader that stopped early: leaving the pool's ``with``
        # would wait for every queued item (seconds to minutes); end the workers now.
        _abandon(pool)
        raise
    pool.shutdown()


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _abandon(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` without waiting: queued items cancelled, running workers terminated."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=1)
    # CPython's exit hook wakes every pool's manager thread without the pool's lock; a manager
    # closing its wakeup pipe at that moment makes the hook print an EBADF traceback at exit.
    # Once the manager has ended, its pipe is closed and the hook's wakeup does nothing.
    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None:
        manager.join(timeout=1)


def _here(piece: Piece) -> bool:
    return not is_seekable(piece)


def run_local(
    pieces: Sequence[Piece],
    task: BatchTask[R],
    *,
    jobs: int = 1,
    chunk_size: int = DEFAULT_CHUNK,
    piece_records: int = DEFAULT_PIECE,
) -> Iterator[R]:
    """Run ``task`` on every record of ``pieces``, in order, in ``jobs`` processes (0: one per
    CPU; capped at the CPUs), each piece of about ``piece_records`` records read by its
    worker. With one process, the pieces are read here, chunk by chunk."""
    jobs = worker_count(jobs)
    if jobs <= 1:
        for piece in pieces:
            yield from results_of(task, piece, chunk_size)
        return
    run = functools.partial(run_piece, task, chunk_size=chunk_size)
    work = split(pieces, piece_records)
    packed: Iterator[Any] = ordered_map(run, work, jobs=jobs, here=_here)
    for result in packed:
        yield from task.unpack(result)
