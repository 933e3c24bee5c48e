"""Validation: the rule table, ``validate``, and datasets.

Theory of operation
-------------------
:func:`.validator.validate` parses (format layer) and then runs the rule table of
:mod:`.rules`: one small check per code (HG2xx), each documented once in docs/rules.md, in the
jsonschema style of a ``code -> check`` table. :func:`.batch.validate_batch` is the unit of
work on datasets (docs/datasets.md): :class:`.engine.ValidateTask` hands it to the data layer
(:mod:`harmony_grammar.data`: pieces, records, the process pool, Ray), which yields
:mod:`.results`; :mod:`.ray_output` has Ray's workers write them, and :mod:`.html_report`
draws the report.

Imports: this package may use :mod:`harmony_grammar.data`, :mod:`harmony_grammar.rendering`
(the default channels), :mod:`harmony_grammar.safety` (leak signals) and everything below
them.
"""

from __future__ import annotations

from .batch import validate_batch
from .validator import ValidationReport, validate

__all__ = ["ValidationReport", "validate", "validate_batch"]
