"""The ``prepare`` pipeline: records in, training rows out, a report of every record left out.

Engines: ``local`` reads records in order, renders batches in this process or in ``jobs``
worker processes (bounded in flight, results in input order) and appends each batch to the
output; ``ray`` hands the same batch function to Ray Data (:mod:`.ray_engine`).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .batch import BatchResult, PrepareOptions, Problem, prepare_batch
from .readers import read_records
from .writers import TrainingWriter

__all__ = ["DEFAULT_BATCH_SIZE", "ENGINES", "PrepareReport", "prepare"]

#: Records per batch: large enough to amortise a worker round trip and a Parquet row group.
DEFAULT_BATCH_SIZE = 256
#: Batches queued per worker process.
_IN_FLIGHT_PER_JOB = 4
ENGINES = ("local", "ray")


@dataclass
class PrepareReport:
    """What ``prepare`` did: counts, tokens, and every problem with its row."""

    records: int = 0
    written: int = 0
    tokens: int = 0
    trained_tokens: int = 0
    longest: int = 0
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def skipped(self) -> int:
        """Records left out (each has an error problem)."""
        return len({p.row for p in self.problems if p.skipped})

    def add(self, batch: BatchResult, records: int) -> None:
        """Count one processed batch of ``records`` input records."""
        self.records += records
        self.written += len(batch)
        self.tokens += batch.tokens
        self.trained_tokens += batch.trained_tokens
        self.longest = max([self.longest, *map(len, batch.columns["input_ids"])])
        self.problems += batch.problems


def _batches(pairs: Iterable[tuple[int, Any]], size: int) -> Iterator[tuple[list[int], list[Any]]]:
    rows: list[int] = []
    records: list[Any] = []
    for row, record in pairs:
        rows.append(row)
        records.append(record)
        if len(rows) >= size:
            yield rows, records
            rows, records = [], []
    if rows:
        yield rows, records


#: The options of a worker process, set once by the pool's initializer.
_worker_options = PrepareOptions()


def _set_options(options: PrepareOptions) -> None:
    global _worker_options
    _worker_options = options


def _worker_batch(rows: list[int], records: list[Any]) -> BatchResult:
    return prepare_batch(records, rows, _worker_options)


def _local(
    pairs: Iterable[tuple[int, Any]], options: PrepareOptions, jobs: int, batch_size: int
) -> Iterator[tuple[BatchResult, int]]:
    if jobs <= 1:
        from ..format.vocabulary import load_encoding

        encoding = load_encoding()
        for rows, records in _batches(pairs, batch_size):
            yield prepare_batch(records, rows, options, encoding), len(rows)
        return
    with ProcessPoolExecutor(
        max_workers=jobs, initializer=_set_options, initargs=(options,)
    ) as pool:
        in_flight: deque[tuple[Future[BatchResult], int]] = deque()
        for rows, records in _batches(pairs, batch_size):
            in_flight.append((pool.submit(_worker_batch, rows, records), len(rows)))
            while len(in_flight) >= jobs * _IN_FLIGHT_PER_JOB:
                future, count = in_flight.popleft()
                yield future.result(), count
        while in_flight:
            future, count = in_flight.popleft()
            yield future.result(), count


def prepare(
    source: str,
    output: str,
    options: PrepareOptions,
    *,
    engine: str = "local",
    output_format: str = "parquet",
    jobs: int = 1,
    batch_size: int = DEFAULT_BATCH_SIZE,
    on_problem: Callable[[Problem], None] | None = None,
) -> PrepareReport:
    """Prepare the dataset at ``source`` into ``output``; returns the report.

    ``on_problem`` is called for each problem as it is found (the CLI prints them). Raises
    :class:`~.readers.InputError` when the input cannot be read at all and ValueError for an
    unknown engine or output format.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")
    started = time.perf_counter()
    report = PrepareReport()
    if engine == "ray":
        from .ray_engine import prepare_with_ray

        prepare_with_ray(source, output, options, report, output_format, batch_size)
        if on_problem is not None:
            for problem in report.problems:
                on_problem(problem)
    else:
        with TrainingWriter(output, output_format) as writer:
            for batch, count in _local(read_records(source), options, jobs, batch_size):
                writer.write(batch)
                report.add(batch, count)
                if on_problem is not None:
                    for problem in batch.problems:
                        on_problem(problem)
    report.seconds = time.perf_counter() - started
    return report
