"""Validation: the rule table, ``validate``, and datasets.

Theory of operation
-------------------
:func:`.validator.validate` parses (format layer) and then runs the rule table of
:mod:`.rules`: one small check per code (HG2xx), each documented once in docs/rules.md, in the
jsonschema style of a ``code -> check`` table. :mod:`.dataset` validates JSON Lines datasets
in bounded memory, in parallel processes.

Imports: this package may use :mod:`harmony_grammar.rendering` (the default channels),
:mod:`harmony_grammar.safety` (leak signals) and everything below them.
"""

from __future__ import annotations

from .validator import ValidationReport, validate

__all__ = ["ValidationReport", "validate"]
