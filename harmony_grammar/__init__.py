"""harmony-grammar: OpenAI's Harmony format (gpt-oss), defined by a Lark grammar.

The grammar (``grammars/harmony.lark``) drives the batch parser (:func:`parse`), the streaming
parser, the validator and the exported generation grammars.
"""

from __future__ import annotations

from .chat import ChatCompletionError, from_chat_completions, to_chat_completion
from .conversation import (
    Conversation,
    DeveloperContent,
    ReasoningEffort,
    ResponseFormat,
    SystemContent,
    ToolNamespace,
    ToolSpec,
    assistant_message,
    tool_call_message,
    tool_result_message,
    user_message,
)
from .encoding import VocabularyNotFoundError, load_encoding
from .engine import DEFAULT_MAX_HEADER_LENGTH
from .events import (
    ContentDelta,
    DiagnosticEvent,
    Event,
    HeaderComplete,
    MessageEnd,
    MessageStart,
    StopGeneration,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from .grammar import grammar_path, grammar_text
from .interop import from_openai_harmony, to_openai_harmony
from .model import (
    Diagnostic,
    Message,
    ParseResult,
    RecipientPosition,
    Role,
    Severity,
    Span,
    Terminator,
)
from .parser import parse
from .render import DropRule, RenderError, render, rendered_messages
from .stream import StreamParser
from .tokens import STOP_TOKENS, ControlToken
from .typescript import schema_to_typescript

__all__ = [
    "DEFAULT_MAX_HEADER_LENGTH",
    "STOP_TOKENS",
    "ChatCompletionError",
    "ContentDelta",
    "ControlToken",
    "Conversation",
    "DeveloperContent",
    "Diagnostic",
    "DiagnosticEvent",
    "DropRule",
    "Event",
    "HeaderComplete",
    "Message",
    "MessageEnd",
    "MessageStart",
    "ParseResult",
    "ReasoningEffort",
    "RecipientPosition",
    "RenderError",
    "ResponseFormat",
    "Role",
    "Severity",
    "Span",
    "StopGeneration",
    "StreamParser",
    "SystemContent",
    "Terminator",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolNamespace",
    "ToolSpec",
    "VocabularyNotFoundError",
    "assistant_message",
    "from_chat_completions",
    "from_openai_harmony",
    "grammar_path",
    "grammar_text",
    "load_encoding",
    "parse",
    "render",
    "rendered_messages",
    "schema_to_typescript",
    "to_chat_completion",
    "to_openai_harmony",
    "tool_call_message",
    "tool_result_message",
    "user_message",
]

__version__ = "0.1.0"
