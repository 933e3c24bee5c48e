"""Latency of constrained decoding: schemas to first mask, and the mask per token.

    python benchmarks/bench_grammar_latency.py [--repeat N] [--sets N] [--hand-picked]

Ten tools of the kinds agents declare (below), the o200k_harmony vocabulary built once per
engine (not timed). Two walks, every engine on the same tools and the same token ids:

- **arguments**: each tool's own argument grammar, walked over one valid argument text per
  tool (``ARGUMENTS``), the mask taken before every token and once after the last;
- **turn**: a whole assistant turn (analysis, then a call of ``add_items``, ``TURN``) through
  a grammar of the turn over all ten tools.

Engines, on the same walks:

- ours through llguidance: ``schema_to_grammar(..., target="llguidance", closed_objects=True,
  escaped_ascii=False)`` for the arguments, ``completion_grammar`` for the turn;
- ours through xgrammar: the same schemas with ``target="xgrammar"``, and the turn as our
  structural tag (``completion_grammar(..., target="xgrammar")``);
- llguidance's own ``%json`` (the same schemas; for the turn, our turn grammar with ``%json``
  bodies);
- xgrammar 0.2.9's ``compile_json_schema`` (strict mode, compact separators) and its built-in
  Harmony structural tag for the turn.

Masks are timed in CPU seconds of the calling thread (``time.thread_time``): wall time on a
shared machine adds whatever the scheduler takes. Each walk is timed twice: the **first request** (a matcher fresh from the grammar: llguidance
builds its lexer states as it meets them) and **later requests** (what a server or our
``Sampler`` does for the next request with the same tools: llguidance reuses a matcher made
from the grammar once, with ``deep_copy``; xgrammar reuses the compiled grammar). Targets
(issue 15): median <= 10 us, p90 <= 40 us, max <= 1 ms per token on both walks.

The schemas -> first mask time of the turn grammar is reported too (target <= 50 ms), with
outlines_core's JsonSchema index over the same vocabulary for comparison.

By default the turn walk runs over **tool sets the compiler was never tuned on** (issue 43):
``--sets`` sets of ten tools drawn (seeded) from :mod:`tests.support.tool_schemas` (the shapes
real tools use), each walked with a turn that calls one of them with arguments drawn by
hypothesis-jsonschema and written in declared order; and, as a second column, as many sets of
ten MaskBench dev-split object schemas, each called with a valid instance from its file. The
same walks go through our grammar via llguidance, llguidance's ``%json`` bodies, our
structural tag and xgrammar's built-in Harmony tag, interleaved set by set; and the first
mask of each new tool set (grammar written, matcher built, first mask) is timed against
issue 43's target (<= 50 ms). ``--hand-picked`` adds the ten hand-written tools' walks above.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import llguidance
import llguidance.numpy as llnp

from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.tokens import ControlToken
from harmony_grammar.format.vocabulary import load_encoding, token_bytes_table
from harmony_grammar.generation import turn_grammar
from harmony_grammar.generation.outlines_export import harmony_lltokenizer
from harmony_grammar.generation.turn_grammar import completion_grammar
from harmony_grammar.generation.turn_plan import turn_plan
from harmony_grammar.schema import schema_to_grammar


def tools() -> list[dict[str, Any]]:
    """Ten tools of the kinds agents declare: strings, enums, numbers, arrays, nesting."""
    string = {"type": "string"}
    return [
        {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": string, "unit": {"enum": ["celsius", "fahrenheit"]}},
                "required": ["city"],
            },
        },
        {
            "name": "search_web",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": string,
                    "top_k": {"type": "integer", "minimum": 1, "maximum": 20},
                },
                "required": ["query"],
            },
        },
        {
            "name": "send_email",
            "parameters": {
                "type": "object",
                "properties": {
                    "to": {
                        "type": "array",
                        "items": {"type": "string", "format": "email"},
                        "minItems": 1,
                    },
                    "subject": string,
                    "body": string,
                },
                "required": ["to", "subject", "body"],
            },
        },
        {
            "name": "create_event",
            "parameters": {
                "type": "object",
                "properties": {
                    "title": string,
                    "start": {"type": "string", "format": "date-time"},
                    "duration_minutes": {"type": "integer", "minimum": 5, "maximum": 480},
                },
                "required": ["title", "start"],
            },
        },
        {
            "name": "run_sql",
            "parameters": {
                "type": "object",
                "properties": {"query": string, "read_only": {"type": "boolean"}},
                "required": ["query"],
            },
        },
        {
            "name": "lookup_order",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{6}$"}},
                "required": ["order_id"],
                "additionalProperties": False,
            },
        },
        {
            "name": "convert_currency",
            "parameters": {
                "type": "object",
                "properties": {
                    "amount": {"type": "number"},
                    "from": {"type": "string", "minLength": 3, "maxLength": 3},
                    "to": {"type": "string", "minLength": 3, "maxLength": 3},
                },
                "required": ["amount", "from", "to"],
            },
        },
        {
            "name": "add_items",
            "parameters": {
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "sku": string,
                                "quantity": {"type": "integer", "minimum": 1},
                            },
                            "required": ["sku", "quantity"],
                        },
                        "maxItems": 10,
                    }
                },
                "required": ["items"],
            },
        },
        {
            "name": "set_reminder",
            "parameters": {
                "type": "object",
                "properties": {
                    "text": string,
                    "at": {"type": "string", "format": "time"},
                    "repeat": {"enum": ["never", "daily", "weekly"]},
                },
                "required": ["text", "at"],
            },
        },
        {"name": "get_location", "parameters": {"type": "object", "properties": {}}},
    ]


# One valid argument text per tool, as a model writes it (declared key order, compact).
ARGUMENTS: dict[str, dict[str, Any]] = {
    "get_weather": {"city": "San Francisco", "unit": "celsius"},
    "search_web": {"query": "gpt-oss harmony format tool calling", "top_k": 5},
    "send_email": {
        "to": ["alice@example.com", "bob.smith@example.org"],
        "subject": "Quarterly numbers",
        "body": "Hi both,\nthe numbers are attached.\nThanks",
    },
    "create_event": {"title": "Team sync", "start": "2026-12-03T10:30:00Z", "duration_minutes": 45},
    "run_sql": {"query": "SELECT name, total FROM orders WHERE total > 100", "read_only": True},
    "lookup_order": {"order_id": "AB-123456"},
    "convert_currency": {"amount": 1234.56, "from": "USD", "to": "EUR"},
    "add_items": {"items": [{"sku": "A-1", "quantity": 2}, {"sku": "B-22", "quantity": 1}]},
    "set_reminder": {"text": "Call the dentist", "at": "09:15:00Z", "repeat": "weekly"},
    "get_location": {},
}


TURN = (
    "<|channel|>analysis<|message|>The user wants three SKUs added to the cart; use add_items."
    "<|end|><|start|>assistant<|channel|>commentary to=functions.add_items <|constrain|>json"
    '<|message|>{"items":[{"sku":"A-1","quantity":2},{"sku":"B-22","quantity":1},'
    '{"sku":"C-333","quantity":5}]}<|call|>'
)
# xgrammar's built-in Harmony tag wants "<|constrain|>json" without the space before it.
BUILTIN_TURN = TURN.replace(" <|constrain|>", "<|constrain|>")

Walk = Callable[[], list[float]]


def argument_ids() -> dict[str, list[int]]:
    encoding = load_encoding()
    return {
        name: encoding.encode(json.dumps(value, separators=(",", ":")))
        for name, value in ARGUMENTS.items()
    }


def timed_walk(
    ids: list[int],
    fill: Callable[[], object],
    consume: Callable[[int], bool],
    stopped: Callable[[], bool],
) -> list[float]:
    """Mask before each token and once after the last (none once a stop token is in); the
    CPU seconds of each mask (this thread's: on a shared machine a wall-clock maximum is
    mostly the scheduler, 12 ms walls over 0.2 ms CPU at load 7). A token the grammar
    refuses fails the benchmark."""
    times = []
    for token in [*ids, None]:
        if stopped():
            break
        started = time.thread_time()
        fill()
        times.append(time.thread_time() - started)
        if token is None:
            break
        assert consume(token), token
    return times


# --- llguidance ----------------------------------------------------------------------------


def llguidance_walk(matcher: Any, ids: list[int], vocab_size: int) -> list[float]:
    bitmask = llnp.allocate_token_bitmask(1, vocab_size)
    return timed_walk(
        ids,
        lambda: llnp.fill_next_token_bitmask(matcher, bitmask, 0),
        matcher.consume_token,
        matcher.is_stopped,
    )


def llguidance_requests(
    tokenizer: Any, grammar: str, ids: list[int], repeat: int
) -> tuple[list[float], list[float]]:
    """(first request, later requests): a fresh matcher, then copies of a warm one."""
    first = llguidance_walk(llguidance.LLMatcher(tokenizer, grammar), ids, tokenizer.vocab_size)
    template = llguidance.LLMatcher(tokenizer, grammar)
    assert not template.is_error(), template.get_error()
    llguidance_walk(template.deep_copy(), ids, tokenizer.vocab_size)  # the first request
    later = []
    for _ in range(repeat):
        later += llguidance_walk(template.deep_copy(), ids, tokenizer.vocab_size)
    return first, later


def json_bodies_turn(schemas: list[dict[str, Any]]) -> str:
    """Our turn grammar with each call body replaced by llguidance's own ``%json``."""
    grammar = completion_grammar(schemas)
    plan = turn_plan(schemas)
    lines = grammar.splitlines()
    for prefix, schema in plan.schemas.items():
        lines = [line for line in lines if not line.startswith((prefix, prefix.upper()))] + [
            f"{prefix}start: %json {json.dumps(schema)}"
        ]
    return "\n".join(lines) + "\n"


