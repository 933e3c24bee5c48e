"""Compile time against schema size, and over the MaskBench dev split: this compiler vs
llguidance's %json vs xgrammar, all in one run.

    python benchmarks/bench_schema_compile.py [--scale F] [--dev] [--no-shapes] [--targets]
        [--data DIR] [--stride N] [--generated N]

Every engine is timed over the same stage: a schema in, a grammar object ready to compute
token masks out (with flexible whitespace, which is what llguidance's and xgrammar's JSON
modes default to):

- ours: ``schema_to_grammar(target="llguidance", whitespace="flexible")``, then
  ``llguidance.LLMatcher`` on that text (llguidance parses and compiles it: the cost a caller
  pays before the first mask);
- llguidance: ``LLMatcher`` on ``grammar_from_json_schema`` (its Rust JSON-schema compiler
  runs inside);
- xgrammar (skipped when not installed): ``Grammar.from_json_schema`` then
  ``GrammarCompiler.compile_grammar``, over a 256-token byte vocabulary (like llguidance's
  byte tokenizer here), one thread, no cache.

A second ``validate_grammar`` parse is in nobody's time. Schemas an engine refuses or fails on
print as ``-`` and are left out of its total; ``--dev`` also totals the schemas every engine
built, the like-for-like comparison.

For each shape the issue names (nested ``items``, ``enum`` of strings, ``anyOf``/``oneOf`` of
consts, optional properties, ``prefixItems``) and each size, every engine compiles the schema
once; the table prints seconds and, for ours, the ratio to the previous (half) size: linear
compile time shows as ratios near 2 (the target: at most 2.5). ``--scale`` multiplies every
size (0.25 for a quick look).

``--targets`` times issue 27's schema bombs (a root ``$ref`` into ``anyOf[ref, ref]`` chains,
closed objects with every property required, plain properties, big enums, long
``prefixItems``) through ``schema_to_grammar`` alone on each of our targets (lark,
llguidance, gbnf, xgrammar), in CPU seconds, with the ratio to the half size and the peak
traced memory.

By default (``--generated N``, 200; 0 for none) every engine also compiles tool schemas the
compiler was never tuned on: drawn, seeded, in the shapes real tools use
(``tests/support/tool_schemas.py``), plus one large schema per ten (an object of ten of them);
with ``--dev`` the dev split is the second column of the closing ratio table (ours and
xgrammar over llguidance's ``%json``, on the schemas every engine built). Issue 43's target:
ours at most 3x llguidance.

``--dev`` times every MaskBench dev-split schema (``--stride N``: every N-th) and reports, for
ours, where the time goes: the meta-schema check, compiling to the IR, printing the text and
llguidance's parse of it; the per-schema distribution; and the ten slowest schemas. Wall and
CPU seconds are both printed, with the machine's load average: on a shared machine CPU
seconds are the steadier figure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import llguidance

from harmony_grammar.schema import compile_schema, schema_to_grammar
from harmony_grammar.schema import compiler as compiler_module
from harmony_grammar.schema.emit_llguidance import emit_llguidance
from harmony_grammar.schema.matcher import byte_tokenizer

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "maskbench-dev"
OURS = "harmony-grammar"


def nested_items(n: int) -> Any:
    schema: Any = {"type": "integer"}
    for _ in range(n):
        schema = {"type": "array", "items": schema}
    return schema


SHAPES: dict[str, tuple[Callable[[int], Any], list[int]]] = {
    "nested items": (nested_items, [25, 50, 100]),
    "enum of strings": (lambda n: {"enum": [f"value-{i}" for i in range(n)]}, [2500, 5000, 10000]),
    "anyOf consts": (lambda n: {"anyOf": [{"const": i} for i in range(n)]}, [500, 1000, 2000]),
    "oneOf consts": (lambda n: {"oneOf": [{"const": i} for i in range(n)]}, [500, 1000, 2000]),
    "optional properties": (
        lambda n: {
            "type": "object",
            "properties": {f"p{i}": {"type": "integer"} for i in range(n)},
        },
        [250, 500, 1000],
    ),
    "prefixItems": (
        lambda n: {"type": "array", "prefixItems": [{"type": "integer"}] * n},
        [250, 500, 1000],
    ),
    # Issue 27's bombs: exponential before (depth 30 never finished), linear now.
    "root $ref anyOf chain": (lambda n: ref_chain(n), [25, 50, 100]),
}


def ref_chain(depth: int) -> Any:
    """A root ``$ref`` into ``anyOf[ref, ref]`` ``depth`` levels deep."""
    defs: dict[str, Any] = {
        f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
        for i in range(depth)
    }
    defs[f"d{depth}"] = {"type": "string"}
    return {"$ref": "#/$defs/d0", "$defs": defs}


def _required(n: int) -> Any:
    names = [f"p{i}" for i in range(n)]
    props = {name: {"type": "integer"} for name in names}
    return {"type": "object", "properties": props, "required": names}


#: Issue 27's shapes on every target of ours: (make, sizes, closed objects).
TARGET_SHAPES: dict[str, tuple[Callable[[int], Any], list[int], bool]] = {
    "root $ref anyOf chain": (ref_chain, [25, 50, 100], False),
    "closed, all required": (_required, [2000, 4000, 8000], True),
    "plain properties": (SHAPES["optional properties"][0], [1000, 2000, 4000], False),
    "enum of strings": (SHAPES["enum of strings"][0], [25000, 50000, 100000], False),
    "prefixItems": (SHAPES["prefixItems"][0], [2500, 5000, 10000], False),
}
TARGETS = ("lark", "llguidance", "gbnf", "xgrammar")


def _ready(text: str) -> Any:
    """llguidance's matcher for ``text``: parsed, compiled, ready for its first mask."""
    matcher = llguidance.LLMatcher(byte_tokenizer(), text, log_level=0)
    if matcher.is_error():
        raise ValueError(matcher.get_error())
    return matcher


