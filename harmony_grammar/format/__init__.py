"""The Harmony format itself: control tokens, vocabulary, grammar, engine, parse and stream.

Theory of operation
-------------------
``grammars/harmony.lark`` is the one definition of the syntax; :mod:`.grammar` loads it and
builds Lark's LALR tables once per process. Input arrives as text (:class:`.lexer.TextLexer`,
control tokens spelled literally) or as o200k_harmony token ids (:class:`.lexer.TokenLexer`,
only special ids are structure); both lexers push the same pieces into one
:class:`.engine.Engine`, which drives the LALR table (:mod:`.lalr`), builds
:class:`.model.Message` values, emits :mod:`.events` and, in lenient mode, applies the repairs
of the repair table :mod:`.repairs` (rows in :mod:`.recoveries` and :mod:`.readings`), and
keeps the conservation ledger that :mod:`.accounting` checks. :func:`.parser.parse` is the
batch front door, :class:`.stream.StreamParser` the sans-IO incremental one; their results
are equal. Both (and the engine) take one :class:`.options.ParseOptions` and its fields as
keywords.

Imports: this package may use :mod:`harmony_grammar.declarations` (the tools a call may go
to, the names a prompt declares) and :mod:`harmony_grammar.base`; nothing else. Checking a
call's arguments against its schema is plugged in (:class:`.options.ArgumentCheck`), never
imported: ``import harmony_grammar.format`` loads neither jsonschema nor llguidance nor the
schema compiler (tests/integration/test_layering.py keeps it so).
"""

from __future__ import annotations

from .. import declarations as _declarations
from ..base.deprecation import moved_names
from .accounting import conservation_problems
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
from .model import (
    Accounting,
    Diagnostic,
    Message,
    ParseResult,
    RecipientPosition,
    Role,
    Severity,
    Span,
    Terminator,
)
from .options import DEFAULT_MAX_HEADER_LENGTH, ParseOptions
from .parser import parse
from .stream import StreamParser
from .tokens import STOP_TOKENS, ControlToken
from .vocabulary import VocabularyNotFoundError, load_encoding

__all__ = [
    "DEFAULT_MAX_HEADER_LENGTH",
    "STOP_TOKENS",
    "Accounting",
    "ContentDelta",
    "ControlToken",
    "Diagnostic",
    "DiagnosticEvent",
    "Event",
    "HeaderComplete",
    "Message",
    "MessageEnd",
    "MessageStart",
    "ParseOptions",
    "ParseResult",
    "RecipientPosition",
    "Role",
    "Severity",
    "Span",
    "StopGeneration",
    "StreamParser",
    "Terminator",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "VocabularyNotFoundError",
    "conservation_problems",
    "grammar_path",
    "grammar_text",
    "load_encoding",
    "parse",
]

# The TypeScript reader moved to the declarations layer (with the tools it reads back).
__getattr__ = moved_names(
    __name__,
    {
        name: (f"harmony_grammar.declarations.{name}", getattr(_declarations, name))
        for name in ("TypeScriptError", "tools_from_typescript")
    },
)
