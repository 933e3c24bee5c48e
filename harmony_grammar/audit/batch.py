"""One record in, one audit out: the unit of work of ``audit-masks``.

:func:`audit_record` audits one record's ids and mask; :func:`audit_values` a batch of them
(with the reader's errors, :class:`~.task.AuditTask` on the data layer);
:func:`audit_batch` is the same for ``datasets.Dataset.map(batched=True)``: a dict of equally
long column lists in, the result columns of :data:`RESULT_COLUMNS` out. Whatever runs it,
the same records give the same audits. A record that cannot be audited is an audit with an
``error`` and one unauditable finding, never an exception.
"""

from __future__ import annotations

import operator
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..base.deprecation import moved_fields
from ..base.options import Options
from ..rendering.options import DropRule, RenderOptions
from ..training.render import TrainOn
from .expected import exact_mask
from .findings import FINDINGS, RecordView
from .segments import SEGMENTS, layout

__all__ = [
    "RESULT_COLUMNS",
    "AuditOptions",
    "RecordAudit",
    "audit_batch",
    "audit_record",
    "audit_values",
]

#: The result columns of :func:`audit_batch`, in order.
RESULT_COLUMNS = ("segments", "findings", "differing", "error")


@moved_fields("render", {"drop_rule": "drop_rule"})
@dataclass(frozen=True, slots=True, kw_only=True)
class AuditOptions(Options):
    """What :func:`audit_batch` needs besides the batch (small and picklable): the ids and
    mask column names, the ``render_training`` policy the exact mask follows (``train_on``),
    and ``render``, the render options the exact mask is rendered with, whose drop rule says
    which earlier analysis hosts never show again. ``AuditOptions(drop_rule=...)`` still works
    for one release, with a ``DeprecationWarning``: it is ``render``'s field now."""

    ids: str = "input_ids"
    mask: str = "assistant_masks"
    train_on: TrainOn = TrainOn.ALL
    render: RenderOptions = field(default_factory=RenderOptions)


@dataclass(frozen=True, slots=True)
class RecordAudit:
    """One record's audit: ``segments[name] = (tokens, trained, expected)`` (the segment's
    tokens, how many the mask trains, how many the exact mask trains); ``findings`` codes;
    ``differing`` tokens where the mask and the exact mask disagree; ``error`` why the record
    could not be audited (then ``segments`` is empty)."""

    segments: Mapping[str, tuple[int, int, int]]
    findings: tuple[str, ...]
    differing: int = 0
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The audit as JSON: ``{"segments": {NAME: {"tokens", "trained", "expected"}},
        "findings", "differing", "error"}`` (``--output``'s line, less the identity)."""
        return {
            "segments": {
                name: {"tokens": t, "trained": k, "expected": e}
                for name, (t, k, e) in self.segments.items()
            },
            "findings": list(self.findings),
            "differing": self.differing,
            "error": self.error,
        }


def _int_list(value: Any) -> list[int] | None:
    """``value`` as a list of ints (booleans as 0/1), or None when it is no such sequence."""
    if hasattr(value, "tolist"):  # numpy arrays from pandas-format batches
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        return None
    if all(type(v) is int for v in value):  # the common case, checked at C speed
        return list(value)
    if all(isinstance(v, int) for v in value):  # booleans among them (bool is an int)
        return [int(v) for v in value]
    return None


def _unauditable(code: str, error: str) -> RecordAudit:
    return RecordAudit({}, (code,), 0, error)


def audit_record(
    ids_value: Any,
    mask_value: Any,
    train_on: TrainOn = TrainOn.ALL,
    render: RenderOptions | None = None,
    *,
    drop_rule: DropRule | str | None = None,
) -> RecordAudit:
    """Audit one record: its token ids and its mask (any sequence of 0/1 or booleans).

    ``render`` is :attr:`AuditOptions.render` (default: the default render options). A drop
    rule given in its place (``drop_rule=``, or a rule as the fourth argument) still works for
    one release, with a ``DeprecationWarning``.
    """
    if isinstance(render, str):  # a DropRule (a str enum) where the render options now go
        render, drop_rule = None, render
    if drop_rule is not None:
        warnings.warn(
            "audit_record(drop_rule=...) moved to audit_record(render=RenderOptions(drop_rule=...))"
            " (the old argument goes away in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        render = RenderOptions.of(render, {"drop_rule": drop_rule})
    render = RenderOptions() if render is None else render
    ids = _int_list(ids_value)
    if ids is None:
        kind = type(ids_value).__name__
        return _unauditable("undecodable", f"the ids column holds {kind}, not token ids")
    mask = _int_list(mask_value)
    if mask is None:
        what = "no mask" if mask_value is None else f"{type(mask_value).__name__}"
        return _unauditable("mask-invalid", f"the mask column holds {what}, not 0/1 values")
    if len(mask) != len(ids):
        return _unauditable("mask-invalid", f"{len(mask)} mask values for {len(ids)} ids")
    if any(v not in (0, 1) for v in mask):
        return _unauditable("mask-invalid", "mask values other than 0 and 1")
    record = layout(ids)
    if isinstance(record, str):
        return _unauditable("undecodable", record)
    exact = exact_mask(ids, record, train_on, render)
    if isinstance(exact, str):
        return _unauditable("not-comparable", exact)
    counts = [[0, 0, 0] for _ in SEGMENTS]
    # Counted per (segment, trained, expected) triple at C speed, then added up per segment.
    triples = Counter(zip(record.labels, mask, exact, strict=True))
    for (label, trained, expected), n in triples.items():
        row = counts[label]
        row[0] += n
        row[1] += n * trained
        row[2] += n * expected
    view = RecordView(record, mask, exact, render.rule)
    findings = tuple(f.code for f in FINDINGS if f.check is not None and f.check(view))
    differing = sum(map(operator.ne, mask, exact))
    segments = {name: (c[0], c[1], c[2]) for name, c in zip(SEGMENTS, counts, strict=True)}
    return RecordAudit(segments, findings, differing)


def audit_values(
    ids: Sequence[Any],
    masks: Sequence[Any],
    options: AuditOptions,
    errors: Sequence[str | None] | None = None,
) -> list[RecordAudit]:
    """Audit each record of equally long ``ids`` and ``masks``; ``errors[i]``, when given and
    not None, says why record ``i`` could not be read at all (then it is ``undecodable``)."""
    audits = []
    for i, (ids_value, mask_value) in enumerate(zip(ids, masks, strict=True)):
        error = None if errors is None else errors[i]
        if error is not None:
            audits.append(_unauditable("undecodable", error))
            continue
        audits.append(audit_record(ids_value, mask_value, options.train_on, options.render))
    return audits


def audit_batch(batch: Mapping[str, Sequence[Any]], options: AuditOptions) -> dict[str, list[Any]]:
    """Audit every record of ``batch`` (a dict of columns, as ``datasets.Dataset.map`` passes
    it with ``batched=True``); the result columns of :data:`RESULT_COLUMNS`."""
    audits = audit_values(batch[options.ids], batch[options.mask], options)
    return {
        "segments": [dict(a.segments) for a in audits],
        "findings": [list(a.findings) for a in audits],
        "differing": [a.differing for a in audits],
        "error": [a.error for a in audits],
    }
