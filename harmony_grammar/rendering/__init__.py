"""Rendering: the conversation model, the renderer, and bridges to other APIs.

Theory of operation
-------------------
:mod:`.conversation` is the model a host feeds gpt-oss (frozen dataclasses named as in
openai-harmony). :mod:`.renderer` writes it as Harmony text or o200k_harmony token ids,
byte-exact with openai-harmony, with untrusted text escaped (:mod:`harmony_grammar.safety`).
The bridges convert to and from other shapes: :mod:`.interop` openai-harmony's own objects,
:mod:`.chat` Chat Completions requests and responses (parsing completions with the format
layer's lenient parser), :mod:`.responses` Responses API requests and response objects, and
:mod:`.streaming` both as a stream (chunks and events over the streaming parser).
Fine-tuning examples (the ids with the mask of what the model samples) and the dataset
importers live in :mod:`harmony_grammar.training`.

Imports: this package may use :mod:`harmony_grammar.safety`, :mod:`harmony_grammar.format`,
:mod:`harmony_grammar.tools` and :mod:`harmony_grammar.schema`.
"""

from __future__ import annotations

from .chat import ChatCompletionError, from_chat_completions, to_chat_completion
from .conversation import (
    Conversation,
    DeveloperContent,
    ReasoningEffort,
    ResponseFormat,
    SystemContent,
    assistant_message,
    tool_call_message,
    tool_result_message,
    user_message,
)
from .interop import from_openai_harmony, to_openai_harmony
from .renderer import DropRule, RenderError, render, rendered_messages
from .responses import ResponsesError, from_responses, to_responses
from .streaming import ChatCompletionStream, ResponsesStream

__all__ = [
    "ChatCompletionError",
    "ChatCompletionStream",
    "Conversation",
    "DeveloperContent",
    "DropRule",
    "ReasoningEffort",
    "RenderError",
    "ResponseFormat",
    "ResponsesError",
    "ResponsesStream",
    "SystemContent",
    "assistant_message",
    "from_chat_completions",
    "from_openai_harmony",
    "from_responses",
    "render",
    "rendered_messages",
    "to_chat_completion",
    "to_openai_harmony",
    "to_responses",
    "tool_call_message",
    "tool_result_message",
    "user_message",
]
