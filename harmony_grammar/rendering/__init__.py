"""Rendering: the conversation model, the renderer, and what becomes a conversation.

Theory of operation
-------------------
:mod:`.conversation` is the model a host feeds gpt-oss (frozen dataclasses named as in
openai-harmony). :mod:`.renderer` writes it as Harmony text or o200k_harmony token ids,
byte-exact with openai-harmony, with untrusted text escaped (:mod:`harmony_grammar.safety`).
Other shapes become conversations here: :mod:`.interop` openai-harmony's own objects (both
ways), :mod:`.chat` Chat Completions request bodies and :mod:`.responses` Responses API
request bodies (:mod:`.requests` what those two share; :mod:`.agent_tools` the tool kinds
agents send beyond functions: namespaces, custom tools, hosted tools); :mod:`.request_body`
is the one reading of either body every door shares (:func:`read_request`), and
:mod:`.request_fields` what its unknown fields get. Reading the model's
completion back into those APIs' payloads is :mod:`harmony_grammar.bridges`. Fine-tuning
examples (the ids with the mask of what the model samples) and the dataset importers live
in :mod:`harmony_grammar.training`.
:mod:`.options` holds the one options object, :mod:`.profiles` the other renderers'
ways (oss-harmony, the HF chat template, oh-my-pi; :mod:`.hf_template`, :mod:`.omp`), and
:mod:`.diff` compares their renderings.

Imports: this package may use :mod:`harmony_grammar.safety`, :mod:`harmony_grammar.format`
and :mod:`harmony_grammar.declarations`.
"""

from __future__ import annotations

from .chat import ChatCompletionError, from_chat_completions
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
from .diff import RenderDiff, diff_renderings
from .errors import RenderError
from .interop import from_openai_harmony, to_openai_harmony
from .options import RenderOptions
from .profiles import PROFILES, Profile
from .renderer import DropRule, render, rendered_messages
from .request_body import RequestReading, read_request
from .responses import ResponsesError, from_responses
from .typescript import schema_to_typescript

__all__ = [
    "PROFILES",
    "ChatCompletionError",
    "Conversation",
    "DeveloperContent",
    "DropRule",
    "Profile",
    "ReasoningEffort",
    "RenderDiff",
    "RenderError",
    "RenderOptions",
    "RequestReading",
    "ResponseFormat",
    "ResponsesError",
    "SystemContent",
    "assistant_message",
    "diff_renderings",
    "from_chat_completions",
    "from_openai_harmony",
    "from_responses",
    "read_request",
    "render",
    "rendered_messages",
    "schema_to_typescript",
    "to_openai_harmony",
    "tool_call_message",
    "tool_result_message",
    "user_message",
]
