"""Generated Chat Completions requests for the rendering-profile tests and benchmark.

Deterministic (seeded): tools with nested schemas (objects in objects, arrays of objects,
enums, oneOf, defaults, nullable), tool loops (a call, its result, another call, ..., an
answer), analysis before calls and before answers (so that every profile's dropping is
exercised), and multi-byte text (accents, CJK, emoji) in every field that carries text.
``parallel=True`` sometimes puts two calls in one assistant message, which the HF template
cannot take.
"""

from __future__ import annotations

import json
import random
from typing import Any

__all__ = ["generated_requests", "vllm_requests"]

_WORDS = [
    "weather", "Zürich", "café", "東京", "データ", "naïve", "📦", "résumé", "Ωmega", "größe",
    "search", "files", "🙂", "mañana", "北京", "plan", "check", "über", "ok", "line",
]


def _text(rng: random.Random, low: int = 1, high: int = 8, *, lines: bool = True) -> str:
    """Words; with ``lines``, sometimes a second line. Schema and tool descriptions get one
    line: a line break there is escaped by design (issue 27: schema text stays inert), so
    their bytes differ from the references, which write it raw (tests/safety/test_injection.py)."""
    words = [rng.choice(_WORDS) for _ in range(rng.randint(low, high))]
    text = " ".join(words)
    if lines and rng.random() < 0.2:
        text += "\n" + " ".join(rng.choice(_WORDS) for _ in range(3))
    return text


def _schema(rng: random.Random, depth: int) -> dict[str, Any]:
    kinds = ["string", "integer", "number", "boolean", "enum", "array_s", "nullable", "other"]
    if depth < 2:
        kinds += ["object", "array_o", "one_of", "one_of_object", "array_a"]
    kind = rng.choice(kinds)
    schema: dict[str, Any]
    if kind == "enum":
        schema = {"type": "string", "enum": rng.sample(["a", "b", "ç", "d-e", "f"], 3)}
    elif kind == "array_s":
        schema = {"type": "array", "items": {"type": rng.choice(["string", "integer"])}}
    elif kind == "nullable":
        schema = {"type": "string", "nullable": True}
    elif kind == "object":
        schema = _object(rng, depth + 1)
    elif kind == "array_o":
        schema = {"type": "array", "items": _object(rng, depth + 1)}
    elif kind == "one_of":
        schema = {"oneOf": [{"type": "string", "description": _text(rng, 1, 2, lines=False)}, {"type": "number"}]}
    elif kind == "one_of_object":
        schema = {"oneOf": [_object(rng, depth + 1), {"type": "string", "default": "ü"}]}
    elif kind == "array_a":
        schema = {"type": "array", "items": {"type": "array", "items": _schema(rng, depth + 1)}}
    elif kind == "other":  # what both TypeScript renderings write as `any` or a union
        schema = rng.choice(
            [{"anyOf": [{"type": "string"}, {"type": "integer"}]}, {"$ref": "#/$defs/x"},
             {"const": "x"}, {"type": ["string", "null"]}, {"type": "array"}]
        )
    else:
        schema = {"type": kind}
    if rng.random() < 0.4:
        schema["description"] = _text(rng, 1, 4, lines=False)
    if kind in ("string", "integer", "boolean") and rng.random() < 0.3:
        schema["default"] = {"string": "x é", "integer": 3, "boolean": False}[kind]
    return schema


def _object(rng: random.Random, depth: int) -> dict[str, Any]:
    names = rng.sample(["city", "unit", "query", "limit", "tags", "opts", "path", "mode"], 3)
    properties = {name: _schema(rng, depth) for name in names[: rng.randint(1, 3)]}
    required = [name for name in properties if rng.random() < 0.5]
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _tools(rng: random.Random) -> list[dict[str, Any]]:
    tools = []
    for name in rng.sample(["get_weather", "search_docs", "read_file", "run_job"], rng.randint(1, 3)):
        function: dict[str, Any] = {"name": name, "description": _text(rng, 2, 6, lines=False)}
        if rng.random() < 0.85:
            function["parameters"] = _object(rng, 0)
        tools.append({"type": "function", "function": function})
    return tools


