"""Chat Completions requests in: a request body as the conversation to render.

This is the mapping vLLM, SGLang and Ollama expose for gpt-oss (harmony-format.md §4):
:func:`from_chat_completions` turns a request body (``messages``, ``tools``, ``tool_choice``,
``reasoning_effort``) into a :class:`Conversation` to render. The way back, the model's
completion as a Chat Completions response, is reading, not rendering:
:mod:`harmony_grammar.bridges.chat`.

Tool-call arguments are strings passed through verbatim: never parsed and re-serialised,
never double-encoded. docs/rendering.md records the decisions the Chat Completions format
leaves open.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base.errors import HarmonyGrammarError
from ..declarations.custom import chat_custom_entry, read_custom_format
from ..declarations.spec import ToolNamespace, ToolSpec
from ..declarations.toolset import ToolSet
from ..format.model import Message
from .agent_tools import RequestTools, chat_recipient, custom_tool_spec, split_namespaced
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
from .requests import (
    content_text,
    head_items,
    read_toolset,
    tool_specs,
    with_reasoning_effort,
)

__all__ = [
    "FUNCTIONS_PREFIX",
    "ChatCompletionError",
    "ChatReading",
    "from_chat_completions",
    "read_chat",
]

#: A request read: its conversation, its tools read once (None where the set cannot be
#: made), why not (else None), and its response format's schema (None without one).
ChatReading = tuple[Conversation, ToolSet | None, str | None, Mapping[str, Any] | None]

#: The namespace of function tools, in recipients (``functions.get_weather``) and authors.
FUNCTIONS_PREFIX = "functions."


class ChatCompletionError(HarmonyGrammarError, ValueError):
    """A request or completion that cannot be mapped; ``path`` locates it (``messages[3]``)."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


# -- request -> conversation -------------------------------------------------------------

#: The tool types a Chat Completions request may declare.
_TOOL_TYPES = ("function", "custom")


def _text(content: Any, path: str) -> str:
    """A message's content: a string, null, or a list of ``{"type": "text"}`` parts."""
    return content_text(content, f"{path}.content", ChatCompletionError, ("text",))


def _read_tool(tool: Mapping[str, Any], path: str) -> ToolSpec:
    """A Chat Completions tool: ``{"type": "function", "function": {"name", ...}}``, or a
    custom one, read as the Responses API's custom tool is (:func:`chat_custom_entry`)."""
    if tool.get("type") == "custom":
        try:
            entry = chat_custom_entry(tool)
            body = read_custom_format(entry.get("format"))
        except ValueError as exc:
            raise ChatCompletionError(str(exc), path) from None
        name, description = entry.get("name"), entry.get("description") or ""
        if not isinstance(name, str) or not isinstance(description, str):
            raise ChatCompletionError("needs custom.name (and a string description)", path)
        return custom_tool_spec(name, description, body)
    function = tool.get("function")
    if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
        raise ChatCompletionError("needs function.name", path)
    description = function.get("description") or ""
    parameters = function.get("parameters")
    if not isinstance(description, str) or not (
        parameters is None or isinstance(parameters, Mapping)
    ):
        raise ChatCompletionError("function.description or .parameters is malformed", path)
    return ToolSpec(function["name"], description, parameters)


def _named_function(choice: Any) -> Mapping[str, Any] | None:
    """``{"type": "function", "function": {"name": ...}}``'s function (or a custom tool's
    ``{"type": "custom", "custom": {"name": ...}}``), which holds the name."""
    if isinstance(choice, Mapping):
        for key in ("function", "custom"):
            if isinstance(choice.get(key), Mapping):
                named: Mapping[str, Any] = choice[key]
                return named
    return None


_CHOICE_FORMS = (
    "'auto', 'required', 'none' or {'type': 'function', 'function': {'name': ...}} "
    "({'type': 'custom', 'custom': {'name': ...}} for a custom tool)"
)


def _locate(request: Mapping[str, Any]) -> RequestTools:
    """The raw tools list read entry by entry: raises with the path of what is wrong."""
    specs = tool_specs(
        request, _read_tool, ChatCompletionError, default_type="function", types=_TOOL_TYPES
    )
    return RequestTools(*split_namespaced(specs, ChatCompletionError))


