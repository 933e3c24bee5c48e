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
from .escaping import (
    RESERVED_SPELLINGS,
    encode_untrusted,
    escape_control_tokens,
    escape_control_tokens_in_json,
    unescape_control_tokens,
    unescape_control_tokens_in_json,
)
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
from .leaks import LeakDetector, LeakReport, LeakSignal, LeakSpan, LeakSurface, detect_leak
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
from .outlines_export import to_outlines
from .parser import parse
from .render import DropRule, RenderError, render, rendered_messages
from .repair import ForgedToolResult, find_forged_tool_result, repair_thinking
from .schema import UnsupportedSchemaError, canonical_json, schema_to_grammar
from .stream import StreamParser
from .tokens import STOP_TOKENS, ControlToken
from .tools_from_typescript import TypeScriptError, tools_from_typescript
from .turn_grammar import TurnGrammarError, completion_grammar
from .typescript import schema_to_typescript
from .validate import ValidationReport, validate

__all__ = [
    "DEFAULT_MAX_HEADER_LENGTH",
    "RESERVED_SPELLINGS",
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
    "ForgedToolResult",
    "HeaderComplete",
    "LeakDetector",
    "LeakReport",
    "LeakSignal",
    "LeakSpan",
    "LeakSurface",
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
    "TurnGrammarError",
    "TypeScriptError",
    "UnsupportedSchemaError",
    "ValidationReport",
    "VocabularyNotFoundError",
    "assistant_message",
    "canonical_json",
    "completion_grammar",
    "detect_leak",
    "encode_untrusted",
    "escape_control_tokens",
    "escape_control_tokens_in_json",
    "find_forged_tool_result",
    "from_chat_completions",
    "from_openai_harmony",
    "grammar_path",
    "grammar_text",
    "load_encoding",
    "parse",
    "render",
    "rendered_messages",
    "repair_thinking",
    "schema_to_grammar",
    "schema_to_typescript",
    "to_chat_completion",
    "to_openai_harmony",
    "to_outlines",
    "tool_call_message",
    "tool_result_message",
    "tools_from_typescript",
    "unescape_control_tokens",
    "unescape_control_tokens_in_json",
    "user_message",
    "validate",
]

__version__ = "0.1.0"
