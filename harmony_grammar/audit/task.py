"""The audit's batch function for the data layer: records in, one :class:`AuditBatch` out.

:class:`AuditTask` is all that the audit supplies to the data layer
(:mod:`harmony_grammar.data`), as :class:`~harmony_grammar.validation.engine.ValidateTask`
and :class:`~harmony_grammar.training.prepare.PrepareTask` are for theirs: which columns to
read (the top level of the ids and mask paths), the audits of a chunk of records
(:func:`.batch.audit_values`), the audits standing for an unreadable piece (one
``undecodable`` per record it holds, naming the piece), and the packing of a piece's results
(one pickled cell). Both engines (``local``: the process pool, ``ray``: Ray Data) run it
through :func:`harmony_grammar.data.engines.run_task`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..data.read import Chunk, Failure, field_value
from ..data.task import PickledTask
from .batch import AuditOptions, RecordAudit, audit_values

__all__ = ["AuditBatch", "AuditTask"]


@dataclass(frozen=True, slots=True)
class AuditBatch:
    """The audits of records ``records`` (1-based) of ``file``, one per record, in order."""

    file: str
    records: list[int]
    audits: list[RecordAudit]

    def __len__(self) -> int:
        return len(self.records)


def _optional(record: dict[str, Any], path: str) -> Any:
    try:
        return field_value(record, path)
    except KeyError:
        return None


@dataclass(frozen=True, slots=True)
class AuditTask(PickledTask[AuditBatch]):
    """Audit each record's ``options.ids`` against its ``options.mask``."""

    options: AuditOptions

    @property
    def columns(self) -> Sequence[str]:  # type: ignore[override]
        # A dotted path (``output.ids``) is read from its top-level column.
        return sorted({self.options.ids.split(".", 1)[0], self.options.mask.split(".", 1)[0]})

    def __call__(self, chunk: Chunk) -> AuditBatch:
        ids: list[Any] = []
        masks: list[Any] = []
        errors: list[str | None] = []
        for record, error in zip(chunk.values, chunk.errors, strict=True):
            value = None
            if record is not None:
                try:
                    value = field_value(record, self.options.ids)
                except KeyError:
                    error = f"the record has no field {self.options.ids!r}"
            ids.append(value)
            # A record without a mask is audited as one (the finding mask-invalid).
            masks.append(None if record is None else _optional(record, self.options.mask))
            errors.append(error)
        return AuditBatch(chunk.file, chunk.records, audit_values(ids, masks, self.options, errors))

    def unreadable(self, failure: Failure) -> AuditBatch:
        records = list(range(failure.first, failure.first + (failure.count or 1)))
        errors: list[str | None] = [failure.message] * len(records)
        none = [None] * len(records)
        return AuditBatch(failure.file, records, audit_values(none, none, self.options, errors))