def ours(schema: Any) -> Any:
    return _ready(schema_to_grammar(schema, target="llguidance", whitespace="flexible"))


def llg(schema: Any) -> Any:
    return _ready(llguidance.LLMatcher.grammar_from_json_schema(schema))


def _xgrammar_build() -> Callable[[Any], Any] | None:
    try:
        import xgrammar
    except ImportError:
        print("xgrammar is not installed: skipped (pip install --no-deps xgrammar==0.2.9)")
        return None
    vocab = xgrammar.TokenizerInfo(
        [bytes([b]) for b in range(256)], vocab_type=xgrammar.VocabType.RAW
    )
    compiler = xgrammar.GrammarCompiler(vocab, max_threads=1, cache_enabled=False)

    def xgr(schema: Any) -> Any:
        grammar = xgrammar.Grammar.from_json_schema(
            json.dumps(schema), any_whitespace=True, strict_mode=False
        )
        return compiler.compile_grammar(grammar)

    return xgr


def engines() -> dict[str, Callable[[Any], Any]]:
    out: dict[str, Callable[[Any], Any]] = {OURS: ours, "llguidance %json": llg}
    xgr = _xgrammar_build()
    if xgr is not None:
        out["xgrammar 0.2.9"] = xgr
    return out


def timed(build: Callable[[Any], Any], schema: Any) -> tuple[float, float] | None:
    """(wall, CPU) seconds for one build; None when the engine refuses or fails."""
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        build(schema)
    except Exception:  # a refusal or an engine's own failure: no time to report
        return None
    return time.perf_counter() - wall, time.process_time() - cpu


def shapes_table(runs: dict[str, Callable[[Any], Any]], scale: float) -> None:
    print(f"{'shape':22} {'size':>6} " + " ".join(f"{n:>17}" for n in runs) + "  ours x prev")
    for shape, (make, sizes) in SHAPES.items():
        previous: float | None = None
        for size in (max(1, round(s * scale)) for s in sizes):
            schema = make(size)
            times = {name: timed(build, schema) for name, build in runs.items()}
            cells = " ".join(f"{'-' if t is None else f'{t[0]:.3f} s':>17}" for t in times.values())
            mine = times[OURS]
            ratio = "" if previous is None or mine is None else f"{mine[0] / previous:8.2f}"
            print(f"{shape:22} {size:6} {cells}  {ratio}")
            previous = None if mine is None else mine[0]


