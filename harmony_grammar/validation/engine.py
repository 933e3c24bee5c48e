"""Validation's batch function for the data layer: records in, :class:`.results.ResultBatch` out.

:class:`ValidateTask` is all that validation supplies to the data layer
(:mod:`harmony_grammar.data`): which columns to read, the results for a chunk of records
(:func:`.batch.validate_values`, the same function :func:`.batch.validate_batch` runs), the
results standing for an unreadable piece (one HG290 per record it holds, naming the piece),
and the packing of a piece's results as one Arrow table of :func:`.results.output_schema`
(identity and results, never the records' text). :func:`validate_local` and
:func:`validate_ray` run it on the data layer's two engines.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..data.pieces import DEFAULT_PIECE, Piece
from ..data.pool import run_local
from ..data.ray_engine import RAY_PIECE, run_ray
from ..data.read import Chunk, Failure, field_value
from ..data.task import BatchTask
from .batch import BatchOptions, validate_values
from .results import ResultBatch, concat_tables

__all__ = ["ValidateTask", "validate_local", "validate_ray"]


@dataclass(frozen=True, slots=True)
class ValidateTask(BatchTask[ResultBatch]):
    """Validate each record's ``options.field`` (with its ``options.tools_field`` tools)."""

    options: BatchOptions

    @property
    def columns(self) -> Sequence[str]:  # type: ignore[override]
        tools = self.options.tools_field
        return (self.options.field,) if tools is None else (self.options.field, tools)

    def __call__(self, chunk: Chunk) -> ResultBatch:
        field, tools_field = self.options.field, self.options.tools_field
        values: list[Any] = []
        tools: list[Any] | None = None if tools_field is None else []
        errors: list[str | None] = []
        for record, error in zip(chunk.values, chunk.errors, strict=True):
            value = None
            if record is not None:
                try:
                    value = field_value(record, field)
                except KeyError:
                    error = f"the record has no field {field!r}"
            values.append(value)
            errors.append(error)
            if tools is not None:
                try:
                    tools.append(None if record is None else field_value(record, tools_field))  # type: ignore[arg-type]
                except KeyError:
                    tools.append(None)  # no tools of its own: the run's --tools apply
        columns = validate_values(values, self.options, tools_values=tools, read_errors=errors)
        return ResultBatch(chunk.file, chunk.records, columns)

    def unreadable(self, failure: Failure) -> ResultBatch:
        records = list(range(failure.first, failure.first + (failure.count or 1)))
        errors: list[str | None] = [failure.message] * len(records)
        columns = validate_values([None] * len(records), self.options, read_errors=errors)
        return ResultBatch(failure.file, records, columns)

    def pack(self, results: list[ResultBatch]) -> Any:
        try:
            import pyarrow  # noqa: F401 - compact across processes when it is there
        except ImportError:
            return results
        return concat_tables(batch.to_arrow() for batch in results)

    def unpack(self, packed: Any) -> Iterable[ResultBatch]:
        if isinstance(packed, list):
            return packed
        return ResultBatch.from_arrow(packed)


def validate_local(
    pieces: Sequence[Piece],
    options: BatchOptions,
    *,
    jobs: int = 1,
    piece_records: int = DEFAULT_PIECE,
) -> Iterator[ResultBatch]:
    """Validate every record of ``pieces`` in order, in ``jobs`` processes (0: one per CPU)."""
    return run_local(pieces, ValidateTask(options), jobs=jobs, piece_records=piece_records)


def validate_ray(
    pieces: Sequence[Piece],
    options: BatchOptions,
    *,
    address: str | None = None,
    jobs: int = 0,
    piece_records: int = RAY_PIECE,
    progress: bool = False,
) -> Iterator[ResultBatch]:
    """Validate every record of ``pieces`` on Ray Data, in input order (see
    :func:`harmony_grammar.data.ray_engine.run_ray`)."""
    return run_ray(
        pieces,
        ValidateTask(options),
        address=address,
        jobs=jobs,
        piece_records=piece_records,
        progress=progress,
    )
