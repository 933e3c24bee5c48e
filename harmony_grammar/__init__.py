"""harmony-grammar: OpenAI's Harmony format (gpt-oss), defined by a Lark grammar.

The grammar (``grammars/harmony.lark``) drives the batch parser (:func:`parse`), the streaming
parser, the validator and the exported generation grammars.
"""

from __future__ import annotations

from .encoding import VocabularyNotFoundError, load_encoding
from .engine import DEFAULT_MAX_HEADER_LENGTH
from .grammar import grammar_path, grammar_text
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
from .tokens import STOP_TOKENS, ControlToken

__all__ = [
    "DEFAULT_MAX_HEADER_LENGTH",
    "STOP_TOKENS",
    "ControlToken",
    "Diagnostic",
    "Message",
    "ParseResult",
    "RecipientPosition",
    "Role",
    "Severity",
    "Span",
    "Terminator",
    "VocabularyNotFoundError",
    "grammar_path",
    "grammar_text",
    "load_encoding",
    "parse",
]

__version__ = "0.1.0"
