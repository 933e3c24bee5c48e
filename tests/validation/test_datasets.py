"""Datasets: ``validate_batch``, the inputs (JSONL, Parquet, shards, save_to_disk), the local
engine, ``validate DATA --field`` with ``--output`` and ``--report``. Real pyarrow and
``datasets`` files written in the test; the Ray engine is in test_dataset_engines.py."""

from __future__ import annotations

import contextlib
import json
import sys
from collections import Counter
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harmony_grammar import validate, validate_batch
from harmony_grammar.cli.main import main
from harmony_grammar.data.pieces import plan as plan_path
from harmony_grammar.data.pieces import split
from harmony_grammar.data.read import read_piece
from harmony_grammar.format.options import ParseOptions
from harmony_grammar.validation.batch import RESULT_COLUMNS, BatchOptions
from harmony_grammar.validation.engine import validate_local
from harmony_grammar.validation.html_report import SAMPLE_SIZE, ReportData
from tests.support.dataset_records import TOOLS, completions, conversations

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def plan(path, *columns):
    return plan_path(path, columns).pieces


def _codes(report):
    return [d.code for d in report.diagnostics]


# ---------------------------------------------------------------------------------- validate_batch


def test_a_table_keeps_its_rows_and_gains_the_validators_results():
    texts = conversations(40)
    table = pa.table({"id": list(range(40)), "text": texts})
    out = validate_batch(table, field="text")
    assert out.column_names == ["id", "text", *RESULT_COLUMNS]
    assert out.column("id").to_pylist() == list(range(40))
    rows = out.to_pylist()
    for text, row in zip(texts, rows):
        report = validate(text)
        assert row["ok"] == report.ok
        assert row["codes"] == _codes(report)
        assert row["errors"] + row["warnings"] == len(report.diagnostics)
        assert json.loads(row["diagnostics"]) == [d.to_dict() for d in report.diagnostics]
        errors = [d for d in report.diagnostics if d.severity.value == "error"]
        if errors:
            first = row["first_error"]
            assert (first["code"], first["position"]) == (errors[0].code, errors[0].start)
            excerpt = row["excerpt"]
            span = excerpt["text"][excerpt["start"] : excerpt["end"]]
            assert span == text[errors[0].start : errors[0].end]
        else:
            assert row["first_error"] is None and row["excerpt"] is None
    assert not all(row["ok"] for row in rows) and any(row["ok"] for row in rows)


def test_a_dict_of_columns_gives_the_same_results_as_a_table():
    texts = completions(30)
    as_table = validate_batch(pa.table({"text": texts}), field="text", start="completion")
    as_dict = validate_batch({"text": texts}, field="text", start="completion")
    assert isinstance(as_dict, dict)
    for name in RESULT_COLUMNS:
        assert as_dict[name] == as_table.column(name).to_pylist()


def test_token_ids_and_text_columns_both_work(encoding):
    texts = conversations(20, seed=5)
    ids = [encoding.encode(t, allowed_special="all") for t in texts]
    out = validate_batch({"ids": ids}, field="ids")
    assert out["codes"] == [_codes(validate(i)) for i in ids]
    assert out["length"] == [len(i) for i in ids]


def test_tools_from_a_column_apply_per_record_and_bad_ones_fail_only_their_record():
    texts = completions(30)
    per_record = [json.dumps(TOOLS) if i % 2 else None for i in range(30)]
    per_record[0] = "{not json"
    out = validate_batch(
        {"text": texts, "tools": per_record}, field="text", tools_field="tools", start="completion"
    )
    assert out["codes"][0] == ["HG290"] and "tools" in out["first_error"][0]["message"]
    for i in range(1, 30):
        tools = TOOLS if i % 2 else None
        assert out["codes"][i] == _codes(validate(texts[i], tools=tools, start="completion"))
    # the same tools given once apply to every record
    shared = validate_batch({"text": texts}, field="text", tools=TOOLS, start="completion")
    assert shared["codes"] == [_codes(validate(t, tools=TOOLS, start="completion")) for t in texts]
    assert any("HG180" in codes for codes in shared["codes"])


