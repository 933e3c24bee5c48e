"""Custom tools and namespaces: the tool kinds of the Responses API beyond plain functions.

A **custom** tool (OpenAI's ``{"type": "custom", "name", "format"}``) takes raw text, not a
JSON object: free text (``format: {"type": "text"}``), or text that a Lark or regex grammar
accepts (``{"type": "grammar", "syntax": "lark" | "regex", "definition"}``). Its input is a
:class:`CustomBody` wherever a function has its parameters schema: the turn grammar
constrains the body by it, and the parser's argument check leaves it alone (it is not JSON).

A **namespace** tool (``{"type": "namespace", "name", "description", "tools"}``) groups
functions (and custom tools) under a name of their own: Harmony's ``## name`` section, and a
call's recipient ``to=name.fn``. :func:`tool_targets` lists every callable tool of a tools
list by the recipient the model writes to call it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .names import check_tool_name

__all__ = ["CUSTOM_SYNTAXES", "FUNCTIONS", "CustomBody", "chat_custom_entry", "read_custom_format"]

#: The namespace of plain function tools (``to=functions.NAME``).
FUNCTIONS = "functions"
#: How a custom tool's input may be given: free text, or a grammar in one of two syntaxes.
CUSTOM_SYNTAXES = ("text", "lark", "regex")


@dataclass(frozen=True)
class CustomBody:
    """A custom tool's input: raw text, free (``syntax="text"``) or under ``definition``, a
    Lark grammar (``"lark"``, llguidance's dialect) or a regex (``"regex"``, Rust syntax)."""

    syntax: str = "text"
    definition: str = ""

    def to_json(self) -> dict[str, Any]:
        """The OpenAI ``format`` object this body came from."""
        if self.syntax == "text":
            return {"type": "text"}
        return {"type": "grammar", "syntax": self.syntax, "definition": self.definition}


def read_custom_format(fmt: Any) -> CustomBody:
    """A custom tool's ``format`` (absent means free text); ``ValueError`` with one line."""
    if fmt is None:
        return CustomBody()
    if not isinstance(fmt, Mapping):
        raise ValueError("a custom tool's format must be an object")
    kind = fmt.get("type")
    if kind == "text":
        return CustomBody()
    if kind != "grammar":
        raise ValueError(f"a custom tool's format type must be 'text' or 'grammar', not {kind!r}")
    syntax, definition = fmt.get("syntax"), fmt.get("definition")
    if syntax not in ("lark", "regex"):
        raise ValueError(f"a grammar format's syntax must be 'lark' or 'regex', not {syntax!r}")
    if not isinstance(definition, str) or not definition.strip():
        raise ValueError("a grammar format needs its definition as a non-empty string")
    return CustomBody(syntax, definition)


def chat_custom_entry(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A Chat Completions custom tool (``{"type": "custom", "custom": {"name", "description",
    "format"}}``, a grammar format as ``{"type": "grammar", "grammar": {"syntax",
    "definition"}}``) as the Responses API's entry (``{"type": "custom", "name", ...}``, the
    grammar's fields at the format's top level), so that one reader serves both APIs.
    ``ValueError`` with one line when it is not of that shape."""
    custom = tool.get("custom")
    if not isinstance(custom, Mapping):
        raise ValueError("a custom tool needs its 'custom' object (name, description, format)")
    entry: dict[str, Any] = {"type": "custom", **custom}
    fmt = custom.get("format")
    if isinstance(fmt, Mapping) and fmt.get("type") == "grammar":
        grammar = fmt.get("grammar")
        if not isinstance(grammar, Mapping):
            raise ValueError("a grammar format needs its 'grammar' object (syntax, definition)")
        entry["format"] = {"type": "grammar", **grammar}
    return entry


def entry_body(tool: Mapping[str, Any]) -> Any:
    """The body of one function or custom entry: its parameters schema, or a CustomBody."""
    if tool.get("type") == "custom":
        return read_custom_format(tool.get("format"))
    spec = tool.get("function", tool)
    parameters = spec.get("parameters") if isinstance(spec, Mapping) else None
    return parameters if parameters is not None else {"type": "object"}


def namespace_entries(
    tool: Mapping[str, Any],
) -> Iterable[tuple[str, Mapping[str, Any]]]:
    """``(name, entry)`` for each function or custom tool inside a namespace entry."""
    namespace = check_tool_name(tool.get("name"), what="namespace")
    inner = tool.get("tools")
    if not isinstance(inner, list) or not inner:
        raise ValueError(f"namespace {namespace!r} needs a non-empty list of tools")
    for entry in inner:
        if not isinstance(entry, Mapping) or entry.get("type", "function") not in (
            "function",
            "custom",
        ):
            raise ValueError(f"namespace {namespace!r} may hold function and custom tools only")
        yield namespace, entry
