"""Dataset validation: completions per second over a synthetic JSONL, against openai-harmony.

    python benchmarks/bench_validate.py [--records 100000] [--jobs 2]

Generates ``--records`` logged completions (the model's output after ``<|start|>assistant``:
analysis then a final answer or a tool call; about 5% with a deviation) into a JSONL file in
a temporary directory, then reads the same file three ways in one run:

* ours: :func:`~harmony_grammar.validation.engine.validate_local` on the file's pieces (the
  core of ``harmony-grammar validate --jsonl text --completion``, output aside): parse plus every rule, with one job and with ``--jobs``;
* openai-harmony: each line's JSON decoded, the text encoded with
  ``encode(text, allowed_special="all")`` and parsed by
  ``parse_messages_from_completion_tokens`` (a parse only; a failure raises);
* openai-harmony on pre-encoded ids (the parse alone, tokenization excluded), on the first
  ``--sample`` records to keep the run under five minutes on two cores.

Ratios are ours over openai-harmony's throughput (above 1 means we are faster).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from _common import openai_harmony_encoding

from harmony_grammar.data.pieces import plan
from harmony_grammar.format.options import ParseOptions
from harmony_grammar.format.vocabulary import load_encoding
from harmony_grammar.validation.batch import BatchOptions
from harmony_grammar.validation.engine import validate_local

_CITIES = ["Paris", "Oslo", "Lima", "Kyoto", "Accra", "Quito", "Perth", "Turin"]


def _completion(rng: random.Random) -> str:
    city = rng.choice(_CITIES)
    thought = f"The user asks about the weather in {city}. " * rng.randint(1, 6)
    analysis = f"<|channel|>analysis<|message|>{thought}<|end|>"
    roll = rng.random()
    if roll < 0.60:
        answer = f"It is {rng.randint(-5, 35)} °C and {rng.choice(['sunny', 'rainy'])} in {city}."
        return f"{analysis}<|start|>assistant<|channel|>final<|message|>{answer}<|return|>"
    arguments = json.dumps({"city": city, "unit": rng.choice(["celsius", "fahrenheit"])})
    channel = "analysis" if roll > 0.95 else "commentary"  # 5%: a call on analysis (HG202)
    return (
        f"{analysis}<|start|>assistant<|channel|>{channel} to=functions.get_weather"
        f" <|constrain|>json<|message|>{arguments}<|call|>"
    )


def _write_dataset(path: Path, records: int) -> None:
    rng = random.Random(4)
    with path.open("w", encoding="utf-8") as out:
        for n in range(records):
            out.write(json.dumps({"id": n, "text": _completion(rng)}) + "\n")


def _ours(path: Path, jobs: int) -> tuple[float, int, int]:
    options = BatchOptions(field="text", parse=ParseOptions(start="completion"))
    start = time.perf_counter()
    count = flagged = 0
    for batch in validate_local(plan(str(path), ["text"]).pieces, options, jobs=jobs):
        count += len(batch)
        flagged += sum(1 for codes in batch.columns["codes"] if codes)
    return time.perf_counter() - start, count, flagged


def _theirs(path: Path, pre_encoded: bool, sample: int = 0) -> tuple[float, int, int]:
    import openai_harmony

    oh = openai_harmony_encoding()
    tiktoken_encoding = load_encoding()
    role = openai_harmony.Role.ASSISTANT
    lines = path.read_text(encoding="utf-8").splitlines()[:sample] if pre_encoded else None
    ids = (
        [
            tiktoken_encoding.encode(json.loads(line)["text"], allowed_special="all")
            for line in lines
        ]
        if lines is not None
        else None
    )
    start = time.perf_counter()
    count = errors = 0
    if ids is not None:
        for record in ids:
            count += 1
            try:
                oh.parse_messages_from_completion_tokens(record, role)
            except Exception:  # openai-harmony reports a malformed stream by raising
                errors += 1
    else:
        with path.open("rb") as stream:
            for line in stream:
                text = json.loads(line)["text"]
                tokens = tiktoken_encoding.encode(text, allowed_special="all")
                count += 1
                try:
                    oh.parse_messages_from_completion_tokens(tokens, role)
                except Exception:
                    errors += 1
    return time.perf_counter() - start, count, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sample", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hg-bench-") as directory:
        path = Path(directory) / "completions.jsonl"
        _write_dataset(path, args.records)
        size = path.stat().st_size
        print(f"{args.records:,} completions, {size / 1e6:.1f} MB of JSONL")
        runs = {
            "openai-harmony (json + encode + parse)": _theirs(path, pre_encoded=False),
            "openai-harmony (parse of pre-encoded ids)": _theirs(path, True, args.sample),
            "ours, --jobs 1 (json + parse + rules)": _ours(path, 1),
            f"ours, --jobs {args.jobs} (json + parse + rules)": _ours(path, args.jobs),
        }
    rates = {}
    for name, (seconds, count, flagged) in runs.items():
        assert count in (args.records, min(args.sample, args.records)), (name, count)
        rates[name] = count / seconds
        print(f"  {name:<44} {seconds:7.1f} s  {rates[name]:9,.0f} /s  ({flagged:,} flagged)")
    baseline, parse_only = list(rates.values())[:2]
    for name, rate in list(rates.items())[2:]:
        print(
            f"  ratio {name.split(' (')[0]}: {rate / baseline:.2f}x openai-harmony end to end,"
            f" {rate / parse_only:.2f}x its parse alone"
        )


if __name__ == "__main__":
    main()
