"""Latency of the xgrammar structural tag: compile time and per-token mask time.

    python benchmarks/bench_xgrammar_tag.py

The same 10 tools and turn as bench_grammar_latency.py, as an xgrammar structural tag
(``completion_grammar(tools, target="xgrammar")``) over an o200k_harmony TokenizerInfo built
once (not timed): the time from the tools to the compiled grammar (cold, then warm from
xgrammar's cache), and the median and p99 of ``fill_next_token_bitmask`` while the turn is
consumed token by token. xgrammar's own ``get_model_structural_tag("harmony", ...)`` is timed
on a turn it accepts, for comparison. Target: median mask in single-digit microseconds.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import xgrammar

from benchmarks.bench_grammar_latency import TURN, tools
from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.generation.turn_grammar import completion_grammar
from harmony_grammar.generation.xgrammar_tag import harmony_tokenizer_info

# xgrammar's built-in tag wants "<|constrain|>json" without the space before it.
BUILTIN_TURN = TURN.replace(" <|constrain|>", "<|constrain|>")


def masks(compiled: Any, info: Any, ids: list[int]) -> list[float]:
    matcher = xgrammar.GrammarMatcher(compiled)
    bitmask = xgrammar.allocate_token_bitmask(1, info.vocab_size)
    times = []
    for token in ids:
        started = time.perf_counter()
        matcher.fill_next_token_bitmask(bitmask)
        times.append(time.perf_counter() - started)
        assert matcher.accept_token(token), token
        if matcher.is_terminated():
            break
    return times


def report(name: str, times: list[float]) -> None:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(
        f"{name}: {len(times)} masks, median {statistics.median(times) * 1e6:.1f} us,"
        f" p99 {p99 * 1e6:.1f} us, max {ordered[-1] * 1e6:.1f} us"
    )


def main() -> None:
    info = harmony_tokenizer_info()
    schemas = tools()
    compiler = xgrammar.GrammarCompiler(info, cache_enabled=True)
    started = time.perf_counter()
    tag = completion_grammar(schemas, target="xgrammar")
    compiled = compiler.compile_structural_tag(tag)
    cold = time.perf_counter() - started
    started = time.perf_counter()
    compiler.compile_structural_tag(completion_grammar(schemas, target="xgrammar"))
    warm = time.perf_counter() - started
    print(f"structural tag: {len(tag)} characters of JSON")
    print(f"tools -> compiled tag: cold {cold * 1e3:.1f} ms, warm {warm * 1e3:.2f} ms")
    ids = encode_harmony(TURN)
    runs = [masks(compiled, info, ids) for _ in range(20)]
    report("ours, per-token mask", [t for run in runs for t in run])

    builtin = xgrammar.get_model_structural_tag(
        "harmony", tools=[{"type": "function", "function": t} for t in schemas]
    ).model_dump_json()
    started = time.perf_counter()
    builtin_compiled = compiler.compile_structural_tag(builtin)
    print(f"xgrammar's harmony tag: compiled in {(time.perf_counter() - started) * 1e3:.1f} ms")
    builtin_ids = encode_harmony(BUILTIN_TURN)
    runs = [masks(builtin_compiled, info, builtin_ids) for _ in range(20)]
    report("xgrammar's harmony tag, per-token mask", [t for run in runs for t in run])


if __name__ == "__main__":
    main()
