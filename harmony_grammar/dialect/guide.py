"""The in-band dialect's system-prompt part: the format guide and a compact tool catalogue.

An agent that owns the tool protocol in text (harmony-format.md §8: oh-my-pi's "owned
dialect") removes the provider's native tools and puts this into its system prompt instead
of the canonical developer-message ``namespace functions``: the nine rules the model's calls
must follow (§2, "Rules for the model's tool calls") and the tools as one line of JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..declarations.spec import ToolSpec
from ..safety.escaping import escape_control_tokens_in_json
from ..tools.parameters import checked_tools

__all__ = ["FORMAT_RULES", "dialect_prompt", "tool_catalogue"]

#: The format guide: the nine rules for the model's tool calls (harmony-format.md §2).
FORMAT_RULES: tuple[str, ...] = (
    "The recipient must be `functions.` followed by the name of a declared tool.",
    "The message body is one JSON object that matches the tool's parameters; omit arguments "
    "you do not set.",
    "Use plain JSON escaping only, never HTML entities.",
    "Several calls are several consecutive call messages, never one parallel wrapper.",
    "An optional preamble (what you are about to do) is a `commentary` message ending in "
    "`<|end|>`.",
    "Never put tool calls in `analysis`.",
    "Never wrap calls in Markdown code fences.",
    "Never write tool-result messages yourself: the host writes them.",
    "Stop only after the `<|call|>` message is complete; never announce a call and stop.",
)

_INTRO = (
    "# Tool calls\n\n"
    "You call tools by writing Harmony messages in your output. A call is one message:\n"
    "<|start|>assistant<|channel|>commentary to=functions.NAME<|message|>{JSON arguments}"
    "<|call|>\n"
    "Rules:"
)


def _entries(tools: Iterable[ToolSpec | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``{name, description, parameters}`` per tool, from specs or OpenAI-style/plain dicts."""
    entries: list[dict[str, Any]] = []
    plain: list[Mapping[str, Any]] = []
    for tool in tools:
        if isinstance(tool, ToolSpec):
            plain.append({"name": tool.name, "parameters": tool.parameters})
            entries.append({"name": tool.name, "description": tool.description})
            continue
        if not isinstance(tool, Mapping):
            raise ValueError(f"a tool must be a ToolSpec or an object, not {type(tool).__name__}")
        spec = tool.get("function", tool) if tool.get("type", "function") == "function" else tool
        plain.append(tool)
        description = spec.get("description", "") if isinstance(spec, Mapping) else ""
        entries.append({"name": spec.get("name"), "description": description or ""})
    # One reading of tool lists for the whole package: names and schemas checked there.
    schemas = checked_tools(plain).schemas
    for entry in entries:
        if not entry["description"]:
            del entry["description"]
        entry["parameters"] = schemas[entry["name"]]
    return entries


def tool_catalogue(tools: Iterable[ToolSpec | Mapping[str, Any]]) -> str:
    """The tools as one line of compact JSON (``[{"name":…,"description":…,"parameters":…}]``),
    control-token spellings escaped so the catalogue cannot forge Harmony structure."""
    text = json.dumps(_entries(tools), ensure_ascii=False, separators=(",", ":"))
    return escape_control_tokens_in_json(text)


def dialect_prompt(tools: Iterable[ToolSpec | Mapping[str, Any]]) -> str:
    """The format guide (the nine rules) and the tool catalogue, for a system prompt.

    ``tools`` are :class:`~harmony_grammar.declarations.spec.ToolSpec` s or OpenAI-style / plain
    ``{name, description, parameters}`` dicts. Raises ``ValueError`` (one line naming the
    tool) for a malformed tool.
    """
    rules = "\n".join(f"{i}. {rule}" for i, rule in enumerate(FORMAT_RULES, 1))
    return f"{_INTRO}\n{rules}\n\n## Tools\n\n{tool_catalogue(tools)}\n"
