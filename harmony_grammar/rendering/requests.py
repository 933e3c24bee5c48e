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
from ..declarations.toolset import ToolSet
from .agent_tools import RequestTools, declared
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
    "content_text",
    "head_items",
    "read_toolset",
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


def read_toolset(
    request: Mapping[str, Any],
    toolset: ToolSet | None,
    error: ErrorFactory,
    locate: Callable[[], RequestTools],
    *,
    chat: bool,
) -> tuple[ToolSet | None, RequestTools, str | None]:
    """The request's tools read once (:meth:`ToolSet.read`, or ``toolset`` as given), what
    the developer message declares for them (:func:`~.agent_tools.declared`), and None.

    Where either step fails, ``locate()`` reads the raw list entry by entry: it raises
    ``error`` with the path of what is wrong (``tools[2].format``). When it finds nothing
    wrong, the problem is one only the set sees (a parameters schema that cannot check
    anything, a name the grammar cannot hold): the tools are declared as ``locate`` read
    them, so the prompt still renders, and the set is None with the problem as the third
    item, for a caller that needs the set (the gateway's grammar) to refuse with.
    """
    tools = request.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise error("must be a list", "tools")
    try:
        toolset = toolset if toolset is not None else ToolSet.read(tools, chat=chat)
        return toolset, declared(toolset, chat=chat), None
    except ValueError as exc:
        return None, locate(), str(exc)


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
