"""A request body of either OpenAI API, read once: the conversation, its tools and what was
ignored. Every door reads requests here.

A Chat Completions body has ``messages``; a Responses API body has ``input`` (and no
``messages``). :func:`read_request` is the one reading: ``render(request)``, the ``render``
and ``diff-render`` commands, the gateway's planner and so its render endpoints all call it,
so one body is one conversation (``response_format`` / ``text.format`` written into the
developer message as ``# Response Formats``), one :class:`~harmony_grammar.tools.ToolSet`
(the tools read once) and one verdict on its unknown fields (:mod:`.request_fields`) wherever
it is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..declarations.toolset import ToolSet
from .chat import ChatCompletionError, read_chat
from .conversation import Conversation, SystemContent
from .request_fields import (
    CHAT_FIELDS,
    CHAT_MESSAGE_FIELDS,
    RESPONSES_FIELDS,
    RESPONSES_ITEM_FIELDS,
    unknown_fields,
)
from .responses import ResponsesError, read_responses

__all__ = ["Api", "RequestReading", "api_of", "read_request"]

#: Which API a body is.
Api = Literal["chat", "responses"]


@dataclass(frozen=True)
class RequestReading:
    """A request body read (:func:`read_request`)."""

    api: Api
    #: The conversation to render: the response format in its developer message, the tools
    #: the request's ``tool_choice`` lets the model see.
    conversation: Conversation
    #: The request's tools, read once: what the turn grammar and the parser's checks take;
    #: None when the list renders but is no set a grammar can take (:attr:`tools_problem`).
    toolset: ToolSet | None = field(default_factory=ToolSet)
    #: Why the tools are no :class:`ToolSet` (an invalid parameters schema, ...), else None.
    tools_problem: str | None = None
    #: The response format's JSON Schema (Chat ``response_format``, Responses
    #: ``text.format``; ``json_object`` is ``{"type": "object"}``), or None.
    response_schema: Mapping[str, Any] | None = None
    #: Paths of the fields nothing reads (``top_k``, ``messages[1].x``): accepted, reported.
    ignored: tuple[str, ...] = ()


def api_of(request: Mapping[str, Any]) -> Api:
    """``responses`` for a body with ``input`` and no ``messages``, else ``chat``."""
    return "responses" if "input" in request and "messages" not in request else "chat"


def read_request(
    request: Any,
    *,
    system: SystemContent | None = None,
    toolset: ToolSet | None = None,
    api: Api | None = None,
) -> RequestReading:
    """Read a Chat Completions or Responses API request body (``api``: which; by default
    told apart by :func:`api_of`).

    ``system`` is the system message to start from (openai-harmony's default; the request's
    reasoning effort is set on it). ``toolset``, when the caller has read the request's
    ``tools`` already, is used as it is. A message without its content, or a field one
    edit away from a known one, raises; other unknown fields are named in
    :attr:`RequestReading.ignored`. Raises :class:`~.chat.ChatCompletionError`
    (``ResponsesError`` is one) with a path.
    """
    if not isinstance(request, Mapping):
        raise ChatCompletionError(
            "the request must be a JSON object with 'messages' (Chat Completions)"
            " or 'input' (Responses)"
        )
    if "messages" not in request and "input" not in request:
        # Neither API's body: a misspelled ``messages`` or ``input`` says which was meant.
        unknown_fields(request, CHAT_FIELDS | RESPONSES_FIELDS, "", ChatCompletionError)
    api = api or api_of(request)
    if api == "responses":
        ignored = _responses_fields(request)
        conversation, tools, problem, schema = read_responses(
            request, system=system, toolset=toolset
        )
    else:
        ignored = _chat_fields(request)
        conversation, tools, problem, schema = read_chat(request, system=system, toolset=toolset)
    return RequestReading(api, conversation, tools, problem, schema, tuple(ignored))


def _chat_fields(request: Mapping[str, Any]) -> list[str]:
    error = ChatCompletionError
    ignored = unknown_fields(request, CHAT_FIELDS, "", error)
    messages = request.get("messages")
    for i, message in enumerate(messages if isinstance(messages, list) else ()):
        if not isinstance(message, Mapping):
            continue  # the bridge says what is wrong with it
        path = f"messages[{i}]"
        ignored += unknown_fields(message, CHAT_MESSAGE_FIELDS, path, error)
        role = message.get("role")
        if role == "assistant":
            if not any(message.get(k) is not None for k in ("content", "tool_calls")) and not any(
                message.get(k) for k in ("reasoning_content", "reasoning")
            ):
                raise error("an assistant message needs content or tool_calls", path)
        elif "content" not in message:
            raise error(f"a {role} message needs content", path)
    return ignored


def _responses_fields(request: Mapping[str, Any]) -> list[str]:
    error = ResponsesError
    ignored = unknown_fields(request, RESPONSES_FIELDS, "", error)
    items = request.get("input")
    for i, item in enumerate(items if isinstance(items, list) else ()):
        if not isinstance(item, Mapping):
            continue
        path = f"input[{i}]"
        kind = item.get("type", "message")
        known = RESPONSES_ITEM_FIELDS.get(kind) if isinstance(kind, str) else None
        if known is None:
            continue  # an item type the bridge refuses
        ignored += unknown_fields(item, known, path, error)
        needed = {"message": "content", "function_call_output": "output"}.get(kind)
        if kind == "custom_tool_call_output":
            needed = "output"
        if needed is not None and needed not in item:
            raise error(f"a {kind} item needs {needed}", path)
    return ignored
