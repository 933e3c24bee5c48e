"""One batch of records in, the same rows plus per-record results out: what every engine calls.

:func:`validate_batch` is the unit of work of every dataset engine: the local process pool
(:mod:`harmony_grammar.data.pool`), Hugging Face ``datasets.Dataset.map(batched=True)`` and
Ray Data's ``map_batches`` all hand it a batch of columns and get the batch back with the
result columns of :data:`RESULT_COLUMNS` appended. Because every engine runs this one
function on the same records, every engine gives the same results, record for record.

A batch is a ``pyarrow.Table`` (or ``RecordBatch``), or a dict of equally long column lists
(what ``datasets`` passes); the result has the same type. A record that cannot be validated
(no value, a value of the wrong type, unusable per-record tools, the validator failing) is a
row with an HG290 error, never an exception: one record never stops a dataset run.

The result columns carry what a summary, a ``--output`` file and the HTML report need, so a
driver never holds a record's text: the diagnostics as JSON, the record's length and, for a
failing record, a short excerpt around the first error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..base.deprecation import moved_fields, renamed_keyword
from ..base.options import Options
from ..format.codes import CATALOGUE
from ..format.model import Diagnostic, Message, Severity
from ..format.options import ParseOptions
from ..schema.nesting import nesting_exceeds
from ..schema.stack import on_fresh_stack
from ..tools.json_limits import MAX_JSON_DEPTH, JsonLimitError, loads_bounded
from ..tools.parameters import checked_tools
from .record import validate_record

__all__ = [
    "EXCERPT_CONTEXT",
    "RESULT_COLUMNS",
    "BatchOptions",
    "diagnostics_from_json",
    "result_schema",
    "validate_batch",
    "validate_values",
]

#: The result columns appended to every batch, in order.
RESULT_COLUMNS = (
    "ok",
    "errors",
    "warnings",
    "codes",
    "first_error",
    "recovered",
    "diagnostics",
    "length",
    "excerpt",
)

#: Characters (or token ids) kept on each side of the first error in ``excerpt``: enough to
#: show the failing span in its context, small enough that a driver can keep thousands.
EXCERPT_CONTEXT = 80


@moved_fields("parse", {"tools": "tools", "start": "start", "strict": "strict"})
@dataclass(frozen=True, slots=True, kw_only=True)
class BatchOptions(Options):
    """What :func:`validate_batch` needs besides the batch; small and picklable, so it travels
    to worker processes and Ray tasks unchanged.

    ``field`` is the column of Harmony text or token ids; ``parse`` how each record is read
    (:class:`~harmony_grammar.format.options.ParseOptions`, its ``tools`` the batch-wide ones);
    ``tools_field`` a column of per-record tools, which replace them where a record has some.
    ``BatchOptions(tools=..., start=..., strict=...)`` still work for one release, with a
    ``DeprecationWarning``: they are ``parse``'s fields now.
    """

    parse: ParseOptions = field(default_factory=ParseOptions)
    field: str = "text"  # after parse: the name is the dataclasses function until here
    tools_field: str | None = None
    #: Why ``tools`` (the batch-wide argument) cannot be used: every record without tools
    #: of its own gets this as its HG290, rather than the whole batch raising.
    tools_error: str | None = None


def result_schema() -> Any:
    """The pyarrow schema of the result columns (pyarrow imported only when asked)."""
    import pyarrow as pa

    span = pa.struct(
        [
            ("code", pa.string()),
            ("message", pa.string()),
            ("position", pa.int64()),
            ("end", pa.int64()),
        ]
    )
    excerpt = pa.struct([("text", pa.string()), ("start", pa.int64()), ("end", pa.int64())])
    return pa.schema(
        [
            ("ok", pa.bool_()),
            ("errors", pa.int32()),
            ("warnings", pa.int32()),
            ("codes", pa.list_(pa.string())),
            ("first_error", span),
            ("recovered", pa.string()),
            ("diagnostics", pa.string()),
            ("length", pa.int64()),
            ("excerpt", excerpt),
        ]
    )


# ---------------------------------------------------------------------------------- one record


def _source(value: Any, field: str) -> tuple[str | list[int] | None, str | None]:
    """A column value as Harmony text or token ids, or None and why not."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8"), None
        except UnicodeDecodeError as exc:
            return None, f"field {field!r} holds bytes that are not UTF-8 (at byte {exc.start})"
    if value is None:
        return None, f"the record has no value in field {field!r}"
    if isinstance(value, Sequence) or _is_array(value):
        ids = list(value)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in ids):
            return ids, None
    kind = type(value).__name__
    return None, f"field {field!r} holds {kind}, not Harmony text or token ids"


