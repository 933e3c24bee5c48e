"""Latency of the turn grammar: schema to first llguidance mask, and mask time per token.

    python benchmarks/bench_grammar_latency.py

For a 10-tool completion grammar with the o200k_harmony tokenizer built once (not timed):
the time from the tools' JSON Schemas to the first token mask (compile + matcher + mask),
and the median time of a mask while a turn is consumed token by token. The same schemas go
through outlines_core's JsonSchema path (regex, then the index over the same vocabulary) in
the same run. Targets: first mask <= 50 ms, median mask <= 100 us.
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

import llguidance
import llguidance.numpy as llnp

from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.tokens import ControlToken
from harmony_grammar.format.vocabulary import load_encoding, token_bytes_table
from harmony_grammar.generation.outlines_export import harmony_lltokenizer
from harmony_grammar.generation.turn_grammar import completion_grammar


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


TURN = (
    "<|channel|>analysis<|message|>The user wants three SKUs added to the cart; use add_items."
    "<|end|><|start|>assistant<|channel|>commentary to=functions.add_items <|constrain|>json"
    '<|message|>{"items":[{"sku":"A-1","quantity":2},{"sku":"B-22","quantity":1},'
    '{"sku":"C-333","quantity":5}]}<|call|>'
)


def ours(tokenizer: Any, schemas: list[dict[str, Any]]) -> tuple[float, list[float]]:
    bitmask = llnp.allocate_token_bitmask(1, tokenizer.vocab_size)
    started = time.perf_counter()
    grammar = completion_grammar(schemas)
    matcher = llguidance.LLMatcher(tokenizer, grammar)
    llnp.fill_next_token_bitmask(matcher, bitmask, 0)
    first = time.perf_counter() - started
    assert not matcher.is_error(), matcher.get_error()
    masks = []
    for token in encode_harmony(TURN):
        assert matcher.consume_token(token), matcher.get_error()
        if matcher.is_stopped():
            break
        started = time.perf_counter()
        llnp.fill_next_token_bitmask(matcher, bitmask, 0)
        masks.append(time.perf_counter() - started)
    return first, masks


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


def main() -> None:
    tokenizer = harmony_lltokenizer()
    schemas = tools()
    # Cold: these schemas were never compiled in this process (imports are warm).
    completion_grammar([{"name": "warm_up", "parameters": {"type": "object"}}])
    cold, _ = ours(tokenizer, schemas)
    # Warm: the same tools again, as a server sees them request after request.
    firsts, all_masks = [], []
    for _ in range(5):
        first, masks = ours(tokenizer, schemas)
        firsts.append(first)
        all_masks += masks
    print("10-tool completion grammar, o200k_harmony tokenizer built once")
    print(
        f"  schemas -> first mask: first time {cold * 1e3:.0f} ms; same tools again, median "
        f"{statistics.median(firsts) * 1e3:.1f} ms (target <= 50 ms)"
    )
    print(
        f"  mask per token: median {statistics.median(all_masks) * 1e6:.0f} us, "
        f"p90 {sorted(all_masks)[len(all_masks) * 9 // 10] * 1e6:.0f} us (target <= 100 us)"
    )
    try:
        regex_time, index_time = outlines_core_index(schemas)
    except Exception as exc:  # report what happened rather than nothing
        print(f"  outlines_core: failed ({type(exc).__name__}: {exc})")
        return
    total = regex_time + index_time
    print(
        f"  outlines_core JsonSchema: regex {regex_time * 1e3:.1f} ms + index "
        f"{index_time * 1e3:.0f} ms = {total * 1e3:.0f} ms "
        f"({total / statistics.median(firsts):.0f}x ours)"
    )


if __name__ == "__main__":
    main()
