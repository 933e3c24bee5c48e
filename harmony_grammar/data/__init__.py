"""The data layer: datasets planned into pieces, read into records, run on an engine.

Theory of operation
-------------------
:mod:`.pieces` plans a path (JSON Lines, a JSON array, Parquet, a directory of shards, a
``save_to_disk`` dataset) into :class:`~.pieces.Piece` s by one directory rule, and cuts them
into work pieces. :mod:`.read` reads a piece into :class:`~.read.Chunk` s of records, each
with its one identity (``file``, 1-based ``record``), a bad record an error in its place and an
unreadable rest of a piece one :class:`~.read.Failure`. :mod:`.task` is what a job supplies: a
batch function (:class:`~.task.BatchTask`). :mod:`.pool` runs it in one bounded process pool
(in input order), :mod:`.ray_engine` on Ray Data, and :func:`.engines.run_task` picks one by
name. Validation, training and audits each supply only their batch function
(docs/datasets.md, "Writing a batch function").

Imports: this package may use :mod:`harmony_grammar.tools` (bounded JSON reading) only;
validation and training stand on it. pyarrow and ray are imported only when used.
"""

from __future__ import annotations

from ..base.deprecation import moved_names
from .engines import ENGINES, run_task
from .pieces import DatasetPlan, DataSourceError, Piece, count_records, plan, split
from .pool import ordered_map, run_local, worker_count
from .progress import Progress
from .ray_engine import RayUnavailableError, results_dataset, run_ray
from .read import Chunk, Failure, field_value, read_piece, without_nulls
from .task import BatchTask, PickledTask

__all__ = [
    "ENGINES",
    "BatchTask",
    "Chunk",
    "DataSourceError",
    "DatasetPlan",
    "Failure",
    "PickledTask",
    "Piece",
    "Progress",
    "RayUnavailableError",
    "count_records",
    "field_value",
    "ordered_map",
    "plan",
    "read_piece",
    "results_dataset",
    "run_local",
    "run_ray",
    "run_task",
    "split",
    "without_nulls",
    "worker_count",
]

__getattr__ = moved_names(__name__, {"Plan": ("harmony_grammar.data.DatasetPlan", DatasetPlan)})