def _is_array(value: Any) -> bool:
    # numpy arrays arrive from pandas-format batches; accepted without importing numpy
    return hasattr(value, "tolist") and getattr(value, "ndim", 0) == 1


class _ToolCache:
    """Per-record tools, normalised once per distinct value in a batch (agent traces repeat
    the same tool list on every record)."""

    def __init__(self) -> None:
        self._seen: dict[str, Mapping[str, Any] | str] = {}

    def get(self, value: Any) -> tuple[Mapping[str, Any] | None, str | None]:
        if value is None:
            return None, None
        if not isinstance(value, str) and nesting_exceeds(value, MAX_JSON_DEPTH):
            return None, f"the record's tools nest deeper than {MAX_JSON_DEPTH}"
        key = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
        if key not in self._seen:
            self._seen[key] = self._normalise(value)
        found = self._seen[key]
        return (None, found) if isinstance(found, str) else (found, None)

    @staticmethod
    def _normalise(value: Any) -> Mapping[str, Any] | str:
        try:
            tools = loads_bounded(value) if isinstance(value, str) else value
            if isinstance(tools, dict) and isinstance(tools.get("tools"), list):
                tools = tools["tools"]
            return checked_tools(tools).schemas
        except (json.JSONDecodeError, JsonLimitError, ValueError, TypeError) as exc:
            return f"the record's tools are not usable ({exc})"[:500]


def _check(
    source: str | list[int] | None,
    error: str | None,
    tools: Mapping[str, Any] | None,
    options: BatchOptions,
) -> tuple[tuple[Diagnostic, ...], tuple[Message, ...]]:
    checked = validate_record(source, error, options.parse, tools=tools)
    if isinstance(checked, Diagnostic):
        return (checked,), ()
    return checked.diagnostics, checked.messages


def _excerpt(source: str | list[int] | None, first: Diagnostic | None) -> dict[str, Any] | None:
    if first is None or source is None:
        return None
    lo = max(first.start - EXCERPT_CONTEXT, 0)
    hi = min(max(first.end, first.start) + EXCERPT_CONTEXT, len(source))
    if isinstance(source, str):
        return {"text": source[lo:hi], "start": first.start - lo, "end": first.end - lo}
    # token ids: the ids as text, the span given in characters of that text
    before = " ".join(map(str, source[lo : first.start]))
    span = " ".join(map(str, source[first.start : first.end]))
    after = " ".join(map(str, source[first.end : hi]))
    start = len(before) + (1 if before else 0)
    text = " ".join(part for part in (before, span, after) if part)
    return {"text": text, "start": start, "end": start + len(span)}


def _row(
    source: str | list[int] | None,
    diagnostics: tuple[Diagnostic, ...],
    messages: tuple[Message, ...],
) -> dict[str, Any]:
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    first = errors[0] if errors else None
    # A lenient run repaired the record when a recovery (a repair row's code) was reported.
    recovered = any(CATALOGUE[d.code].recovered for d in diagnostics)
    return {
        "ok": not errors,
        "errors": len(errors),
        "warnings": len(diagnostics) - len(errors),
        "codes": [d.code for d in diagnostics],
        "first_error": None
        if first is None
        else {
            "code": first.code,
            "message": first.message,
            "position": first.start,
            "end": first.end,
        },
        "recovered": json.dumps([m.to_dict() for m in messages], ensure_ascii=False)
        if recovered and messages
        else None,
        "diagnostics": json.dumps([d.to_dict() for d in diagnostics], ensure_ascii=False),
        "length": 0 if source is None else len(source),
        "excerpt": _excerpt(source, first),
    }


def diagnostics_from_json(text: str) -> tuple[Diagnostic, ...]:
    """The ``diagnostics`` result column back as :class:`Diagnostic` objects."""
    return tuple(Diagnostic.from_dict(d) for d in json.loads(text))


def validate_values(
    values: Sequence[Any],
    options: BatchOptions,
    *,
    tools_values: Sequence[Any] | None = None,
    read_errors: Sequence[str | None] | None = None,
) -> dict[str, list[Any]]:
    """The result columns for a list of field values (``read_errors[i]``, when set, says why
    record ``i`` could not even be read: it becomes that record's HG290)."""
    columns: dict[str, list[Any]] = {name: [] for name in RESULT_COLUMNS}
    cache = _ToolCache()
    for i, value in enumerate(values):
        read_error = read_errors[i] if read_errors is not None else None
        source, error = (None, read_error) if read_error else _source(value, options.field)
        tools = options.parse.schemas
        own = None
        if tools_values is not None and source is not None:
            own, problem = cache.get(tools_values[i])
            if problem is not None:
                source, error = None, problem
            elif own is not None:
                tools = own
        if own is None and options.tools_error is not None and source is not None:
            source, error = None, options.tools_error
        diagnostics, messages = _check(source, error, tools, options)
        for name, cell in _row(source, diagnostics, messages).items():
            columns[name].append(cell)
    return columns


