"""Hypothesis strategies for Chat Completions and Responses request bodies an agent sends.

The bodies hold what the request doors read: function tools, namespaces (Responses
``namespace`` tools, Chat functions named ``NAMESPACE.fn``), custom tools (free text or a
regex), a response format (Chat ``response_format``, Responses ``text.format``), history
with calls and their results, ``tool_choice`` and reasoning effort. Every body is valid:
each door must accept it, so a door that refuses one, or renders it differently, fails.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

__all__ = ["chat_bodies", "request_bodies", "responses_bodies"]

_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8).filter(
    lambda n: n[0] != "_" and n != "functions"
)
_WORDS = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=30
)
_PROPERTY_TYPES = st.sampled_from(["string", "integer", "boolean", "number"])


@st.composite
def _schemas(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(_NAMES, max_size=3, unique=True))
    properties = {name: {"type": draw(_PROPERTY_TYPES)} for name in names}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if names and draw(st.booleans()):
        schema["required"] = names[:1]
    return schema


def _arguments(schema: dict[str, Any]) -> str:
    values = {"string": "x", "integer": 1, "boolean": True, "number": 1.5}
    return json.dumps({k: values[v["type"]] for k, v in schema["properties"].items()})


@st.composite
def _tools(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Tools as neutral entries: ``{"kind", "name", "namespace", "description", "schema"}``."""
    names = draw(st.lists(_NAMES, max_size=4, unique=True))
    tools = []
    namespace = draw(_NAMES.filter(lambda n: n not in names))
    for name in names:
        kind = draw(st.sampled_from(["function", "function", "namespaced", "custom", "regex"]))
        tools.append(
            {
                "kind": kind,
                "name": name,
                "namespace": namespace if kind == "namespaced" else None,
                "description": draw(_WORDS),
                "schema": draw(_schemas()),
            }
        )
    return tools


def _recipient_name(tool: dict[str, Any]) -> str:
    return f"{tool['namespace']}.{tool['name']}" if tool["namespace"] else tool["name"]


def _chat_tool(tool: dict[str, Any]) -> dict[str, Any]:
    if tool["kind"] in ("custom", "regex"):
        custom: dict[str, Any] = {"name": tool["name"], "description": tool["description"]}
        if tool["kind"] == "regex":
            custom["format"] = {
                "type": "grammar",
                "grammar": {"syntax": "regex", "definition": "[a-z]{1,8}"},
            }
        return {"type": "custom", "custom": custom}
    function = {
        "name": _recipient_name(tool),
        "description": tool["description"],
        "parameters": tool["schema"],
    }
    return {"type": "function", "function": function}


def _responses_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    grouped: dict[str, list[dict[str, Any]]] = {}
    for tool in tools:
        if tool["kind"] in ("custom", "regex"):
            entry: dict[str, Any] = {
                "type": "custom",
                "name": tool["name"],
                "description": tool["description"],
            }
            if tool["kind"] == "regex":
                entry["format"] = {"type": "grammar", "syntax": "regex", "definition": "[a-z]{1,8}"}
        else:
            entry = {
                "type": "function",
                "name": tool["name"],
                "description": tool["description"],
                "parameters": tool["schema"],
            }
        if tool["namespace"] is None:
            out.append(entry)
            continue
        if tool["namespace"] not in grouped:
            grouped[tool["namespace"]] = []
            out.append({"type": "namespace", "name": tool["namespace"], "tools": grouped[tool["namespace"]]})
        grouped[tool["namespace"]].append(entry)
    return out


def _call_input(tool: dict[str, Any]) -> str:
    return "abc" if tool["kind"] in ("custom", "regex") else _arguments(tool["schema"])


_FORMAT = st.one_of(
    st.none(),
    st.just("json_object"),
    st.builds(lambda name, schema: (name, schema), _NAMES, _schemas()),
)


