"""The in-band dialect: Harmony as the text protocol of an agent that owns its tools.

Theory of operation
-------------------
Some agents (oh-my-pi among them, harmony-format.md §8) drive gpt-oss through a text channel
and own the tool protocol: :mod:`.guide` writes what goes into their system prompt (the nine
rules of the format guide and a compact JSON tool catalogue, :func:`dialect_prompt`), and
:mod:`.scanner` reads the model's output back as the events such an agent dispatches on
(:mod:`.events`: the parser's own events where the meaning is the same), over the streaming
parser. Rendering history in the dialect's own way is the
``omp`` rendering profile's job, in :mod:`harmony_grammar.rendering`.

Imports: this package may use :mod:`harmony_grammar.rendering` and everything below it.
"""

from __future__ import annotations

from ..base.deprecation import moved_names
from .events import (
    FORMER_NAMES,
    Aborted,
    ContentDelta,
    DiagnosticEvent,
    DialectEvent,
    RawBlock,
    StopGeneration,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingStart,
    ToolCallStart,
    ToolEnd,
)
from .guide import FORMAT_RULES, dialect_prompt, tool_catalogue
from .scanner import InbandScanner, read_arguments

__all__ = [
    "FORMAT_RULES",
    "Aborted",
    "ContentDelta",
    "DiagnosticEvent",
    "DialectEvent",
    "InbandScanner",
    "RawBlock",
    "StopGeneration",
    "ThinkingDelta",
    "ThinkingEnd",
    "ThinkingStart",
    "ToolCallStart",
    "ToolEnd",
    "dialect_prompt",
    "read_arguments",
    "tool_catalogue",
]

__getattr__ = moved_names(__name__, FORMER_NAMES)
