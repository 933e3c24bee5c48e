"""The shape of every top-level request field, checked before anything reads the request.

The bridges and the planner check what they read in depth (messages, tools, formats, the
sampling numbers); this table makes sure every field has the JSON type the API gives it
first, so no later reader meets a ``null`` where it expects a list or a ``true`` where it
expects a number: a wrong type is a 400 naming the field, never a 500. ``null`` is read as
the field left out, as OpenAI reads it. Each tool's ``type`` is checked here too: a hosted
tool's type is echoed in a response header, and nothing unchecked may reach one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

from .errors import bad_request

__all__ = ["TOOL_TYPE", "check_fields", "grammar_field"]


def _is(kind: type) -> Callable[[Any], bool]:
    # bool is an int in Python, never in JSON: `true` is not a number here.
    return lambda value: isinstance(value, kind) and (kind is bool or not isinstance(value, bool))


_STRING = ("a string", _is(str))
_BOOLEAN = ("a boolean", _is(bool))
_OBJECT = ("an object", _is(Mapping))
_LIST = ("a list", _is(list))

#: field -> (what it must be, the check); for both APIs.
_COMMON: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "model": _STRING,
    "stream": _BOOLEAN,
    "user": _STRING,
    "metadata": _OBJECT,
    "store": _BOOLEAN,
    "parallel_tool_calls": _BOOLEAN,
    "tools": _LIST,
}
_CHAT = {
    **_COMMON,
    "messages": ("a non-empty list of messages", lambda v: isinstance(v, list) and bool(v)),
    "n": ("1 (one choice per request)", lambda v: type(v) is int and v == 1),
    "stream_options": _OBJECT,
    "response_format": _OBJECT,
    "logprobs": _BOOLEAN,
}
_RESPONSES = {
    **_COMMON,
    "input": (
        "a string or a non-empty list of items",
        lambda v: isinstance(v, str) or (isinstance(v, list) and bool(v)),
    ),
    "instructions": _STRING,
    "text": _OBJECT,
    "reasoning": _OBJECT,
}
_REQUIRED = {"chat": ("messages",), "responses": ("input",)}

#: A tool's ``type``: what OpenAI's types look like (``function``, ``web_search_preview``,
#: ``computer_use_preview``). A hosted tool's type is echoed in a response header
#: (``x-hosted-tools-ignored``), which holds Latin-1 text without CR, LF or NUL, so no
#: other type may reach it; 100 characters is longer than any type OpenAI has.
TOOL_TYPE = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]{0,99}")


def check_fields(request: Mapping[str, Any], api: Literal["chat", "responses"]) -> None:
    """400 (:class:`~.errors.GatewayError`) naming the first field of the wrong type."""
    table = _CHAT if api == "chat" else _RESPONSES
    for name in _REQUIRED[api]:
        if request.get(name) is None:
            raise bad_request(f"{name} is required", name)
    for name, (what, ok) in table.items():
        value = request.get(name)
        if value is not None and not ok(value):
            raise bad_request(f"{name} must be {what}", name)
    for index, tool in enumerate(request.get("tools") or ()):
        kind = tool.get("type") if isinstance(tool, Mapping) else None
        if kind is not None and not (isinstance(kind, str) and TOOL_TYPE.fullmatch(kind)):
            raise bad_request(
                "a tool's type is a word of letters, digits and _ . : - (at most 100), such "
                "as 'function' or 'web_search'",
                f"tools[{index}].type",
            )


def grammar_field(api: Literal["chat", "responses"], formatted: bool) -> str:
    """The field to name when an engine refuses a turn's grammar: the answer's format when
    the request set one (Chat ``response_format``, Responses ``text``), else ``tools``."""
    if not formatted:
        return "tools"
    return "response_format" if api == "chat" else "text"