@st.composite
def chat_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """A Chat Completions body (see the module docstring)."""
    tools = draw(_tools())
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": draw(st.sampled_from(["system", "developer"])), "content": draw(_WORDS)})
    messages.append({"role": "user", "content": draw(_WORDS)})
    for turn in range(draw(st.integers(0, 2))):
        if tools and draw(st.booleans()):
            tool = draw(st.sampled_from(tools))
            call_id = f"call_{turn}"
            if tool["kind"] in ("custom", "regex"):
                call = {"id": call_id, "type": "custom", "custom": {"name": tool["name"], "input": "abc"}}
            else:
                call = {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": _recipient_name(tool), "arguments": _call_input(tool)},
                }
            assistant: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
            if draw(st.booleans()):
                assistant["reasoning_content"] = draw(_WORDS.filter(bool))
            messages += [assistant, {"role": "tool", "tool_call_id": call_id, "content": draw(_WORDS)}]
        else:
            messages.append({"role": "assistant", "content": draw(_WORDS)})
        messages.append({"role": "user", "content": draw(_WORDS)})
    body: dict[str, Any] = {"model": "tiny", "messages": messages}
    if tools:
        body["tools"] = [_chat_tool(tool) for tool in tools]
        choice = draw(st.sampled_from(["absent", "auto", "none", "required", "named"]))
        if choice == "named":
            tool = draw(st.sampled_from(tools))
            kind = "custom" if tool["kind"] in ("custom", "regex") else "function"
            body["tool_choice"] = {"type": kind, kind: {"name": _recipient_name(tool)}}
        elif choice != "absent":
            body["tool_choice"] = choice
    fmt = draw(_FORMAT)
    if fmt == "json_object":
        body["response_format"] = {"type": "json_object"}
    elif fmt is not None:
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": fmt[0], "schema": fmt[1]}}
    effort = draw(st.sampled_from([None, "low", "medium", "high"]))
    if effort is not None:
        body["reasoning_effort"] = effort
    return body


@st.composite
def responses_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """A Responses API body (see the module docstring)."""
    tools = draw(_tools())
    items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": draw(_WORDS)}]
    for turn in range(draw(st.integers(0, 2))):
        if tools and draw(st.booleans()):
            tool = draw(st.sampled_from(tools))
            call_id = f"call_{turn}"
            if draw(st.booleans()):
                items.append(
                    {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "hm"}]}
                )
            custom = tool["kind"] in ("custom", "regex")
            call: dict[str, Any] = {
                "type": "custom_tool_call" if custom else "function_call",
                "call_id": call_id,
                "name": tool["name"],
                "input" if custom else "arguments": _call_input(tool),
            }
            if tool["namespace"]:
                call["namespace"] = tool["namespace"]
            output = {
                "type": "custom_tool_call_output" if custom else "function_call_output",
                "call_id": call_id,
                "output": draw(_WORDS),
            }
            items += [call, output]
        else:
            items.append(
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": draw(_WORDS)}]}
            )
        items.append({"type": "message", "role": "user", "content": draw(_WORDS)})
    body: dict[str, Any] = {"model": "tiny", "input": items}
    if draw(st.booleans()):
        body["instructions"] = draw(_WORDS)
    if tools:
        body["tools"] = _responses_tools(tools)
        choice = draw(st.sampled_from(["absent", "auto", "none", "required", "named"]))
        if choice == "named":
            tool = draw(st.sampled_from(tools))
            named: dict[str, Any] = {
                "type": "custom" if tool["kind"] in ("custom", "regex") else "function",
                "name": tool["name"],
            }
            if tool["namespace"]:
                named["namespace"] = tool["namespace"]
            body["tool_choice"] = named
        elif choice != "absent":
            body["tool_choice"] = choice
    fmt = draw(_FORMAT)
    if isinstance(fmt, tuple):
        body["text"] = {"format": {"type": "json_schema", "name": fmt[0], "schema": fmt[1]}}
    effort = draw(st.sampled_from([None, "low", "medium", "high"]))
    if effort is not None:
        body["reasoning"] = {"effort": effort}
    return body


def request_bodies() -> st.SearchStrategy[dict[str, Any]]:
    """A Chat Completions or a Responses API body."""
    return st.one_of(chat_bodies(), responses_bodies())
