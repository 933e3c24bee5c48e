"""Compile time against schema size: this compiler vs llguidance's %json vs xgrammar.

    python benchmarks/bench_schema_compile.py [--scale F] [--dev] [--data DIR] [--stride N]

For each shape the issue names (nested ``items``, ``enum`` of strings, ``anyOf``/``oneOf`` of
consts, optional properties, ``prefixItems``) and each size, every engine compiles the schema
once; the table prints seconds and, for ours, the ratio to the previous (half) size: linear
compile time shows as ratios near 2 (the issue's target: at most 2.5). ``--scale`` multiplies
every size (0.25 for a quick look). ``--dev`` also times building every MaskBench dev-split
schema, all engines in the same run. Ours is ``schema_to_grammar(target="llguidance")`` plus
llguidance's own parse of that text (what a caller pays before the first mask); llguidance
is ``grammar_from_json_schema`` plus the same parse; xgrammar is ``Grammar.from_json_schema``
(skipped when not installed). Schemas an engine refuses or fails on print as ``-``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import llguidance

from harmony_grammar.schema import schema_to_grammar
from harmony_grammar.schema.matcher import byte_tokenizer

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "maskbench-dev"


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
        lambda n: {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(n)}},
        [250, 500, 1000],
    ),
    "prefixItems": (
        lambda n: {"type": "array", "prefixItems": [{"type": "integer"}] * n},
        [250, 500, 1000],
    ),
}


def ours(schema: Any) -> None:
    text = schema_to_grammar(schema, target="llguidance")
    error = llguidance.LLMatcher.validate_grammar(text, byte_tokenizer())
    if error:
        raise ValueError(error)


def llg(schema: Any) -> None:
    text = llguidance.LLMatcher.grammar_from_json_schema(schema)
    error = llguidance.LLMatcher.validate_grammar(text, byte_tokenizer())
    if error:
        raise ValueError(error)


def xgr(schema: Any) -> None:
    import xgrammar

    xgrammar.Grammar.from_json_schema(json.dumps(schema), any_whitespace=True, strict_mode=False)


def timed(build: Callable[[Any], None], schema: Any) -> float | None:
    start = time.perf_counter()
    try:
        build(schema)
    except Exception:  # a refusal or an engine's own failure: no time to report
        return None
    return time.perf_counter() - start


def engines() -> dict[str, Callable[[Any], None]]:
    out: dict[str, Callable[[Any], None]] = {"harmony-grammar": ours, "llguidance %json": llg}
    try:
        import xgrammar  # noqa: F401
    except ImportError:
        print("xgrammar is not installed: skipped (pip install --no-deps xgrammar==0.2.9)")
    else:
        out["xgrammar"] = xgr
    return out


def shapes_table(scale: float) -> None:
    runs = engines()
    print(f"{'shape':22} {'size':>6} " + " ".join(f"{n:>17}" for n in runs) + "  ours x prev")
    for shape, (make, sizes) in SHAPES.items():
        previous: float | None = None
        for size in (max(1, round(s * scale)) for s in sizes):
            schema = make(size)
            times = {name: timed(build, schema) for name, build in runs.items()}
            cells = " ".join(f"{'-' if t is None else f'{t:.3f} s':>17}" for t in times.values())
            mine = times["harmony-grammar"]
            ratio = "" if previous is None or mine is None else f"{mine / previous:8.2f}"
            print(f"{shape:22} {size:6} {cells}  {ratio}")
            previous = mine


def dev_split(data: Path, stride: int) -> None:
    runs = engines()
    files = sorted(data.glob("*.json"))[::stride]
    totals = dict.fromkeys(runs, 0.0)
    built = dict.fromkeys(runs, 0)
    for path in files:
        schema = json.loads(path.read_text(encoding="utf-8"))["schema"]
        for name, build in runs.items():
            t = timed(build, schema)
            if t is not None:
                totals[name] += t
                built[name] += 1
    print(f"\nMaskBench dev split, {len(files)} schemas: total build seconds (schemas built)")
    for name in runs:
        print(f"{name:22} {totals[name]:9.1f} s ({built[name]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size")
    parser.add_argument("--dev", action="store_true", help="also time the MaskBench dev split")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--stride", type=int, default=1, help="dev split: every N-th file")
    args = parser.parse_args()
    shapes_table(args.scale)
    if args.dev:
        dev_split(args.data, args.stride)


if __name__ == "__main__":
    main()
