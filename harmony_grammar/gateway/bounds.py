"""The cheap bounds on a request's shape, checked before any expensive work.

Reading a request's tools, writing its turn grammar and rendering its prompt take time that
grows with the request: 128 tools of forty fields each take seconds to plan. So before any
of that, the request's shape is measured against :class:`~.plan.Limits`: how many tools
(:data:`MAX_TOOLS`, OpenAI's own bound), how large their declarations are in all
(:data:`MAX_TOOLS_BYTES` of JSON), and, once the prompt is rendered (linear, and before any
grammar is written), how many tokens it holds (``context_tokens``). A request past one is a
400 naming the field and the limit, answered in milliseconds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .errors import GatewayError

__all__ = ["MAX_TOOLS", "MAX_TOOLS_BYTES", "check_context", "check_shape"]

#: The most tools one request may declare (OpenAI's bound for Chat Completions).
MAX_TOOLS = 128
#: The most bytes of JSON the declared tools may take in all.
MAX_TOOLS_BYTES = 256 * 1024


def _tools(request: Mapping[str, Any]) -> list[Any]:
    tools = request.get("tools")
    if not isinstance(tools, list):
        return []  # absent, or the field check's 400
    # A namespace holds tools of its own: each counts.
    out: list[Any] = []
    for tool in tools:
        inner = tool.get("tools") if isinstance(tool, Mapping) else None
        out.extend(inner if isinstance(inner, list) else [tool])
    return out


def check_shape(request: Mapping[str, Any], *, max_tools: int, max_tools_bytes: int) -> None:
    """400 when the request declares more than ``max_tools`` tools, or tools whose JSON is
    larger than ``max_tools_bytes`` in all."""
    tools = _tools(request)
    if len(tools) > max_tools:
        raise GatewayError(
            400,
            f"the request declares {len(tools)} tools; the gateway takes at most {max_tools}",
            param="tools",
            code="too_many_tools",
        )
    if tools:
        size = len(json.dumps(request.get("tools"), ensure_ascii=False).encode())
        if size > max_tools_bytes:
            raise GatewayError(
                400,
                f"the request's tools take {size} bytes of JSON; the gateway takes at most "
                f"{max_tools_bytes}: declare fewer or smaller tools",
                param="tools",
                code="tools_too_large",
            )


def check_context(
    prompt_tokens: int, max_tokens: int, context_tokens: int | None, *, param: str = "messages"
) -> None:
    """400 ``context_length_exceeded`` naming ``param`` (the field that holds the prompt)
    when the prompt and ``max_tokens`` do not fit."""
    if context_tokens is not None and prompt_tokens + max_tokens > context_tokens:
        raise GatewayError(
            400,
            f"the prompt is {prompt_tokens} tokens and max tokens {max_tokens}: more than the "
            f"model's context of {context_tokens}; shorten the input or lower max tokens",
            code="context_length_exceeded",
            param=param,
        )
