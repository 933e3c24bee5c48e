"""Auditing training data: which tokens a loss mask trains (``harmony-grammar audit-masks``).

Theory of operation
-------------------
:mod:`.segments` cuts a record's token ids into segments (each message's header, content by
author and channel, and terminators). :mod:`.expected` lays the exact mask of
:func:`harmony_grammar.training.render.render_training` on the record's own ids.
:mod:`.findings` is the table of checks (analysis trained where hosts drop it, stop tokens not
trained, prompts or tool results trained, masks off by one, ...). :mod:`.batch` audits
records; :mod:`.task` is the audit's batch function on the data layer
(:mod:`harmony_grammar.data`: the same pieces, process pool and Ray engine as validation and
training); :mod:`.summary` adds batches up and :mod:`.report` draws the HTML page.

Imports: this package may use :mod:`harmony_grammar.data`, :mod:`harmony_grammar.validation`,
:mod:`harmony_grammar.rendering` and everything below them; it sits beside
:mod:`harmony_grammar.training` and :mod:`harmony_grammar.generation`.
"""

from __future__ import annotations

from .batch import (
    RESULT_COLUMNS,
    AuditOptions,
    RecordAudit,
    audit_batch,
    audit_record,
    audit_values,
)
from .findings import FINDINGS, Finding
from .segments import SEGMENTS, Layout, layout
from .summary import AuditSummary
from .task import AuditBatch, AuditTask

__all__ = [
    "FINDINGS",
    "RESULT_COLUMNS",
    "SEGMENTS",
    "AuditBatch",
    "AuditOptions",
    "AuditSummary",
    "AuditTask",
    "Finding",
    "Layout",
    "RecordAudit",
    "audit_batch",
    "audit_record",
    "audit_values",
    "layout",
]
