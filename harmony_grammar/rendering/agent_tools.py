"""The tool kinds agents send beyond functions: namespaces, custom tools, hosted tools.

Codex CLI and the Agents SDK send Responses API ``tools`` lists that mix four kinds
(harmony-format.md §10). Each maps onto Harmony as follows:

* ``function``: a tool of the ``functions`` namespace, as before (``to=functions.NAME``);
* ``namespace``: its own ``## NAME`` section of ``# Tools`` in the developer message, one
  TypeScript block, and calls ``to=NAME.fn``. Harmony has namespaces natively (``browser``
  is one), so nothing is invented;
* ``custom``: a tool of ``functions`` whose input is raw text. It is declared
  ``type NAME = (_: string) => any;`` with a comment saying the input is raw text, not JSON
  (and, with a grammar, the grammar itself, line by line), and called without a
  ``<|constrain|>json`` content type; the turn grammar holds the body to the grammar;
* hosted tools (``web_search``, ``file_search``, ...): the gateway cannot run them, so they
  are left out of the prompt, and :attr:`RequestTools.hosted` names them for the caller to
  report.

Chat Completions has no namespace kind; a function whose name is ``NAMESPACE.fn`` is read
as the function ``fn`` of the namespace ``NAMESPACE`` (:func:`split_namespaced`), rendered and
called the same way. Every name and description goes through the renderer's TypeScript
writer (:mod:`harmony_grammar.rendering.typescript`), which checks names and escapes comments.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..declarations.custom import FUNCTIONS, CustomBody, read_custom_format
from ..declarations.spec import ToolNamespace, ToolSpec
from ..declarations.toolset import ToolSet

__all__ = [
    "RequestTools",
    "chat_recipient",
    "chosen",
    "custom_tool_spec",
    "declared",
    "read_tools",
    "recipient",
    "split_namespaced",
]

#: Makes the bridge's error from a message and the path it locates.
ErrorFactory = Callable[[str, str], Exception]

#: Why a custom tool's input is declared a string: it is raw text, written as is.
_RAW_INPUT = "The input is raw text, not JSON: write it as is."
_GRAMMAR_WORDS = {"lark": "this Lark grammar", "regex": "this regular expression"}


@dataclass(frozen=True)
class RequestTools:
    """A tools list read for rendering: the ``functions`` namespace (custom tools as their
    string-taking declarations), the other namespaces, and the hosted tools left out."""

    functions: tuple[ToolSpec, ...] = ()
    namespaces: tuple[ToolNamespace, ...] = ()
    hosted: tuple[str, ...] = ()


def recipient(name: str, namespace: str | None = None) -> str:
    """The recipient a call to ``name`` is written to: ``NAMESPACE.name``, or
    ``functions.name`` without a namespace."""
    return f"{namespace or FUNCTIONS}.{name}"


def custom_tool_spec(name: str, description: str, body: CustomBody) -> ToolSpec:
    """A custom tool's declaration: a string argument, described as raw text (and its
    grammar, when it has one)."""
    lines = [description] if description else []
    lines.append(_RAW_INPUT)
    if body.syntax != "text":
        lines.append(f"It must match {_GRAMMAR_WORDS[body.syntax]}:")
        lines.append(body.definition)
    return ToolSpec(name, "\n".join(lines), {"type": "string"})


def _function_spec(tool: Mapping[str, Any], path: str, error: ErrorFactory) -> ToolSpec:
    name, description = tool.get("name"), tool.get("description") or ""
    parameters = tool.get("parameters")
    if not isinstance(name, str) or not isinstance(description, str):
        raise error("needs a string name (and description)", path)
    if parameters is not None and not isinstance(parameters, Mapping):
        raise error("parameters must be a JSON Schema object", path)
    return ToolSpec(name, description, parameters)


def _entry_spec(tool: Mapping[str, Any], path: str, error: ErrorFactory) -> ToolSpec:
    """A function or custom entry of a Responses tools list (or of a namespace)."""
    if tool.get("type") != "custom":
        return _function_spec(tool, path, error)
    name, description = tool.get("name"), tool.get("description") or ""
    if not isinstance(name, str) or not isinstance(description, str):
        raise error("needs a string name (and description)", path)
    try:
        body = read_custom_format(tool.get("format"))
    except ValueError as exc:
        raise error(str(exc), f"{path}.format") from None
    return custom_tool_spec(name, description, body)


def read_tools(tools: Any, error: ErrorFactory) -> RequestTools:
    """A Responses API ``tools`` list read into :class:`RequestTools`.

    Function and custom tools go to ``functions``, namespace tools to their own namespace;
    any other type is hosted (``web_search``, ``file_search``, ``code_interpreter``, ...):
    left out, and named in ``hosted`` once each. Raises ``error`` with a path.
    """
    if tools is None:
        return RequestTools()
    if not isinstance(tools, list):
        raise error("must be a list", "tools")
    functions: list[ToolSpec] = []
    namespaces: list[ToolNamespace] = []
    hosted: list[str] = []
    for i, tool in enumerate(tools):
        path = f"tools[{i}]"
        if not isinstance(tool, Mapping) or not isinstance(tool.get("type"), str):
            raise error("must be an object with a type", path)
        kind = tool["type"]
        if kind in ("function", "custom"):
            spec = _entry_spec(tool, path, error)
            _refuse_duplicate(spec, functions, path, error)
            functions.append(spec)
        elif kind == "namespace":
            namespace = _namespace(tool, path, error)
            if namespace.name == FUNCTIONS or any(n.name == namespace.name for n in namespaces):
                # One section per name: a second would silently replace the first.
                raise error(
                    f"a namespace may not be named {namespace.name!r}: "
                    + (
                        "that is the function tools' namespace"
                        if namespace.name == FUNCTIONS
                        else "an earlier namespace has that name"
                    ),
                    f"{path}.name",
                )
            namespaces.append(namespace)
        elif kind not in hosted:
            hosted.append(kind)
    return RequestTools(tuple(functions), tuple(namespaces), tuple(hosted))


def _refuse_duplicate(
    spec: ToolSpec, earlier: Sequence[ToolSpec], path: str, error: ErrorFactory
) -> None:
    # Two tools of one name: the model would see both and a call could mean either.
    for i, other in enumerate(earlier):
        if other.name == spec.name:
            raise error(f"tool name {spec.name!r} is already declared (tool {i} of its list)", path)


def _namespace(tool: Mapping[str, Any], path: str, error: ErrorFactory) -> ToolNamespace:
    name, description = tool.get("name"), tool.get("description")
    inner = tool.get("tools")
    if not isinstance(name, str) or not (description is None or isinstance(description, str)):
        raise error("a namespace needs a string name (and description)", path)
    if not isinstance(inner, list) or not inner:
        raise error("a namespace needs a non-empty list of tools", f"{path}.tools")
    specs: list[ToolSpec] = []
    for j, entry in enumerate(inner):
        where = f"{path}.tools[{j}]"
        if not isinstance(entry, Mapping) or entry.get("type", "function") not in (
            "function",
            "custom",
        ):
            raise error("a namespace holds function and custom tools only", where)
        spec = _entry_spec(entry, where, error)
        _refuse_duplicate(spec, specs, where, error)
        specs.append(spec)
    return ToolNamespace(name, description or None, tuple(specs))


def _declared_entry(entry: Mapping[str, Any]) -> ToolSpec:
    """One function or custom entry of a :class:`ToolSet` as its declaration (ValueError
    for a description or parameters the renderer cannot write)."""
    spec = entry.get("function", entry) if entry.get("type", "function") == "function" else entry
    name, description = spec.get("name"), spec.get("description") or ""
    if not isinstance(name, str) or not isinstance(description, str):
        raise ValueError("a tool needs a string name (and description)")
    if entry.get("type") == "custom":
        return custom_tool_spec(name, description, read_custom_format(entry.get("format")))
    parameters = spec.get("parameters")
    if parameters is not None and not isinstance(parameters, Mapping):
        raise ValueError("a tool's parameters must be a JSON Schema object")
    return ToolSpec(name, description, parameters)


def declared(tools: ToolSet, *, chat: bool = False) -> RequestTools:
    """What the developer message declares for a :class:`ToolSet` (the tools read once):
    function and custom tools in ``functions``, each namespace in its own section, hosted
    tools named. ``chat``: a Chat request's set (its function tools nest their fields under
    ``function``; it has no hosted tools). Raises ValueError (no path: the caller locates it
    by reading the list with :func:`read_tools` or the Chat bridge's reader) for anything
    the renderer cannot declare."""
    if chat and tools.hosted:
        raise ValueError(f"tool type {tools.hosted[0]!r} is not supported")
    functions: list[ToolSpec] = []
    namespaces: list[ToolNamespace] = []
    for entry in tools.callables:
        kind = entry.get("type")
        if kind != "namespace":
            if chat and kind != "custom" and not isinstance(entry.get("function"), Mapping):
                raise ValueError("a Chat function tool needs function.name")
            functions.append(_declared_entry(entry))
            continue
        name, description = entry.get("name"), entry.get("description")
        if name == FUNCTIONS or any(n.name == name for n in namespaces):
            raise ValueError(f"a namespace may not be named {name!r}")
        if not isinstance(name, str) or not (description is None or isinstance(description, str)):
            raise ValueError("a namespace needs a string name (and description)")
        inner = tuple(_declared_entry(e) for e in entry.get("tools") or ())
        namespaces.append(ToolNamespace(name, description or None, inner))
    return RequestTools(tuple(functions), tuple(namespaces), tools.hosted)


def split_namespaced(
    specs: Sequence[ToolSpec], error: ErrorFactory
) -> tuple[tuple[ToolSpec, ...], tuple[ToolNamespace, ...]]:
    """Chat tools with ``NAMESPACE.fn`` names as namespaces; the rest stay functions.

    The split is at the first dot; namespaces keep the order their first tool had. A name
    in the ``functions`` namespace itself (``functions.fn``) raises ``error``: it would be
    declared as ``fn`` and called back under another name.
    """
    functions: list[ToolSpec] = []
    grouped: dict[str, list[ToolSpec]] = {}
    for spec in specs:
        namespace, dot, name = spec.name.partition(".")
        if not dot:
            functions.append(spec)
            continue
        if namespace == FUNCTIONS:
            raise error(
                f"tool {spec.name!r}: name it {name!r}; functions is the namespace every "
                "plain function is in",
                "tools",
            )
        grouped.setdefault(namespace, []).append(ToolSpec(name, spec.description, spec.parameters))
    namespaces = tuple(ToolNamespace(ns, None, tuple(tools)) for ns, tools in grouped.items())
    return tuple(functions), namespaces


def chat_recipient(name: str) -> str:
    """The recipient of a Chat tool call named ``name`` (``NAMESPACE.fn`` stays as it is)."""
    return name if "." in name else recipient(name)


def chosen(tools: RequestTools, choice: Any, error: ErrorFactory) -> RequestTools:
    """The tools a Responses ``tool_choice`` lets the model see: all (``auto``,
    ``required``, absent), none, or the one named (``{"type": "function" | "custom",
    "name", "namespace"?}``). Hosted tools are kept, to be reported."""
    if choice in (None, "auto", "required"):
        return tools
    if choice == "none":
        return RequestTools(hosted=tools.hosted)
    if (
        not isinstance(choice, Mapping)
        or choice.get("type") not in ("function", "custom")
        or not isinstance(choice.get("name"), str)
    ):
        raise error(
            "must be 'auto', 'required', 'none' or {'type': 'function', 'name': ...}",
            "tool_choice",
        )
    name, namespace = choice["name"], choice.get("namespace")
    if namespace is None:
        hits = tuple(spec for spec in tools.functions if spec.name == name)
        if hits:
            return RequestTools(hits, (), tools.hosted)
    for group in tools.namespaces:
        if namespace in (None, group.name):
            inner = tuple(spec for spec in group.tools if spec.name == name)
            if inner:
                narrowed = ToolNamespace(group.name, group.description, inner)
                return RequestTools((), (narrowed,), tools.hosted)
    raise error(f"names {name!r}, which is not among the tools", "tool_choice")
