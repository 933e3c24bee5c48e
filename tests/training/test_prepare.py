"""The prepare pipeline and CLI: records in, TRL columns out, every left-out record reported."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from harmony_grammar.cli.main import main
from harmony_grammar.format.vocabulary import load_encoding
from harmony_grammar.training import PrepareOptions, prepare, prepare_batch
from harmony_grammar.training.importers import import_record
from harmony_grammar.training.render import IGNORE_INDEX, render_training

pq = pytest.importorskip("pyarrow.parquet")

GOOD = {
    "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "thinking": "Use the tool.",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
        },
        {"role": "tool", "content": "sunny"},
        {"role": "assistant", "thinking": "Say it.", "content": "Sunny."},
    ],
    "tools": [{"name": "get_weather", "description": "Weather.", "parameters": {"type": "object"}}],
}
HARMONY = {
    "text": "<|start|>user<|message|>hi<|end|><|start|>assistant<|channel|>final<|message|>hey<|return|>"
}
LONG = {
    "messages": [
        {"role": "user", "content": "Say a lot."},
        {"role": "assistant", "content": "word " * 300},
    ]
}


def _write_jsonl(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
        encoding="utf-8",
    )
    return path


def _rows(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    return rows


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    return _write_jsonl(
        tmp_path / "in.jsonl",
        [
            GOOD,
            "{not json",
            {"messages": [{"role": "user", "content": "no answer"}]},
            "",
            HARMONY,
            {"messages": [{"role": "tool", "tool_call_id": "nope", "content": "x"}]},
            LONG,
        ],
    )


def test_every_record_is_written_or_reported_with_its_row(tmp_path: Path, mixed: Path) -> None:
    out = tmp_path / "out.parquet"
    report = prepare(str(mixed), str(out), PrepareOptions())
    rows = _rows(out)
    assert [r["record"] for r in rows] == [1, 5, 7]
    assert sorted((p.record, p.diagnostic.code) for p in report.problems) == [
        (2, "HG300"),
        (3, "HG303"),
        (6, "HG300"),
    ]
    assert (report.records, report.written, report.skipped) == (6, 3, 3)
    assert report.trained_tokens == sum(sum(r["assistant_masks"]) for r in rows)
    # Each row is exactly render_training of its imported record.
    for row, record in zip(rows, [GOOD, HARMONY, LONG]):
        conversation = import_record(record).conversation
        assert conversation is not None
        example = render_training(conversation)
        assert row["input_ids"] == example.input_ids
        assert row["assistant_masks"] == example.assistant_masks
        assert row["labels"] == [
            t if m else IGNORE_INDEX for t, m in zip(row["input_ids"], row["assistant_masks"])
        ]
        assert row["text"] == example.text


def test_max_length_skips_or_truncates_never_silently(tmp_path: Path, mixed: Path) -> None:
    limit = 300  # GOOD and HARMONY fit, LONG does not
    skipped = prepare(str(mixed), str(tmp_path / "a.parquet"), PrepareOptions(max_length=limit))
    assert [r["record"] for r in _rows(tmp_path / "a.parquet")] == [1, 5]
    assert ("HG301", 7) in {(p.diagnostic.code, p.record) for p in skipped.problems}
    cut = prepare(
        str(mixed), str(tmp_path / "b.parquet"), PrepareOptions(max_length=limit, truncate=True)
    )
    rows = _rows(tmp_path / "b.parquet")
    assert [r["record"] for r in rows] == [1, 5, 7] and len(rows[-1]["input_ids"]) == limit
    assert rows[-1]["text"] == load_encoding().decode(rows[-1]["input_ids"])
    (warning,) = [p for p in cut.problems if p.record == 7]
    assert warning.diagnostic.code == "HG302" and not warning.skipped


def test_truncation_that_leaves_nothing_to_train_is_reported() -> None:
    result = prepare_batch([LONG], [1], PrepareOptions(max_length=5, truncate=True))
    assert len(result) == 0
    assert [p.diagnostic.code for p in result.problems] == ["HG302", "HG303"]


def test_parquet_and_json_inputs_and_jobs_give_the_same_rows(tmp_path: Path, mixed: Path) -> None:
    reference = prepare(str(mixed), str(tmp_path / "ref.parquet"), PrepareOptions())
    json_in = tmp_path / "in.json"
    json_in.write_text(json.dumps([GOOD, HARMONY, LONG]), encoding="utf-8")
    prepare(str(json_in), str(tmp_path / "json.parquet"), PrepareOptions())
    pq.write_table(pq.read_table(tmp_path / "json.parquet"), tmp_path / "copy.parquet")
    # A Parquet input of message lists (nested columns) round-trips through pyarrow.
    import pyarrow as pa

    pq.write_table(pa.Table.from_pylist([HARMONY, HARMONY]), tmp_path / "harmony.parquet")
    assert (
        prepare(
            str(tmp_path / "harmony.parquet"), str(tmp_path / "h.parquet"), PrepareOptions()
        ).written
        == 2
    )
    ref_ids = [r["input_ids"] for r in _rows(tmp_path / "ref.parquet")]
    assert [r["input_ids"] for r in _rows(tmp_path / "json.parquet")] == ref_ids
    parallel = prepare(
        str(mixed), str(tmp_path / "jobs.parquet"), PrepareOptions(), jobs=2, batch_size=2
    )
    assert _rows(tmp_path / "jobs.parquet") == _rows(tmp_path / "ref.parquet")
    assert sorted((p.record, p.diagnostic.code) for p in parallel.problems) == sorted(
        (p.record, p.diagnostic.code) for p in reference.problems
    )


def test_hf_format_is_a_saved_dataset(tmp_path: Path, mixed: Path) -> None:
    datasets = pytest.importorskip("datasets")
    prepare(str(mixed), str(tmp_path / "hf"), PrepareOptions(), output_format="hf")
    dataset = datasets.load_from_disk(str(tmp_path / "hf"))
    assert dataset.column_names == [
        "input_ids",
        "assistant_masks",
        "labels",
        "text",
        "file",
        "record",
    ]
    assert dataset["record"] == [1, 5, 7] and set(dataset["file"]) == {str(mixed)}


def test_a_pieces_results_cross_a_process_boundary_unchanged(mixed: Path) -> None:
    # What the Ray engine and the pool send back from a worker is rebuilt exactly.
    from harmony_grammar.data.pieces import plan
    from harmony_grammar.data.task import results_of
    from harmony_grammar.training.prepare import PrepareTask

    task = PrepareTask(PrepareOptions())
    (piece,) = plan(str(mixed)).pieces
    results = list(results_of(task, piece, 2))
    assert list(task.unpack(task.pack(results))) == results
    assert sum(r.records for r in results) == 6


@pytest.mark.skipif(
    not os.environ.get("HG_TEST_RAY"), reason="starts Ray (~25 s); set HG_TEST_RAY=1"
)
def test_ray_engine_writes_what_the_local_engine_writes(tmp_path: Path, mixed: Path) -> None:
    pytest.importorskip("ray")
    local = prepare(str(mixed), str(tmp_path / "local.parquet"), PrepareOptions())
    ray = prepare(str(mixed), str(tmp_path / "ray.parquet"), PrepareOptions(), engine="ray")
    assert _rows(tmp_path / "ray.parquet") == _rows(tmp_path / "local.parquet")
    assert sorted((p.record, p.diagnostic.code) for p in ray.problems) == sorted(
        (p.record, p.diagnostic.code) for p in local.problems
    )


# -- the command --------------------------------------------------------------------------


def test_cli_reports_rows_and_exits_1_when_records_were_left_out(
    tmp_path: Path, mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.parquet"
    assert main(["prepare", str(mixed), "-o", str(out), "--train-on", "all"]) == 1
    err = capsys.readouterr().err
    assert f"{mixed}:2: HG300 error: not JSON" in err
    assert f"{mixed}:6: HG300 error" in err
    assert "6 records: 3 written, 3 skipped" in err
    assert len(_rows(out)) == 3


def test_cli_exits_0_when_everything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _write_jsonl(tmp_path / "ok.jsonl", [GOOD, HARMONY])
    assert (
        main(["prepare", str(source), "-o", str(tmp_path / "o.parquet"), "--train-on", "final"])
        == 0
    )
    rows = _rows(tmp_path / "o.parquet")
    assert all(sum(r["assistant_masks"]) for r in rows)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--truncate"], "--truncate needs --max-length"),
        (["--max-length", "0"], "positive"),
    ],
)
def test_cli_usage_errors_exit_2(
    tmp_path: Path, mixed: Path, capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    assert main(["prepare", str(mixed), "-o", str(tmp_path / "o.parquet"), *argv]) == 2
    assert needle in capsys.readouterr().err


@pytest.mark.parametrize("name", ["missing.jsonl", "dir/notes.txt"])
def test_cli_unreadable_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    if name.startswith("dir/"):  # the directory rule: a file of no dataset kind is an error
        (tmp_path / "dir").mkdir()
        (tmp_path / name).write_text("a,b\n", encoding="utf-8")
        name = "dir"
    assert main(["prepare", str(tmp_path / name), "-o", str(tmp_path / "o.parquet")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and name in err


def test_a_saved_hugging_face_chat_dataset_is_an_input(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    # Arrow gives every message every field (None where a record had none): the importer
    # must read those Nones as absent.
    datasets.Dataset.from_list([GOOD, LONG]).save_to_disk(str(tmp_path / "chat"))
    report = prepare(str(tmp_path / "chat"), str(tmp_path / "o.parquet"), PrepareOptions())
    assert not report.problems
    rows = _rows(tmp_path / "o.parquet")
    expected = prepare_batch([GOOD, LONG], [1, 2], PrepareOptions())
    assert [r["input_ids"] for r in rows] == expected.columns["input_ids"]


def test_arrow_nulls_do_not_add_other_records_tools_or_arguments(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")

    def record(name: str, prop: str) -> dict[str, Any]:
        schema = {"type": "object", "properties": {prop: {"type": "string"}}}
        call = {"function": {"name": name, "arguments": {prop: "x"}}}
        return {
            "messages": [
                {"role": "user", "content": "q"},
                {"role": "assistant", "tool_calls": [call]},
                {"role": "tool", "content": "r"},
                {"role": "assistant", "content": "done"},
            ],
            "tools": [{"name": name, "description": "d", "parameters": schema}],
        }

    records = [record("f", "a"), record("g", "b")]
    datasets.Dataset.from_list(records).save_to_disk(str(tmp_path / "chat"))
    prepare(str(tmp_path / "chat"), str(tmp_path / "o.parquet"), PrepareOptions())
    expected = prepare_batch(records, [1, 2], PrepareOptions())
    assert [r["text"] for r in _rows(tmp_path / "o.parquet")] == expected.columns["text"]


def test_a_datasetdict_is_prepared_split_by_split_with_one_identity(tmp_path: Path) -> None:
    # One data layer: prepare reads a DatasetDict as validate does (it refused one before).
    datasets = pytest.importorskip("datasets")
    datasets.disable_progress_bars()
    split = datasets.Dataset.from_list([GOOD, LONG])
    datasets.DatasetDict({"train": split, "test": split}).save_to_disk(str(tmp_path / "dd"))
    report = prepare(str(tmp_path / "dd"), str(tmp_path / "o.parquet"), PrepareOptions())
    rows = _rows(tmp_path / "o.parquet")
    assert (report.records, report.written) == (4, 4)
    assert [(Path(r["file"]).name, r["record"]) for r in rows] == [
        ("train", 1), ("train", 2), ("test", 1), ("test", 2)
    ]  # fmt: skip