def _arguments(rng: random.Random) -> str:
    value = {"city": rng.choice(_WORDS), "limit": rng.randint(1, 9), "tags": [rng.choice(_WORDS)]}
    if rng.random() < 0.3:
        value["opts"] = {"nested": {"deep": rng.choice(_WORDS)}, "n": None}
    separators = (",", ":") if rng.random() < 0.5 else (", ", ": ")
    return json.dumps(value, ensure_ascii=rng.random() < 0.3, separators=separators)


def _result(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return json.dumps({"ok": True, "value": _text(rng, 1, 3)}, ensure_ascii=False)
    return _text(rng, 2, 10)


def _turn(rng: random.Random, tools: list[dict[str, Any]], parallel: bool) -> list[dict[str, Any]]:
    """One assistant turn: zero to three tool rounds, then (usually) an answer."""
    messages: list[dict[str, Any]] = []
    for _ in range(rng.randint(0, 3) if tools else 0):
        count = 2 if parallel and rng.random() < 0.3 else 1
        calls = [
            {
                "id": f"call_{rng.randrange(10**9)}",
                "type": "function",
                "function": {
                    "name": rng.choice(tools)["function"]["name"],
                    "arguments": _arguments(rng),
                },
            }
            for _ in range(count)
        ]
        message: dict[str, Any] = {"role": "assistant", "tool_calls": calls}
        if rng.random() < 0.6:
            message["reasoning_content"] = _text(rng)
        elif rng.random() < 0.3:
            message["content"] = _text(rng)  # a preamble
        messages.append(message)
        messages += [
            {"role": "tool", "tool_call_id": call["id"], "content": _result(rng)} for call in calls
        ]
    if not messages or rng.random() < 0.9:
        answer: dict[str, Any] = {"role": "assistant", "content": _text(rng)}
        if rng.random() < 0.5:
            answer["reasoning_content"] = _text(rng)
        messages.append(answer)
    return messages


def generated_requests(count: int, *, seed: int = 26, parallel: bool = False) -> list[dict[str, Any]]:
    """``count`` render requests (the conformance suite's shape: conversation, mode, date)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        tools = _tools(rng) if rng.random() < 0.8 else []
        messages: list[dict[str, Any]] = []
        if rng.random() < 0.6:
            messages.append({"role": "system", "content": _text(rng, 2, 10)})
        for _turn_index in range(rng.randint(1, 3)):
            messages.append({"role": "user", "content": _text(rng)})
            messages += _turn(rng, tools, parallel)
        if rng.random() < 0.3:
            messages.append({"role": "user", "content": _text(rng)})
        body: dict[str, Any] = {"messages": messages}
        if tools:
            body["tools"] = tools
        if rng.random() < 0.4:
            body["reasoning_effort"] = rng.choice(["low", "medium", "high"])
        ends_with_answer = messages[-1]["role"] == "assistant"
        mode = rng.choice(["conversation", "prompt", "training"] if ends_with_answer else ["conversation", "prompt"])
        request: dict[str, Any] = {"kind": "render", "conversation": body, "mode": mode}
        request["current_date"] = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        if rng.random() < 0.2:
            request["auto_drop_analysis"] = False
        out.append(request)
    return out


def vllm_requests(count: int) -> list[dict[str, Any]]:
    """:func:`generated_requests` as the ``vllm-0.34`` profile's references take them: every
    one as a prompt (vLLM renders for completion only), and in every other one each assistant
    message with calls and reasoning gains a text too, and the conversation ends at its last
    tool result (a tool loop in progress, whose reasoning vLLM keeps), so that vLLM's order
    (text, reasoning, calls) is exercised; the generator alone never gives a message both."""
    out = []
    for index, request in enumerate(generated_requests(count)):
        request = {**request, "mode": "prompt"}
        if index % 2:
            messages = []
            body = request["conversation"]["messages"]
            tools = [at for at, message in enumerate(body) if message["role"] == "tool"]
            for message in body[: tools[-1] + 1] if tools else body:
                if message.get("tool_calls") and "reasoning_content" in message:
                    message = {**message, "content": f"Checking {index} — ünï 🙂"}
                messages.append(message)
            request["conversation"] = {**request["conversation"], "messages": messages}
        out.append(request)
    return out
