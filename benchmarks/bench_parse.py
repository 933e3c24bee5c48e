"""Batch parsing: token ids against openai-harmony, text throughput, and earlier rounds.

    python benchmarks/bench_parse.py [--against CHECKOUT ...] [--n N] [--rounds R]

openai-harmony's ``parse_messages_from_completion_tokens`` and our ``parse`` read the same
token streams in the same run; the ratio is openai-harmony's time over ours (above 1 means
we are faster).

``--against`` names checkouts of other commits (``git worktree add --detach /tmp/r3
72cd079``): then only the per-input comparison runs. ``N`` well-formed inputs (the
generator of ``tests/support/mangler.py``, half conversations and half completions, seed 1,
as ``bench_lossless.py``'s speed section) are parsed strict and lenient by this checkout and
each other one, in child processes whose rounds alternate (``_against.py``); the table gives
CPU microseconds per input (best round), each checkout's strict time over the first
``--against`` checkout's, and lenient over strict. Issue 39's targets: strict at most 0.8x
round 3 (72cd079), lenient at most 1.3x strict.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from _against import time_checkouts
from _common import (
    best_of,
    ids_of,
    long_analysis_and_call,
    many_short_messages,
    openai_harmony_encoding,
)

from harmony_grammar import parse

ROOT = Path(__file__).resolve().parents[1]


def against(checkouts: list[str], count: int, rounds: int) -> None:
    """This checkout's strict and lenient ``parse`` per input against ``checkouts``."""
    sys.path.insert(0, str(ROOT))
    from tests.support.mangler import random_completion, random_conversation

    rng = random.Random(1)
    samples = [random_conversation(rng) if i % 2 else random_completion(rng) for i in range(count)]
    inputs = [(sample.text, sample.start) for sample in samples]
    names = [str(ROOT), *checkouts]
    size = sum(len(text) for text, _ in inputs) / len(inputs)
    print(f"{len(inputs):,} well-formed inputs ({size:.0f} characters each on average),")
    print(f"CPU us per input, best of {rounds} alternating rounds\n")
    best = time_checkouts(names, inputs, rounds)
    base = best[(checkouts[0], "strict")]
    print("| checkout | strict | lenient | strict / first --against | lenient / strict |")
    print("|---|---:|---:|---:|---:|")
    for name in names:
        strict, lenient = best[(name, "strict")], best[(name, "lenient")]
        label = "this checkout" if name == str(ROOT) else name
        print(
            f"| {label} | {strict * 1e6:.1f} | {lenient * 1e6:.1f} | {strict / base:.2f} |"
            f" {lenient / strict:.2f} |"
        )


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--against", nargs="+", metavar="CHECKOUT", default=[])
    options.add_argument("--n", type=int, default=2000, help="inputs (with --against)")
    options.add_argument("--rounds", type=int, default=7, help="rounds (with --against)")
    args = options.parse_args()
    if args.against:
        against(args.against, args.n, args.rounds)
        return
    import openai_harmony

    oh = openai_harmony_encoding()
    workloads = {
        "long analysis + tool call (completion)": (long_analysis_and_call(), "completion"),
        "200 short messages (conversation)": (many_short_messages(200), "conversation"),
    }
    print("batch parse of token ids, median per stream")
    for name, (text, start) in workloads.items():
        ids = ids_of(text)
        role = openai_harmony.Role.ASSISTANT if start == "completion" else None
        ours = parse(ids, start=start)
        assert ours.ok, ours.diagnostics
        theirs = oh.parse_messages_from_completion_tokens(ids, role)
        assert len(theirs) == len(ours.messages)
        t_ours = best_of(lambda: parse(ids, start=start))
        t_theirs = best_of(lambda: oh.parse_messages_from_completion_tokens(ids, role))
        print(
            f"  {name}: {len(ids)} tokens; harmony-grammar {t_ours * 1e3:.3f} ms, "
            f"openai-harmony {t_theirs * 1e3:.3f} ms, speed-up x{t_theirs / t_ours:.1f}"
        )
    print("text parsing throughput")
    for name, (text, start) in workloads.items():
        big = text if start == "completion" else text * 5
        t = best_of(lambda: parse(big, start=start))
        size = len(big.encode("utf-8"))
        print(f"  {name}: {size / t / 1e6:.1f} MB/s ({size} bytes in {t * 1e3:.2f} ms)")


if __name__ == "__main__":
    main()
