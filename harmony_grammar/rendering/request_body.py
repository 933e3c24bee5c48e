"""A request body of either OpenAI API as a conversation: the one place that tells them apart.

A Chat Completions body has ``messages``; a Responses API body has ``input`` (and no
``messages``). ``render`` and the ``render`` / ``diff-render`` commands read bodies through
here, so a body means the same conversation wherever it is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .chat import ChatCompletionError, from_chat_completions
from .conversation import Conversation, SystemContent
from .responses import from_responses

__all__ = ["from_request"]


def from_request(
    request: Mapping[str, Any], *, system: SystemContent | None = None
) -> Conversation:
    """The conversation of a Chat Completions or Responses API request body.

    Raises :class:`~.chat.ChatCompletionError` (``ResponsesError`` is one) with a path.
    """
    if not isinstance(request, Mapping):
        raise ChatCompletionError(
            "the request must be a JSON object with 'messages' (Chat Completions)"
            " or 'input' (Responses)"
        )
    if "input" in request and "messages" not in request:
        return from_responses(request, system=system)
    return from_chat_completions(request, system=system)