def targets_table(scale: float) -> None:
    """``schema_to_grammar`` alone (no engine) on each target: CPU seconds, the ratio to the
    previous (half) size, and the peak traced memory (tracemalloc, for the gbnf target, in a
    separate untimed build: tracing slows allocation)."""
    import tracemalloc

    print(f"{'shape':22} {'size':>7} " + " ".join(f"{t:>16}" for t in TARGETS) + "  peak MB")
    for shape, (make, sizes, closed) in TARGET_SHAPES.items():
        previous: dict[str, float] = {}
        for size in (max(1, round(s * scale)) for s in sizes):
            schema = make(size)
            cells = []
            for target in TARGETS:
                start = time.process_time()  # CPU: the steadier figure on a shared machine
                try:
                    schema_to_grammar(schema, target=target, closed_objects=closed)  # type: ignore[arg-type]
                    took: float | None = time.process_time() - start
                except Exception:  # a refusal: no time to report
                    took = None
                ratio = ""
                if took is not None and target in previous:
                    ratio = f" x{took / previous[target]:.1f}"
                cells.append(f"{'-' if took is None else f'{took:.2f} s{ratio}':>16}")
                if took is not None:
                    previous[target] = took
            tracemalloc.start()
            with contextlib.suppress(Exception):  # a refusal: its memory is still measured
                schema_to_grammar(schema, target="gbnf", closed_objects=closed)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            print(f"{shape:22} {size:7} {' '.join(cells)}  {peak / 1e6:7.0f}")


class _Phases:
    """Our build, phase by phase: the meta-schema check (timed where the compiler calls it),
    the rest of compiling to the IR, printing llguidance's text, llguidance's parse."""

    NAMES = ("meta-schema check", "compile to IR", "print text", "llguidance parse")

    def __init__(self) -> None:
        self.check = 0.0
        real = compiler_module.check_schema

        def check_schema(*args: Any) -> None:
            start = time.perf_counter()
            try:
                real(*args)
            finally:
                self.check += time.perf_counter() - start

        compiler_module.check_schema = check_schema  # type: ignore[assignment]

    def __call__(self, schema: Any) -> dict[str, float]:
        """Seconds per phase (wall); raises like ``ours`` on a refusal."""
        self.check = 0.0
        start = time.perf_counter()
        grammar = compile_schema(schema, whitespace="flexible")
        compiled = time.perf_counter()
        text = emit_llguidance(grammar)
        printed = time.perf_counter()
        _ready(text)
        done = time.perf_counter()
        times = (self.check, compiled - start - self.check, printed - compiled, done - printed)
        return dict(zip(self.NAMES, times, strict=True))


