"""Datasets on three engines: records/s and peak driver memory, against openai-harmony.

    python benchmarks/bench_datasets.py [--records 1000000] [--configs local-1,ray-2,...]

Generates ``--records`` records (default one million) into Parquet shards of
``--shard-records`` rows (row groups of 10,000): a mix of conversations and logged completions
(assistant turns with their ``<|start|>assistant``), well-formed and deviating (about 25%:
no channel, stray text, a cut end, a call on analysis, arguments off the schema). Then, in one
run, each configuration runs in a fresh process (so its memory is its own) over the same
files, consuming every record's results as the CLI does:

* ``local-N``: :func:`~harmony_grammar.validation.engine.validate_local` (the data layer's
  process pool), N processes;
* ``ray-N``: :func:`~harmony_grammar.validation.engine.validate_ray` on a local Ray
  started with N CPUs (start-up timed separately);
* ``raywrite-N``: :func:`~harmony_grammar.validation.ray_output.write_results_ray`, the
  workers writing the results (``--engine ray --output DIR``) and the driver getting the
  aggregates; the time includes the write and the aggregation pass;
* ``datasets-N``: ``datasets.Dataset.map(validate_batch, batched=True, num_proc=N)`` (the
  Parquet-to-Arrow conversion ``from_parquet`` does first is timed separately);
* ``openai-harmony``: the text encoded (``allowed_special="all"``) and parsed by
  ``parse_messages_from_completion_tokens`` in one process, end to end and on pre-encoded ids
  (a parse alone), over the first ``--oh-sample`` records.

Per configuration it prints records/s, records/s per worker, the driver's peak memory (VmHWM
of the process that drives the engine, and its peak RssAnon, the part that is not mapped
files; workers are not the driver) and the machine's load average when it started, so a
reader can tell how busy the machine was.

Before and after the configurations it measures the machine's own ceiling: the same pure
Python loop in one process, then in two at once. On two idle cores two processes do about
2x the work of one in the same time; on a machine other programs share, much less, and no
engine can scale past that figure. Read the engines' 1 -> 2 worker scaling against it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT_CONFIGS = "openai-harmony,local-1,local-2,ray-1,ray-2,datasets-1,datasets-2"
_CITIES = ["Paris", "Oslo", "Lima", "Kyoto", "Accra", "Quito", "Perth", "Turin"]


def _record(rng: random.Random) -> str:
    city = rng.choice(_CITIES)
    thought = f"The user asks about the weather in {city}. " * rng.randint(1, 6)
    analysis = f"<|start|>assistant<|channel|>analysis<|message|>{thought}<|end|>"
    roll = rng.random()
    if rng.random() < 0.5:  # a conversation: system and user first
        head = (
            "<|start|>system<|message|>You are ChatGPT.\n\n# Valid channels: analysis, "
            f"commentary, final. Channel must be included for every message.<|end|>"
            f"<|start|>user<|message|>Weather in {city}?<|end|>"
        )
    else:  # a logged completion
        head = ""
    if roll < 0.05:
        return f"{head}<|start|>assistant<|message|>Sunny.<|end|>"  # no channel
    if roll < 0.10:
        return f"{head}stray {analysis}"  # text between messages
    if roll < 0.15:
        return f"{head}{analysis}<|start|>assistant<|channel|>final<|message|>cut"  # no end
    if roll < 0.65:
        answer = f"It is {rng.randint(-5, 35)} °C in {city}."
        return f"{head}{analysis}<|start|>assistant<|channel|>final<|message|>{answer}<|return|>"
    arguments = {"city": city} if roll < 0.9 else {"town": city}  # off-schema: HG180
    channel = "analysis" if roll > 0.95 else "commentary"  # call on analysis: HG202
    return (
        f"{head}{analysis}<|start|>assistant<|channel|>{channel} to=functions.get_weather"
        f" <|constrain|>json<|message|>{json.dumps(arguments)}<|call|>"
    )


TOOLS = [
    {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    }
]


def write_shards(root: Path, records: int, shard_records: int) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(17)
    paths = []
    for n, start in enumerate(range(0, records, shard_records)):
        count = min(shard_records, records - start)
        texts = [_record(rng) for _ in range(count)]
        path = root / f"part-{n:05d}.parquet"
        pq.write_table(
            pa.table({"id": list(range(start, start + count)), "text": texts}),
            path,
            row_group_size=10_000,
        )
        paths.append(str(path))
    return paths


# ---------------------------------------------------------------------------------- one config


def _peak_mb() -> float:
    """This process's peak RSS. /proc's VmHWM, not ``ru_maxrss``: Linux keeps ``ru_maxrss``
    across ``execve``, so a child would report its parent's peak from before the fork."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


