"""The ``prepare`` pipeline: records in, training rows out, a report of every record left out.

:class:`PrepareTask` is all that training supplies to the data layer
(:mod:`harmony_grammar.data`): :func:`.batch.prepare_batch` on each chunk of records, one
problem standing for each unreadable piece, and the packing of a piece's results for the trip
back from a worker. Both engines (``local``: the process pool, ``ray``: Ray Data) stream the
results back here in input order, and this process appends each batch to the one output
(:class:`.writers.TrainingWriter`), so both engines write the same file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..data.engines import ENGINES, run_task
from ..data.pieces import plan
from ..data.read import Chunk, Failure, without_nulls
from ..data.task import PickledTask
from .batch import BatchResult, PrepareOptions, RecordProblem, prepare_batch
from .importers import unimportable
from .writers import TrainingWriter

__all__ = ["DEFAULT_BATCH_SIZE", "ENGINES", "PrepareReport", "PrepareTask", "prepare"]

#: Records per batch: large enough to amortise a worker round trip and a Parquet row group.
DEFAULT_BATCH_SIZE = 256


@dataclass
class PrepareReport:
    """What ``prepare`` did: counts, tokens, and every problem with its record.

    ``records`` counts every input record: ``written`` + ``skipped`` (left out, or in a piece
    that could not be read) always equals it.
    """

    records: int = 0
    written: int = 0
    tokens: int = 0
    trained_tokens: int = 0
    longest: int = 0
    problems: list[RecordProblem] = field(default_factory=list)
    seconds: float = 0.0
    skipped: int = 0

    def add(self, batch: BatchResult) -> None:
        """Count one processed batch."""
        self.records += batch.records
        self.written += len(batch)
        self.tokens += batch.tokens
        self.trained_tokens += batch.trained_tokens
        self.longest = max([self.longest, *map(len, batch.columns["input_ids"])])
        self.problems += batch.problems
        left_out = {(p.file, p.record): p.count for p in batch.problems if p.skipped}
        self.skipped += sum(left_out.values())


@dataclass(frozen=True)
class PrepareTask(PickledTask[BatchResult]):
    """Training's batch function for the data layer's engines (its results cross processes
    pickled: they are rebuilt exactly, problems and all)."""

    options: PrepareOptions
    columns = None  # every column: a record is imported whole

    def __call__(self, chunk: Chunk) -> BatchResult:
        values = [without_nulls(v) for v in chunk.values] if chunk.arrow else chunk.values
        return prepare_batch(
            values, chunk.records, self.options, _encoding(), file=chunk.file, errors=chunk.errors
        )

    def unreadable(self, failure: Failure) -> BatchResult:
        count = failure.count or 1
        diagnostic = unimportable(failure.message)
        return BatchResult(
            problems=[RecordProblem(failure.file, failure.first, diagnostic, count)], records=count
        )


_ENCODING: Any = None


def _encoding() -> Any:
    global _ENCODING
    if _ENCODING is None:  # loaded once per process, on its first chunk
        from ..format.vocabulary import load_encoding

        _ENCODING = load_encoding()
    return _ENCODING


def prepare(
    source: str,
    output: str,
    options: PrepareOptions,
    *,
    engine: str = "local",
    output_format: str = "parquet",
    jobs: int = 1,
    batch_size: int = DEFAULT_BATCH_SIZE,
    on_problem: Callable[[RecordProblem], None] | None = None,
    on_skipped: Callable[[list[str]], None] | None = None,
) -> PrepareReport:
    """Prepare the dataset at ``source`` into ``output``; returns the report.

    ``on_problem`` is called for each problem as it is found (the CLI prints them), and
    ``on_skipped`` with the metadata files a directory held (docs/datasets.md). Raises
    :class:`~harmony_grammar.data.DataSourceError` when the input cannot be read at all and
    ValueError for an unknown engine or output format.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")
    started = time.perf_counter()
    found = plan(source)
    if found.skipped and on_skipped is not None:
        on_skipped(found.skipped)
    report = PrepareReport()
    task = PrepareTask(options)
    with TrainingWriter(output, output_format) as writer:
        for batch in run_task(found.pieces, task, engine=engine, jobs=jobs, chunk_size=batch_size):
            if len(batch):
                writer.write(batch)
            report.add(batch)
            if on_problem is not None:
                for problem in batch.problems:
                    on_problem(problem)
    report.seconds = time.perf_counter() - started
    return report
