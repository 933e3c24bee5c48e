"""Request reading shared by the Chat Completions and Responses bridges.

Both bridges read message content given as a string or as text parts (:func:`content_text`),
read a ``tools`` list into :class:`ToolSpec` s, narrow it by ``tool_choice``,
set the system message's reasoning effort and put instructions and tools in one developer
message. Only the JSON shapes differ (a Chat tool nests its function under ``function``, a
Responses tool is flat), so each bridge passes the small part that reads its shape and its
own error class; the checks, their order and the paths in the errors live here once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from ..declarations.spec import ToolNamespace, ToolSpec
from .conversation import (
    ConversationItem,
    DeveloperContent,
    ReasoningEffort,
    ResponseFormat,
    SystemContent,
)

__all__ = [
    "ErrorFactory",
    "ToolReader",
    "chosen_tools",
    "content_text",
    "head_items",
    "tool_specs",
    "with_reasoning_effort",
]

#: Makes the bridge's error from a message and the path it locates (its error class).
#: A factory, not an import of the class: chat.py imports this module.
ErrorFactory = Callable[[str, str], Exception]

#: Reads one tool entry (already known to be a function tool) at ``path`` into a spec.
ToolReader = Callable[[Mapping[str, Any], str], ToolSpec]


def content_text(content: Any, path: str, error: ErrorFactory, part_types: Collection[str]) -> str:
    """Content at ``path``: a string, null (``""``), or a list of text parts joined, each a
    ``{"type": T, "text": "..."}`` with ``T`` in ``part_types``. Anything else raises
    ``error`` with the path of what is wrong (``messages[1].content[2].text``)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise error("must be a string, null or a list of text parts", path)
    texts: list[str] = []
    for i, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
        if kind not in part_types:
            raise error(
                f"content part of type {kind!r} is not supported (text only)", f"{path}[{i}]"
            )
        text = part.get("text")
        if not isinstance(text, str):
            raise error("text must be a string", f"{path}[{i}].text")
        texts.append(text)
    return "".join(texts)


def tool_specs(
    request: Mapping[str, Any],
    read_tool: ToolReader,
    error: ErrorFactory,
    *,
    default_type: str | None = None,
    types: tuple[str, ...] = ("function",),
) -> list[ToolSpec]:
    """The request's ``tools``, each a tool of one of ``types`` read by ``read_tool``.

    ``default_type`` is the type an entry without ``type`` has (Chat Completions assumes
    ``function``; the Responses API requires the key). Raises ``error`` with a path, also
    for a name that an earlier tool already has.
    """
    tools = request.get("tools") or []
    if not isinstance(tools, list):
        raise error("must be a list", "tools")
    specs: list[ToolSpec] = []
    first: dict[str, int] = {}
    for i, tool in enumerate(tools):
        path = f"tools[{i}]"
        if not isinstance(tool, Mapping) or tool.get("type", default_type) not in types:
            kind = tool.get("type") if isinstance(tool, Mapping) else tool
            raise error(f"tool type {kind!r} is not supported ({', '.join(types)})", path)
        spec = read_tool(tool, path)
        # Two tools of one name: the model would see both and a call could mean either.
        if spec.name in first:
            raise error(
                f"tool name {spec.name!r} is already declared by tools[{first[spec.name]}]", path
            )
        first[spec.name] = i
        specs.append(spec)
    return specs


def chosen_tools(
    request: Mapping[str, Any],
    specs: Sequence[ToolSpec],
    named: Callable[[Any], Mapping[str, Any] | None],
    error: ErrorFactory,
    forms: str,
) -> list[ToolSpec]:
    """The tools ``tool_choice`` lets the model see: all, none, or the one named.

    ``named(choice)`` is the mapping whose ``name`` a named choice gives (None when the
    choice is not of the named form); ``forms`` lists the accepted forms for the error.
    """
    choice = request.get("tool_choice")
    if choice in (None, "auto", "required"):
        return list(specs)
    if choice == "none":
        return []
    holder = named(choice)
    if holder is not None:
        name = holder.get("name")
        chosen = [spec for spec in specs if spec.name == name]
        if not chosen:
            raise error(f"names {name!r}, which is not among the tools", "tool_choice")
        return chosen
    raise error(f"must be {forms}", "tool_choice")


def with_reasoning_effort(
    system: SystemContent, effort: Any, error: ErrorFactory, path: str
) -> SystemContent:
    """``system`` with the requested reasoning effort (unchanged when ``effort`` is None)."""
    if effort is None:
        return system
    try:
        return dataclasses.replace(system, reasoning_effort=ReasoningEffort(effort))
    except ValueError:
        # gpt-oss was trained on low, medium and high only; "minimal" or "xhigh" has no line.
        raise error(f"{effort!r} is not one of low, medium, high", path) from None


def head_items(
    system: SystemContent,
    instructions: Sequence[str],
    tools: Iterable[ToolSpec],
    formats: tuple[ResponseFormat, ...] = (),
    *,
    namespaces: tuple[ToolNamespace, ...] = (),
) -> list[ConversationItem]:
    """The system message, and a developer message when there is anything to put in one.

    The developer message holds the instructions (joined by a blank line), the tools (the
    ``functions`` namespace, then any other ``namespaces``) and the response formats.
    """
    tools = tuple(tools)
    head: list[ConversationItem] = [system]
    if instructions or tools or formats or namespaces:
        head.append(
            DeveloperContent(
                instructions="\n\n".join(instructions) if instructions else None,
                tools=tools,
                namespaces=namespaces,
                response_formats=formats,
            )
        )
    return head