class _AnonPeak:
    """The peak of RssAnon (heap, not memory-mapped files), sampled every 0.2 s: VmHWM also
    counts the pages of mapped files (``datasets`` maps its Arrow cache), which the kernel
    can drop at will."""

    def __init__(self) -> None:
        import threading

        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    @staticmethod
    def _now() -> float:
        try:
            with open("/proc/self/status", encoding="ascii") as status:
                for line in status:
                    if line.startswith("RssAnon:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, self._now())

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return max(self.peak, self._now())


def _rss_mb() -> float:
    import psutil

    return float(psutil.Process().memory_info().rss) / 2**20


def _start_ray(workers: int) -> float:
    """Start a local Ray with ``workers`` CPUs; the seconds it took (not timed as work)."""
    import logging

    import ray

    began = time.perf_counter()
    ray.init(
        num_cpus=workers,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.WARNING,
    )
    return round(time.perf_counter() - began, 1)


def _run_engine(config: str, root: str) -> dict[str, Any]:
    from harmony_grammar.data.pieces import plan
    from harmony_grammar.format.options import ParseOptions
    from harmony_grammar.validation.batch import BatchOptions

    kind, _, n = config.partition("-")
    workers = int(n)
    options = BatchOptions(field="text", parse=ParseOptions(tools=TOOLS))
    units = plan(root, ["text"]).pieces
    extra: dict[str, Any] = {}
    count = failing = 0
    if kind == "local":
        from harmony_grammar.validation.engine import validate_local

        baseline = _rss_mb()
        start = time.perf_counter()
        for batch in validate_local(units, options, jobs=workers):
            count += len(batch)
            failing += batch.columns["ok"].count(False)
    elif kind == "ray":
        import ray

        from harmony_grammar.validation.engine import validate_ray

        extra["startup_s"] = _start_ray(workers)
        baseline = _rss_mb()
        start = time.perf_counter()
        for batch in validate_ray(units, options, jobs=workers):
            count += len(batch)
            failing += batch.columns["ok"].count(False)
        ray.shutdown()
    elif kind == "raywrite":
        import ray

        from harmony_grammar.validation.ray_output import write_results_ray

        extra["startup_s"] = _start_ray(workers)
        baseline = _rss_mb()
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="hg-bench-out-") as out:
            data = write_results_ray(units, options, str(Path(out) / "results"), jobs=workers)
            count, failing = data.records, data.failing
        ray.shutdown()
    else:  # datasets
        import datasets

        from harmony_grammar import validate_batch

        datasets.disable_progress_bars()
        cache = tempfile.mkdtemp(prefix="hg-bench-hf-")
        began = time.perf_counter()
        files = sorted(str(p) for p in Path(root).glob("*.parquet"))
        dataset = datasets.Dataset.from_parquet(files, cache_dir=cache)
        extra["from_parquet_s"] = round(time.perf_counter() - began, 1)
        baseline = _rss_mb()
        start = time.perf_counter()
        mapped = dataset.map(
            validate_batch,
            batched=True,
            batch_size=256,
            num_proc=workers if workers > 1 else None,
            fn_kwargs={"field": "text", "tools": TOOLS},
            remove_columns=["text"],
            cache_file_name=str(Path(cache) / "mapped.arrow"),
        )
        for column in mapped.with_format("arrow").iter(batch_size=10_000):
            ok = column["ok"].to_pylist()
            count += len(ok)
            failing += ok.count(False)
    seconds = time.perf_counter() - start
    return {
        "config": config,
        "workers": workers,
        "records": count,
        "failing": failing,
        "seconds": round(seconds, 2),
        "baseline_mb": round(baseline, 1),
        **extra,
    }


def _run_openai_harmony(root: str, sample: int) -> dict[str, Any]:
    import pyarrow.parquet as pq
    from _common import openai_harmony_encoding

    from harmony_grammar.format.vocabulary import load_encoding

    oh = openai_harmony_encoding()
    encoding = load_encoding()
    texts: list[str] = []
    for path in sorted(Path(root).glob("*.parquet")):
        texts += pq.read_table(path, columns=["text"]).column("text").to_pylist()
        if len(texts) >= sample:
            break
    texts = texts[:sample]
    baseline = _rss_mb()
    start = time.perf_counter()
    ids, errors = [], 0
    for text in texts:
        tokens = encoding.encode(text, allowed_special="all")
        ids.append(tokens)
        try:
            oh.parse_messages_from_completion_tokens(tokens, None)
        except Exception:  # openai-harmony reports a malformed record by raising
            errors += 1
    end_to_end = time.perf_counter() - start
    start = time.perf_counter()
    for tokens in ids:
        with contextlib.suppress(Exception):
            oh.parse_messages_from_completion_tokens(tokens, None)
    parse_only = time.perf_counter() - start
    return {
        "config": "openai-harmony",
        "workers": 1,
        "records": len(texts),
        "failing": errors,
        "seconds": round(end_to_end, 2),
        "parse_only_s": round(parse_only, 2),
        "baseline_mb": round(baseline, 1),
    }


