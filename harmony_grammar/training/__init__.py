"""Training data: chat datasets in, TRL-ready Parquet out (``harmony-grammar prepare``).

Theory of operation
-------------------
The data layer (:mod:`harmony_grammar.data`) plans the input into pieces and reads records
with their identity (file, 1-based record). :mod:`.batch` is the one function every engine
runs on a chunk of records: import (:mod:`.importers`), render with the assistant mask
(:func:`.render.render_training`), apply the length limit, and report each record left out
with its identity (HG300-HG304). :mod:`.prepare` hands it to the data layer's engines (the
process pool or Ray Data) as :class:`.prepare.PrepareTask` and appends the results to the
output through :mod:`.writers` (Parquet, or a ``save_to_disk`` folder).

Imports: this package may use :mod:`harmony_grammar.data`, :mod:`harmony_grammar.rendering`
and everything below them; it sits beside :mod:`harmony_grammar.generation` and
:mod:`harmony_grammar.validation` and needs nothing from either. pyarrow, datasets and ray
(the ``scale`` extra) are imported only when used.
"""

from __future__ import annotations

from ..base.deprecation import moved_names
from .batch import COLUMNS, PrepareOptions, RecordProblem, prepare_batch
from .importers import ImportResult, import_record
from .prepare import PrepareReport, PrepareTask, prepare
from .render import DropScope, TrainingExample, TrainOn, render_training

__all__ = [
    "COLUMNS",
    "DropScope",
    "ImportResult",
    "PrepareOptions",
    "PrepareReport",
    "PrepareTask",
    "RecordProblem",
    "TrainOn",
    "TrainingExample",
    "import_record",
    "prepare",
    "prepare_batch",
    "render_training",
]

__getattr__ = moved_names(
    __name__, {"Problem": ("harmony_grammar.training.RecordProblem", RecordProblem)}
)
