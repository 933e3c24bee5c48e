"""harmony-grammar: OpenAI's Harmony format (gpt-oss), defined by a Lark grammar.

The grammar (``grammars/harmony.lark``) drives the batch parser (:func:`parse`), the streaming
parser, the validator and the exported generation grammars.

The package is layered; each subpackage imports only the ones an explicit graph allows
(docs/architecture.md draws it, tests/integration/test_layering.py keeps it):

* ``schema`` JSON Schema to grammar; ``declarations`` what tools a host declares (specs, the
  one tools-list reader, the name check, the TypeScript read back);
* ``format`` the Harmony format: tokens, vocabulary, grammar, engine, ``parse``, ``StreamParser``;
* ``tools`` checking a call's arguments against its schema (plugged into ``format``);
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

Every name here is loaded on first use (PEP 562), so ``import harmony_grammar.format`` costs
the format layer only, not the schema compiler, jsonschema or llguidance. This module is also
the one place the layers are wired together: it installs the library's argument check
(:data:`harmony_grammar.tools.call_check.SCHEMA_CHECK`), which the default ``argument_check``
of every :class:`~harmony_grammar.format.options.ParseOptions` asks, so ``parse(text,
tools=...)`` checks call arguments wherever it is called from, while the format layer imports
no checker.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .base.deprecation import warn_moved as _warn_moved
from .base.errors import HarmonyGrammarError
from .format.options import install_argument_check as _install_argument_check
from .tools.call_check import SCHEMA_CHECK as _SCHEMA_CHECK

# The composition root: the format layer declares the argument check it needs, the tools
# layer (above it) provides one, and this is the one place that plugs it in. Importing the
# check loads neither jsonschema nor llguidance nor the schema compiler (they load on a
# call's first check).
_install_argument_check(_SCHEMA_CHECK)

if TYPE_CHECKING:  # the names as type checkers see them; at run time __getattr__ loads them
    from .bridges import ChatCompletionStream, ResponsesStream, to_chat_completion, to_responses
    from .declarations import ToolSpec
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
    from .training import import_record, render_training
    from .validation import ValidationReport, validate, validate_batch

#: Each public name and the subpackage that defines it (imported on the name's first use).
PUBLIC = {
    "bridges": ("ChatCompletionStream", "ResponsesStream", "to_chat_completion", "to_responses"),
    "declarations": ("ToolSpec",),
    "dialect": ("InbandScanner",),
    "format": (
        "Diagnostic", "Event", "Message", "ParseOptions", "ParseResult", "Role", "Severity",
        "StreamParser", "load_encoding", "parse",
    ),
    "generation": ("TurnOptions", "completion_grammar"),
    "rendering": (
        "Conversation", "DeveloperContent", "ReasoningEffort", "RenderError", "RenderOptions",
        "SystemContent", "assistant_message", "from_chat_completions", "from_responses",
        "render", "tool_call_message", "tool_result_message", "user_message",
    ),
    "safety": ("detect_leak", "escape_control_tokens"),
    "schema": ("schema_to_grammar",),
    "training": ("import_record", "render_training"),
    "validation": ("ValidationReport", "validate", "validate_batch"),
}  # fmt: skip

# Written out (linters and readers see it); test_public_api checks it is PUBLIC's names.
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

#: The names this module held before 0.2 and the subpackage each lives in now (docs: README,
#: "Python API"). Reading one here still works for one release, with a DeprecationWarning.
MOVED = {
    "format": (
        "DEFAULT_MAX_HEADER_LENGTH", "STOP_TOKENS", "Accounting", "ContentDelta",
        "ControlToken", "DiagnosticEvent", "HeaderComplete", "MessageEnd", "MessageStart",
        "RecipientPosition", "Span", "StopGeneration", "Terminator", "ToolCallDelta",
        "ToolCallEnd", "ToolCallStart", "VocabularyNotFoundError", "conservation_problems",
        "grammar_path", "grammar_text",
    ),
    "declarations": ("ToolNamespace", "TypeScriptError", "tools_from_typescript"),
    "rendering": (
        "ChatCompletionError", "DropRule", "ResponseFormat", "ResponsesError",
        "from_openai_harmony", "rendered_messages", "schema_to_typescript",
        "to_openai_harmony",
    ),
    "safety": (
        "RESERVED_SPELLINGS", "ForgedToolResult", "LeakDetector", "LeakReport", "LeakSignal",
        "LeakSpan", "LeakSurface", "encode_untrusted", "escape_control_tokens_in_json",
        "find_forged_tool_result", "repair_thinking", "unescape_control_tokens",
        "unescape_control_tokens_in_json",
    ),
    "generation": ("TurnGrammarError", "to_outlines", "xgrammar_structural_tag"),
    "schema": ("UnsupportedSchemaError", "canonical_json"),
    "training": ("DropScope", "ImportResult", "TrainOn", "TrainingExample"),
    "dialect": ("dialect_prompt",),
}  # fmt: skip

_HOME = {name: sub for sub, names in PUBLIC.items() for name in names}
_MOVED_TO = {name: sub for sub, names in MOVED.items() for name in names}


def __getattr__(name: str) -> Any:
    """A public name, loaded from its subpackage on first use (then held here); a moved name
    with a DeprecationWarning naming its home; else AttributeError."""
    if name in _HOME:
        value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
        globals()[name] = value  # later reads do not come here
        return value
    if name in _MOVED_TO:
        home = f"{__name__}.{_MOVED_TO[name]}"
        _warn_moved(f"{__name__}.{name}", f"{home}.{name}")
        return getattr(importlib.import_module(home), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
