"""The data layer: planning, reading pieces into records with one identity, the one pool."""

from __future__ import annotations

import functools
import importlib
import io
import json
import os
from pathlib import Path

import pytest

import harmony_grammar.data as data
from harmony_grammar.data.pieces import Piece, plan
from harmony_grammar.data.pool import IN_FLIGHT_PER_JOB, ordered_map, run_local
from harmony_grammar.data.progress import Progress
from harmony_grammar.data.read import Chunk, Failure, read_piece
from harmony_grammar.format.options import ParseOptions
from harmony_grammar.validation.batch import BatchOptions
from harmony_grammar.validation.engine import ValidateTask


def _jsonl(tmp_path: Path, body: bytes, name: str = "d.jsonl") -> Piece:
    path = tmp_path / name
    path.write_bytes(body)
    (piece,) = plan(str(path)).pieces
    return piece


def _read(piece: Piece, **kwargs) -> list[tuple[int, object, str | None]]:
    out = []
    for part in read_piece(piece, **kwargs):
        assert isinstance(part, Chunk), part
        out += list(zip(part.records, part.values, part.errors, strict=True))
    return out


def test_records_are_numbered_by_line_from_1_and_blank_lines_are_no_records(tmp_path):
    piece = _jsonl(tmp_path, b'{"text": "a"}\n\n   \n{"text": [1, 2]}\n{"text": "c"}')
    assert _read(piece) == [
        (1, {"text": "a"}, None),
        (4, {"text": [1, 2]}, None),
        (5, {"text": "c"}, None),
    ]


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b'{"text": "a"', "not JSON"),
        (b'["text"]', "not an object"),
        (b'{"text": "\xff"}', "invalid UTF-8"),
        (b'{"text": "\\ud800"}', "lone surrogate"),
        (b"[" * 200 + b"]" * 200, "not readable"),
    ],
)
def test_a_bad_record_is_an_error_in_its_place(tmp_path, line, error):
    piece = _jsonl(tmp_path, b'{"text": "ok"}\n' + line + b'\n{"text": "next"}\n')
    (first, (number, value, why), last) = _read(piece)
    assert number == 2 and value is None and error in (why or "")
    assert first[0] == 1 and last == (3, {"text": "next"}, None)


def test_an_overlong_line_is_an_error_without_losing_the_next(tmp_path):
    long_line = b'{"text": "' + b"x" * 5000 + b'"}\n'
    piece = _jsonl(tmp_path, b'{"text": "a"}\n' + long_line + b'{"text": "b"}\n' + b"y" * 5000)
    rows = _read(piece, max_record_bytes=100)
    assert [(n, v) for n, v, _ in rows] == [
        (1, {"text": "a"}),
        (2, None),
        (3, {"text": "b"}),
        (4, None),
    ]
    assert "longer than 100 bytes" in (rows[1][2] or "")


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b'{"other": "a"}', "no field 'text'"),
        (b'{"text": 3}', "holds int"),
        (b'{"text": [1, true]}', "holds list"),
        (b'{"text": null}', "no value in field 'text'"),
    ],
)
def test_validation_reports_a_record_without_a_usable_field_as_hg290(tmp_path, line, error):
    piece = _jsonl(tmp_path, line + b"\n")
    (batch,) = run_local([piece], ValidateTask(BatchOptions(field="text")))
    assert batch.records == [1]
    (result,) = batch.item_results()
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "HG290" and error in diagnostic.message


def test_dotted_fields_and_literal_keys(tmp_path):
    nested = _jsonl(tmp_path, b'{"output": {"text": "<|start|>user<|message|>n<|end|>"}}\n')
    literal = _jsonl(
        tmp_path, b'{"output.text": "<|start|>user<|message|>l<|end|>", "output": 1}\n', "l.jsonl"
    )
    for piece in (nested, literal):
        (batch,) = run_local([piece], ValidateTask(BatchOptions(field="output.text")))
        assert batch.columns["ok"] == [True]


