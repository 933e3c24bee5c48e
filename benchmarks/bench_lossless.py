"""Lossless lenient reading, measured over manglings, header shapes and an alphabet fuzzer.

    python benchmarks/bench_lossless.py [--n N] [--workers W]   # N inputs in all (default 100,000)

Two generators, neither of them the parser's: ``tests/support/mangler.py`` (engine manglings of
generated Harmony, the header shapes that made lenient reading cascade among them) and
``tests/support/harmony_alphabet.py`` (random mixes of Harmony's alphabet, kind ``fuzz``). The same generators drive the property tests (tests/format/test_lossless.py,
tests/format/test_field_conservation.py). Inputs are split evenly over the kinds, half completions
and half conversations (one well-formed sample per seed, mangled by every kind), and run in
``W`` processes (default: every CPU); ``--n 1000000`` is the issue's size. For each kind, text (and 1 input in 10 as token ids):

* **missing**: inputs with characters in no message field, by the independent check
  (``tests/support/field_check.py``, which never reads the ledger), and how many characters
  (target 0); **extra**: inputs with characters read twice or made up; **order**: inputs
  whose contents are not in input order;
* **ledger**: inputs where ``conservation_problems`` finds a problem (text; ids 1 in 10);
* **exact**: where the mangling leaves one reading, the share read back as the originals
  (``tests/support/mangler.recovered``, as the property tests compare them);
* **repair** (1 in 10): repairs that raise, completions refused because their first
  message is not the assistant's (a decision, docs/parser.md, not a failure), outputs that
  are not idempotent, or do not parse strictly;
* **time**: ``conservation_problems`` time against parse time (the ledger check must stay
  linear: a small multiple of parsing at any size).

Then lenient against strict parse time on the same well-formed inputs (target: lenient at
most 1.3x strict), CPU seconds; and ``conservation_problems`` on one conversation of
20,000 messages.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harmony_grammar import parse
from harmony_grammar.cli.repair import NotACompletionError, repaired_text
from harmony_grammar.format.accounting import conservation_problems
from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.model import ParseResult
from harmony_grammar.format.vocabulary import load_encoding
from tests.support.field_check import field_check
from tests.support.harmony_alphabet import as_ids, as_text, random_pieces
from tests.support.mangler import (
    MANGLINGS,
    Mangled,
    mangle,
    random_completion,
    random_conversation,
    recovered,
)

FUZZ = "fuzz"
KINDS = (*sorted(MANGLINGS), FUZZ)
#: How many seeds a worker takes at once (each seed is one input of every kind).
BATCH = 125

Input = tuple[str, str, list[int] | None, str, Mangled | None]


def _inputs(seed: int) -> Iterator[Input]:
    """Input ``seed`` of every kind, as ``(kind, text, ids or None, start, mangled or None)``.

    One well-formed sample per seed, mangled by every kind (each with its own random
    stream): drawing a sample costs more than mangling it, and each kind still sees
    samples drawn independently, seed by seed."""
    start = "conversation" if seed % 2 else "completion"
    ids_too = seed % 10 == 0
    rng = random.Random(f"sample:{seed}")
    sample = random_conversation(rng) if seed % 2 else random_completion(rng)
    for kind in KINDS:
        rng = random.Random(f"{kind}:{seed}")
        if kind == FUZZ:
            pieces = random_pieces(rng)
            yield kind, as_text(pieces), as_ids(pieces) if ids_too else None, start, None
            continue
        mangled = mangle(sample, kind, rng)
        ids = encode_harmony(mangled.text) if ids_too else None
        yield kind, mangled.text, ids, start, mangled


Rows = dict[str, Counter[str]]
Worst = dict[str, tuple[int, str]]


def run_batch(job: tuple[int, int]) -> tuple[Rows, Worst]:
    """Measure the inputs of seeds ``[first, last)`` of every kind: the counts per kind and,
    per kind, the shortest input that lost characters (its length and text)."""
    first, last = job
    rows: Rows = {kind: Counter() for kind in KINDS}
    worst: Worst = {}
    for seed in range(first, last):
        for kind, text, ids, start, mangled in _inputs(seed):
            lost = _measure(rows[kind], text, ids, start, mangled)
            if lost and (kind not in worst or len(text) < worst[kind][0]):
                worst[kind] = (len(text), text)
    return rows, worst


def _measure(
    counts: Counter[str], text: str, ids: list[int] | None, start: str, mangled: Mangled | None
) -> bool:
    """Measure one input into ``counts``; whether it lost characters."""
    clock = time.process_time  # CPU time: a busy machine does not move it
    begin = clock()
    result = parse(text, start=start, strict=False)
    middle = clock()
    problems = conservation_problems(text, result)
    counts["parse_us"] += int((middle - begin) * 1e6)
    counts["check_us"] += int((clock() - middle) * 1e6)
    counts["inputs"] += 1
    counts["ledger"] += bool(problems)
    check = field_check(text, result)
    counts["missing"] += bool(check.missing)
    counts["missing_chars"] += check.missing_count
    counts["extra"] += bool(check.extra)
    counts["order"] += check.out_of_order
    if mangled is not None:
        exact = recovered(mangled, result.messages)
        if exact is not None:
            counts["exact_n"] += 1
            counts["exact"] += exact
    if ids is not None:
        by_ids = parse(ids, start=start, strict=False)
        counts["ids_n"] += 1
        counts["ids_ledger"] += bool(conservation_problems(ids, by_ids))
        counts["ids_missing"] += not field_check(ids, by_ids).ok
        counts.update(_repair(text, start, result))
    return bool(check.missing)


def _repair(text: str, start: str, result: ParseResult) -> Counter[str]:
    completion = start == "completion"
    out: Counter[str] = Counter()
    try:
        once = repaired_text(result.messages, completion=completion)
        again = repaired_text(
            parse(once, start=start, strict=False).messages, completion=completion
        )
    except NotACompletionError:  # refused by decision (docs/parser.md): counted apart
        out["repair_refused"] += 1
        return out
    except Exception:  # a repair that raises is a finding, not the end of the run
        out["repair_raises"] += 1
        return out
    out["repair_not_idempotent"] += again != once
    out["repair_not_strict"] += bool(once) and not parse(once, start=start).ok
    return out


def _jobs(total: int) -> list[tuple[int, int]]:
    seeds = max(1, total // len(KINDS))
    return [(first, min(first + BATCH, seeds)) for first in range(0, seeds, BATCH)]


def _share(part: int, whole: int) -> str:
    return f"{part:,}/{whole:,} ({part / whole:.1%})" if whole else "—"


def _report(rows: Rows, worst: Worst) -> None:
    total = sum(r["inputs"] for r in rows.values())
    print(f"{total:,} inputs ({len(rows)} kinds, half completions, half conversations)\n")
    print(
        "| kind | inputs | missing (inputs) | missing (chars) | extra | order | ledger (text)"
        " | ids: ledger / field check (1 in 10) | exact (one reading) | repair: raises /"
        " refused / not idempotent / not strict-clean (1 in 10) | conservation_problems /"
        " parse time |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind, r in rows.items():
        ratio = r["check_us"] / r["parse_us"] if r["parse_us"] else 0.0
        print(
            f"| {kind} | {r['inputs']:,} | {_share(r['missing'], r['inputs'])} |"
            f" {r['missing_chars']:,} | {r['extra']:,} | {r['order']:,} | {r['ledger']:,} |"
            f" {r['ids_ledger']:,} / {r['ids_missing']:,} of {r['ids_n']:,} |"
            f" {_share(r['exact'], r['exact_n']) if r['exact_n'] else '— (ambiguous)'} |"
            f" {r['repair_raises']} / {r['repair_refused']} / {r['repair_not_idempotent']}"
            f" / {r['repair_not_strict']} |"
            f" {ratio:.2f} |"
        )
    every: Counter[str] = sum(rows.values(), Counter())
    print(
        f"\nall kinds: inputs missing characters {_share(every['missing'], every['inputs'])},"
        f" {every['missing_chars']:,} characters; ledger problems {every['ledger']:,};"
        f" conservation_problems {every['check_us'] / 1e6:.1f} s against parse"
        f" {every['parse_us'] / 1e6:.1f} s (CPU, summed over workers)"
    )
    if worst:
        print("\nshortest input that loses characters, per kind:")
        for kind, (_, text) in sorted(worst.items()):
            print(f"  {kind}: {text[:300]!r}")


def _timed(function: Callable[[], object]) -> float:
    begin = time.process_time()
    function()
    return time.process_time() - begin


def _speed() -> None:
    samples = []
    rng = random.Random(1)
    for i in range(2000):
        samples.append(random_conversation(rng) if i % 2 else random_completion(rng))

    def once(strict: bool) -> float:
        return _timed(lambda: [parse(s.text, start=s.start, strict=strict) for s in samples])

    # Alternating rounds, the best of each: a busy machine moves both alike.
    once(True), once(False)
    t_strict = t_lenient = float("inf")
    for _ in range(7):
        t_strict = min(t_strict, once(True))
        t_lenient = min(t_lenient, once(False))
    size = sum(len(s.text) for s in samples)
    print(
        f"\nwell-formed inputs ({len(samples):,}, {size / 1e6:.2f} MB): strict "
        f"{t_strict / len(samples) * 1e6:.1f} us each, lenient "
        f"{t_lenient / len(samples) * 1e6:.1f} us; lenient/strict {t_lenient / t_strict:.2f}"
        " (target <= 1.3)"
    )
    long = "".join(samples[1].text for _ in range(20_000 // len(samples[1].messages) + 1))
    result = parse(long, start="conversation", strict=False)
    t_parse = _timed(lambda: parse(long, start="conversation", strict=False))
    t_check = _timed(lambda: conservation_problems(long, result))
    print(
        f"one conversation of {len(result.messages):,} messages ({len(long) / 1e6:.1f} MB):"
        f" parse {t_parse:.2f} s, conservation_problems {t_check:.2f} s"
    )


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--n", "--count", dest="n", type=int, default=100_000)
    options.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    options.add_argument("--no-speed", action="store_true", help="skip the timing section")
    args = options.parse_args()
    rows: Rows = {kind: Counter() for kind in KINDS}
    worst: Worst = {}
    jobs = _jobs(args.n)
    # Load the vocabulary once, before the workers fork: each would load it again.
    load_encoding()
    field_check([0], parse(""))
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            results = list(pool.map(run_batch, jobs))
    else:
        results = [run_batch(job) for job in jobs]
    for counts, shortest in results:
        for kind, row in counts.items():
            rows[kind].update(row)
        for kind, found in shortest.items():
            if kind not in worst or found[0] < worst[kind][0]:
                worst[kind] = found
    _report(rows, worst)
    if not args.no_speed:
        _speed()


if __name__ == "__main__":
    main()