def _nested(depth: int, kind: str) -> object:
    value: object = {}
    for _ in range(depth):
        value = [value] if kind == "list" else {"x": value}
    return value


# A third of the profile's budget: each example validates a document nested up to 1600 deep.
@settings(max_examples=settings.default.max_examples // 3)
@given(
    depth=st.integers(1, 1600),
    kind=st.sampled_from(["dict", "list", "properties"]),
    frames=st.sampled_from([0, 400, 900]),
    where=st.sampled_from(["argument", "column", "json column"]),
)
def test_deep_tools_never_raise_whatever_the_callers_stack(depth, kind, frames, where):
    """Issue 33: a tools value nested 1,500 deep raised RecursionError, and so did a shallow
    one from a caller already deep in its stack. Deep tools are each record's HG290."""
    if kind == "properties":
        schema: object = {"type": "object"}
        for _ in range(depth):
            schema = {"type": "object", "properties": {"a": schema}}
    else:
        schema = _nested(depth, kind)
    tools = [{"name": "f", "parameters": schema}]
    text = "<|start|>assistant<|channel|>final<|message|>hi<|return|>"
    if where == "argument":
        batch, kwargs = {"text": [text]}, {"tools": tools}
    elif where == "column":
        batch, kwargs = {"text": [text], "t": [tools]}, {"tools_field": "t"}
    else:
        with _recursion_limit(10_000):
            column = json.dumps(tools)
        batch, kwargs = {"text": [text], "t": [column]}, {"tools_field": "t"}

    def call(k: int):
        return validate_batch(batch, field="text", **kwargs) if k == 0 else call(k - 1)

    try:
        out = call(frames)
    except ValueError as exc:  # the documented answer to a tools argument it cannot use
        assert where == "argument" and "RecursionError" not in str(exc)
        return
    (codes,) = out["codes"]
    assert codes == [] or codes == ["HG290"]
    if depth > 130:
        assert codes == ["HG290"]


@contextlib.contextmanager
def _recursion_limit(limit: int):
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def test_records_it_cannot_read_are_hg290_rows_never_exceptions():
    values = [None, 17, ["a", 1], {"x": 1}, b"\xff", True]
    out = validate_batch({"text": values}, field="text")
    assert out["codes"] == [["HG290"]] * len(values)
    assert out["ok"] == [False] * len(values)
    with pytest.raises(ValueError, match="no column 'missing'"):
        validate_batch({"text": []}, field="missing")


def test_lenient_records_carry_their_recovered_messages():
    text = "<|start|>assistant<|channel|>final<|message|>Hi.<|end|>trailing<|start|>user"
    out = validate_batch({"text": [text]}, field="text", lenient=True)
    report = validate(text, lenient=True)
    assert out["recovered"] == [json.dumps([m.to_dict() for m in report.messages])]
    strict = validate_batch({"text": [text]}, field="text")
    assert strict["recovered"] == [None]


# ---------------------------------------------------------------------------------- inputs


@pytest.fixture
def dataset_files(tmp_path):
    """One set of records as JSONL (with a blank line), Parquet, shards and save_to_disk."""
    texts = conversations(60, seed=9)
    with (tmp_path / "data.jsonl").open("w", encoding="utf-8") as f:
        for i, text in enumerate(texts):
            f.write(json.dumps({"text": text}) + "\n")
            if i == 9:
                f.write("\n")
    table = pa.table({"text": texts})
    pq.write_table(table, tmp_path / "data.parquet", row_group_size=25)
    (tmp_path / "shards").mkdir()
    for n, start in enumerate(range(0, 60, 20)):
        pq.write_table(table.slice(start, 20), tmp_path / "shards" / f"part-{n}.parquet")
    datasets = pytest.importorskip("datasets")
    datasets.disable_progress_bars()
    datasets.Dataset.from_dict({"text": texts}).save_to_disk(str(tmp_path / "saved"))
    return tmp_path, texts


def _results(capsys, *argv):
    status = main(["validate", *argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("name", ["data.jsonl", "data.parquet", "shards", "saved"])
def test_every_input_kind_gives_the_same_results_with_its_row_identity(capsys, dataset_files, name):
    root, texts = dataset_files
    output = root / f"{name}.results.parquet"
    status, out, err = _results(
        capsys, str(root / name), "--field", "text", "--output", str(output)
    )
    assert status == 1 and err == ""
    assert out.splitlines()[-1].startswith(f"{len(texts)} records checked: ")
    rows = pq.read_table(output).to_pylist()
    assert [r["codes"] for r in rows] == [_codes(validate(t)) for t in texts]
    records = [r["record"] for r in rows]
    if name == "data.jsonl":  # line numbers, the blank line 11 skipped
        assert records == list(range(1, 11)) + list(range(12, 62))
    elif name == "shards":  # 1-based rows of each shard
        assert records == list(range(1, 21)) * 3
        assert [r["file"].rsplit("/", 1)[1] for r in rows[::20]] == [
            "part-0.parquet",
            "part-1.parquet",
            "part-2.parquet",
        ]
    else:  # 1-based rows, across row groups
        assert records == list(range(1, 61))
        assert {r["file"] for r in rows} == {str(root / name)}


def test_a_datasetdict_directory_validates_every_split(capsys, tmp_path):
    datasets = pytest.importorskip("datasets")
    datasets.disable_progress_bars()
    texts = conversations(10)
    split = datasets.Dataset.from_dict({"text": texts})
    datasets.DatasetDict({"train": split, "test": split}).save_to_disk(str(tmp_path / "dd"))
    status, out, _ = _results(
        capsys, str(tmp_path / "dd"), "--field", "text", "--output", str(tmp_path / "r.parquet")
    )
    assert status in (0, 1) and out.splitlines()[-1].startswith("20 records checked")
    rows = pq.read_table(tmp_path / "r.parquet").to_pylist()
    assert [r["file"].rsplit("/", 1)[1] for r in rows] == ["train"] * 10 + ["test"] * 10
    assert [r["record"] for r in rows] == list(range(1, 11)) * 2


def test_jobs_2_writes_what_jobs_1_writes(capsys, dataset_files):
    root, _ = dataset_files
    outputs = []
    for jobs in ("1", "2"):
        output = root / f"jobs{jobs}.parquet"
        _results(
            capsys, str(root / "shards"), "--field", "text", "--jobs", jobs, "--output", str(output)
        )
        outputs.append(pq.read_table(output).to_pylist())
    assert outputs[0] == outputs[1]


def _jsonl_with_rough_lines(path, texts):
    """JSONL with blank lines, a line that is not JSON, and no newline at the end."""
    with path.open("w", encoding="utf-8") as f:
        for i, text in enumerate(texts):
            f.write(json.dumps({"text": text}) + "\n")
            if i % 7 == 3:
                f.write("\n")
            if i == 20:
                f.write("{not json\n")
        f.write(json.dumps({"text": texts[0]}))


@pytest.mark.parametrize("name", ["data.jsonl", "rough.jsonl", "data.parquet", "shards", "saved"])
def test_pieces_read_the_same_records_under_the_same_identity(dataset_files, name):
    root, texts = dataset_files
    _jsonl_with_rough_lines(root / "rough.jsonl", texts)
    units = plan(str(root / name), "text")

    def records(parts):
        return [
            (chunk.file, record, value, chunk.errors[i])
            for part in parts
            for chunk in read_piece(part, ["text"], batch_size=5)
            for i, (record, value) in enumerate(zip(chunk.records, chunk.values))
        ]

    whole = records(units)
    for size in (1, 7, 1000):
        pieces = list(split(units, records=size, jsonl_bytes=size * 300))
        assert records(pieces) == whole
        if size == 7:  # small pieces really cut every unit
            assert len(pieces) > len(units)


@pytest.mark.parametrize("name", ["rough.jsonl", "data.parquet", "saved"])
def test_two_workers_reading_small_pieces_give_what_one_process_gives(dataset_files, name):
    root, texts = dataset_files
    _jsonl_with_rough_lines(root / "rough.jsonl", texts)
    units = plan(str(root / name), "text")
    options = BatchOptions(field="text", parse=ParseOptions(tools=TOOLS))

    def rows(jobs, piece):
        return [
            row
            for batch in validate_local(units, options, jobs=jobs, piece_records=piece)
            for row in batch.to_arrow().to_pylist()
        ]

    one = rows(1, 2048)
    assert rows(2, 7) == one
    assert len(one) == len(texts) + (2 if name == "rough.jsonl" else 0)  # + bad line, last


def test_jsonl_records_carry_their_own_tools_as_parquet_columns_do(capsys, tmp_path):
    texts = completions(24, seed=3)
    own = [TOOLS if i % 3 == 0 else json.dumps(TOOLS) if i % 3 == 1 else None for i in range(24)]
    own[5] = "{not json"
    with (tmp_path / "t.jsonl").open("w", encoding="utf-8") as f:
        for i, (text, tools) in enumerate(zip(texts, own)):
            record = {"out": {"text": text}}
            if tools is not None or i % 2:  # a missing field and a null both mean none
                record["tools"] = tools
            f.write(json.dumps(record) + "\n")
    column = [t if t is None or isinstance(t, str) else json.dumps(t) for t in own]
    pq.write_table(pa.table({"out.text": texts, "tools": column}), tmp_path / "t.parquet")
    outputs = []
    for name in ("t.jsonl", "t.parquet"):
        output = tmp_path / f"{name}.results.parquet"
        status, _, err = _results(
            capsys,
            str(tmp_path / name),
            "--field",
            "out.text",
            "--tools-field",
            "tools",
            "--completion",
            "--output",
            str(output),
            "--jobs",
            "2",
        )
        assert status == 1 and err == ""
        outputs.append([r["codes"] for r in pq.read_table(output).to_pylist()])
    assert outputs[0] == outputs[1]
    assert outputs[0][5] == ["HG290"]
    for i, text in enumerate(texts):
        if i != 5:
            tools = TOOLS if own[i] is not None else None
            assert outputs[0][i] == _codes(validate(text, tools=tools, start="completion"))
    assert any("HG180" in codes for codes in outputs[0])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["{root}/data.parquet", "--field", "nope"], "no column 'nope'"),
        (["{root}/missing.parquet", "--field", "text"], "no such file"),
        (["{root}/data.jsonl", "--output", "{root}/o.parquet"], "need --field"),
        (["{root}/data.parquet", "--field", "text", "--tools-field", "t"], "no column 't'"),
        (["{root}", "--field", "text"], "notes.txt: not a dataset file"),
        (["{root}/data.jsonl", "--field", "text", "--report", "{root}/no/r.html"], "no such dir"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(capsys, tmp_path, argv, message):
    (tmp_path / "data.jsonl").write_text('{"text": "x"}\n', encoding="utf-8")
    pq.write_table(pa.table({"text": ["x"]}), tmp_path / "data.parquet")
    if argv[0] == "{root}":  # the directory rule: a file of no dataset kind is an error
        (tmp_path / "notes.txt").write_text("read me\n", encoding="utf-8")
    status, out, err = _results(capsys, *(a.format(root=tmp_path) for a in argv))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_a_corrupt_parquet_file_is_refused_in_one_line(capsys, tmp_path):
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    status, _, err = _results(capsys, str(tmp_path / "bad.parquet"), "--field", "text")
    assert status == 2 and "not a readable Parquet file" in err and err.count("\n") == 1


# ---------------------------------------------------------------------------------- the report


class _Page(HTMLParser):
    """Collects the embedded figure data, the bars of each chart and the highlighted spans."""

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[str, object] = {}
        self.bars: dict[str, list[int]] = {}
        self.marks: list[str] = []
        self._script: str | None = None
        self._svg: str | None = None
        self._in_mark = False
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href"):
            if attrs.get(name):
                self.external.append(attrs[name])
        if tag == "script" and attrs.get("type") == "application/json":
            self._script = attrs["id"].removeprefix("data-")
        elif tag == "svg":
            self._svg = attrs["id"]
            self.bars[self._svg] = []
        elif tag == "rect" and self._svg:
            self.bars[self._svg].append(int(attrs["data-value"]))
        elif tag == "mark":
            self._in_mark = True
            self.marks.append("")

    def handle_endtag(self, tag):
        if tag == "svg":
            self._svg = None
        elif tag == "mark":
            self._in_mark = False

    def handle_data(self, data):
        if self._script is not None:
            self.data[self._script] = json.loads(data)
            self._script = None
        elif self._in_mark:
            self.marks[-1] += data


def test_the_report_is_one_html_page_holding_the_figures_data(capsys, tmp_path):
    texts = conversations(120, seed=3)
    pq.write_table(pa.table({"text": texts}), tmp_path / "d.parquet")
    report, output = tmp_path / "report.html", tmp_path / "out.parquet"
    _results(
        capsys,
        str(tmp_path / "d.parquet"),
        "--field",
        "text",
        "--report",
        str(report),
        "--output",
        str(output),
    )
    page = _Page()
    page.feed(report.read_text(encoding="utf-8"))
    page.close()
    assert page.external == []  # nothing fetched at view time
    rows = pq.read_table(output).to_pylist()
    counts = Counter(code for row in rows for code in row["codes"])
    failing = [row for row in rows if not row["ok"]]
    assert page.data["summary"] == {
        "records": 120,
        "valid": 120 - len(failing),
        "failing": len(failing),
        "recovered": 0,
    }
    assert {row["code"]: row["count"] for row in page.data["by_code"]} == counts
    assert sorted(page.bars["chart-by-code"], reverse=True) == sorted(counts.values(), reverse=True)
    assert sum(page.data["by_severity"].values()) == sum(counts.values())
    assert sum(page.data["positions"]["counts"]) == sum(counts.values())
    lengths = page.data["lengths"]
    assert sum(lengths["valid"]) + sum(lengths["failing"]) == 120
    assert sum(lengths["failing"]) == len(failing)
    assert [c["code"] for c in page.data["causes"]] == [c["code"] for c in page.data["by_code"]][
        :10
    ]
    # the sample: the first failing records, each with its failing span highlighted
    shown = failing[:SAMPLE_SIZE]
    assert page.marks == [
        r["excerpt"]["text"][r["excerpt"]["start"] : r["excerpt"]["end"]] or "\u200b"
        for r in shown
        if r["excerpt"] is not None
    ]


def test_report_partials_merged_in_any_order_equal_one_pass_over_the_results(tmp_path):
    texts = [t[:-4] if i % 3 == 0 else t for i, t in enumerate(completions(120, seed=8))]
    pq.write_table(pa.table({"text": texts}), tmp_path / "d.parquet", row_group_size=30)
    options = BatchOptions(field="text", parse=ParseOptions(tools=TOOLS, start="completion"))
    batches = list(validate_local(plan(str(tmp_path / "d.parquet"), "text"), options))
    whole = ReportData()
    for batch in batches:
        whole.add(batch)
    assert whole.failing > SAMPLE_SIZE  # so the merge must choose which samples to keep
    merged = ReportData()
    for batch in reversed(batches):  # as a cluster's partials may arrive
        partial = ReportData()
        partial.add(batch)
        merged.merge(
            ReportData.from_json(partial.to_json()), order=lambda s: (s["file"], s["record"])
        )
    assert merged == whole
    assert merged.figures() == whole.figures()


def test_the_report_names_its_input_and_date_and_every_cause_has_a_fix(capsys, tmp_path):
    import datetime
    import re

    texts = conversations(40, seed=4) + ["not harmony at all", "<|start|>user<|message|>x"]
    pq.write_table(pa.table({"text": texts}), tmp_path / "d.parquet")
    report = tmp_path / "report.html"
    before = datetime.datetime.now(datetime.timezone.utc)
    _results(capsys, str(tmp_path / "d.parquet"), "--field", "text", "--report", str(report))
    page = report.read_text(encoding="utf-8")
    header = page[page.index("<h1>") : page.index("</p>", page.index("<h1>"))]
    assert str(tmp_path / "d.parquet") in header
    assert before.strftime("%Y-%m-%d") in header and "UTC" in header
    rows = re.findall(
        r"<tr><td>(HG\d+)</td><td>[\d,]+</td><td>([^<]*)</td><td>([^<]*)</td></tr>", page
    )
    assert len(rows) >= 2
    assert all(what and fix for _, what, fix in rows), rows  # no empty fix column