def test_a_json_array_file_is_numbered_from_1(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('[{"text": "a"}, 3, {"text": "c"}]')
    (piece,) = plan(str(path)).pieces
    assert piece.kind == "json"
    assert [(n, e is None) for n, _, e in _read(piece)] == [(1, True), (2, False), (3, True)]


def test_a_file_that_vanishes_is_one_failure_naming_it(tmp_path):
    piece = _jsonl(tmp_path, b'{"text": "a"}\n')
    os.unlink(piece.path)
    (failure,) = list(read_piece(piece))
    assert isinstance(failure, Failure) and failure.first == 1
    assert "unreadable piece" in failure.message and "d.jsonl" in failure.message


def _square(x: int) -> int:
    return x * x


def test_the_pool_keeps_input_order():
    assert list(ordered_map(_square, range(200), jobs=2)) == [x * x for x in range(200)]
    assert list(ordered_map(_square, range(5), jobs=1)) == [0, 1, 4, 9, 16]


def test_the_pool_keeps_a_bounded_number_of_items_in_flight():
    jobs, total = 2, 300
    pulled = 0

    def source():
        nonlocal pulled
        for n in range(total):
            pulled += 1
            yield n

    most_ahead = 0
    for done, _ in enumerate(ordered_map(functools.partial(pow, 2), source(), jobs=jobs)):
        most_ahead = max(most_ahead, pulled - done)
    assert pulled == total
    assert most_ahead <= jobs * IN_FLIGHT_PER_JOB + 1


def test_options_reach_the_workers(tmp_path):
    body = b'{"text": "<|channel|>final<|message|>x<|return|>"}\n' * 3
    piece = _jsonl(tmp_path, body)
    task = ValidateTask(BatchOptions(field="text", parse=ParseOptions(start="completion")))
    for jobs in (1, 2):
        oks = [
            ok
            for b in run_local([piece], task, jobs=jobs, piece_records=1)
            for ok in b.columns["ok"]
        ]
        assert oks == [True, True, True]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_only_on_a_terminal(monkeypatch):
    monkeypatch.setattr(Progress, "INTERVAL", 0.0)
    quiet = io.StringIO()
    progress = Progress(100, "records", quiet)
    progress.advance(50)
    progress.clear()
    assert quiet.getvalue() == ""

    terminal = _Terminal()
    progress = Progress(100, "records", terminal)
    progress.advance(50)
    assert "50%" in terminal.getvalue() and "1 records" in terminal.getvalue()
    progress.clear()
    assert terminal.getvalue().endswith("\r\x1b[K")


def test_module_exports():
    for name in data.__all__:
        assert hasattr(data, name)


def test_the_documented_batch_function_runs_on_both_paths(tmp_path, monkeypatch):
    # docs/datasets.md, "Writing a batch function": the example as written, on a real shard.
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    doc = (Path(__file__).resolve().parents[2] / "docs" / "datasets.md").read_text("utf-8")
    section = doc[doc.index("## Writing a batch function") :]
    opening = section.index("```python\n") + len("```python\n")
    code = section[opening : section.index("\n```", opening)]
    (tmp_path / "shards").mkdir()
    pq.write_table(pa.table({"text": ["a", "b", "c"]}), tmp_path / "shards" / "a.parquet")
    monkeypatch.chdir(tmp_path)
    # a module, as a job's code is, so the worker processes can unpickle its task
    (tmp_path / "doc_count_task.py").write_text(code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("doc_count_task")
    task, pieces = module.CountTask("text"), module.plan("shards/", ["text"]).pieces
    for jobs in (1, 2):
        found = [r for results in run_local(pieces, task, jobs=jobs) for r in results]
        assert found == [("shards/a.parquet", n, "ok") for n in (1, 2, 3)]


def test_diagnostic_from_dict_inverts_to_dict_losslessly():
    from harmony_grammar.format.model import Diagnostic, Severity

    full = Diagnostic("HG100", Severity.ERROR, "unexpected", 3, 9, 1, 4, ("MESSAGE", "CHANNEL"))
    bare = Diagnostic("HG290", Severity.WARNING, "no input", 0, 0)
    for diagnostic in (full, bare):
        assert Diagnostic.from_dict(diagnostic.to_dict()) == diagnostic
        assert Diagnostic.from_dict(json.loads(json.dumps(diagnostic.to_dict()))) == diagnostic
    # what older writers stored without the optional keys still reads
    assert Diagnostic.from_dict(
        {"code": "HG290", "severity": "warning", "message": "no input", "start": 0, "end": 0}
    ) == bare
