"""audit-masks: records audited per second, with the peers that read the same records.

Run ``python benchmarks/bench_audit.py [--records 2000] [--configs local-1,local-2,ray-1,ray-2]``.
On ``--records`` training
examples (bench_prepare's records: 1 to 3 turns, tool loops, reasoning; ids and masks from
``render_training``), in one run, it prints records per second of

1. ``audit_batch`` (cut into segments, re-render with ``render_training`` for the exact mask,
   run the findings): the audit's own work, in memory;
2. ``validate_batch`` on the same ids column: the parse and rule checks of ``validate``, the
   nearest peer that reads the same records (every audit parses its record once too), and
   the ratio of the two;
3. ``audit_batch`` on masks from TRL's training template (``apply_chat_template(...,
   return_assistant_tokens_mask=True)``), whose ids are re-rendered the same way;
4. the ``audit-masks`` command end to end on a Parquet file of the same records;
5. :class:`~harmony_grammar.audit.AuditTask` on the data layer's engines, as
   ``bench_datasets.py`` shows validation's: the records in Parquet shards of
   ``--shard-records`` rows, each configuration (``local-N``: the process pool with N
   processes; ``ray-N``: Ray Data on a local Ray with N CPUs, its start-up timed apart)
   consuming every audit, with records/s, records/s per worker and the load average when it
   started (a busy machine is visible).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_prepare import record

from harmony_grammar.audit import AuditOptions, AuditTask, audit_batch
from harmony_grammar.cli.main import main as cli
from harmony_grammar.data import plan, run_task
from harmony_grammar.training.importers import import_record
from harmony_grammar.training.render import render_training
from harmony_grammar.validation.batch import validate_batch


def _rate(count: int, fn: Any, passes: int = 3) -> float:
    fn()  # warm up: lazy imports, the parser's tables
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return count / best


def _rates(count: int, fns: list[Any], passes: int = 5) -> list[float]:
    """Records/s of each function, best of ``passes`` rounds that run them in turn, so that a
    busy machine slows each about as much (the ratio is what this benchmark is about)."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(passes):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return [count / b for b in best]


def _examples(count: int) -> dict[str, list[Any]]:
    ids, masks = [], []
    for i in range(count):
        conversation = import_record(record(i)).conversation
        assert conversation is not None
        example = render_training(conversation, train_on="all")
        ids.append(example.input_ids)
        masks.append(example.assistant_masks)
    return {"input_ids": ids, "assistant_masks": masks}


def _trl_examples(count: int) -> dict[str, list[Any]] | None:
    try:
        import trl

        from harmony_grammar.generation.hf import hf_tokenizer
    except ImportError:
        return None
    template = (Path(trl.__file__).parent / "chat_templates" / "gptoss_training.jinja").read_text()
    tokenizer = hf_tokenizer()
    ids, masks = [], []
    for i in range(count):
        data = record(i)
        chat = [dict(m) for m in data["messages"]]
        for m in chat:
            if m["role"] == "assistant" and "tool_calls" in m:
                m.pop("thinking", None)  # the template takes content or thinking, one call
        tools = [{"type": "function", "function": t} for t in data["tools"]]
        out = tokenizer.apply_chat_template(
            chat,
            tools=tools,
            chat_template=template,
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
        )
        ids.append(list(out["input_ids"]))
        masks.append(list(out["assistant_masks"]))
    return {"input_ids": ids, "assistant_masks": masks}


def _engines(batch: dict[str, list[Any]], configs: list[str], shard_records: int) -> None:
    """Records/s of ``AuditTask`` on each engine configuration, on Parquet shards of ``batch``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    count = len(batch["input_ids"])
    table = pa.table(batch)
    with tempfile.TemporaryDirectory() as folder:
        for n, start in enumerate(range(0, count, shard_records)):
            shard = table.slice(start, shard_records)
            pq.write_table(shard, Path(folder) / f"part-{n:04d}.parquet", row_group_size=1000)
        task = AuditTask(AuditOptions())
        pieces = plan(folder, list(task.columns)).pieces
        print(f"engines on {len(pieces)} Parquet shards of up to {shard_records:,} records:")
        for config in configs:
            kind, _, n = config.partition("-")
            workers = int(n)
            load = os.getloadavg()[0]
            started = ""
            ray: Any = None
            if kind == "ray":
                os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
                import ray

                began = time.perf_counter()
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
                         logging_level=logging.WARNING)  # fmt: skip
                started = f", start-up {time.perf_counter() - began:.1f} s (not counted)"
            begin = time.perf_counter()
            audited = sum(len(b) for b in run_task(pieces, task, engine=kind, jobs=workers))
            seconds = time.perf_counter() - begin
            if ray is not None:
                ray.shutdown()
            assert audited == count
            rate = count / seconds
            print(f"  {config:<8} {rate:9,.0f} records/s  {rate / workers:7,.0f} per worker"
                  f"  (load {load:.1f} before{started})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument(
        "--configs", default="local-1,local-2,ray-1,ray-2", help='engines to run ("": none)'
    )
    parser.add_argument("--shard-records", type=int, default=500)
    args = parser.parse_args()
    count = args.records
    batch = _examples(count)
    tokens = sum(map(len, batch["input_ids"])) / count
    options = AuditOptions()
    results = audit_batch(batch, options)
    assert all(not f for f in results["findings"]), "exact masks must have no finding"
    audit, validate = _rates(
        count,
        [lambda: audit_batch(batch, options), lambda: validate_batch(batch, field="input_ids")],
    )
    print(f"{count:,} records, {tokens:.0f} tokens on average (best of 5 alternating passes)")
    print(f"audit_batch (segments, exact mask, findings): {audit:9,.0f} records/s")
    print(f"validate_batch on the same ids (peer):        {validate:9,.0f} records/s")
    print(f"audit / validate:                             {audit / validate:9.2f}x")
    trl_batch = _trl_examples(min(count, 500))
    if trl_batch is not None:
        n = len(trl_batch["input_ids"])
        trl_rate = _rate(n, lambda: audit_batch(trl_batch, options))
        print(f"audit_batch on TRL template masks ({n}):      {trl_rate:9,.0f} records/s")
    import pyarrow as pa
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "train.parquet"
        pq.write_table(pa.table(batch), path)
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            status = cli(["audit-masks", str(path), "--format", "json"])
        seconds = time.perf_counter() - start
        assert status == 0
        print(f"audit-masks CLI on Parquet, end to end:       {count / seconds:9,.0f} records/s")
    if args.configs:
        _engines(batch, args.configs.split(","), args.shard_records)


if __name__ == "__main__":
    main()
