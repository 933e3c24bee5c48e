"""One batch function, three engines: the local engine, ``datasets.Dataset.map`` and Ray Data
give the same results, record for record, on the same generated Parquet shards.

A real local Ray (``ray.init(num_cpus=2)``, started once per session, usage statistics off so
nothing reaches the network), real ``datasets`` and real Parquet files; no mocks.
"""

from __future__ import annotations

import json
import logging
import os
import re
import warnings

import pytest

from harmony_grammar import validate_batch
from harmony_grammar.cli.main import main
from harmony_grammar.data.pieces import plan as plan_path
from harmony_grammar.format.options import ParseOptions
from harmony_grammar.validation.batch import RESULT_COLUMNS, BatchOptions
from harmony_grammar.validation.engine import validate_local
from tests.support.dataset_records import TOOLS, completions


def plan(path, *columns):
    return plan_path(path, columns).pieces


pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

RECORDS = 240


@pytest.fixture(scope="session")
def ray_local():
    """A local Ray instance with two CPUs for the whole session."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.data")
    ray.init(
        num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING
    )
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """Completions in three Parquet shards of two row groups each, half with per-record tools,
    a few records holding no text or the wrong type."""
    root = tmp_path_factory.mktemp("shards")
    texts: list[object] = list(completions(RECORDS, seed=11))
    texts[7] = None
    tools = [json.dumps(TOOLS) if i % 2 else None for i in range(RECORDS)]
    tools[12] = "[{]"  # unusable tools: that record alone is HG290
    table = pa.table({"id": list(range(RECORDS)), "text": texts, "tools": tools})
    for n, start in enumerate(range(0, RECORDS, RECORDS // 3)):
        pq.write_table(
            table.slice(start, RECORDS // 3), root / f"part-{n}.parquet", row_group_size=40
        )
    return root


def _local(root):
    options = BatchOptions(
        field="text", tools_field="tools", parse=ParseOptions(start="completion")
    )
    return [
        {"record": record, **{name: batch.columns[name][i] for name in RESULT_COLUMNS}}
        for batch in validate_local(plan(str(root), "text", "tools"), options, jobs=1)
        for i, record in enumerate(batch.records)
    ]


def _comparable(row):
    """The results that must agree (``first_error``/``excerpt`` as JSON: ``datasets`` may spell
    a null struct as a struct of nulls)."""
    return (
        row["ok"], row["errors"], row["warnings"], list(row["codes"]), row["recovered"],
        row["diagnostics"], row["length"],
        json.dumps(row["first_error"] if row["ok"] is False else None),
        json.dumps(row["excerpt"] if row["ok"] is False else None),
    )  # fmt: skip


def test_local_datasets_map_and_ray_agree_record_for_record(ray_local, shards, tmp_path):
    from harmony_grammar.validation.engine import validate_ray

    datasets = pytest.importorskip("datasets")
    datasets.disable_progress_bars()
    local = _local(shards)
    assert len(local) == RECORDS
    assert {False, True} <= {row["ok"] for row in local}
    assert ["HG290"] in [row["codes"] for row in local]
    assert any("HG180" in row["codes"] for row in local)  # per-record tools were applied

    files = sorted(str(p) for p in shards.glob("*.parquet"))
    dataset = datasets.Dataset.from_parquet(files, cache_dir=str(tmp_path / "hf"))
    mapped = dataset.map(
        validate_batch,
        batched=True,
        batch_size=64,
        num_proc=2,
        fn_kwargs={"field": "text", "tools_field": "tools", "start": "completion"},
        cache_file_name=str(tmp_path / "hf" / "mapped.arrow"),
    )
    assert mapped["id"] == list(range(RECORDS))  # the same rows, in order
    hf_rows = mapped.remove_columns(["id", "text", "tools"]).to_list()
    assert [_comparable(r) for r in hf_rows] == [_comparable(r) for r in local]

    options = BatchOptions(
        field="text", tools_field="tools", parse=ParseOptions(start="completion")
    )
    ray_rows = [
        {"file": batch.file, "record": record,
         **{name: batch.columns[name][i] for name in RESULT_COLUMNS}}
        for batch in validate_ray(
            plan(str(shards), "text", "tools"), options, jobs=2, piece_records=16
        )  # pieces of 16 records: slices of the row groups of 40, read by the workers
        for i, record in enumerate(batch.records)
    ]  # fmt: skip
    assert [r["record"] for r in ray_rows] == [r["record"] for r in local]
    assert [r["file"] for r in ray_rows] == [f for f in files for _ in range(RECORDS // 3)]
    assert [_comparable(r) for r in ray_rows] == [_comparable(r) for r in local]


def test_the_cli_on_ray_writes_what_the_local_engine_writes(ray_local, shards, tmp_path, capsys):
    outputs, summaries = [], []
    for engine in ("local", "ray"):
        output = tmp_path / f"{engine}.parquet"
        status = main(
            ["validate", str(shards), "--field", "text", "--tools-field", "tools",
             "--completion", "--engine", engine, "--jobs", "2", "--output", str(output),
             "--format", "json"]
        )  # fmt: skip
        out, err = capsys.readouterr()
        assert status == 1 and err == ""
        outputs.append(pq.read_table(output).to_pylist())
        summaries.append(out)
    assert outputs[0] == outputs[1]
    assert summaries[0] == summaries[1]
    assert json.loads(summaries[0].splitlines()[-1])["summary"]["records"] == RECORDS


def test_ray_workers_write_a_directory_and_the_driver_gets_the_same_summary_and_report(
    ray_local, shards, tmp_path, capsys
):
    common = ["validate", str(shards), "--field", "text", "--tools-field", "tools",
              "--completion", "--jobs", "2"]  # fmt: skip
    runs = {}
    for engine, output in (("local", "local.parquet"), ("ray", "results")):
        status = main(
            [*common, "--engine", engine, "--output", str(tmp_path / output),
             "--report", str(tmp_path / f"{engine}.html"), "--format", "json"]
        )  # fmt: skip
        out, err = capsys.readouterr()
        assert status == 1 and err == ""
        runs[engine] = out.splitlines()
    local = pq.read_table(tmp_path / "local.parquet").to_pylist()
    shards_written = sorted((tmp_path / "results").glob("*.parquet"))
    assert shards_written  # Ray's workers wrote shards into the directory
    written = pq.read_table(tmp_path / "results").to_pylist()
    files = sorted({row["file"] for row in local})
    rank = {name: i for i, name in enumerate(files)}
    written.sort(key=lambda row: (rank[row["file"]], row["record"]))
    assert written == local  # every record, once, with its identity
    # the driver printed no line per record, and the same summary (counts, causes)
    assert len(runs["ray"]) == 1 and len(runs["local"]) > 1
    assert runs["ray"][-1] == runs["local"][-1]
    # the report's figures and samples, aggregated on the workers, are the driver's own
    # (the pages differ only in the minute each was generated, when a run crosses one)
    pages = {
        engine: re.sub(r"generated \d{4}-\d\d-\d\d \d\d:\d\d UTC", "generated WHEN",
                       (tmp_path / f"{engine}.html").read_text(encoding="utf-8"))
        for engine in ("local", "ray")
    }  # fmt: skip
    assert "generated WHEN" in pages["local"]
    assert pages["ray"] == pages["local"]
    # an existing, non-empty directory is refused before anything runs
    status = main([*common, "--engine", "ray", "--output", str(tmp_path / "results")])
    _, err = capsys.readouterr()
    assert status == 2 and "not an empty directory" in err


def test_ray_reads_jsonl_and_save_to_disk_as_the_local_engine_does(ray_local, tmp_path, capsys):
    datasets = pytest.importorskip("datasets")
    datasets.disable_progress_bars()
    texts = completions(50, seed=21)
    with (tmp_path / "d.jsonl").open("w", encoding="utf-8") as f:
        for i, text in enumerate(texts):
            f.write(("not json" if i == 3 else json.dumps({"text": text})) + "\n\n")
    datasets.Dataset.from_dict({"text": texts}).save_to_disk(str(tmp_path / "saved"))
    found = {}
    for data in ("d.jsonl", "saved"):
        outputs = []
        for engine in ("local", "ray"):
            output = tmp_path / f"{data}-{engine}.parquet"
            main(["validate", str(tmp_path / data), "--field", "text", "--completion",
                  "--engine", engine, "--output", str(output)])  # fmt: skip
            capsys.readouterr()
            outputs.append(pq.read_table(output).to_pylist())
        assert len(outputs[0]) == 50 and outputs[0] == outputs[1]
        found[data] = outputs[0]
    assert [r["record"] for r in found["d.jsonl"]] == list(range(1, 100, 2))  # line numbers
    assert found["d.jsonl"][3]["codes"] == ["HG290"]  # the line that is not JSON
    assert [r["record"] for r in found["saved"]] == list(range(1, 51))  # 1-based rows


def test_ray_directory_output_of_a_relative_path_and_of_no_records(
    ray_local, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # relative paths: the workers must get absolute ones
    texts = completions(12, seed=4)
    with open("d.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"text": text}) + "\n" for text in texts)
    with open("blank.jsonl", "w", encoding="utf-8") as f:
        f.write("\n\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status = main(["validate", "d.jsonl", "--field", "text", "--completion",
                       "--engine", "ray", "--output", "out"])  # fmt: skip
    # the aggregation pass reads the shards back without Ray's deprecated read_parquet(columns=)
    assert not [w for w in caught if "read_parquet" in str(w.message)]
    out, err = capsys.readouterr()
    assert err == "" and out.splitlines()[-1].startswith("12 records checked")
    rows = pq.read_table(tmp_path / "out").to_pylist()
    assert sorted(r["record"] for r in rows) == list(range(1, 13))
    assert {r["file"] for r in rows} == {"d.jsonl"}  # the name as given
    status = main(["validate", "blank.jsonl", "--field", "text",
                   "--engine", "ray", "--output", "none"])  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 0 and err == "" and out.splitlines()[-1].startswith("0 records checked")


def test_ray_accounts_for_hostile_records_and_pieces_as_the_local_engine_does(
    ray_local, tmp_path, capsys
):
    from tests.support.dataset_hostile import build

    counts = build(tmp_path / "in")
    outputs = []
    for engine in ("local", "ray"):
        output = tmp_path / f"{engine}.parquet"
        status = main(["validate", str(tmp_path / "in"), "--field", "text",
                       "--engine", engine, "--output", str(output)])  # fmt: skip
        out, err = capsys.readouterr()
        assert status == 1 and err == "", err
        assert out.splitlines()[-1].startswith(f"{sum(counts.values())} records checked")
        outputs.append(pq.read_table(output).to_pylist())
    assert len(outputs[0]) == sum(counts.values()) and outputs[0] == outputs[1]


@pytest.fixture(scope="module")
def mask_shards(tmp_path_factory):
    """Training records in three Parquet shards of two row groups each: exact masks, masks
    shifted by one, everything trained, a record without a mask and one without ids."""
    from harmony_grammar.training.importers import import_record
    from harmony_grammar.training.render import render_training

    root = tmp_path_factory.mktemp("mask-shards")
    ids_column: list[object] = []
    masks: list[object] = []
    for i in range(60):
        chat = [{"role": "user", "content": f"Weather {i}?"}]
        chat.append({"role": "assistant", "content": f"Sunny, {i} °C.", "thinking": "Easy."})
        conversation = import_record({"messages": chat}).conversation
        assert conversation is not None
        example = render_training(conversation, train_on="all")
        mask = list(example.assistant_masks)
        kind = i % 4
        if kind == 1:
            mask = [0, *mask[:-1]]
        elif kind == 2:
            mask = [1] * len(mask)
        ids_column.append(list(example.input_ids))
        masks.append(mask)
    masks[9] = None  # no mask
    ids_column[13] = None  # no ids
    table = pa.table({"input_ids": ids_column, "assistant_masks": masks})
    for n, start in enumerate(range(0, 60, 20)):
        pq.write_table(table.slice(start, 20), root / f"part-{n}.parquet", row_group_size=10)
    return root


def test_audit_masks_gives_the_same_audit_on_every_engine(
    ray_local, mask_shards, tmp_path, capsys
):
    """``audit-masks`` in one process, in two, and on Ray Data: the same records in the same
    order with the same audits, and the same summary."""
    runs = {}
    for name, options in (
        ("local-1", ["--jobs", "1"]),
        ("local-2", ["--jobs", "2"]),
        ("ray", ["--engine", "ray", "--jobs", "2"]),
    ):
        output = tmp_path / f"{name}.jsonl"
        status = main(["audit-masks", str(mask_shards), "--format", "json",
                       "--output", str(output), *options])  # fmt: skip
        summary = json.loads(capsys.readouterr().out)
        runs[name] = (status, summary, output.read_text(encoding="utf-8").splitlines())
    assert runs["local-1"] == runs["local-2"] == runs["ray"]
    status, summary, lines = runs["local-1"]
    rows = [json.loads(line) for line in lines]
    assert status == 1 and summary["records"] == len(rows) == 60
    assert [(r["file"].rsplit("/", 1)[-1], r["record"]) for r in rows] == [
        (f"part-{n}.parquet", k) for n in range(3) for k in range(1, 21)
    ]
    found = {f["code"]: f["records"] for f in summary["findings"]}
    assert found["mask-invalid"] == 1 and found["undecodable"] == 1
    assert found["off-by-one"] == 13  # every fourth from the second, less records 9 and 13
    assert found["prompt-trained"] == 15
    assert rows[9]["findings"] == ["mask-invalid"] and rows[13]["findings"] == ["undecodable"]
