"""Adding audits up: the aggregate ``audit-masks`` prints, in bounded memory.

:class:`AuditSummary` counts, per segment, the tokens, those the masks train and those the
exact mask trains, and per finding the records it applies to; it keeps the first
:data:`SAMPLE_SIZE` records with findings (file, record, codes, error) for the report.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .findings import FINDINGS
from .segments import SEGMENTS
from .task import AuditBatch

__all__ = ["SAMPLE_SIZE", "AuditSummary"]

#: Records with findings kept for the report and the text output: the first ones.
SAMPLE_SIZE = 25


@dataclass
class AuditSummary:
    """The aggregate of every audited batch (see :meth:`to_json`)."""

    records: int = 0
    audited: int = 0
    clean: int = 0  # records without a finding
    differing: int = 0
    segments: dict[str, list[int]] = field(
        default_factory=lambda: {name: [0, 0, 0] for name in SEGMENTS}
    )
    findings: Counter[str] = field(default_factory=Counter)
    samples: list[dict[str, Any]] = field(default_factory=list)

    def add(self, batch: AuditBatch) -> None:
        """Count one batch of audits (:class:`~.task.AuditBatch`)."""
        for record, audit in zip(batch.records, batch.audits, strict=True):
            self.records += 1
            if audit.segments:
                self.audited += 1
                for name, counts in audit.segments.items():
                    total = self.segments[name]
                    for k in range(3):
                        total[k] += counts[k]
            self.differing += audit.differing
            self.findings.update(audit.findings)
            self.clean += not audit.findings
            if audit.findings and len(self.samples) < SAMPLE_SIZE:
                self.samples.append(
                    {
                        "file": batch.file,
                        "record": record,
                        "findings": list(audit.findings),
                        "differing": audit.differing,
                        "error": audit.error,
                    }
                )

    def to_json(self) -> dict[str, Any]:
        """``{"records", "audited", "segments": {NAME: {"tokens", "trained", "expected"}},
        "findings": [{"code", "records"}]}``; findings in catalogue order, those that occur."""
        return {
            "records": self.records,
            "audited": self.audited,
            "segments": {
                name: {"tokens": t, "trained": k, "expected": e}
                for name, (t, k, e) in self.segments.items()
            },
            "findings": [
                {"code": f.code, "records": self.findings[f.code]}
                for f in FINDINGS
                if self.findings[f.code]
            ],
        }
