"""Bridges: the model's completion read back as Chat Completions and Responses API payloads.

Theory of operation
-------------------
A bridge is a stream: :class:`ChatCompletionStream` (``chat.completion.chunk`` s,
:mod:`.chat`) and :class:`ResponsesStream` (``response.*`` events, :mod:`.responses`) sit on
the format layer's :class:`~harmony_grammar.format.stream.StreamParser` through one shared
driver (:mod:`.stream`). A whole response is that stream fed the whole completion and closed
(:func:`to_chat_completion`, :func:`to_responses`), the way h11 reads a whole message by
collecting its events, so the whole and the streamed answers never disagree. What a message
becomes and how the turn ended is decided in one place, :mod:`.turn`, for both APIs.
:mod:`.canitoolcall_adapter` runs the bridges under the canitoolcall suite (it needs the
``canitoolcall`` package, a test dependency, and is not imported here).

The request side (request bodies to conversations) is rendering's input and lives there
(:mod:`harmony_grammar.rendering.chat`, :mod:`harmony_grammar.rendering.responses`).

Imports: this package may use :mod:`harmony_grammar.rendering`, :mod:`harmony_grammar.format`
and :mod:`harmony_grammar.declarations`.
"""

from __future__ import annotations

from .chat import ChatCompletionStream, accumulate, to_chat_completion
from .responses import ResponsesStream, to_responses
from .turn import finish_reason, item_kind, message_cut

__all__ = [
    "ChatCompletionStream",
    "ResponsesStream",
    "accumulate",
    "finish_reason",
    "item_kind",
    "message_cut",
    "to_chat_completion",
    "to_responses",
]
