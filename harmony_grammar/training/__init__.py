"""Training data: chat datasets in, TRL-ready Parquet out (``harmony-grammar prepare``).

Theory of operation
-------------------
:mod:`.readers` yields ``(row, record)`` pairs from JSON Lines, JSON, Parquet or a saved
Hugging Face dataset. :mod:`.batch` is the one function every engine runs on a batch of
records: import (:mod:`harmony_grammar.rendering.importers`), render with the assistant mask
(:func:`harmony_grammar.rendering.training.render_training`), apply the length limit, and
report each record left out with its row (HG300-HG304). :mod:`.writers` appends batches to
Parquet (or a ``save_to_disk`` folder); :mod:`.prepare` drives it locally, in order, in one
or several processes; :mod:`.ray_engine` runs the same batch function on Ray Data.

Imports: this package may use :mod:`harmony_grammar.rendering` and everything below it; it
sits beside :mod:`harmony_grammar.generation` and needs nothing from it or from validation.
pyarrow, datasets and ray (the ``scale`` extra) are imported only when used.
"""

from __future__ import annotations

from .batch import COLUMNS, PrepareOptions, Problem, prepare_batch
from .prepare import PrepareReport, prepare
from .readers import InputError, read_records

__all__ = [
    "COLUMNS",
    "InputError",
    "PrepareOptions",
    "PrepareReport",
    "Problem",
    "prepare",
    "prepare_batch",
    "read_records",
]
