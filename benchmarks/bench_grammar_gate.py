"""Where a client's grammar is compiled: a thread with its own stack, or a worker process.

    python benchmarks/bench_grammar_gate.py [--runs 20]

The embedded engine needs the llguidance matcher in its own process (it masks every step),
so a worker process could only *probe* a grammar (compile it there, where a crash kills the
worker only) before the server compiles it again; a thread with its own stack compiles once.
This measures both on a 10-tool turn grammar and on a chain of 1,900 rules (near the gate's
limit), plus the gate's own text check, and prints medians in milliseconds.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import statistics
import time
from collections.abc import Callable

from harmony_grammar.generation.sampling import Sampler, llg_tokenizer
from harmony_grammar.generation.turn_grammar import completion_grammar
from harmony_grammar.schema.grammar_gate import grammar_limit_problem


def _probe(grammar: str) -> str:
    """In the worker: llguidance's verdict on ``grammar`` (a crash kills only the worker)."""
    import llguidance

    return str(llguidance.LLMatcher.validate_grammar(grammar, llg_tokenizer()))


def _median_ms(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


def main() -> None:
    """Print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    }
    grammars = {
        "turn grammar, 10 tools": completion_grammar({f"tool_{i}": schema for i in range(10)}),
        "chain of 1,900 rules": "%llguidance {}\nstart: r0\n"
        + "".join(f"r{i}: r{i + 1}\n" for i in range(1900))
        + 'r1900: "a"\n',
    }
    llg_tokenizer()
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        pool.submit(_probe, grammars["chain of 1,900 rules"]).result()  # warm: tokenizer built
        print("| grammar | chars | gate | own-stack thread | worker probe + build |")
        print("|---|---:|---:|---:|---:|")
        for label, text in grammars.items():
            gate = _median_ms(lambda: grammar_limit_problem(text), args.runs)
            thread = _median_ms(lambda: Sampler(text), args.runs)

            def probe_then_build(text: str = text) -> None:
                pool.submit(_probe, text).result()
                Sampler(text)

            process = _median_ms(probe_then_build, args.runs)
            print(f"| {label} | {len(text)} | {gate:.2f} | {thread:.1f} | {process:.1f} |")


if __name__ == "__main__":
    main()
