"""Coverage on MaskBench (dev split): this compiler vs llguidance's %json vs outlines_core.

    python benchmarks/bench_schema_coverage.py [--data DIR] [--stride N]

For every schema with at least one valid instance, each engine builds its grammar once and
checks every instance. Each engine reads the instances written as it expects them: ours in
compact JSON with keys in the schema's canonical order; the peers as MaskBench's own runner
writes them (``json.dumps(data, ensure_ascii=False)``: the file's key order, default
separators), which is how the issue's figures for llguidance were measured. A schema *passes*
when it compiles and every verdict is right. Wrong accepts (an invalid instance accepted) are
the dangerous failures; refusals and compile errors are honest ones.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import time
from pathlib import Path
from typing import Any

import llguidance

from harmony_grammar.schema import UnsupportedSchemaError, canonical_json
from harmony_grammar.schema.matcher import SchemaMatcher, byte_tokenizer

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "maskbench-dev"


def maskbench_text(data: Any, schema: Any) -> str:
    """An instance as MaskBench's runner serialises it."""
    return json.dumps(data, ensure_ascii=False)


class Ours:
    name = "harmony-grammar"
    serialise = staticmethod(canonical_json)

    def build(self, schema: Any) -> Any:
        return SchemaMatcher(schema).accepts


class LLGuidanceJson:
    name = "llguidance %json"
    serialise = staticmethod(maskbench_text)

    def build(self, schema: Any) -> Any:
        grammar = llguidance.LLMatcher.grammar_from_json_schema(schema)
        error = llguidance.LLMatcher.validate_grammar(grammar, byte_tokenizer())
        if error:
            raise ValueError(error)
        pristine = llguidance.LLMatcher(byte_tokenizer(), grammar, log_level=0)

        def accepts(text: str) -> bool:
            m = pristine.deep_copy()
            return bool(m.consume_tokens(list(text.encode())) and m.is_accepting())

        return accepts


class OutlinesCore:
    name = "outlines_core regex"
    serialise = staticmethod(maskbench_text)

    def build(self, schema: Any) -> Any:
        from outlines_core.json_schema import build_regex_from_schema

        pattern = re.compile(build_regex_from_schema(json.dumps(schema)))
        return lambda text: pattern.fullmatch(text) is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--stride", type=int, default=1, help="use every N-th file")
    args = parser.parse_args()
    files = sorted(args.data.glob("*.json"))[:: args.stride]
    engines = [Ours(), LLGuidanceJson(), OutlinesCore()]
    stats = {e.name: collections.Counter() for e in engines}
    refusals: collections.Counter[str] = collections.Counter()
    build_time = collections.Counter()
    schemas = 0
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        schema, tests = data["schema"], data["tests"]
        if not any(t["valid"] for t in tests):
            continue
        schemas += 1
        for engine in engines:
            s = stats[engine.name]
            start = time.perf_counter()
            try:
                accepts = engine.build(schema)
            except UnsupportedSchemaError as exc:
                s["refused"] += 1
                refusals[exc.keyword] += 1
                continue
            except Exception:  # a peer's compile error, whatever its type
                s["compile error"] += 1
                continue
            finally:
                build_time[engine.name] += time.perf_counter() - start
            ok = True
            for test in tests:
                valid = test["valid"]
                try:
                    got = accepts(engine.serialise(test["data"], schema))
                except Exception:
                    got = False
                if got != valid:
                    ok = False
                    s["wrong accepts" if got else "wrong rejects"] += 1
            s["passing" if ok else "failing"] += 1
    print(f"MaskBench dev: {schemas} schemas with valid instances ({len(files)} files)")
    print(f"{'engine':22} {'passing':>8} {'failing':>8} {'refused':>8} {'errors':>8} "
          f"{'wrong acc':>9} {'wrong rej':>9} {'build s':>8}")  # fmt: skip
    for e in engines:
        s = stats[e.name]
        print(
            f"{e.name:22} {s['passing']:8} {s['failing']:8} {s['refused']:8} "
            f"{s['compile error']:8} {s['wrong accepts']:9} {s['wrong rejects']:9} "
            f"{build_time[e.name]:8.1f}"
        )
    print("harmony-grammar refusals by keyword:", dict(refusals.most_common()))


if __name__ == "__main__":
    main()