def _tools(
    request: Mapping[str, Any], toolset: ToolSet | None
) -> tuple[ToolSet | None, RequestTools, str | None]:
    """The request's tools read once, and those ``tool_choice`` lets the model see."""
    tools = request.get("tools")
    for i, tool in enumerate(tools if isinstance(tools, list) else ()):
        # Chat declares function and custom tools only (no namespaces, no hosted tools).
        if not isinstance(tool, Mapping) or tool.get("type", "function") not in _TOOL_TYPES:
            kind = tool.get("type") if isinstance(tool, Mapping) else tool
            raise ChatCompletionError(
                f"tool type {kind!r} is not supported ({', '.join(_TOOL_TYPES)})", f"tools[{i}]"
            )
    toolset, declared, problem = read_toolset(
        request, toolset, ChatCompletionError, lambda: _locate(request), chat=True
    )
    return toolset, _chosen(declared, request.get("tool_choice")), problem


def _chosen(tools: RequestTools, choice: Any) -> RequestTools:
    """The tools ``tool_choice`` lets the model see: all, none, or the one named
    (``NAMESPACE.fn`` names a namespace's function)."""
    if choice in (None, "auto", "required"):
        return tools
    if choice == "none":
        return RequestTools()
    holder = _named_function(choice)
    if holder is None:
        raise ChatCompletionError(f"must be {_CHOICE_FORMS}", "tool_choice")
    name = holder.get("name")
    namespace, dot, short = name.partition(".") if isinstance(name, str) else ("", "", "")
    if not dot:
        hits = tuple(spec for spec in tools.functions if spec.name == name)
        if hits:
            return RequestTools(hits)
    for group in tools.namespaces if dot else ():
        inner = tuple(spec for spec in group.tools if spec.name == short)
        if group.name == namespace and inner:
            return RequestTools((), (ToolNamespace(group.name, group.description, inner),))
    raise ChatCompletionError(f"names {name!r}, which is not among the tools", "tool_choice")


def _response_format(request: Mapping[str, Any]) -> ResponseFormat | None:
    """``response_format`` as the developer message's ``# Response Formats`` entry
    (``json_object`` as an object schema named ``json_object``), or None for text."""
    fmt = request.get("response_format")
    if fmt is None or (isinstance(fmt, Mapping) and fmt.get("type") == "text"):
        return None
    if not isinstance(fmt, Mapping):
        raise ChatCompletionError("must be an object", "response_format")
    if fmt.get("type") == "json_object":
        return ResponseFormat("json_object", {"type": "object"})
    spec = fmt.get("json_schema")
    if fmt.get("type") != "json_schema" or not isinstance(spec, Mapping):
        raise ChatCompletionError(
            "must be {'type': 'text'}, {'type': 'json_object'} or "
            "{'type': 'json_schema', 'json_schema': {...}}",
            "response_format",
        )
    name, schema = spec.get("name"), spec.get("schema")
    if not isinstance(name, str) or not isinstance(schema, Mapping):
        raise ChatCompletionError("json_schema needs a name and a schema object", "response_format")
    description = spec.get("description")
    return ResponseFormat(name, schema, description if isinstance(description, str) else None)


def _assistant(
    message: Mapping[str, Any], path: str, call_names: dict[str, str]
) -> list[ConversationItem]:
    out: list[ConversationItem] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if reasoning:
        if not isinstance(reasoning, str):
            raise ChatCompletionError("reasoning_content must be a string", path)
        out.append(assistant_message(reasoning, channel="analysis"))
    text = _text(message.get("content"), path)
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ChatCompletionError("tool_calls must be a list", path)
    if text:
        # Text next to calls is a preamble, which the model writes on commentary.
        out.append(assistant_message(text, channel="commentary" if calls else "final"))
    for j, call in enumerate(calls):
        call_path = f"{path}.tool_calls[{j}]"
        if isinstance(call, Mapping) and call.get("type") == "custom":
            out.append(_custom_call(call, call_path, call_names))
            continue
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise ChatCompletionError("needs function.name", call_path)
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            raise ChatCompletionError("function.arguments must be a JSON string", call_path)
        to = chat_recipient(function["name"])  # NAMESPACE.fn names its namespace
        if isinstance(call.get("id"), str):
            call_names[call["id"]] = to
        out.append(tool_call_message(to, arguments))
    return out


