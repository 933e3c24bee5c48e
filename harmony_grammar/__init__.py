"""harmony-grammar: OpenAI's Harmony format (gpt-oss), defined by a Lark grammar.

The grammar (``grammars/harmony.lark``) drives the batch parser (:func:`parse`), the streaming
parser, the validator and the exported generation grammars.

The package is layered; each subpackage imports only the ones an explicit graph allows
(docs/architecture.md draws it, tests/integration/test_layering.py keeps it):

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

* ``base`` the base error :class:`HarmonyGrammarError`, the str-enum base, moved names.

This module is the curated public API, small enough to hold: parsing, rendering, the
payload bridges, validation, grammars, escaping, training rows, the in-band scanner and the
base error. Everything else is reached through its subpackage (``harmony_grammar.format``,
``harmony_grammar.rendering``, ...). The names that used to be here and moved keep working
for one release: reading one warns (``DeprecationWarning``) and names its home.
"""

from __future__ import annotations

from . import dialect as _dialect
from . import format as _format
from . import generation as _generation
from . import rendering as _rendering
from . import safety as _safety
from . import schema as _schema
from . import tools as _tools
from . import training as _training
from .base.deprecation import moved_names as _moved_names
from .base.errors import HarmonyGrammarError
from .bridges import ChatCompletionStream, ResponsesStream, to_chat_completion, to_responses
from .dialect import InbandScanner
from .format import (
    Diagnostic,
    Event,
    Message,
    ParseOptions,
    ParseResult,
    Role,
    Severity,
    StreamParser,
    load_encoding,
    parse,
)
from .generation import TurnOptions, completion_grammar
from .rendering import (
    Conversation,
    DeveloperContent,
    ReasoningEffort,
    RenderError,
    RenderOptions,
    SystemContent,
    assistant_message,
    from_chat_completions,
    from_responses,
    render,
    tool_call_message,
    tool_result_message,
    user_message,
)
from .safety import detect_leak, escape_control_tokens
from .schema import schema_to_grammar
from .tools import ToolSpec
from .training import import_record, render_training
from .validation import ValidationReport, validate, validate_batch

__all__ = [
    "ChatCompletionStream",
    "Conversation",
    "DeveloperContent",
    "Diagnostic",
    "Event",
    "HarmonyGrammarError",
    "InbandScanner",
    "Message",
    "ParseOptions",
    "ParseResult",
    "ReasoningEffort",
    "RenderError",
    "RenderOptions",
    "ResponsesStream",
    "Role",
    "Severity",
    "StreamParser",
    "SystemContent",
    "ToolSpec",
    "TurnOptions",
    "ValidationReport",
    "assistant_message",
    "completion_grammar",
    "detect_leak",
    "escape_control_tokens",
    "from_chat_completions",
    "from_responses",
    "import_record",
    "load_encoding",
    "parse",
    "render",
    "render_training",
    "schema_to_grammar",
    "to_chat_completion",
    "to_responses",
    "tool_call_message",
    "tool_result_message",
    "user_message",
    "validate",
    "validate_batch",
]

__version__ = "0.1.0"

#: The names this module held before 0.2 and where each lives now (docs: README, "Python
#: API"). Reading one here still works for one release, with a DeprecationWarning.
MOVED = {
    _format: (
        "DEFAULT_MAX_HEADER_LENGTH", "STOP_TOKENS", "Accounting", "ContentDelta",
        "ControlToken", "DiagnosticEvent", "HeaderComplete", "MessageEnd", "MessageStart",
        "RecipientPosition", "Span", "StopGeneration", "Terminator", "ToolCallDelta",
        "ToolCallEnd", "ToolCallStart", "TypeScriptError", "VocabularyNotFoundError",
        "conservation_problems", "grammar_path", "grammar_text", "tools_from_typescript",
    ),
    _rendering: (
        "ChatCompletionError", "DropRule", "ResponseFormat", "ResponsesError",
        "from_openai_harmony", "rendered_messages", "schema_to_typescript",
        "to_openai_harmony",
    ),
    _safety: (
        "RESERVED_SPELLINGS", "ForgedToolResult", "LeakDetector", "LeakReport", "LeakSignal",
        "LeakSpan", "LeakSurface", "encode_untrusted", "escape_control_tokens_in_json",
        "find_forged_tool_result", "repair_thinking", "unescape_control_tokens",
        "unescape_control_tokens_in_json",
    ),
    _generation: ("TurnGrammarError", "to_outlines", "xgrammar_structural_tag"),
    _schema: ("UnsupportedSchemaError", "canonical_json"),
    _tools: ("ToolNamespace",),
    _training: ("DropScope", "ImportResult", "TrainOn", "TrainingExample"),
    _dialect: ("dialect_prompt",),
}  # fmt: skip

__getattr__ = _moved_names(
    __name__,
    {
        name: (f"{module.__name__}.{name}", getattr(module, name))
        for module, names in MOVED.items()
        for name in names
    },
)
