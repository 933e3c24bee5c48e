"""The local engine: a dataset validated in a process pool whose workers read their own pieces.

Theory of operation
-------------------
The driver only plans, orders and summarises. It cuts the units into pieces
(:func:`.sources.split`: a slice of a row group or Arrow file, a byte range of a JSON Lines
file, found from metadata and newline counts) and hands each worker a piece's description, a
few dozen bytes. The worker reads the piece itself (:func:`.sources.read_unit`), validates it
with :func:`.batch.validate_values` and returns its results as one Arrow table of
:func:`.results.output_schema` (identity and results, never the records' text), which crosses
the process boundary as a few contiguous buffers. At most ``jobs * IN_FLIGHT_PER_JOB`` pieces
are in flight, so memory stays bounded whatever the dataset's size, and results are yielded in
input order.

With ``jobs == 1`` nothing is sent anywhere: the units are read and validated here, chunk by
chunk. Standard input is read here too (another process cannot read it in order).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from .batch import BatchOptions, validate_values
from .dataset import IN_FLIGHT_PER_JOB, worker_count
from .results import ResultBatch, concat_tables
from .sources import DEFAULT_CHUNK, DEFAULT_PIECE, Chunk, Unit, read_unit, split

__all__ = ["validate_chunk", "validate_local", "validate_piece", "validate_unit"]


def validate_chunk(chunk: Chunk, options: BatchOptions) -> ResultBatch:
    """The results of one chunk of records."""
    columns = validate_values(
        chunk.values, options, tools_values=chunk.tools, read_errors=chunk.errors
    )
    return ResultBatch(chunk.file, chunk.records, columns)


def validate_unit(
    unit: Unit, options: BatchOptions, chunk_size: int = DEFAULT_CHUNK
) -> Iterator[ResultBatch]:
    """Read and validate a unit (or piece), one result batch per chunk, in order."""
    for chunk in read_unit(unit, options.field, options.tools_field, chunk_size):
        yield validate_chunk(chunk, options)


def validate_piece(unit: Unit, options: BatchOptions, chunk_size: int = DEFAULT_CHUNK) -> Any:
    """Worker side: a piece's results as one ``pyarrow.Table`` of
    :func:`~.results.output_schema` (compact to send back: no Python object per cell)."""
    return concat_tables(batch.to_arrow() for batch in validate_unit(unit, options, chunk_size))


def validate_local(
    units: Sequence[Unit],
    options: BatchOptions,
    *,
    jobs: int = 1,
    chunk_size: int = DEFAULT_CHUNK,
    piece_records: int = DEFAULT_PIECE,
) -> Iterator[ResultBatch]:
    """Validate every record of ``units`` in order, in ``jobs`` processes (0: one per CPU;
    capped at the CPUs), each piece of about ``piece_records`` records read by its worker."""
    jobs = worker_count(jobs)
    if jobs <= 1:
        for unit in units:
            yield from validate_unit(unit, options, chunk_size)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        in_flight: deque[Future[Any]] = deque()
        for piece in split(units, piece_records):
            if piece.path == "-":  # only this process can read standard input in order
                while in_flight:
                    yield from ResultBatch.from_arrow(in_flight.popleft().result())
                yield from validate_unit(piece, options, chunk_size)
                continue
            in_flight.append(pool.submit(validate_piece, piece, options, chunk_size))
            while len(in_flight) >= jobs * IN_FLIGHT_PER_JOB:
                yield from ResultBatch.from_arrow(in_flight.popleft().result())
        while in_flight:
            yield from ResultBatch.from_arrow(in_flight.popleft().result())
