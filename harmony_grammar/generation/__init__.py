"""Generation: grammars of a whole assistant turn, the outlines export, and sampling.

Theory of operation
-------------------
:mod:`.turn_grammar` derives the grammar of an assistant turn from ``harmony.lark``'s message
shapes (analysis, preambles, then a schema-bound call or a final answer), with control tokens
as llguidance special tokens and call bodies compiled by :mod:`harmony_grammar.schema`.
:mod:`.outlines_export` hands it to outlines after llguidance has validated it. The ``generate``
extra's modules are imported from their own paths: :mod:`.hf` (an offline Hugging Face
tokenizer checked id for id, a tiny random model) and :mod:`.sampling` (a torch-free sampling
loop over llguidance masks).

Imports: this package may use :mod:`harmony_grammar.format`, :mod:`harmony_grammar.tools` and
:mod:`harmony_grammar.schema`; it never needs validation or rendering.
"""

from __future__ import annotations

from .outlines_export import to_outlines
from .turn_grammar import TurnGrammarError, completion_grammar

__all__ = ["TurnGrammarError", "completion_grammar", "to_outlines"]
