"""The options of an assistant turn's grammar: one frozen object for every entry point.

:class:`TurnOptions` is what :func:`~.turn_grammar.completion_grammar`,
:func:`~.xgrammar_tag.xgrammar_structural_tag`, :func:`~.outlines_export.to_outlines` and
:meth:`~.sampling.Sampler.for_turn` take; their keyword arguments are the same fields, applied
over a given ``options`` (or the defaults) by :func:`turn_options`, which is
:meth:`~harmony_grammar.base.options.Options.of` (the library's one options idiom) raising
this package's error. The values are checked once, here, when the object is made.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..base.errors import HarmonyGrammarError
from ..base.options import Options

__all__ = ["CONTENT_TYPES", "TurnGrammarError", "TurnOptions", "turn_options"]

#: The content types a call's header may carry.
CONTENT_TYPES = ("<|constrain|>json", "json", None)


class TurnGrammarError(HarmonyGrammarError, ValueError):
    """The options ask for a turn the grammar cannot express (or name no such tool)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnOptions(Options):
    """What an assistant turn may hold, and how its bodies are spelled.

    ``tool_choice``: ``auto`` (a call or a final answer), ``required`` (a call), ``none`` (a
    final answer) or a tool's name (a call to it). ``allow_analysis`` / ``allow_preamble``:
    whether the turn may open with analysis and commentary preambles. ``recipient_position``:
    ``channel`` (as the model writes it), ``role`` (as openai-harmony renders it) or
    ``either``. ``content_type``: ``<|constrain|>json``, ``json`` or None for the calls'
    header. ``response_format``: a Chat Completions ``response_format`` for the final answer.
    ``whitespace``: ``compact`` or ``flexible`` JSON in bodies. ``undeclared_properties``:
    False (the default, as OpenAI's strict function calling) gives objects that leave
    ``additionalProperties`` unset only their declared properties; True keeps the exact
    language. ``reasoning_budget``: at most this many tokens of analysis text (llguidance's
    own ``max_tokens`` bound on the analysis lexeme: the text ends there and ``<|end|>``
    follows), so a forced call or answer starts in time; 0 allows no analysis; None (the
    default) leaves it unbounded. The xgrammar structural tag carries no such bound.
    """

    tool_choice: str = "auto"
    allow_analysis: bool = True
    allow_preamble: bool = True
    recipient_position: str = "channel"
    content_type: str | None = "<|constrain|>json"
    response_format: Mapping[str, Any] | None = None
    whitespace: str = "compact"
    undeclared_properties: bool = False
    reasoning_budget: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.tool_choice, str):
            raise TurnGrammarError("tool_choice must be auto, required, none or a tool's name")
        if self.recipient_position not in ("channel", "role", "either"):
            raise TurnGrammarError("recipient_position must be channel, role or either")
        if self.content_type not in CONTENT_TYPES:
            raise TurnGrammarError("content_type must be '<|constrain|>json', 'json' or None")
        if self.whitespace not in ("compact", "flexible"):
            raise TurnGrammarError("whitespace must be compact or flexible")
        budget = self.reasoning_budget
        if budget is not None and (
            not isinstance(budget, int) or isinstance(budget, bool) or budget < 0
        ):
            raise TurnGrammarError("reasoning_budget must be a non-negative integer or None")


def turn_options(options: TurnOptions | None = None, **changes: Any) -> TurnOptions:
    """``options`` (default: the defaults) with ``changes`` applied (:meth:`TurnOptions.of`);
    an unknown keyword is a :class:`TurnGrammarError` naming it."""
    try:
        return TurnOptions.of(options, changes)
    except TypeError as exc:  # an unknown keyword: the turn grammar's own error says so
        raise TurnGrammarError(str(exc)) from None