def _custom_call(call: Mapping[str, Any], path: str, call_names: dict[str, str]) -> Message:
    """A custom tool's call (``{"type": "custom", "custom": {"name", "input"}}``): its input
    is raw text, written without a content type, as the Responses API's ``custom_tool_call``."""
    custom = call.get("custom")
    if not isinstance(custom, Mapping) or not isinstance(custom.get("name"), str):
        raise ChatCompletionError("needs custom.name", path)
    text = custom.get("input", "")
    if not isinstance(text, str):
        raise ChatCompletionError("custom.input must be a string", path)
    to = chat_recipient(custom["name"])
    if isinstance(call.get("id"), str):
        call_names[call["id"]] = to
    return tool_call_message(to, text, content_type=None)


def _tool_result(message: Mapping[str, Any], path: str, call_names: dict[str, str]) -> Message:
    call_id = message.get("tool_call_id")
    if call_id is not None and not isinstance(call_id, str):
        # Checked before the lookup: a list or an object cannot key the calls (TypeError).
        raise ChatCompletionError("tool_call_id must be a string", f"{path}.tool_call_id")
    if call_id is None and isinstance(message.get("name"), str):
        author = chat_recipient(message["name"])  # the legacy form names the function instead
    elif call_id in call_names:
        author = call_names[call_id]
    else:
        raise ChatCompletionError(
            f"tool_call_id {call_id!r} does not match any earlier assistant tool call", path
        )
    return tool_result_message(author, _text(message.get("content"), path))


def from_chat_completions(
    request: Mapping[str, Any],
    *,
    system: SystemContent | None = None,
    toolset: ToolSet | None = None,
) -> Conversation:
    """A conversation from a Chat Completions request body.

    The conversation starts with ``system`` (default: openai-harmony's ``SystemContent``, with
    the request's ``reasoning_effort``), then a developer message holding the ``system`` and
    ``developer`` messages' text as instructions and the tools ``tool_choice`` allows. Assistant
    ``reasoning_content`` (or ``reasoning``) becomes analysis; ``content`` becomes final, or a
    commentary preamble next to ``tool_calls``; each call becomes a ``functions.*`` commentary
    call with its ``arguments`` string verbatim. A ``tool`` message becomes a result from the
    function its ``tool_call_id`` names. A tool named ``NAMESPACE.fn`` is the function ``fn``
    of its own namespace (declared in a ``## NAMESPACE`` section, called ``to=NAMESPACE.fn``).
    ``response_format`` (``json_schema`` or ``json_object``) goes into the developer message
    as ``# Response Formats``. ``toolset``: the request's tools already read
    (:meth:`ToolSet.read`), used as given. Raises :class:`ChatCompletionError` with a path.
    """
    return read_chat(request, system=system, toolset=toolset)[0]


def read_chat(
    request: Mapping[str, Any],
    *,
    system: SystemContent | None = None,
    toolset: ToolSet | None = None,
) -> ChatReading:
    """:func:`from_chat_completions`'s conversation, with the tools it read (once) and the
    response format's schema (:data:`ChatReading`)."""
    if not isinstance(request, Mapping):
        raise ChatCompletionError("the request must be a JSON object")
    messages = request.get("messages")
    if not isinstance(messages, list):
        raise ChatCompletionError("must be a list of messages", "messages")
    system_content = with_reasoning_effort(
        system or SystemContent(),
        request.get("reasoning_effort"),
        ChatCompletionError,
        "reasoning_effort",
    )
    toolset, tools, problem = _tools(request, toolset)
    fmt = _response_format(request)
    instructions: list[str] = []
    body: list[ConversationItem] = []
    call_names: dict[str, str] = {}
    for i, message in enumerate(messages):
        path = f"messages[{i}]"
        if not isinstance(message, Mapping):
            raise ChatCompletionError("must be an object", path)
        role = message.get("role")
        if role in ("system", "developer"):
            instructions.append(_text(message.get("content"), path))
        elif role == "user":
            body.append(user_message(_text(message.get("content"), path)))
        elif role == "assistant":
            body += _assistant(message, path, call_names)
        elif role == "tool":
            body.append(_tool_result(message, path, call_names))
        else:
            raise ChatCompletionError(f"role {role!r} is not supported", path)
    formats = () if fmt is None else (fmt,)
    head = head_items(
        system_content, instructions, tools.functions, formats, namespaces=tools.namespaces
    )
    return Conversation((*head, *body)), toolset, problem, None if fmt is None else fmt.schema
