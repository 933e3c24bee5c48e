"""harmony-grammar: OpenAI's Harmony format (gpt-oss), defined by a Lark grammar.

The grammar (``grammars/harmony.lark``) drives the batch parser (:func:`parse`), the streaming
parser, the validator and the exported generation grammars.

The package is layered; each subpackage imports only the ones an explicit graph allows
(docs/architecture.md draws it, tests/test_layering.py keeps it):

* ``schema`` JSON Schema to grammar; ``tools`` tool declarations and argument checks;
* ``format`` the Harmony format: tokens, vocabulary, grammar, engine, ``parse``, ``StreamParser``;
* ``safety`` escaping, leaks, repair; ``rendering`` the renderer and what it renders;
* ``bridges`` completions read back as Chat Completions and Responses payloads;
  ``dialect`` the in-band dialect (format guide, agent-side events);
* ``data`` datasets for every job: pieces, records with one identity, one pool, one Ray engine;
* ``validation`` rules, ``validate``, its batch function; ``generation`` turn grammars and
  sampling; ``training`` fine-tuning data (``prepare``: datasets in, TRL-ready Parquet out);
  ``audit`` what a loss mask trains (``audit-masks``);
* ``cli`` the command line.

This module is the curated public API: every name in ``__all__`` is supported here.
"""

from __future__ import annotations

from .bridges import ChatCompletionStream, ResponsesStream, to_chat_completion, to_responses
from .dialect import InbandScanner, dialect_prompt
from .format import (
    DEFAULT_MAX_HEADER_LENGTH,
    STOP_TOKENS,
    Accounting,
    ContentDelta,
    ControlToken,
    Diagnostic,
    DiagnosticEvent,
    Event,
    HeaderComplete,
    Message,
    MessageEnd,
    MessageStart,
    ParseResult,
    RecipientPosition,
    Role,
    Severity,
    Span,
    StopGeneration,
    StreamParser,
    Terminator,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    VocabularyNotFoundError,
    conservation_problems,
    grammar_path,
    grammar_text,
    load_encoding,
    parse,
)
from .generation import (
    TurnGrammarError,
    TurnOptions,
    completion_grammar,
    to_outlines,
    xgrammar_structural_tag,
)
from .rendering import (
    ChatCompletionError,
    Conversation,
    DeveloperContent,
    DropRule,
    ReasoningEffort,
    RenderError,
    RenderOptions,
    ResponseFormat,
    ResponsesError,
    SystemContent,
    assistant_message,
    from_chat_completions,
    from_openai_harmony,
    from_responses,
    render,
    rendered_messages,
    to_openai_harmony,
    tool_call_message,
    tool_result_message,
    user_message,
)
from .safety import (
    RESERVED_SPELLINGS,
    ForgedToolResult,
    LeakDetector,
    LeakReport,
    LeakSignal,
    LeakSpan,
    LeakSurface,
    detect_leak,
    encode_untrusted,
    escape_control_tokens,
    escape_control_tokens_in_json,
    find_forged_tool_result,
    repair_thinking,
    unescape_control_tokens,
    unescape_control_tokens_in_json,
)
from .schema import UnsupportedSchemaError, canonical_json, schema_to_grammar
from .tools import (
    ToolNamespace,
    ToolSpec,
    TypeScriptError,
    schema_to_typescript,
    tools_from_typescript,
)
from .training import (
    DropScope,
    ImportResult,
    TrainingExample,
    TrainOn,
    import_record,
    render_training,
)
from .validation import ValidationReport, validate, validate_batch

__all__ = [
    "DEFAULT_MAX_HEADER_LENGTH",
    "RESERVED_SPELLINGS",
    "STOP_TOKENS",
    "Accounting",
    "ChatCompletionError",
    "ChatCompletionStream",
    "ContentDelta",
    "ControlToken",
    "Conversation",
    "DeveloperContent",
    "Diagnostic",
    "DiagnosticEvent",
    "DropRule",
    "DropScope",
    "Event",
    "ForgedToolResult",
    "HeaderComplete",
    "ImportResult",
    "InbandScanner",
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
    "RenderOptions",
    "ResponseFormat",
    "ResponsesError",
    "ResponsesStream",
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
    "TrainOn",
    "TrainingExample",
    "TurnGrammarError",
    "TurnOptions",
    "TypeScriptError",
    "UnsupportedSchemaError",
    "ValidationReport",
    "VocabularyNotFoundError",
    "assistant_message",
    "canonical_json",
    "completion_grammar",
    "conservation_problems",
    "detect_leak",
    "dialect_prompt",
    "encode_untrusted",
    "escape_control_tokens",
    "escape_control_tokens_in_json",
    "find_forged_tool_result",
    "from_chat_completions",
    "from_openai_harmony",
    "from_responses",
    "grammar_path",
    "grammar_text",
    "import_record",
    "load_encoding",
    "parse",
    "render",
    "render_training",
    "rendered_messages",
    "repair_thinking",
    "schema_to_grammar",
    "schema_to_typescript",
    "to_chat_completion",
    "to_openai_harmony",
    "to_outlines",
    "to_responses",
    "tool_call_message",
    "tool_result_message",
    "tools_from_typescript",
    "unescape_control_tokens",
    "unescape_control_tokens_in_json",
    "user_message",
    "validate",
    "validate_batch",
    "xgrammar_structural_tag",
]

__version__ = "0.1.0"
