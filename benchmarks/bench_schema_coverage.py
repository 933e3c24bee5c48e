"""Coverage on MaskBench (dev split): this compiler vs llguidance's %json, xgrammar and
outlines_core.

    python benchmarks/bench_schema_coverage.py [--data DIR] [--stride N] [--file NAME]...
        [--ours-only]

For every schema with at least one valid instance, each engine builds its grammar once and
checks every instance. Every engine, ours included (with flexible whitespace), reads the
instances as MaskBench's own runner writes them (``json.dumps(data, ensure_ascii=False)``: the
file's key order, default separators). A schema *passes* when it compiles and every verdict is
right. Wrong accepts (an invalid instance accepted) are the dangerous failures; refusals and
compile errors are honest ones. For ours, "order only" counts the schemas whose only failures
are valid instances written in an order other than their objects' declared order (accepted
once written in that order by ``canonical_json``). xgrammar (a ``bench`` extra) is skipped
when it is not installed.

"build s" is each engine's schema -> ready-to-mask grammar, as in bench_schema_compile.py:
ours is ``schema_to_grammar`` plus llguidance's matcher on the text (``SchemaMatcher``),
llguidance's is its matcher on ``%json``, xgrammar's is ``from_json_schema`` plus
``compile_grammar`` (byte vocabulary, one thread). outlines_core's is its regex, compiled by
Python's ``re``.
"""

from __future__ import annotations

import argparse
import collections
import functools
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
    serialise = staticmethod(maskbench_text)

    def build(self, schema: Any) -> Any:
        return SchemaMatcher(schema, whitespace="flexible").accepts


class XGrammar:
    name = "xgrammar"
    serialise = staticmethod(maskbench_text)

    def build(self, schema: Any) -> Any:
        import xgrammar

        # strict_mode=False: the schema's own language (strict mode closes every object).
        grammar = xgrammar.Grammar.from_json_schema(
            json.dumps(schema), any_whitespace=True, strict_mode=False
        )
        # Compiled as a server would before its first mask (timed as its build); verdicts
        # come from xgrammar's own string check on the grammar.
        _xgrammar_compiler().compile_grammar(grammar)
        return lambda text: bool(xgrammar.testing._is_grammar_accept_string(grammar, text))


@functools.lru_cache(maxsize=1)
def _xgrammar_compiler() -> Any:
    """xgrammar's compiler over a 256-token byte vocabulary, one thread, no cache."""
    import xgrammar

    vocab = xgrammar.TokenizerInfo(
        [bytes([b]) for b in range(256)], vocab_type=xgrammar.VocabType.RAW
    )
    return xgrammar.GrammarCompiler(vocab, max_threads=1, cache_enabled=False)


class LLGuidanceJson:
    name = "llguidance %json"
    serialise = staticmethod(maskbench_text)

    def build(self, schema: Any) -> Any:
        grammar = llguidance.LLMatcher.grammar_from_json_schema(schema)
        pristine = llguidance.LLMatcher(byte_tokenizer(), grammar, log_level=0)
        if pristine.is_error():
            raise ValueError(pristine.get_error())

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
    parser.add_argument(
        "--file", action="append", default=[], help="only this file name (repeatable)"
    )
    parser.add_argument(
        "--ours-only", action="store_true", help="run harmony-grammar alone, no peer engines"
    )
    args = parser.parse_args()
    files = sorted(args.data.glob("*.json"))[:: args.stride]
    if args.file:
        files = [f for f in files if f.name in set(args.file)]
    engines: list[Any] = [Ours()] if args.ours_only else [Ours(), LLGuidanceJson(), OutlinesCore()]
    try:
        if not args.ours_only:  # importing xgrammar (torch) takes seconds
            import xgrammar  # noqa: F401

            engines.insert(2, XGrammar())
    except ImportError:
        print("xgrammar is not installed: skipped (pip install --no-deps xgrammar==0.2.9)")
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
            order_only = False
            for test in tests:
                valid = test["valid"]
                try:
                    got = accepts(engine.serialise(test["data"], schema))
                except Exception:
                    got = False
                if got != valid:
                    ok = False
                    in_order = canonical_json(test["data"], schema)
                    if valid and isinstance(engine, Ours) and accepts(in_order):
                        order_only = True
                        continue
                    s["wrong accepts" if got else "wrong rejects"] += 1
            s["passing" if ok else "failing"] += 1
            s["order only"] += order_only and not ok
    print(f"MaskBench dev: {schemas} schemas with valid instances ({len(files)} files)")
    print(f"{'engine':22} {'passing':>8} {'failing':>8} {'refused':>8} {'errors':>8} "
          f"{'wrong acc':>9} {'wrong rej':>9} {'order':>6} {'build s':>8}")  # fmt: skip
    for e in engines:
        s = stats[e.name]
        print(
            f"{e.name:22} {s['passing']:8} {s['failing']:8} {s['refused']:8} "
            f"{s['compile error']:8} {s['wrong accepts']:9} {s['wrong rejects']:9} "
            f"{s['order only']:6} {build_time[e.name]:8.1f}"
        )
    print("harmony-grammar refusals by keyword:", dict(refusals.most_common()))


if __name__ == "__main__":
    main()
