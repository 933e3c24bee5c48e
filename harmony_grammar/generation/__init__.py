"""Generation: grammars of a whole assistant turn, the outlines export, and sampling.

Theory of operation
-------------------
:class:`.options.TurnOptions` is the one frozen object of a turn's options, taken by every
entry point below (their keywords are its fields). :mod:`.turn_plan` derives what an assistant
turn may hold from ``harmony.lark``'s message
shapes (analysis, preambles, then a schema-bound call or a final answer); :mod:`.turn_grammar`
writes it as an llguidance grammar (control tokens as special tokens) and
:mod:`.xgrammar_tag` as an xgrammar structural tag (control tokens by id), call bodies compiled
by :mod:`harmony_grammar.schema` for both (a custom tool's body by its own Lark or regex
grammar: :mod:`.custom_grammar`, the one function client grammars go through).
:mod:`.outlines_export` hands it to outlines after llguidance has validated it. The ``generate``
extra's modules are imported from their own paths: :mod:`.hf` (an offline Hugging Face
tokenizer checked id for id, a tiny random model) and :mod:`.sampling` (a torch-free sampling
loop over llguidance masks).

Imports: this package may use :mod:`harmony_grammar.format`, :mod:`harmony_grammar.tools`,
:mod:`harmony_grammar.declarations` and :mod:`harmony_grammar.schema`; it never needs
validation or rendering.
"""

from __future__ import annotations

from .options import TurnGrammarError, TurnOptions
from .outlines_export import to_outlines
from .turn_grammar import completion_grammar
from .xgrammar_tag import xgrammar_structural_tag

__all__ = [
    "TurnGrammarError",
    "TurnOptions",
    "completion_grammar",
    "to_outlines",
    "xgrammar_structural_tag",
]
