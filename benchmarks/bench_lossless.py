"""Lossless lenient reading, measured over engine manglings of generated Harmony.

    python benchmarks/bench_lossless.py [--count N]     # N inputs in all (default 100,000)

The generator and its manglings are ``tests/support/mangler.py``, the same as the property tests
(tests/format/test_lossless.py). For each mangling kind, over completions and conversations,
text and (a tenth of them) token ids:

* **characters lost**: characters of the input in no message and no discarded range that
  are not whitespace, plus the characters of every content that is not the input it came
  from, plus discarded characters that are not control-token debris (target 0);
* **exact**: where the mangling leaves one reading (``tests/support/mangler.expected``), the share
  read back as the original messages;
* **repair**: idempotence failures, and outputs that do not parse strictly without error.

Then lenient against strict parse time on the same well-formed inputs (target: lenient at
most 1.3x strict), CPU seconds.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harmony_grammar import parse, validate
from harmony_grammar.cli.repair import repaired_text
from harmony_grammar.format.accounting import conservation_problems
from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.lexer import split_text
from harmony_grammar.format.model import ParseResult
from tests.support.mangler import (
    MANGLINGS,
    comparable,
    expected,
    mangle,
    random_completion,
    random_conversation,
)


def characters_lost(text: str, result: ParseResult) -> int:
    """How many characters of ``text`` the ledger does not account for."""
    ledger = result.accounting
    assert ledger is not None
    covered = bytearray(len(text))
    lost = 0
    for message, spans in zip(result.messages, ledger.content, strict=True):
        if message.span is not None:
            width = message.span.end - message.span.start
            covered[message.span.start : message.span.end] = b"\x01" * width
        if "".join(text[s.start : s.end] for s in spans) != message.content:
            lost += len(message.content)  # content that is not the input it came from
    for span in ledger.discarded:
        if not all(control is not None for control, *_ in split_text(text[span.start : span.end])):
            lost += span.end - span.start  # discarded text that is not control-token debris
        covered[span.start : span.end] = b"\x01" * (span.end - span.start)
    return lost + sum(1 for i, ch in enumerate(text) if not covered[i] and not ch.isspace())


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--count", type=int, default=100_000)
    args = options.parse_args()
    kinds = sorted(MANGLINGS)
    repairs: dict[str, tuple[int, int]] = {}
    per_kind = max(1, args.count // len(kinds))
    rows = {}
    for kind in kinds:
        n = lost = problems_text = problems_ids = exact = exact_n = not_idempotent = 0
        not_strict = invalid = empty = 0
        for seed in range(per_kind):
            rng = random.Random(seed * 7919 + hash(kind) % 7919)
            sample = random_conversation(rng) if seed % 2 else random_completion(rng)
            mangled = mangle(sample, kind, rng)
            start = sample.start
            result = parse(mangled.text, start=start, strict=False)
            n += 1
            lost += characters_lost(mangled.text, result)
            problems_text += bool(conservation_problems(mangled.text, result))
            if seed % 10 == 0:
                ids = encode_harmony(mangled.text)
                problems_ids += bool(
                    conservation_problems(ids, parse(ids, start=start, strict=False))
                )
            want = expected(mangled)
            if want is not None and kind != "prose_before":
                exact_n += 1
                keep_terminator = kind not in ("drop_terminator", "strip_all", "glue_prose")
                constrain = kind not in ("strip_all", "glue_prose")
                got = [
                    comparable(m, terminator=keep_terminator, constrain=constrain)
                    for m in result.messages
                ]
                exact += got == want
            elif want is not None:
                exact_n += 1
                slot = int(mangled.detail["slot"])  # type: ignore[call-overload]
                got = [comparable(m) for m in result.messages]
                if len(got) == len(want) and got[slot][4] == want[slot][4]:
                    got[slot] = want[slot]
                exact += got == want
            if seed % 10 == 0:
                completion = start == "completion"
                once = repaired_text(result.messages, completion=completion)
                again = parse(once, start=start, strict=False)
                not_idempotent += repaired_text(again.messages, completion=completion) != once
                not_strict += bool(once) and not parse(once, start=start).ok
                report = validate(once, start=start) if once else None
                invalid += report is not None and not report.ok
                empty += not once and bool(mangled.text.strip())
        repairs[kind] = (invalid, empty)
        rows[kind] = (
            n,
            lost,
            problems_text,
            problems_ids,
            exact,
            exact_n,
            not_idempotent,
            not_strict,
        )

    total = sum(r[0] for r in rows.values())
    print(f"{total:,} mangled inputs (half completions, half conversations)\n")
    print(
        "| mangling | inputs | characters lost | ledger problems (text) | ledger problems (ids,"
        " 1 in 10) | exact (one reading) | repair not idempotent | repair output not"
        " strict-clean |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind, (n, lost, text_bad, ids_bad, exact, exact_n, idem, strict_bad) in rows.items():
        share = f"{exact:,}/{exact_n:,} ({exact / exact_n:.1%})" if exact_n else "— (ambiguous)"
        print(
            f"| {kind} | {n:,} | {lost} | {text_bad} | {ids_bad} | {share} | {idem} |"
            f" {strict_bad} |"
        )
    checked = sum(1 for _ in range(0, per_kind, 10))
    print(
        f"\nrepair, 1 input in 10 ({checked:,} per kind): outputs that re-validate with errors"
        " (the reading itself breaks a rule: text after a call, a cut call's arguments, a"
        " stripped conversation's results) / outputs empty where the input was not"
    )
    print("| mangling | re-validate with errors | empty |\n|---|---:|---:|")
    for kind, (invalid, empty) in repairs.items():
        print(f"| {kind} | {invalid} | {empty} |")
    lost_all = sum(r[1] for r in rows.values())
    print(f"\ncharacters lost, all kinds: {lost_all}")

    samples = []
    rng = random.Random(1)
    for i in range(2000):
        samples.append(random_conversation(rng) if i % 2 else random_completion(rng))

    def once(strict: bool) -> float:
        begin = time.process_time()
        for sample in samples:
            parse(sample.text, start=sample.start, strict=strict)
        return time.process_time() - begin

    # Alternating rounds, the best of each: a busy machine moves both alike.
    once(True), once(False)
    t_strict = t_lenient = float("inf")
    for _ in range(7):
        t_strict = min(t_strict, once(True))
        t_lenient = min(t_lenient, once(False))
    size = sum(len(s.text) for s in samples)
    print(
        f"well-formed inputs ({len(samples):,}, {size / 1e6:.2f} MB): strict "
        f"{t_strict / len(samples) * 1e6:.1f} us each, lenient "
        f"{t_lenient / len(samples) * 1e6:.1f} us; lenient/strict {t_lenient / t_strict:.2f}"
        " (target <= 1.3)"
    )


if __name__ == "__main__":
    main()