def _percentiles(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    cuts = statistics.quantiles(ordered, n=100) if len(ordered) > 1 else ordered * 99
    return (
        f"p50 {cuts[49] * 1e3:7.2f}  p90 {cuts[89] * 1e3:7.2f}  p99 {cuts[98] * 1e3:8.2f}  "
        f"max {ordered[-1] * 1e3:8.1f} ms"
    )


def dev_schemas(data: Path, stride: int) -> dict[str, Any]:
    """Every ``stride``-th MaskBench dev-split schema, by file name."""
    files = sorted(data.glob("*.json"))[::stride]
    return {p.name: json.loads(p.read_text(encoding="utf-8"))["schema"] for p in files}


def generated_schemas(count: int, seed: int = 43) -> dict[str, Any]:
    """``count`` tool schemas drawn (seeded) in the shapes real tools use
    (``tests/support/tool_schemas.py``), and ``count // 10`` large ones: an object whose ten
    properties are ten such schemas."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.support
    from tests.support.tool_schemas import seeded_examples, tool_schemas

    drawn = seeded_examples(tool_schemas(), count, seed)
    out = {f"tool{i}": schema for i, schema in enumerate(drawn)}
    for i in range(0, len(drawn) - 9, 10):
        properties = {f"p{j}": schema for j, schema in enumerate(drawn[i : i + 10])}
        out[f"large{i // 10}"] = {"type": "object", "properties": properties}
    return out


def schema_set(
    runs: dict[str, Callable[[Any], Any]], title: str, schemas: dict[str, Any]
) -> dict[str, float]:
    """Every engine on every schema, interleaved schema by schema; prints the table and our
    phases, and returns each engine's CPU seconds over the schemas every engine built (the
    steadier figure on a shared machine)."""
    load_before = os.getloadavg()
    times: dict[str, dict[str, tuple[float, float]]] = {name: {} for name in runs}
    for key, schema in schemas.items():
        for name, build in runs.items():
            t = timed(build, schema)
            if t is not None:
                times[name][key] = t
    load_after = os.getloadavg()
    base = "llguidance %json"
    print(
        f"\n{title}, {len(schemas)} schemas (load average {load_before[0]:.1f} "
        f"before, {load_after[0]:.1f} after)"
    )
    print(f"{'engine':18} {'built':>6} {'wall s':>8} {'CPU s':>8}   per schema (wall)")
    for name in runs:
        got = times[name]
        wall = sum(t[0] for t in got.values())
        cpu = sum(t[1] for t in got.values())
        print(
            f"{name:18} {len(got):6} {wall:8.2f} {cpu:8.2f}   "
            f"{_percentiles([t[0] for t in got.values()])}"
        )
    common = set.intersection(*(set(t) for t in times.values()))
    print(f"\nThe {len(common)} schemas every engine built:")
    totals = {
        name: (sum(times[name][f][0] for f in common), sum(times[name][f][1] for f in common))
        for name in runs
    }
    for name, (wall, cpu) in totals.items():
        ratio = ""
        if name != base and totals[base][0] > 0:
            ratio = (
                f"  {wall / totals[base][0]:6.1f}x llguidance (wall), "
                f"{cpu / totals[base][1]:6.1f}x (CPU)"
            )
        print(f"{name:18} {wall:8.2f} s wall {cpu:8.2f} s CPU{ratio}")
    phased = _Phases()
    phases: dict[str, dict[str, float]] = {}
    for key, schema in schemas.items():
        if key in times[OURS]:
            phases[key] = phased(schema)
    total = sum(sum(p.values()) for p in phases.values()) or 1.0
    print(f"\n{OURS}, where the time goes (a second pass, wall):")
    for phase in _Phases.NAMES:
        spent = sum(p[phase] for p in phases.values())
        print(f"  {phase:20} {spent:8.2f} s  {100 * spent / total:5.1f}%")
    print(f"\n{OURS}, ten slowest schemas (wall, phases as above):")
    slowest = sorted(phases.items(), key=lambda item: -sum(item[1].values()))[:10]
    for name, p in slowest:
        parts = " ".join(f"{p[phase] * 1e3:7.1f}" for phase in _Phases.NAMES)
        print(f"  {sum(p.values()) * 1e3:8.1f} ms = {parts}  {name}")
    return {name: cpu for name, (_, cpu) in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size")
    parser.add_argument("--dev", action="store_true", help="also time the MaskBench dev split")
    parser.add_argument("--no-shapes", action="store_true", help="skip the shapes table")
    parser.add_argument(
        "--targets", action="store_true", help="issue 27's shapes on each of our four targets"
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--stride", type=int, default=1, help="dev split: every N-th file")
    parser.add_argument(
        "--generated", type=int, default=200, help="drawn tool schemas (0: none)"
    )
    args = parser.parse_args()
    runs = engines()
    if not args.no_shapes:
        shapes_table(runs, args.scale)
    if args.targets:
        targets_table(args.scale)
    columns: dict[str, dict[str, float]] = {}
    if args.generated:
        columns["generated"] = schema_set(
            runs, "Generated tool schemas", generated_schemas(args.generated)
        )
    if args.dev:
        columns["dev split"] = schema_set(
            runs, "MaskBench dev split", dev_schemas(args.data, args.stride)
        )
    if columns:
        print("\nCPU time over the schemas every engine built, ratio to llguidance %json:")
        print(f"{'engine':18} " + " ".join(f"{c:>14}" for c in columns))
        for name in runs:
            cells = [
                f"{totals[name] / totals['llguidance %json']:13.1f}x"
                if totals.get("llguidance %json")
                else f"{'-':>14}"
                for totals in columns.values()
            ]
            print(f"{name:18} " + " ".join(cells))


if __name__ == "__main__":
    main()
