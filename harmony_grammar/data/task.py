"""What an engine runs on a piece: a batch function, and how its results cross processes.

A batch function is the one thing a dataset job supplies (validation's, training's, an
audit's). Everything else (planning, reading, the process pool, Ray) is this layer's:

* ``columns``: what to read of Parquet and Arrow pieces (None: every column);
* ``__call__(chunk)``: the results for one :class:`~.read.Chunk` of records;
* ``unreadable(failure)``: the results standing for a :class:`~.read.Failure` (the records of
  a piece that could not be read), so that every input record is accounted for;
* ``pack(results)`` / ``unpack(packed)``: one piece's results as what crosses a process
  boundary (a ``pyarrow.Table`` for Ray Data; anything picklable for the local pool) and back.

:class:`BatchTask` is the base to subclass: its ``pack`` is the list itself.
:class:`PickledTask` packs a piece's results as one pickled cell of a one-row table, for
results that have no columnar form (training's problems, an audit's segment counts). A task
must be picklable (a frozen dataclass of its options is), since it travels to workers with
each piece.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from .pieces import Piece
from .read import DEFAULT_CHUNK, Chunk, Failure, read_piece

__all__ = ["BatchTask", "PickledTask", "R", "results_of", "run_piece"]

R = TypeVar("R")


class BatchTask(Generic[R]):
    """A dataset job's batch function and its packing (see the module docstring)."""

    #: The columns a Parquet or Arrow piece is read with (None: all of them).
    columns: Sequence[str] | None = None

    def __call__(self, chunk: Chunk) -> R:
        raise NotImplementedError

    def unreadable(self, failure: Failure) -> R:
        raise NotImplementedError

    def pack(self, results: list[R]) -> Any:
        """One piece's results, to send across a process boundary."""
        return results

    def unpack(self, packed: Any) -> Iterable[R]:
        """What :meth:`pack` made, back as results."""
        return packed  # type: ignore[no-any-return]


class PickledTask(BatchTask[R]):
    """A batch task whose piece's results cross processes as one pickled cell.

    Ray Data moves tables: the results travel as a one-row ``pyarrow.Table`` holding their
    pickle, and come back exactly (the local pool pickles them the same way).
    """

    def pack(self, results: list[R]) -> Any:
        import pyarrow as pa

        return pa.table({"results": [pickle.dumps(results, protocol=5)]})

    def unpack(self, packed: Any) -> Iterable[R]:
        for cell in packed.column("results").to_pylist():
            yield from pickle.loads(cell)


def results_of(task: BatchTask[R], piece: Piece, chunk_size: int = DEFAULT_CHUNK) -> Iterator[R]:
    """Read ``piece`` and run ``task`` on each chunk, in order (a failure last)."""
    for part in read_piece(piece, task.columns, chunk_size):
        yield task.unreadable(part) if isinstance(part, Failure) else task(part)


def run_piece(task: BatchTask[R], piece: Piece, chunk_size: int = DEFAULT_CHUNK) -> Any:
    """Worker side: one piece read and run, its results packed."""
    return task.pack(list(results_of(task, piece, chunk_size)))