def _child(config: str, root: str, sample: int) -> None:
    load = os.getloadavg()[0]
    anon = _AnonPeak()
    if config == "openai-harmony":
        result = _run_openai_harmony(root, sample)
    else:
        result = _run_engine(config, root)
    result["peak_mb"] = round(_peak_mb(), 1)
    result["anon_peak_mb"] = round(anon.stop(), 1)
    result["load_before"] = round(load, 2)
    print("RESULT " + json.dumps(result), flush=True)


# ---------------------------------------------------------------------------------- the ceiling


def _spin(n: int) -> float:
    began = time.perf_counter()
    total = 0
    for i in range(n):
        total += i * i % 7
    return time.perf_counter() - began


def _ceiling(n: int = 8_000_000) -> str:
    """How much more work two processes do than one in the same time, here and now."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_spin, [1000, 1000]))  # both started
        one = pool.submit(_spin, n).result()
        began = time.perf_counter()
        list(pool.map(_spin, [n, n]))
        two = time.perf_counter() - began
    load = os.getloadavg()[0]
    return f"machine ceiling: 2 processes {2 * one / two:.2f}x one (load {load:.2f})"


# ---------------------------------------------------------------------------------- the run


def _line(r: dict[str, Any], reference: float | None) -> str:
    rate = r["records"] / r["seconds"] if r["seconds"] else 0.0
    per_worker = rate / r["workers"]
    notes = [f"{k}={r[k]}" for k in ("startup_s", "from_parquet_s") if k in r]
    if "parse_only_s" in r:
        notes.append(f"parse alone {r['records'] / r['parse_only_s']:,.0f}/s")
    ratio = f"{per_worker / reference:5.2f}x" if reference else "   — "
    return (
        f"{r['config']:<15} {r['records']:>9,} {r['seconds']:>8.1f}s {rate:>9,.0f}/s "
        f"{per_worker:>9,.0f}/s/worker {ratio} peak {r['peak_mb']:>7.1f} MB "
        f"(anon {r['anon_peak_mb']:.0f}, base {r['baseline_mb']:.0f}) "
        f"load {r['load_before']:.2f} {' '.join(notes)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--shard-records", type=int, default=100_000)
    parser.add_argument("--configs", default=DEFAULT_CONFIGS)
    parser.add_argument("--oh-sample", type=int, default=20_000)
    parser.add_argument("--data", help="reuse (or keep) the shards in this directory")
    parser.add_argument("--run", help=argparse.SUPPRESS)  # a child: one configuration
    args = parser.parse_args()
    if args.run:
        _child(args.run, args.data, args.oh_sample)
        return
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    with tempfile.TemporaryDirectory(prefix="hg-bench-ds-") as scratch:
        root = Path(args.data or scratch)
        root.mkdir(parents=True, exist_ok=True)
        if not any(root.glob("*.parquet")):
            began = time.perf_counter()
            write_shards(root, args.records, args.shard_records)
            print(f"wrote {args.records:,} records in {time.perf_counter() - began:.0f}s")
        size = sum(p.stat().st_size for p in root.glob("*.parquet"))
        print(
            f"{args.records:,} records in {len(list(root.glob('*.parquet')))} Parquet shards, "
            f"{size / 1e6:.0f} MB; {os.cpu_count()} CPUs, affinity "
            f"{len(os.sched_getaffinity(0))}"
        )
        print(_ceiling(), flush=True)
        print("config            records     time    records/s   per worker  vs OH  driver memory")
        reference = None
        for config in args.configs.split(","):
            command = [sys.executable, __file__, "--run", config, "--data", str(root)]
            command += ["--oh-sample", str(args.oh_sample)]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
            if done.returncode or not lines:
                print(f"{config}: failed ({done.returncode}): {done.stderr.strip()[-500:]}")
                continue
            result = json.loads(lines[-1].removeprefix("RESULT "))
            if config == "openai-harmony":
                reference = result["records"] / result["seconds"]
            print(_line(result, reference if config != "openai-harmony" else None), flush=True)
        print(_ceiling())
        print(
            "vs OH: records/s per worker over openai-harmony's end-to-end records/s in one "
            "process (encode + parse); peak = the driver's VmHWM, anon = its peak RssAnon"
        )


if __name__ == "__main__":
    main()
