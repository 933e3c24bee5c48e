"""Handing the turn grammar to outlines, validated by llguidance first.

outlines 1.x sends a CFG to llguidance unchanged when a line matches
``^\\s*(%llguidance|start\\s*:)``; our grammars start with ``%llguidance {}`` and a plain
``start:`` rule, so they take that route. llguidance's matcher never raises on a bad
grammar, so the grammar is validated here against the o200k_harmony tokenizer and a failure
raises with llguidance's own message.
"""

from __future__ import annotations

import functools
from typing import Any

from ..declarations.toolset import ToolsArgument
from ..format.vocabulary import load_encoding
from ..schema.grammar_gate import validate_llguidance
from .options import TurnGrammarError, TurnOptions
from .turn_grammar import completion_grammar

__all__ = ["harmony_lltokenizer", "to_outlines", "validated_grammar"]


@functools.lru_cache(maxsize=1)
def harmony_lltokenizer() -> Any:
    """llguidance's tokenizer for o200k_harmony (built once: about a second)."""
    import llguidance.tiktoken

    return llguidance.tiktoken.lltokenizer_from_encoding(load_encoding())


def validated_grammar(
    tools: ToolsArgument, options: TurnOptions | None = None, **changes: Any
) -> str:
    """:func:`~.turn_grammar.completion_grammar` (llguidance), checked by the grammar gate
    and llguidance (:func:`~harmony_grammar.schema.grammar_gate.validate_llguidance`)."""
    grammar = completion_grammar(tools, options, **changes)
    problem = validate_llguidance(grammar, harmony_lltokenizer())
    if problem:
        raise TurnGrammarError(f"llguidance rejected the turn grammar: {problem}")
    return grammar


def to_outlines(tools: ToolsArgument, options: TurnOptions | None = None, **changes: Any) -> Any:
    """An ``outlines.types.CFG`` for the turn, already validated by llguidance.

    ``options`` (a :class:`~.options.TurnOptions`) and the keywords are
    :func:`~.turn_grammar.completion_grammar`'s.
    """
    from outlines.types import CFG

    return CFG(validated_grammar(tools, options, **changes))
