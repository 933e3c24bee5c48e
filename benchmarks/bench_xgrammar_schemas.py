"""MaskBench (dev split) through xgrammar: our EBNF bodies against xgrammar's own converter.

    python benchmarks/bench_xgrammar_schemas.py [--limit N]

For each schema with instances, the argument grammar our structural tag embeds
(``compile_schema`` then ``emit_xgrammar``, compact whitespace) and xgrammar's
``Grammar.from_json_schema`` (flexible whitespace) are each asked, by xgrammar's own matcher,
whether every labelled instance is accepted. A schema passes when every verdict matches its
label. Prints schemas passed, refused (by us: the keyword; by xgrammar: an exception), and
wrong accepts and rejects for each.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path
from typing import Any

import xgrammar
from xgrammar.testing import _is_grammar_accept_string

from harmony_grammar.schema import UnsupportedSchemaError, canonical_json, compile_schema
from harmony_grammar.schema.emit_xgrammar import emit_xgrammar

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "maskbench-dev"


def ours(schema: Any) -> Any:
    grammar = compile_schema(schema, whitespace="compact", closed_objects=False)
    return xgrammar.Grammar.from_ebnf(emit_xgrammar(grammar))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    files = sorted(DATA.glob("*.json"))
    if not files:
        sys.exit(f"no MaskBench data at {DATA}")
    if args.limit:
        files = files[: args.limit]
    tally: dict[str, collections.Counter[str]] = {
        "ours": collections.Counter(),
        "xgrammar": collections.Counter(),
    }
    refused_keywords: collections.Counter[str] = collections.Counter()
    started = time.perf_counter()
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        schema, tests = data["schema"], data["tests"]
        if not tests:
            continue
        for name in tally:
            try:
                if name == "ours":
                    grammar = ours(schema)
                else:
                    grammar = xgrammar.Grammar.from_json_schema(json.dumps(schema))
            except UnsupportedSchemaError as exc:
                tally[name]["refused"] += 1
                refused_keywords[exc.keyword] += 1
                continue
            except Exception:  # xgrammar's converter or parser refused it
                tally[name]["refused"] += 1
                continue
            ok = True
            for test in tests:
                text = (
                    canonical_json(test["data"], schema)
                    if name == "ours"
                    else json.dumps(test["data"], ensure_ascii=False)
                )
                if _is_grammar_accept_string(grammar, text) != test["valid"]:
                    ok = False
                    tally[name]["wrong accepts" if not test["valid"] else "wrong rejects"] += 1
            tally[name]["passed" if ok else "failed"] += 1
    print(f"{len(files)} MaskBench dev files, {time.perf_counter() - started:.0f} s")
    for name, counts in tally.items():
        print(f"{name}: {dict(counts)}")
    print(f"ours, refused by keyword: {dict(refused_keywords.most_common())}")


if __name__ == "__main__":
    main()
