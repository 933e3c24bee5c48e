"""The local engine: a dataset's units read in this process, validated in a process pool.

The driver reads chunks (:func:`.sources.read_unit`) and sends each to a worker, which runs
:func:`.batch.validate_values` on it; at most ``jobs * IN_FLIGHT_PER_JOB`` chunks are in
flight, so memory stays bounded whatever the dataset's size, and results come back in input
order. With ``jobs == 1`` nothing is sent anywhere.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from .batch import BatchOptions, validate_values
from .dataset import IN_FLIGHT_PER_JOB, worker_count
from .results import ResultBatch
from .sources import DEFAULT_CHUNK, Chunk, Unit, read_unit

__all__ = ["validate_chunk", "validate_local"]


def validate_chunk(chunk: Chunk, options: BatchOptions) -> ResultBatch:
    """The results of one chunk (runs in a worker; chunk and result pickle as plain lists)."""
    columns = validate_values(
        chunk.values, options, tools_values=chunk.tools, read_errors=chunk.errors
    )
    return ResultBatch(chunk.file, chunk.records, columns)


def _chunks(units: Sequence[Unit], options: BatchOptions, size: int) -> Iterator[Chunk]:
    for unit in units:
        yield from read_unit(unit, options.field, options.tools_field, size)


def validate_local(
    units: Sequence[Unit],
    options: BatchOptions,
    *,
    jobs: int = 1,
    chunk_size: int = DEFAULT_CHUNK,
) -> Iterator[ResultBatch]:
    """Validate every record of ``units`` in order, in ``jobs`` processes (0: one per CPU;
    capped at the CPUs)."""
    jobs = worker_count(jobs)
    chunks = _chunks(units, options, chunk_size)
    if jobs <= 1:
        for chunk in chunks:
            yield validate_chunk(chunk, options)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        in_flight: deque[Future[Any]] = deque()
        for chunk in chunks:
            in_flight.append(pool.submit(validate_chunk, chunk, options))
            while len(in_flight) >= jobs * IN_FLIGHT_PER_JOB:
                yield in_flight.popleft().result()
        while in_flight:
            yield in_flight.popleft().result()
