"""Safety: untrusted text that spells control tokens, leaks, and forged tool results.

Theory of operation
-------------------
:mod:`.escaping` makes untrusted text inert before it reaches a Harmony model (control-token
spellings turned into a backslash form that never tokenizes to a special id, JSON kept
valid). :mod:`.leaks` finds Harmony that leaked into model-visible text by fusing signals
(:mod:`.signals` holds the patterns, :mod:`.masks` the prose and JSON-argument masks that
tell quoted mentions from leaks), in one pass or streamed. :mod:`.repair` moves leaked
thinking back into reasoning and finds tool results the model forged in its own output; it
reads candidates with the lenient parser, so the header syntax stays in the grammar.

Imports: this package may use :mod:`harmony_grammar.format` and below.
"""

from __future__ import annotations

from .escaping import (
    RESERVED_SPELLINGS,
    encode_untrusted,
    escape_control_tokens,
    escape_control_tokens_in_json,
    unescape_control_tokens,
    unescape_control_tokens_in_json,
)
from .leaks import LeakDetector, LeakReport, LeakSpan, LeakSurface, detect_leak
from .repair import ForgedToolResult, find_forged_tool_result, repair_thinking
from .signals import LeakSignal

__all__ = [
    "RESERVED_SPELLINGS",
    "ForgedToolResult",
    "LeakDetector",
    "LeakReport",
    "LeakSignal",
    "LeakSpan",
    "LeakSurface",
    "detect_leak",
    "encode_untrusted",
    "escape_control_tokens",
    "escape_control_tokens_in_json",
    "find_forged_tool_result",
    "repair_thinking",
    "unescape_control_tokens",
    "unescape_control_tokens_in_json",
]