# --- xgrammar ------------------------------------------------------------------------------


def xgrammar_walk(compiled: Any, ids: list[int], vocab_size: int) -> list[float]:
    import xgrammar

    matcher = xgrammar.GrammarMatcher(compiled)
    bitmask = xgrammar.allocate_token_bitmask(1, vocab_size)
    return timed_walk(
        ids,
        lambda: matcher.fill_next_token_bitmask(bitmask),
        matcher.accept_token,
        matcher.is_terminated,
    )


def xgrammar_requests(
    compiled: Any, ids: list[int], vocab_size: int, repeat: int
) -> tuple[list[float], list[float]]:
    first = xgrammar_walk(compiled, ids, vocab_size)
    later = []
    for _ in range(repeat):
        later += xgrammar_walk(compiled, ids, vocab_size)
    return first, later


# --- report --------------------------------------------------------------------------------


def summary(times: Iterable[float]) -> str:
    ordered = sorted(times)
    if not ordered:
        return "no masks"
    p90 = ordered[min(len(ordered) - 1, len(ordered) * 9 // 10)]
    return (
        f"median {statistics.median(ordered) * 1e6:6.1f} us  p90 {p90 * 1e6:7.1f} us  "
        f"max {ordered[-1] * 1e6:8.1f} us  ({len(ordered)} masks)"
    )


def report(engine: str, first: list[float], later: list[float]) -> None:
    print(f"  {engine:38} first request: {summary(first)}")
    print(f"  {'':38} later requests: {summary(later)}")


def argument_walks(repeat: int) -> None:
    import xgrammar

    from harmony_grammar.generation.xgrammar_tag import harmony_tokenizer_info

    tokenizer = harmony_lltokenizer()
    info = harmony_tokenizer_info()
    compiler = xgrammar.GrammarCompiler(info, cache_enabled=False)
    ids = argument_ids()
    generation = {"closed_objects": True, "escaped_ascii": False}
    llguidance_engines: dict[str, Callable[[dict[str, Any]], str]] = {
        "harmony-grammar (llguidance)": lambda schema: schema_to_grammar(
            schema, target="llguidance", **generation
        ),
        "llguidance %json": lambda schema: llguidance.LLMatcher.grammar_from_json_schema(
            schema, defaults={"whitespace_flexible": False}
        ),
    }
    xgrammar_engines: dict[str, Callable[[dict[str, Any]], Any]] = {
        "harmony-grammar (xgrammar)": lambda schema: compiler.compile_grammar(
            schema_to_grammar(schema, target="xgrammar", **generation)
        ),
        "xgrammar compile_json_schema": lambda schema: compiler.compile_json_schema(
            json.dumps(schema), any_whitespace=False, separators=(",", ":"), strict_mode=True
        ),
    }
    results: dict[str, tuple[list[float], list[float], list[float]]] = {
        name: ([], [], []) for name in [*llguidance_engines, *xgrammar_engines]
    }
    for tool in tools():
        schema, tool_ids = tool["parameters"], ids[tool["name"]]
        for engine, build in llguidance_engines.items():
            started = time.perf_counter()
            grammar = build(schema)
            llguidance.LLMatcher(tokenizer, grammar)
            results[engine][2].append(time.perf_counter() - started)
            first, later = llguidance_requests(tokenizer, grammar, tool_ids, repeat)
            results[engine][0].extend(first)
            results[engine][1].extend(later)
        for engine, build in xgrammar_engines.items():
            started = time.perf_counter()
            compiled = build(schema)
            results[engine][2].append(time.perf_counter() - started)
            first, later = xgrammar_requests(compiled, tool_ids, info.vocab_size, repeat)
            results[engine][0].extend(first)
            results[engine][1].extend(later)
    tokens = sum(map(len, ids.values()))
    print(f"arguments walk: 10 tools, one argument text each ({tokens} tokens)")
    for engine, (first, later, builds) in results.items():
        report(engine, first, later)
        print(
            f"  {'':38} schema -> matcher: median {statistics.median(builds) * 1e3:.1f} ms, "
            f"max {max(builds) * 1e3:.1f} ms"
        )


def turn_walks(repeat: int) -> None:
    import xgrammar

    from harmony_grammar.generation.xgrammar_tag import harmony_tokenizer_info

    tokenizer = harmony_lltokenizer()
    info = harmony_tokenizer_info()
    compiler = xgrammar.GrammarCompiler(info, cache_enabled=False)
    schemas = tools()
    ids = encode_harmony(TURN)
    print(f"turn walk: analysis + a call of add_items over 10 tools ({len(ids)} tokens)")
    for engine, grammar in (
        ("harmony-grammar (llguidance)", completion_grammar(schemas)),
        ("llguidance, %json bodies", json_bodies_turn(schemas)),
    ):
        report(engine, *llguidance_requests(tokenizer, grammar, ids, repeat))
    ours_tag = compiler.compile_structural_tag(completion_grammar(schemas, target="xgrammar"))
    report(
        "harmony-grammar (xgrammar tag)", *xgrammar_requests(ours_tag, ids, info.vocab_size, repeat)
    )
    builtin = xgrammar.get_model_structural_tag(
        "harmony", tools=[{"type": "function", "function": t} for t in schemas]
    ).model_dump_json()
    report(
        "xgrammar built-in Harmony tag",
        *xgrammar_requests(
            compiler.compile_structural_tag(builtin),
            encode_harmony(BUILTIN_TURN),
            info.vocab_size,
            repeat,
        ),
    )


# --- generated and dev-split tool sets ------------------------------------------------------

#: One turn: the tools, and the text after ``<|start|>assistant`` that calls one of them.
Turn = tuple[dict[str, Any], str]


def _turn_text(name: str, arguments: str) -> str:
    return (
        "<|channel|>analysis<|message|>I should call the tool with these arguments.<|end|>"
        f"<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json"
        f"<|message|>{arguments}<|call|>"
    )


def generated_turns(count: int, seed: int = 43) -> list[Turn]:
    """``count`` turns over drawn tool sets of ten (seeded, so every run walks the same)."""
    import jsonschema
    import pytest
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fixed_seed
    from hypothesis import strategies as st
    from hypothesis_jsonschema import from_schema

    from harmony_grammar.schema import UnsupportedSchemaError, canonical_json

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.support
    from tests.support.schema_targets import legacy_object_generation
    from tests.support.tool_schemas import tool_sets

    legacy_object_generation(pytest.MonkeyPatch())
    turns: list[Turn] = []

    @fixed_seed(seed)
    @settings(max_examples=count * 4, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(st.data())
    def draw(data: Any) -> None:
        tools = data.draw(tool_sets(10, 10))
        try:
            completion_grammar(tools)
        except UnsupportedSchemaError:
            return
        name = data.draw(st.sampled_from(sorted(tools)))
        try:
            value = data.draw(from_schema(tools[name]))
        except Exception:  # a shape hypothesis-jsonschema cannot draw
            return
        if jsonschema.Draft202012Validator(tools[name]).is_valid(value):
            turns.append((tools, _turn_text(name, canonical_json(value, tools[name]))))

    draw()
    return turns[:count]


#: The MaskBench dev split, beside the checkout (as the tests read it).
DEV_SPLIT = Path(__file__).resolve().parents[2] / "shared" / "data" / "maskbench-dev"


def dev_split_turns(count: int, data: Path = DEV_SPLIT) -> list[Turn]:
    """``count`` turns over sets of ten MaskBench dev object schemas (spread evenly over the
    split), each calling its first tool with a valid instance from its file, in declared
    order."""
    from harmony_grammar.schema import UnsupportedSchemaError, canonical_json

    candidates: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for path in sorted(data.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        schema, valid = record["schema"], [t["data"] for t in record["tests"] if t["valid"]]
        first = valid[0] if valid else None
        if isinstance(schema, dict) and schema.get("type") == "object" and isinstance(first, dict):
            candidates.append((schema, first))
    usable: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for schema, value in candidates[:: max(1, len(candidates) // (count * 20))]:
        try:
            completion_grammar({"tool": schema})
        except (UnsupportedSchemaError, ValueError):
            continue
        usable.append((schema, value))
        if len(usable) == count * 10:
            break
    turns: list[Turn] = []
    for start in range(0, len(usable) - 9, 10):
        group = usable[start : start + 10]
        tools = {f"t{start + i}": schema for i, (schema, _) in enumerate(group)}
        schema, value = group[0]
        turns.append((tools, _turn_text(f"t{start}", canonical_json(value, schema))))
    return turns


def _builtin(tools: dict[str, Any]) -> str:
    import xgrammar

    entries = [
        {"type": "function", "function": {"name": n, "parameters": s}} for n, s in tools.items()
    ]
    return str(xgrammar.get_model_structural_tag("harmony", tools=entries).model_dump_json())


def set_walks(turns: list[Turn], repeat: int) -> dict[str, list[float]]:
    """Every engine on every turn, interleaved turn by turn; a walk an engine refuses (its
    grammar cannot take the text) is counted and left out of that engine's figures."""
    import xgrammar

    from harmony_grammar.generation.xgrammar_tag import harmony_tokenizer_info

    tokenizer = harmony_lltokenizer()
    info = harmony_tokenizer_info()
    compiler = xgrammar.GrammarCompiler(info, cache_enabled=False)
    out: dict[str, list[float]] = {}
    for tools, text in turns:
        ids = encode_harmony(text)
        # A new tool set: drawing the turn compiled these schemas already, so forget them.
        turn_grammar._cached_schema_rules.cache_clear()
        started = time.perf_counter()
        first_mask_of(tokenizer, completion_grammar(tools))
        out.setdefault("first mask, new tool set (ours, llguidance)", []).append(
            time.perf_counter() - started
        )
        llguidance_grammars = {
            "ours via llguidance": lambda: completion_grammar(tools),
            "llguidance %json bodies": lambda: json_bodies_turn(tools),
        }
        for engine, make in llguidance_grammars.items():
            try:
                _, later = llguidance_requests(tokenizer, make(), ids, repeat)
            except (AssertionError, ValueError):
                out.setdefault(f"{engine}: refused walks", []).append(1.0)
                continue
            out.setdefault(engine, []).extend(later)
        tags = {
            "ours via xgrammar (tag)": (lambda: completion_grammar(tools, target="xgrammar"), ids),
            "xgrammar built-in Harmony tag": (
                lambda: _builtin(tools),
                encode_harmony(text.replace(" <|constrain|>", "<|constrain|>")),
            ),
        }
        for engine, (make_tag, tag_ids) in tags.items():
            try:
                compiled = compiler.compile_structural_tag(make_tag())
                _, later = xgrammar_requests(compiled, tag_ids, info.vocab_size, repeat)
            except Exception:  # a schema xgrammar refuses, or a walk it does not take
                out.setdefault(f"{engine}: refused walks", []).append(1.0)
                continue
            out.setdefault(engine, []).extend(later)
    return out


def first_mask_of(tokenizer: Any, grammar: str) -> None:
    """Build a fresh matcher for ``grammar`` and take its first mask."""
    bitmask = llnp.allocate_token_bitmask(1, tokenizer.vocab_size)
    matcher = llguidance.LLMatcher(tokenizer, grammar)
    llnp.fill_next_token_bitmask(matcher, bitmask, 0)
    assert not matcher.is_error(), matcher.get_error()


def tool_set_walks(sets: int, repeat: int) -> None:
    """The generated tool sets, then the dev split's (printed as each is done)."""
    print(
        "turn walks over tool sets of ten; later requests, per token; targets: median <= 8 us, "
        "p90 <= 40 us, max <= 1 ms, first mask <= 50 ms",
        flush=True,
    )
    for name, make in (("generated", generated_turns), ("dev split", dev_split_turns)):
        turns = make(sets)
        results = set_walks(turns, repeat)
        print(f"{name}: {len(turns)} sets (load average {os.getloadavg()[0]:.1f})")
        for engine, times in results.items():
            cell = f"{len(times)}" if engine.endswith("refused walks") else summary(times)
            print(f"  {engine:46} {cell}", flush=True)


def first_mask(tokenizer: Any, schemas: list[dict[str, Any]]) -> float:
    """Seconds from the tools' schemas to the first mask of a fresh turn matcher."""
    bitmask = llnp.allocate_token_bitmask(1, tokenizer.vocab_size)
    started = time.perf_counter()
    matcher = llguidance.LLMatcher(tokenizer, completion_grammar(schemas))
    llnp.fill_next_token_bitmask(matcher, bitmask, 0)
    assert not matcher.is_error(), matcher.get_error()
    return time.perf_counter() - started


def outlines_core_index(schemas: list[dict[str, Any]]) -> tuple[float, float]:
    """Seconds to build outlines_core's regex and index for a body of any of the tools."""
    from outlines_core import Index, Vocabulary
    from outlines_core.json_schema import build_regex_from_schema

    table = token_bytes_table(load_encoding())
    vocabulary: dict[str, list[int]] = {}
    for token_id, token in enumerate(table):
        vocabulary.setdefault(token.decode("latin-1"), []).append(token_id)
    eos = ControlToken.CALL.id  # the body ends where the call does
    started = time.perf_counter()
    regex = build_regex_from_schema(json.dumps({"anyOf": [t["parameters"] for t in schemas]}))
    regex_time = time.perf_counter() - started
    started = time.perf_counter()
    Index(regex, Vocabulary(eos, vocabulary))
    return regex_time, time.perf_counter() - started


def schemas_to_first_mask() -> None:
    tokenizer = harmony_lltokenizer()
    schemas = tools()
    # Cold: these schemas were never compiled in this process (imports are warm).
    completion_grammar([{"name": "warm_up", "parameters": {"type": "object"}}])
    cold = first_mask(tokenizer, schemas)
    # Warm: the same tools again, as a server sees them request after request.
    warm = statistics.median(first_mask(tokenizer, schemas) for _ in range(5))
    print("turn grammar, schemas -> first mask (o200k_harmony tokenizer built once)")
    print(
        f"  first time {cold * 1e3:.0f} ms; same tools again, median {warm * 1e3:.1f} ms "
        "(target <= 50 ms)"
    )
    try:
        regex_time, index_time = outlines_core_index(schemas)
    except Exception as exc:  # report what happened rather than nothing
        print(f"  outlines_core: failed ({type(exc).__name__}: {exc})")
        return
    total = regex_time + index_time
    print(
        f"  outlines_core JsonSchema: regex {regex_time * 1e3:.1f} ms + index "
        f"{index_time * 1e3:.0f} ms = {total * 1e3:.0f} ms ({total / warm:.0f}x ours)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="later requests per walk")
    parser.add_argument("--skip-outlines", action="store_true", help="no outlines_core index")
    parser.add_argument("--sets", type=int, default=10, help="tool sets per column")
    parser.add_argument(
        "--hand-picked", action="store_true", help="also the ten hand-written tools' walks"
    )
    args = parser.parse_args()
    tool_set_walks(args.sets, args.repeat)
    if args.hand_picked:
        argument_walks(args.repeat)
        turn_walks(args.repeat)
        if not args.skip_outlines:
            schemas_to_first_mask()


if __name__ == "__main__":
    main()
