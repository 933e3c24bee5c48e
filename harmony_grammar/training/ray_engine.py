"""``prepare --engine ray``: the same batch function, run by Ray Data over a cluster.

``read_json`` / ``read_parquet`` (or ``from_huggingface``) → ``map_batches`` of
:func:`~.batch.prepare_batch` → ``write_parquet``. Each input row is numbered first (a zip
with ``range``), so problems name their row as the local engine does. A batch returns one
table row per input record: kept records with their columns, left-out ones with empty columns
and ``keep = False``, each with its problems as JSON; the problems are collected to the
driver (they are few) and the kept rows written. The output is a folder of Parquet files.

This module is small on purpose: when the datasets work's shared Ray Data engine lands, the
read and write steps here are the ones to replace by it; the batch function stays.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

from ..format.model import Diagnostic, Severity
from ..validation.ray_engine import configure_data_context, import_ray, start_ray
from .batch import COLUMNS, PrepareOptions, Problem, prepare_batch
from .readers import input_kind, parse_json_line, without_nulls

__all__ = ["prepare_with_ray"]

_ROW_ID = "__hg_row"


def _problem_json(problem: Problem) -> str:
    d = problem.diagnostic
    return json.dumps([problem.row, d.code, d.severity.value, d.message])


def _problem_from_json(text: str) -> Problem:
    row, code, severity, message = json.loads(text)
    return Problem(row, Diagnostic(code, Severity(severity), message, 0, 0))


def _map_batch(table: Any, options: PrepareOptions, lines: bool = False) -> Any:
    """Ray side: one Arrow batch of records in, one Arrow table of results out.

    With ``lines`` the batch holds JSONL lines (a ``text`` column) parsed here, so a bad line
    is one record's problem and nested messages keep their exact shape (Arrow would unify
    every record's message fields into one struct).
    """
    import pyarrow as pa

    rows = [i + 1 for i in table.column(_ROW_ID).to_pylist()]
    if lines:
        records = [parse_json_line(line.encode()) for line in table.column("text").to_pylist()]
    else:
        records = [without_nulls(r) for r in table.drop_columns([_ROW_ID]).to_pylist()]
    result = prepare_batch(records, rows, options)
    by_row: dict[int, list[str]] = {}
    for problem in result.problems:
        by_row.setdefault(problem.row, []).append(_problem_json(problem))
    kept = set(result.columns["row"])
    columns: dict[str, list[Any]] = {name: list(result.columns[name]) for name in COLUMNS}
    for row in rows:
        if row not in kept:
            for name in COLUMNS:
                columns[name].append(row if name == "row" else "" if name == "text" else [])
    columns["keep"] = [True] * len(result) + [False] * (len(columns["row"]) - len(result))
    columns["problems"] = [by_row.get(row, []) for row in columns["row"]]
    return pa.Table.from_pydict(columns)


def _read(source: str) -> Any:
    import ray.data

    kind = input_kind(source)
    if kind == "jsonl":
        return ray.data.read_text(source, drop_empty_lines=False)
    if kind == "json":
        return ray.data.read_json(source)
    if kind == "parquet":
        return ray.data.read_parquet(source)
    import datasets

    return ray.data.from_huggingface(datasets.load_from_disk(source))


def prepare_with_ray(
    source: str,
    output: str,
    options: PrepareOptions,
    report: Any,
    output_format: str,
    batch_size: int,
) -> None:
    """Run the pipeline on Ray Data, filling ``report`` (a :class:`~.prepare.PrepareReport`)."""
    import pyarrow.compute as pc

    ray = import_ray()
    # A Ray started here stays up for the process, as before: prepare runs once per process.
    start_ray(ray)
    # Ray Data logs every operator at INFO on stderr, where prepare reports its problems.
    configure_data_context(ray, progress=False)
    records = _read(source)
    with warnings.catch_warnings():
        # zip is deprecated for relying on order, which preserve_order above guarantees;
        # the lambda filters are the only way to test a list column's length.
        warnings.simplefilter("ignore")
        numbered = records.zip(ray.data.range(records.count()).rename_columns({"id": _ROW_ID}))
        lines = input_kind(source) == "jsonl"
        if lines:
            numbered = numbered.filter(lambda row: bool(row["text"].strip()))
        results = numbered.map_batches(
            _map_batch, fn_args=(options, lines), batch_format="pyarrow", batch_size=batch_size
        ).materialize()
        with_problems = results.filter(lambda row: len(row["problems"]) > 0)
        for row in with_problems.select_columns(["problems"]).iter_rows():
            report.problems += [_problem_from_json(text) for text in row["problems"]]
        kept = results.filter(lambda row: bool(row["keep"])).select_columns(list(COLUMNS))
    report.records = results.count()
    report.written = kept.count()
    if report.written:
        stats = kept.map_batches(
            lambda t: {
                "tokens": [pc.sum(pc.list_value_length(t["input_ids"])).as_py() or 0],
                "trained": [pc.sum(pc.list_flatten(t["assistant_masks"])).as_py() or 0],
                "longest": [pc.max(pc.list_value_length(t["input_ids"])).as_py() or 0],
            },
            batch_format="pyarrow",
        ).take_all()
        report.tokens = sum(s["tokens"] for s in stats)
        report.trained_tokens = sum(s["trained"] for s in stats)
        report.longest = max(s["longest"] for s in stats)
    if output_format == "hf":
        import datasets

        datasets.Dataset.from_pandas(kept.to_pandas(), preserve_index=False).save_to_disk(output)
    else:
        kept.write_parquet(output)
