"""The Responses API bridge: request bodies in, response objects out.

gpt-oss's primary API is OpenAI's Responses API (vLLM serves ``/v1/responses`` for it):

* :func:`from_responses` turns a request body (``instructions``, ``input`` items, ``tools``,
  ``tool_choice``, ``text.format``, ``reasoning.effort``) into a :class:`Conversation`;
* :func:`to_responses` turns the model's completion (text or ids after
  ``<|start|>assistant``) into a response object: ``reasoning``, ``function_call`` and
  ``message`` output items, ``status`` and ``incomplete_details``.

The item-building pieces (:func:`item_kind`, :func:`new_item`, :func:`response_object`) are
shared with :mod:`.streaming`, so a streamed response ends in the same object as the whole
one. Tool-call arguments are strings passed through verbatim in both directions. The shapes
are the ``openai`` SDK's (``openai.types.responses``); tests validate every payload with them.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..format.model import Diagnostic, Message, Role, Severity
from ..tools.arguments import ToolsArgument
from ..tools.spec import ToolSpec
from .chat import FUNCTIONS_PREFIX, ChatCompletionError
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
from .requests import chosen_tools, head_items, tool_specs, with_reasoning_effort

__all__ = [
    "IdFactory",
    "ResponsesError",
    "append_text",
    "end_item",
    "from_responses",
    "item_kind",
    "new_item",
    "output_items",
    "random_id",
    "request_tools",
    "response_object",
    "to_responses",
]

#: Makes an id from its kind's prefix (``resp``, ``rs``, ``msg``, ``fc``, ``call``).
IdFactory = Callable[[str], str]


class ResponsesError(ChatCompletionError):
    """A Responses request that cannot be mapped; ``path`` locates it (``input[3]``)."""


# -- request -> conversation -------------------------------------------------------------

_TEXT_PARTS = ("input_text", "output_text", "text", "reasoning_text", "summary_text")


def _text(content: Any, path: str) -> str:
    """A string, or a list of text parts (``input_text``, ``output_text``, ...) joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts: list[str] = []
        for i, part in enumerate(content):
            kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
            if kind not in _TEXT_PARTS or not isinstance(part.get("text"), str):
                raise ResponsesError(
                    f"content part of type {kind!r} is not supported (text only)",
                    f"{path}[{i}]",
                )
            texts.append(part["text"])
        return "".join(texts)
    raise ResponsesError("must be a string or a list of text parts", path)


def _read_tool(tool: Mapping[str, Any], path: str) -> ToolSpec:
    """A Responses function tool: ``{"type": "function", "name", "description", ...}``."""
    name, description = tool.get("name"), tool.get("description") or ""
    parameters = tool.get("parameters")
    if not isinstance(name, str) or not isinstance(description, str):
        raise ResponsesError("needs a string name (and description)", path)
    if parameters is not None and not isinstance(parameters, Mapping):
        raise ResponsesError("parameters must be a JSON Schema object", path)
    return ToolSpec(name, description, parameters)


def _named_function(choice: Any) -> Mapping[str, Any] | None:
    """``{"type": "function", "name": ...}`` itself, which holds the name."""
    if isinstance(choice, Mapping) and choice.get("type") == "function":
        return choice
    return None


def _tools(request: Mapping[str, Any]) -> list[ToolSpec]:
    """The request's function tools that ``tool_choice`` lets the model see."""
    return chosen_tools(
        request,
        tool_specs(request, _read_tool, ResponsesError),
        _named_function,
        ResponsesError,
        "'auto', 'required', 'none' or {'type': 'function', 'name': ...}",
    )


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
    if kind == "function_call":
        name, arguments = item.get("name"), item.get("arguments", "")
        if not isinstance(name, str) or not isinstance(arguments, str):
            raise ResponsesError("function_call needs a name and an arguments string", path)
        if isinstance(item.get("call_id"), str):
            call_names[item["call_id"]] = name
        return [tool_call_message(FUNCTIONS_PREFIX + name, arguments)]
    if kind == "function_call_output":
        call_id = item.get("call_id")
        if call_id not in call_names:
            raise ResponsesError(
                f"call_id {call_id!r} does not match any earlier function_call", path
            )
        output = _text(item.get("output"), f"{path}.output")
        return [tool_result_message(FUNCTIONS_PREFIX + call_names[call_id], output)]
    raise ResponsesError(f"input item of type {kind!r} is not supported", path)


