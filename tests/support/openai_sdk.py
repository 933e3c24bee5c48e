"""Checking payloads against the ``openai`` SDK's own pydantic types, strictly.

The SDK's models allow unknown keys (``extra="allow"``), so ``model_validate`` alone would
pass a misspelt field. :func:`check` validates and then walks the model: every key must be
one the SDK declares, apart from the named extensions (``diagnostics`` and
``cut_tool_call``, ours; ``reasoning`` and ``reasoning_content``, vLLM's new and old names).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

openai_types = pytest.importorskip("openai.types")

from openai.lib.streaming.chat._completions import ChatCompletionStreamState  # noqa: E402
from openai.types.chat import ChatCompletionChunk  # noqa: E402
from openai.types.responses import Response, ResponseStreamEvent  # noqa: E402
from pydantic import BaseModel, TypeAdapter  # noqa: E402

EXTENSIONS = frozenset({"diagnostics", "cut_tool_call", "reasoning", "reasoning_content"})
_EVENTS: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)


def _no_extras(value: Any, path: str) -> None:
    if isinstance(value, BaseModel):
        extra = set(value.model_extra or ()) - EXTENSIONS
        assert not extra, f"{path}: keys the SDK does not declare: {sorted(extra)}"
        for name in type(value).model_fields:
            _no_extras(getattr(value, name), f"{path}.{name}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _no_extras(item, f"{path}[{i}]")


def check_response(payload: dict[str, Any]) -> Response:
    """A Responses API response object, validated strictly."""
    model = Response.model_validate(payload)
    _no_extras(model, "response")
    return model


def check_event(payload: dict[str, Any]) -> Any:
    """A Responses streaming event, validated against the SDK's event union."""
    model = _EVENTS.validate_python(payload)
    assert model.type == payload["type"]
    _no_extras(model, payload["type"])
    return model


def check_chunk(payload: dict[str, Any]) -> ChatCompletionChunk:
    """A Chat Completions streaming chunk, validated strictly."""
    model = ChatCompletionChunk.model_validate(payload)
    _no_extras(model, "chunk")
    return model


def check_responses_request(request: dict[str, Any]) -> None:
    """A Responses request body: each part against the SDK's models for it."""
    from openai.types.responses import ResponseInputItem, ResponseTextConfig, Tool
    from openai.types.shared import Reasoning

    items = request["input"]
    if not isinstance(items, str):
        adapter: TypeAdapter[Any] = TypeAdapter(ResponseInputItem)
        for item in items:
            _no_extras(adapter.validate_python(item), "input")
    tools: TypeAdapter[Any] = TypeAdapter(Tool)  # function, custom, namespace, hosted
    for tool in request.get("tools", []):
        _no_extras(tools.validate_python(tool), "tools")
    if "text" in request:
        _no_extras(ResponseTextConfig.model_validate(request["text"]), "text")
    if "reasoning" in request:
        _no_extras(Reasoning.model_validate(request["reasoning"]), "reasoning")


def sdk_fold(chunks: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What the openai SDK accumulates Chat Completions ``chunks`` to (its
    ``ChatCompletionStreamState``): ``{"message", "finish_reason"}`` in the shape of
    :func:`harmony_grammar.bridges.chat.accumulate`, an oracle independent of it."""
    state = ChatCompletionStreamState()
    for chunk in chunks:
        if chunk.get("choices"):  # the SDK's state reads choices; a usage chunk has none
            state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    choice = state.current_completion_snapshot.choices[0]
    snapshot = choice.message.model_dump()
    calls = [
        {
            "id": call["id"],
            "type": call["type"],
            "function": {k: call["function"][k] for k in ("name", "arguments")},
        }
        for call in snapshot["tool_calls"] or ()
    ]
    message = {
        "role": snapshot["role"],
        "content": snapshot["content"] or None,
        "reasoning_content": snapshot.get("reasoning_content") or None,
        "tool_calls": calls,
    }
    return {"message": message, "finish_reason": choice.finish_reason}
