"""Validation: the rule table, ``validate``, and datasets.

Theory of operation
-------------------
:func:`.validator.validate` parses (format layer) and then runs the rule table of
:mod:`.rules`: one small check per code (HG2xx), each documented once in docs/rules.md, in the
jsonschema style of a ``code -> check`` table. :mod:`.dataset` validates JSON Lines datasets
in bounded memory, in parallel processes. :func:`.batch.validate_batch` is the unit of work of
the dataset engines (docs/datasets.md): :mod:`.sources` reads JSONL, Parquet and
``save_to_disk`` data as units, :mod:`.local_engine` and :mod:`.ray_engine` run the batch
function on them and yield :mod:`.results`, and :mod:`.html_report` draws the report.

Imports: this package may use :mod:`harmony_grammar.rendering` (the default channels),
:mod:`harmony_grammar.safety` (leak signals) and everything below them.
"""

from __future__ import annotations

from .batch import validate_batch
from .validator import ValidationReport, validate

__all__ = ["ValidationReport", "validate", "validate_batch"]