def from_responses(
    request: Mapping[str, Any], *, system: SystemContent | None = None
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
    Raises :class:`ResponsesError` with a path.
    """
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
    tools = _tools(request)
    formats = _response_formats(request)
    head = head_items(_system(request, system or SystemContent()), instructions, tools, formats)
    return Conversation((*head, *body))


# -- completion -> response object -------------------------------------------------------


def request_tools(request: Mapping[str, Any] | None) -> list[Mapping[str, Any]] | None:
    """The request's function tools (the ones whose calls can be checked), or None."""
    tools = (request or {}).get("tools")
    if not isinstance(tools, list):
        return None
    functions = [t for t in tools if isinstance(t, Mapping) and t.get("type") == "function"]
    return functions or None


def random_id(prefix: str) -> str:
    """``{prefix}_`` and 32 random hex digits, the shape of OpenAI's ids."""
    return f"{prefix}_{secrets.token_hex(16)}"


def item_kind(role: Role, recipient: str | None, channel: str | None) -> str | None:
    """The output item a message becomes: ``function_call`` (a ``functions.*`` call),
    ``reasoning`` (analysis, or a built-in tool's call), ``message`` (a final answer or a
    preamble), or None for a message the model should not have written (a tool's result):
    the turn ends before it."""
    if role is not Role.ASSISTANT:
        return None
    if recipient is not None and recipient.startswith(FUNCTIONS_PREFIX):
        return "function_call"
    if recipient is not None or channel == "analysis":
        return "reasoning"
    return "message"


def new_item(
    kind: str, ids: IdFactory, *, recipient: str | None, channel: str | None
) -> dict[str, Any]:
    """An empty, in-progress output item of ``kind`` (see :func:`item_kind`)."""
    if kind == "function_call":
        return {
            "type": "function_call",
            "id": ids("fc"),
            "call_id": ids("call"),
            "name": (recipient or "")[len(FUNCTIONS_PREFIX) :],
            "arguments": "",
            "status": "in_progress",
        }
    if kind == "reasoning":
        return {
            "type": "reasoning",
            "id": ids("rs"),
            "summary": [],
            "content": [{"type": "reasoning_text", "text": ""}],
            "status": "in_progress",
        }
    return {
        "type": "message",
        "id": ids("msg"),
        "role": "assistant",
        "status": "in_progress",
        "content": [{"type": "output_text", "text": "", "annotations": []}],
        "phase": "commentary" if channel == "commentary" else "final_answer",
    }


def append_text(item: dict[str, Any], text: str) -> None:
    """Add a piece of content to an item: arguments, reasoning text or output text."""
    if item["type"] == "function_call":
        item["arguments"] += text
    else:
        item["content"][0]["text"] += text


def end_item(item: dict[str, Any], message: Message) -> bool:
    """Set the status of ``message``'s item: ``incomplete`` when the message was cut before its
    stop token, else ``completed``. Returns whether it was cut (the turn's last one decides)."""
    cut = message.terminator is None
    item["status"] = "incomplete" if cut else "completed"
    return cut


def response_object(
    response_id: str,
    items: Sequence[dict[str, Any]],
    diagnostics: Sequence[Diagnostic],
    *,
    cut: bool,
    finished: bool = True,
    request: Mapping[str, Any] | None = None,
    model: str = "gpt-oss",
    created_at: float | None = None,
) -> dict[str, Any]:
    """The response object around ``items``.

    ``status`` is ``failed`` when a diagnostic is an error (``error`` says which),
    ``incomplete`` (``incomplete_details.reason`` ``max_output_tokens``) when the turn was
    ``cut`` before a stop token, else ``completed``; ``in_progress`` while not ``finished``.
    The request's ``instructions``, ``tools``, ``tool_choice``, ``text`` and ``reasoning``
    are echoed, as OpenAI does. ``diagnostics`` (our addition) lists what the lenient parse
    repaired or found.
    """
    request = request or {}
    error = next((d for d in diagnostics if d.severity is Severity.ERROR), None)
    if not finished:
        status = "in_progress"
    elif error is not None:
        status = "failed"
    else:
        status = "incomplete" if cut else "completed"
    response: dict[str, Any] = {
        "id": response_id,
        "object": "response",
        "created_at": created_at if created_at is not None else time.time(),
        "model": request.get("model", model),
        "status": status,
        "output": [dict(item) for item in items],
        "error": (
            {"code": "server_error", "message": f"{error.code}: {error.message}"}
            if status == "failed" and error is not None
            else None
        ),
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": request.get("instructions"),
        "tools": list(request.get("tools") or []),
        "tool_choice": request.get("tool_choice", "auto"),
        "parallel_tool_calls": bool(request.get("parallel_tool_calls", False)),
        "diagnostics": [d.to_dict() for d in diagnostics],
    }
    for key in ("text", "reasoning"):
        if key in request:
            response[key] = request[key]
    return response


def to_responses(
    source: str | Sequence[int],
    *,
    request: Mapping[str, Any] | None = None,
    tools: ToolsArgument = None,
    strict: bool = False,
    ids: IdFactory | None = None,
    model: str = "gpt-oss",
    created_at: float | None = None,
) -> dict[str, Any]:
    """The Responses API response object for a completion (text or ids after
    ``<|start|>assistant``).

    Each assistant message becomes an output item, in order: analysis (and built-in tool
    calls) a ``reasoning`` item with its text, a ``functions.*`` call a ``function_call``
    with ``call_id``, ``name`` and ``arguments`` verbatim, a final answer or preamble a
    ``message`` with one ``output_text`` (``phase`` ``final_answer`` or ``commentary``). The
    turn ends at a message the model should not write (a tool's result). A turn cut before
    its stop token is ``incomplete``, its last item too.

    The parse is lenient (``strict=False``): the usual model deviations are repaired, and
    every diagnostic is listed under ``diagnostics``; an error that cannot be repaired makes
    the status ``failed``. ``tools`` (default: the ``request``'s) checks each call's
    arguments. ``ids(prefix)`` makes the ids (default: random). Never raises on bad output.
    """
    from ..format.parser import parse

    if tools is None:
        tools = request_tools(request)
    result = parse(source, start="completion", role=Role.ASSISTANT, strict=strict, tools=tools)
    make_id = ids or random_id
    response_id = make_id("resp")
    items, cut = output_items(result.messages, make_id)
    return response_object(
        response_id,
        items,
        result.diagnostics,
        cut=cut,
        request=request,
        model=model,
        created_at=created_at,
    )


def output_items(messages: Sequence[Message], ids: IdFactory) -> tuple[list[dict[str, Any]], bool]:
    """The output items of a turn's messages, and whether the turn was cut."""
    items: list[dict[str, Any]] = []
    cut = True  # no message at all: the output stopped before anything was written
    for message in messages:
        kind = item_kind(message.role, message.recipient, message.channel)
        if kind is None:
            break
        item = new_item(kind, ids, recipient=message.recipient, channel=message.channel)
        append_text(item, message.content)
        cut = end_item(item, message)
        items.append(item)
    return items, cut
