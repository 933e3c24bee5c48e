"""Importing chat datasets into conversations, one record at a time, never raising.

A record is one of

* an OpenAI-style message list: ``{"messages": [...], "tools": [...]}`` as Chat Completions
  and most Hugging Face chat datasets hold it. Assistant reasoning is read from
  ``reasoning_content``, ``reasoning`` or ``thinking``; ``tool_calls`` may hold ``arguments``
  as a JSON string or an object (serialised as the gpt-oss chat template does, ``tojson``);
  ``tool`` messages may name their call by ``tool_call_id``, by ``name``, or by neither (then
  they answer the earliest unanswered call, the order Hugging Face datasets use); ``tools``
  may be a list or its JSON text. The mapping itself is :func:`~.chat.from_chat_completions`.
* Harmony text or o200k_harmony ids (``{"text": ...}``, or the value itself), parsed strictly
  or, with ``lenient=True``, with the parser's repairs reported as warnings.

Every record that cannot be imported gives an HG300 diagnostic saying where and why; nothing
is skipped silently.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..format.diagnostics import make_diagnostic
from ..format.model import Diagnostic, Severity
from ..rendering.chat import ChatCompletionError, from_chat_completions
from ..rendering.conversation import Conversation, SystemContent
from ..tools.json_limits import json_message

__all__ = ["ImportResult", "RecordFormat", "import_record", "unimportable"]

#: How a record is read: guessed from its shape, or said.
RecordFormat = Literal["auto", "messages", "harmony"]

_REASONING_FIELDS = ("reasoning_content", "reasoning", "thinking")


@dataclass(frozen=True)
class ImportResult:
    """A record's conversation, or None with at least one error diagnostic saying why.

    ``row`` is the record's place in its input (as the caller numbered it).
    """

    row: int
    conversation: Conversation | None
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def ok(self) -> bool:
        """True when there is a conversation (warnings may remain)."""
        return self.conversation is not None


def unimportable(why: str, start: int = 0, end: int = 0) -> Diagnostic:
    """The HG300 of a record that cannot be read as a conversation, saying ``why`` (the one
    place it is made: the importer, the batch and the data layer's unreadable pieces)."""
    return make_diagnostic("HG300", why, start, end)


def _failure(row: int, message: str, start: int = 0, end: int = 0) -> ImportResult:
    return ImportResult(row, None, (unimportable(message, start, end),))


# -- OpenAI-style message lists -----------------------------------------------------------


def _arguments(value: Any) -> Any:
    """Arguments as the JSON string Chat Completions carries (objects serialised)."""
    if isinstance(value, (Mapping, list)):
        return json.dumps(value, ensure_ascii=False)
    return value


def _call(call: Any, index: int) -> Any:
    """A tool call in Chat Completions shape, with an id to match its result by."""
    if not isinstance(call, Mapping):
        return call
    function = call.get("function")
    if not isinstance(function, Mapping) and isinstance(call.get("name"), str):
        function = {"name": call["name"], "arguments": call.get("arguments", "")}
    if isinstance(function, Mapping):
        function = {**function, "arguments": _arguments(function.get("arguments", ""))}
    return {**call, "function": function, "id": call.get("id") or f"import_call_{index}"}


def _normalised_messages(messages: list[Any]) -> list[Any]:
    """The messages with the dataset spellings mapped onto Chat Completions'."""
    out: list[Any] = []
    pending: deque[str] = deque()  # ids of calls not yet answered, in order
    answered: set[str] = set()
    count = 0
    for message in messages:
        if not isinstance(message, Mapping):
            out.append(message)
            continue
        message = dict(message)
        role = message.get("role")
        if role == "assistant":
            reasoning = next(
                (message[f] for f in _REASONING_FIELDS if message.get(f) is not None), None
            )
            if reasoning is not None:
                message["reasoning_content"] = reasoning
            if isinstance(message.get("tool_calls"), list):
                calls = []
                for call in message["tool_calls"]:
                    calls.append(_call(call, count))
                    count += 1
                    if isinstance(calls[-1], Mapping) and isinstance(calls[-1].get("id"), str):
                        pending.append(calls[-1]["id"])
                message["tool_calls"] = calls
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if call_id is None and message.get("name") is None:
                while pending and pending[0] in answered:
                    pending.popleft()
                if pending:
                    message["tool_call_id"] = pending.popleft()
            elif isinstance(call_id, str):
                answered.add(call_id)
        out.append(message)
    return out


def _tools(value: Any) -> Any:
    """Tools as Chat Completions holds them; a JSON string is read, plain specs are wrapped."""
    if isinstance(value, str):
        value = json.loads(value) if value.strip() else None
    if not isinstance(value, list):
        return value
    return [
        {"type": "function", "function": tool}
        if isinstance(tool, Mapping) and "function" not in tool and "name" in tool
        else tool
        for tool in value
    ]


def _from_messages(
    row: int, record: Mapping[str, Any], field: str, system: SystemContent | None
) -> ImportResult:
    messages = record.get(field)
    if not isinstance(messages, list):
        return _failure(row, f"the record has no list of messages in {field!r}")
    try:
        request = {
            "messages": _normalised_messages(messages),
            "tools": _tools(record.get("tools")),
            "reasoning_effort": record.get("reasoning_effort"),
        }
    except json.JSONDecodeError as exc:
        return _failure(row, f"tools: not JSON ({json_message(exc)} at column {exc.colno})")
    try:
        return ImportResult(row, from_chat_completions(request, system=system))
    except ChatCompletionError as exc:
        return _failure(row, str(exc))


# -- Harmony ------------------------------------------------------------------------------


def _from_harmony(row: int, source: str | Sequence[int], lenient: bool) -> ImportResult:
    from ..format.parser import parse

    result = parse(source, lenient=lenient)
    error = next((d for d in result.diagnostics if d.severity is Severity.ERROR), None)
    if error is not None:
        # as the Chat Completions bridge says it: "HG100 at line 1, column 5" / "at token 7"
        where = (
            f"line {error.line}, column {error.column}" if error.line else f"token {error.start}"
        )
        return _failure(
            row,
            f"Harmony does not parse: {error.code} at {where}: {error.message}",
            error.start,
            error.end,
        )
    if not result.messages:
        return _failure(row, "the Harmony input holds no message")
    return ImportResult(row, Conversation(tuple(result.messages)), tuple(result.diagnostics))


def _is_ids(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    )


def import_record(
    record: Any,
    *,
    row: int = 0,
    format: RecordFormat = "auto",
    field: str | None = None,
    lenient: bool = False,
    system: SystemContent | None = None,
) -> ImportResult:
    """Read one dataset record as a :class:`Conversation` (see the module docstring).

    ``format="auto"`` reads a record with a ``messages`` list as OpenAI-style messages and a
    string, a list of ids, or a record with ``text`` as Harmony. ``field`` names the field
    to read instead of ``messages`` / ``text``. ``lenient`` repairs Harmony the way
    ``parse(..., lenient=True)`` does. ``system`` replaces the default system message of a
    message list (:func:`~.chat.from_chat_completions`). Never raises for bad input: the
    result holds an HG300 diagnostic instead.
    """
    if format not in ("auto", "messages", "harmony"):
        raise ValueError(f"format must be 'auto', 'messages' or 'harmony', not {format!r}")
    if format != "harmony" and isinstance(record, Mapping):
        messages_field = field or "messages"
        if format == "messages" or isinstance(record.get(messages_field), list):
            return _from_messages(row, record, messages_field, system)
    source: Any = record
    if isinstance(record, Mapping):
        text_field = field or "text"
        if text_field not in record:
            wanted = "messages or text" if field is None else repr(field)
            return _failure(row, f"the record has no field {wanted}")
        source = record[text_field]
    if isinstance(source, str) or _is_ids(source):
        return _from_harmony(row, source, lenient)
    kind = type(source).__name__
    return _failure(row, f"a record of {kind} is neither a message list nor Harmony")
