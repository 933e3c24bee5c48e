"""Responses API requests in: a request body as the conversation to render.

gpt-oss's primary API is OpenAI's Responses API (vLLM serves ``/v1/responses`` for it):
:func:`from_responses` turns a request body (``instructions``, ``input`` items, ``tools``,
``tool_choice``, ``text.format``, ``reasoning.effort``) into a :class:`Conversation`. The way
back, the model's completion as a response object or its events, is reading, not
rendering: :mod:`harmony_grammar.bridges.responses`. Tool-call arguments are strings passed
through verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..declarations.toolset import ToolSet
from .agent_tools import RequestTools, chosen, read_tools, recipient
from .chat import ChatCompletionError, ChatReading
from .conversation import (
    Conversation,
    ConversationItem,
    ResponseFormat,
    SystemContent,
    assistant_message,
    tool_call_message,
    tool_result_message,
    user_message,
)
from .requests import content_text, head_items, read_toolset, with_reasoning_effort

__all__ = ["ResponsesError", "from_responses", "read_responses"]


class ResponsesError(ChatCompletionError):
    """A Responses request that cannot be mapped; ``path`` locates it (``input[3]``)."""


# -- request -> conversation -------------------------------------------------------------

_TEXT_PARTS = ("input_text", "output_text", "text", "reasoning_text", "summary_text")


def _text(content: Any, path: str) -> str:
    """A string, or a list of text parts (``input_text``, ``output_text``, ...) joined."""
    return content_text(content, path, ResponsesError, _TEXT_PARTS)


def _tools(
    request: Mapping[str, Any], toolset: ToolSet | None
) -> tuple[ToolSet | None, RequestTools, str | None]:
    """The request's tools read once, and those ``tool_choice`` lets the model see (hosted
    ones named)."""
    tools = request.get("tools")
    for i, tool in enumerate(tools if isinstance(tools, list) else ()):
        # A Responses tool names its type (a function's, or a hosted tool's, left out).
        if not isinstance(tool, Mapping) or not isinstance(tool.get("type"), str):
            raise ResponsesError("must be an object with a type", f"tools[{i}]")
    toolset, declared, problem = read_toolset(
        request,
        toolset,
        ResponsesError,
        lambda: read_tools(request.get("tools"), ResponsesError),
        chat=False,
    )
    return toolset, chosen(declared, request.get("tool_choice"), ResponsesError), problem


def _system(request: Mapping[str, Any], system: SystemContent) -> SystemContent:
    reasoning = request.get("reasoning")
    effort = reasoning.get("effort") if isinstance(reasoning, Mapping) else None
    return with_reasoning_effort(system, effort, ResponsesError, "reasoning.effort")


def _response_formats(request: Mapping[str, Any]) -> tuple[ResponseFormat, ...]:
    text = request.get("text")
    fmt = text.get("format") if isinstance(text, Mapping) else None
    if fmt is None or (isinstance(fmt, Mapping) and fmt.get("type") == "text"):
        return ()
    if not isinstance(fmt, Mapping) or fmt.get("type") != "json_schema":
        kind = fmt.get("type") if isinstance(fmt, Mapping) else fmt
        raise ResponsesError(f"format {kind!r} is not supported (text, json_schema)", "text.format")
    name, schema = fmt.get("name"), fmt.get("schema")
    if not isinstance(name, str) or not isinstance(schema, Mapping):
        raise ResponsesError("json_schema needs a name and a schema object", "text.format")
    description = fmt.get("description")
    return (ResponseFormat(name, schema, description if isinstance(description, str) else None),)


def _input_item(
    item: Mapping[str, Any], path: str, call_names: dict[str, str], instructions: list[str]
) -> list[ConversationItem]:
    kind = item.get("type", "message")
    if kind == "message":
        role, content = item.get("role"), _text(item.get("content"), f"{path}.content")
        if role in ("system", "developer"):
            instructions.append(content)
            return []
        if role == "user":
            return [user_message(content)]
        if role == "assistant":
            # A commentary-phase message is a preamble; everything else is a final answer.
            channel = "commentary" if item.get("phase") == "commentary" else "final"
            return [assistant_message(content, channel=channel)]
        raise ResponsesError(f"role {role!r} is not supported", path)
    if kind == "reasoning":
        parts = item.get("content") or item.get("summary") or []
        text = _text(parts, f"{path}.content")
        # Encrypted reasoning alone has no text to render: the item is dropped.
        return [assistant_message(text, channel="analysis")] if text else []
    if kind in ("function_call", "custom_tool_call"):
        # A function call's arguments are JSON (<|constrain|>json); a custom tool's input
        # is raw text, written without a content type, as the model wrote it.
        custom = kind == "custom_tool_call"
        field = "input" if custom else "arguments"
        name, arguments = item.get("name"), item.get(field, "")
        namespace = item.get("namespace")
        if (
            not isinstance(name, str)
            or not isinstance(arguments, str)
            or not (namespace is None or isinstance(namespace, str))
        ):
            raise ResponsesError(f"{kind} needs a name and an {field} string", path)
        to = recipient(name, namespace)
        if isinstance(item.get("call_id"), str):
            call_names[item["call_id"]] = to
        if custom:
            return [tool_call_message(to, arguments, content_type=None)]
        return [tool_call_message(to, arguments)]
    if kind in ("function_call_output", "custom_tool_call_output"):
        call_id = item.get("call_id")
        if not isinstance(call_id, str):
            # Checked before the lookup: a list or an object cannot key the calls (TypeError).
            raise ResponsesError("call_id must be a string", f"{path}.call_id")
        if call_id not in call_names:
            raise ResponsesError(
                f"call_id {call_id!r} does not match any earlier call in input", path
            )
        output = _text(item.get("output"), f"{path}.output")
        return [tool_result_message(call_names[call_id], output)]
    raise ResponsesError(f"input item of type {kind!r} is not supported", path)


def from_responses(
    request: Mapping[str, Any],
    *,
    system: SystemContent | None = None,
    toolset: ToolSet | None = None,
) -> Conversation:
    """A conversation from a Responses API request body.

    The conversation starts with ``system`` (default: openai-harmony's ``SystemContent``,
    with ``reasoning.effort``), then a developer message holding ``instructions`` (and any
    ``system``/``developer`` input messages), the function tools ``tool_choice`` allows and
    ``text.format``'s JSON schema as a response format. ``input`` is a string (one user
    message) or a list of items: messages (an assistant message is a final answer, or a
    preamble when its ``phase`` is ``commentary``), ``reasoning`` (analysis),
    ``function_call`` (a ``functions.*`` call, arguments verbatim) and
    ``function_call_output`` (the result from the function its ``call_id`` names).
    ``toolset``: the request's tools already read (:meth:`ToolSet.read`), used as given.
    Raises :class:`ResponsesError` with a path.
    """
    return read_responses(request, system=system, toolset=toolset)[0]


def read_responses(
    request: Mapping[str, Any],
    *,
    system: SystemContent | None = None,
    toolset: ToolSet | None = None,
) -> ChatReading:
    """:func:`from_responses`'s conversation, with the tools it read (once) and the response
    format's schema (:data:`~.chat.ChatReading`)."""
    if not isinstance(request, Mapping):
        raise ResponsesError("the request must be a JSON object")
    items = request.get("input", [])
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    if not isinstance(items, list):
        raise ResponsesError("must be a string or a list of items", "input")
    instructions: list[str] = []
    if request.get("instructions") is not None:
        instructions.append(_text(request["instructions"], "instructions"))
    body: list[ConversationItem] = []
    call_names: dict[str, str] = {}
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ResponsesError("must be an object", f"input[{i}]")
        body += _input_item(item, f"input[{i}]", call_names, instructions)
    toolset, tools, problem = _tools(request, toolset)
    formats = _response_formats(request)
    head = head_items(
        _system(request, system or SystemContent()),
        instructions,
        tools.functions,
        formats,
        namespaces=tools.namespaces,
    )
    schema = formats[0].schema if formats else None
    return Conversation((*head, *body)), toolset, problem, schema
