"""Records and pieces that used to sink a dataset run (issue 27): each becomes a result with
its file and record (a bad record) or one result naming the piece (an unreadable piece), the
run goes on, and every input record is accounted for, on every command; and the one
directory rule (docs/datasets.md) that every command and engine shares."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harmony_grammar import validate_batch
from harmony_grammar.cli.main import main
from harmony_grammar.data.pieces import plan
from tests.support.dataset_hostile import GOOD, build

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    return tmp_path / "in", build(tmp_path / "in")


def _validate(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(["validate", *argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_every_record_of_a_hostile_directory_is_accounted_for(capsys, tmp_path, hostile, jobs):
    root, counts = hostile
    output, report = tmp_path / "r.parquet", tmp_path / "r.html"
    status, out, err = _validate(
        capsys, str(root), "--field", "text", "--jobs", jobs,
        "--output", str(output), "--report", str(report),
    )  # fmt: skip
    total = sum(counts.values())
    assert status == 1 and err == "", err
    assert out.splitlines()[-1].startswith(f"{total} records checked: ")
    rows = pq.read_table(output).to_pylist()
    assert len(rows) == total  # each written, reported bad, or part of an unreadable piece
    by_file: dict[str, list[dict]] = {}
    for row in rows:
        by_file.setdefault(row["file"].rsplit("/", 1)[1], []).append(row)
    assert {name: len(found) for name, found in by_file.items()} == {
        "surrogate.jsonl": 3, "name-\\xff.jsonl": 1, "utf8.parquet": 3, "corrupt.parquet": 30
    }  # fmt: skip
    assert [r["codes"] for r in by_file["surrogate.jsonl"]] == [[], ["HG290"], []]
    assert "lone surrogate" in by_file["surrogate.jsonl"][1]["first_error"]["message"]
    assert [r["codes"] for r in by_file["utf8.parquet"]] == [[], ["HG290"], []]
    assert "field 'text'" in by_file["utf8.parquet"][1]["first_error"]["message"]
    corrupt = by_file["corrupt.parquet"]
    assert [r["record"] for r in corrupt] == list(range(1, 31))
    lost = [r for r in corrupt if r["codes"] == ["HG290"]]
    assert [r["record"] for r in lost] == list(range(11, 21))  # the middle row group only
    message = lost[0]["first_error"]["message"]
    assert "row group 1 of" in message and "records 11-20 not read" in message
    # the summary names the piece once, with its file and first record, not ten times
    piece_lines = [line for line in out.splitlines() if "unreadable piece" in line]
    assert len(piece_lines) == 1 and ":11: HG290 error: " in piece_lines[0]
    html = report.read_text(encoding="utf-8")
    assert report.stat().st_size > 1000 and "HG290" in html


def test_validate_output_of_a_surrogate_record_writes_every_row(capsys, tmp_path, hostile):
    root, _ = hostile
    output = tmp_path / "s.parquet"
    status, _, err = _validate(
        capsys, str(root / "surrogate.jsonl"), "--field", "text", "--output", str(output)
    )
    assert status == 1 and err == ""
    assert len(pq.read_table(output)) == 3


def test_prepare_accounts_for_every_record_of_a_hostile_directory(capsys, tmp_path, hostile):
    root, counts = hostile
    out = tmp_path / "train.parquet"
    status = main(["prepare", str(root), "-o", str(out), "--field", "text"])
    _, err = capsys.readouterr()
    total = sum(counts.values())
    assert status == 1, err
    assert "internal error" not in err
    written = len(pq.read_table(out))
    summary = err.splitlines()[-1]
    skipped = total - written
    assert summary.startswith(f"{total} records: {written} written, {skipped} skipped"), summary
    assert written == 1 + 2 + 2 + 20  # surrogate's, the name's, utf8's and corrupt's good ones
    assert "unreadable piece row group 1 of" in err
    assert "lone surrogate" in err


def test_render_of_a_lone_surrogate_is_one_line_not_an_internal_error(capsys, tmp_path):
    source = tmp_path / "c.json"
    source.write_text('{"messages": [{"role": "user", "content": "\\ud800"}]}', encoding="utf-8")
    status = main(["render", str(source)])
    out, err = capsys.readouterr()
    assert status == 2 and out == "", err
    assert "internal error" not in err and err.count("\n") == 1 and "surrogate" in err


# ---------------------------------------------------------------------------------- the rule


def _tree(root: Path) -> None:
    """14 records: top-level and nested shards, every Parquet spelling, JSON Lines, a
    Spark-style x.parquet/ folder, and metadata files that are skipped out loud."""
    root.mkdir()
    table = pa.table({"text": [GOOD]})
    for name in ("a.parquet", "B.PARQUET", "c.parq", "d.pq"):
        pq.write_table(table, root / name)
    (root / "nested").mkdir()
    pq.write_table(pa.table({"text": [GOOD] * 3}), root / "nested" / "e.parquet")
    (root / "f.jsonl").write_text((json.dumps({"text": GOOD}) + "\n") * 3, encoding="utf-8")
    (root / "g.NDJSON").write_text(json.dumps({"text": GOOD}) + "\n", encoding="utf-8")
    spark = root / "x.parquet"
    spark.mkdir()
    pq.write_table(pa.table({"text": [GOOD] * 3}), spark / "part-00000.snappy.parquet")
    (spark / "_SUCCESS").write_text("")
    (spark / ".part-00000.snappy.parquet.crc").write_bytes(b"crc")


def test_one_directory_rule_for_every_command(capsys, tmp_path):
    root = tmp_path / "tree"
    _tree(root)
    names = [os.path.relpath(p.path, root) for p in plan(str(root), ["text"]).pieces]
    assert names == [
        "B.PARQUET", "a.parquet", "c.parq", "d.pq", "f.jsonl", "g.NDJSON",
        "nested/e.parquet", "x.parquet/part-00000.snappy.parquet",
    ]  # fmt: skip
    status, out, err = _validate(capsys, str(root), "--field", "text")
    assert status == 0 and out.splitlines()[-1].startswith("14 records checked")
    assert "skipped 2 metadata file(s)" in err and "_SUCCESS" in err
    status = main(["prepare", str(root), "-o", str(tmp_path / "o.parquet"), "--field", "text"])
    _, err = capsys.readouterr()
    assert status == 0 and "14 records: 14 written, 0 skipped" in err
    assert "skipped 2 metadata file(s)" in err


def test_a_file_of_no_dataset_kind_in_a_directory_is_an_error_not_skipped(capsys, tmp_path):
    root = tmp_path / "tree"
    _tree(root)
    (root / "nested" / "README.md").write_text("notes\n")
    for command in (["validate", str(root), "--field", "text"],
                    ["prepare", str(root), "-o", str(tmp_path / "o.parquet")]):  # fmt: skip
        assert main(command) == 2
        err = capsys.readouterr().err
        assert "README.md: not a dataset file" in err and err.count("\n") == 1


def test_an_unreadable_shard_in_a_directory_is_one_result_and_the_run_goes_on(capsys, tmp_path):
    root = tmp_path / "tree"
    _tree(root)
    (root / "nested" / "broken.parquet").write_bytes(b"PAR1 not really")
    output = tmp_path / "r.parquet"
    status, out, err = _validate(capsys, str(root), "--field", "text", "--output", str(output))
    assert status == 1 and err.startswith("note: ")
    assert "broken.parquet:1: HG290 error: unreadable piece" in out
    rows = pq.read_table(output).to_pylist()
    assert len(rows) == 15  # 14 records and one result for the shard
    (broken,) = [r for r in rows if r["file"].endswith("broken.parquet")]
    assert "not a readable Parquet file" in broken["first_error"]["message"]


# ---------------------------------------------------------------------------------- batches


def _deep(levels: int) -> dict:
    value: dict = {"type": "object"}
    for _ in range(levels):
        value = {"type": "object", "properties": {"a": value}}
    return value


def test_validate_batch_answers_deeply_nested_tools_without_recursion_error():
    tools = [{"name": "f", "parameters": _deep(1200)}]
    out = validate_batch({"text": [GOOD], "tools": [tools]}, field="text", tools_field="tools")
    assert out["codes"] == [["HG290"]] and "nest deeper" in out["diagnostics"][0]
    text = '[{"name": "f", "parameters": ' + '{"a": ' * 1200 + "1" + "}" * 1200 + "}]"
    table = pa.table({"text": [GOOD], "tools": [text]})
    out = validate_batch(table, field="text", tools_field="tools")
    assert out.column("codes").to_pylist() == [["HG290"]]