# ---------------------------------------------------------------------------------- a batch


def _options(
    field: str,
    tools: Any,
    tools_field: str | None,
    start: str,
    lenient: bool,
) -> BatchOptions:
    tools_error = None
    if tools is not None and nesting_exceeds(tools, MAX_JSON_DEPTH):
        # Deep tools are data, as a record's own are: each record says so (HG290).
        tools, tools_error = None, f"the tools nest deeper than {MAX_JSON_DEPTH}"
    parse = ParseOptions(start=start, lenient=lenient, tools=tools)
    return BatchOptions(field=field, parse=parse, tools_error=tools_error, tools_field=tools_field)


def validate_batch(
    batch: Any,
    *,
    field: str,
    tools: Any = None,
    tools_field: str | None = None,
    start: str = "conversation",
    strict: bool | None = None,
    lenient: bool = False,
) -> Any:
    """Validate the Harmony records in column ``field`` of ``batch``; return the batch with the
    result columns added.

    ``batch`` is a ``pyarrow.Table`` or ``RecordBatch`` (the result is a ``Table``), or a dict
    of column lists (the result is a new dict). ``field`` holds Harmony text or token ids.
    ``tools`` (as :func:`~harmony_grammar.validate` takes them) apply to every record;
    ``tools_field`` names a column of per-record tools (a tool list, or its JSON text), which
    take precedence where a record has them. ``start`` is ``"conversation"`` or
    ``"completion"``; ``lenient=True`` repairs known deviations (``strict``, its former
    spelling, negated, still works for one release with a warning).

    The result columns (:data:`RESULT_COLUMNS`): ``ok``; ``errors`` and ``warnings`` counts;
    ``codes``, every diagnostic's code in position order; ``first_error`` (``code``,
    ``message``, ``position``, ``end``) or null; ``recovered``, the repaired messages as JSON
    for a record a lenient run repaired; ``diagnostics``, every diagnostic as JSON;
    ``length`` in characters or token ids; ``excerpt`` (``text`` with the failing span at
    ``start:end``) around the first error. A column the batch already has with one of these
    names is replaced. Raises ValueError only for a bad ``tools`` argument or a missing
    column; bad records are results, and so are tools nested past the JSON limit (each
    record's HG290). The work runs on a stack of its own, so how deep the caller's stack
    already is never changes a result into an exception.
    """

    if strict is not None:
        if strict and lenient:  # lenient=False is the default: only True can contradict
            raise ValueError("strict and lenient contradict each other; pass lenient only")
        renamed_keyword("validate_batch", f"strict={strict!r}", f"lenient={not strict!r}")
        lenient = not strict

    def work() -> Any:
        options = _options(field, tools, tools_field, start, lenient)
        if isinstance(batch, Mapping):
            return _validate_dict(batch, options)
        return _validate_arrow(batch, options)

    return on_fresh_stack(work, name="harmony-grammar-validate")


def _validate_dict(batch: Mapping[str, Any], options: BatchOptions) -> dict[str, list[Any]]:
    if options.field not in batch:
        raise ValueError(f"the batch has no column {options.field!r}")
    if options.tools_field is not None and options.tools_field not in batch:
        raise ValueError(f"the batch has no column {options.tools_field!r}")
    results = validate_values(
        list(batch[options.field]),
        options,
        tools_values=None if options.tools_field is None else list(batch[options.tools_field]),
    )
    out = {name: list(column) for name, column in batch.items() if name not in results}
    out.update(results)
    return out


def _validate_arrow(batch: Any, options: BatchOptions) -> Any:
    import pyarrow as pa

    table = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
    names = table.column_names
    if options.field not in names:
        raise ValueError(f"the batch has no column {options.field!r}")
    if options.tools_field is not None and options.tools_field not in names:
        raise ValueError(f"the batch has no column {options.tools_field!r}")
    results = validate_values(
        table.column(options.field).to_pylist(),
        options,
        tools_values=None
        if options.tools_field is None
        else table.column(options.tools_field).to_pylist(),
    )
    schema = result_schema()
    for name in RESULT_COLUMNS:
        if name in names:
            table = table.drop_columns([name])
        table = table.append_column(
            schema.field(name), pa.array(results[name], type=schema.field(name).type)
        )
    return table
