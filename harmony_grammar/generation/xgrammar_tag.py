"""The assistant turn as an xgrammar structural tag (vLLM's and SGLang's ``structural_tag``).

The same :class:`~.turn_plan.TurnPlan` the llguidance grammar is written from, in xgrammar's
structural-tag JSON (``{"type": "structural_tag", "format": ...}``, what
``xgrammar.Grammar.from_structural_tag`` and the engines' ``structural_tag`` response format
take):

* control tokens are ``{"type": "token", "token": ID}`` formats with their o200k_harmony ids,
  so only the special id matches, never its spelling in ordinary text tokens;
* header words (channel names, recipients, content types) are ``const_string`` formats;
* free text (analysis, preambles, a plain final answer) is ``any_tokens`` excluding every
  special id of o200k_harmony (llguidance's ``/(?s:.*)/``: special tokens are not text);
* a call's arguments and a ``response_format`` answer are ``grammar`` formats holding our own
  exact grammar of the JSON Schema (:mod:`harmony_grammar.schema`, GBNF-style EBNF), never
  xgrammar's JSON-schema converter.

What xgrammar cannot express, measured in tests/generation/test_xgrammar_tag.py and written up in
docs/serving.md: inside a ``grammar`` body (the JSON arguments) a token is matched by its
bytes, so where the engine's tokenizer info spells a control token as its text (as the
Hugging Face tokenizer does), the special ``<|end|>`` id is accepted inside a JSON string as
the text ``<|end|>``. Schemas that need an intersection of languages (the IR's ``Both``) have
no EBNF form and raise :class:`~harmony_grammar.schema.UnsupportedSchemaError`.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from ..declarations.custom import CustomBody
from ..declarations.toolset import ToolsArgument
from ..format.tokens import FIRST_SPECIAL_ID, LAST_SPECIAL_ID, STOP_TOKENS
from ..schema.versions import XGRAMMAR_STOP_TOKENS_IN_GRAMMAR, older_than
from .options import TurnGrammarError, TurnOptions, turn_options
from .turn_plan import CONTROL_TERMINALS, MessageKind, TurnPlan, body_grammar, turn_plan

__all__ = [
    "SPECIAL_IDS",
    "harmony_tokenizer_info",
    "xgrammar_structural_tag",
]

#: Every id of o200k_harmony's special block: none of them is text.
SPECIAL_IDS = tuple(range(FIRST_SPECIAL_ID, LAST_SPECIAL_ID + 1))

Format = dict[str, Any]


@functools.lru_cache(maxsize=512)
def _schema_ebnf(schema_json: str, whitespace: str, closed: bool) -> str:
    # A server sees the same tools on request after request: compile each schema once.
    from ..schema.emit_xgrammar import emit_xgrammar

    return emit_xgrammar(body_grammar(schema_json, whitespace, closed))


#: The ids that end generation (<|return|>, <|call|>).
_STOP_IDS = frozenset(token.id for token in STOP_TOKENS)


def _message(kind: MessageKind, body: Format, *, first: bool, stop_in_grammar: bool) -> Format:
    elements: list[Format] = []
    for terminal in kind.shape(first=first):
        if terminal in CONTROL_TERMINALS:
            token_id = CONTROL_TERMINALS[terminal].id
            if token_id in _STOP_IDS and not stop_in_grammar:
                continue  # the engine's stop ids end the turn (see xgrammar_structural_tag)
            elements.append({"type": "token", "token": token_id})
        elif terminal == "CONTENT":
            elements.append(body)
        elif terminal == "AUTHOR":
            elements.append({"type": "const_string", "value": "assistant"})
        else:
            elements.append({"type": "const_string", "value": kind.values[terminal]})
    return {"type": "sequence", "elements": elements}


def _one_of(formats: list[Format]) -> Format:
    return formats[0] if len(formats) == 1 else {"type": "or", "elements": formats}


def _plan_structural_tag(
    plan: TurnPlan, whitespace: str, closed_objects: bool, stop_in_grammar: bool
) -> dict[str, Any]:
    """The structural tag of a turn plan (see :func:`xgrammar_structural_tag`)."""
    bodies: dict[str, Format] = {
        "text": {"type": "any_tokens", "exclude_tokens": list(SPECIAL_IDS)}
    }
    for key, schema in plan.schemas.items():
        if isinstance(schema, CustomBody):
            # xgrammar reads regexes, not llguidance's Lark: a Lark custom tool needs the
            # llguidance grammar (serve --grammar llguidance).
            if schema.syntax != "regex":
                raise TurnGrammarError(
                    "a custom tool with a Lark grammar needs the llguidance grammar, "
                    "not an xgrammar structural tag"
                )
            bodies[key] = {"type": "regex", "pattern": schema.definition}
            continue
        ebnf = _schema_ebnf(json.dumps(schema), whitespace, closed_objects)
        bodies[key] = {"type": "grammar", "grammar": ebnf}

    def message(key: str, *, first: bool) -> Format:
        kind = plan.kinds[key]
        return _message(kind, bodies[kind.body], first=first, stop_in_grammar=stop_in_grammar)

    # [analysis] preamble* end — the first message has no <|start|>assistant.
    end_next = _one_of([message(k, first=False) for k in plan.ends])
    alternatives: list[Format] = []
    for first, preambles, end in plan.openings:
        elements = [message(first, first=True)]
        if preambles:
            elements.append({"type": "star", "content": message("preamble", first=False)})
        if end:
            elements.append(end_next)
        alternatives.append(
            elements[0] if len(elements) == 1 else {"type": "sequence", "elements": elements}
        )
    return {"type": "structural_tag", "format": _one_of(alternatives)}


def xgrammar_structural_tag(
    tools: ToolsArgument,
    options: TurnOptions | None = None,
    *,
    target_version: str | None = None,
    **changes: Any,
) -> dict[str, Any]:
    """The xgrammar structural tag of the model's output after ``<|start|>assistant``.

    ``options`` (a :class:`~.options.TurnOptions`) and the keyword arguments are
    :func:`~harmony_grammar.generation.completion_grammar`'s, and the tag accepts the same
    turns as its llguidance grammar, apart from the limit this module's docstring names; the
    one public xgrammar entry point (``completion_grammar(..., target="xgrammar")`` is this
    dict as JSON text). Pass the dict (or its JSON text) as vLLM's
    ``structured_outputs={"structural_tag": ...}`` or as ``response_format={"type":
    "structural_tag", "format": tag["format"]}``; docs/serving.md shows both.

    ``target_version``: the xgrammar that will compile the tag (``None``: 0.2.9 or later).
    Before 0.2.9 a stop id never reaches the grammar, so the tag ends where ``<|call|>`` or
    ``<|return|>`` would go and the engine's stop ids end the turn: which of the two ends it is
    then not constrained (docs/schema-grammar.md, pinned library versions).
    """
    options = turn_options(options, **changes)
    plan = turn_plan(tools, options)
    stop_in_grammar = not older_than(target_version, XGRAMMAR_STOP_TOKENS_IN_GRAMMAR)
    return _plan_structural_tag(
        plan, options.whitespace, not options.undeclared_properties, stop_in_grammar
    )


def harmony_tokenizer_info() -> Any:
    """An ``xgrammar.TokenizerInfo`` for o200k_harmony, built offline from tiktoken's tables.

    Ordinary ids carry their raw bytes (``VocabType.RAW``); special ids carry their spelling,
    as the Hugging Face tokenizer a serving engine hands xgrammar does; ``<|return|>`` and
    ``<|call|>`` are the stop ids. Needs the ``xgrammar`` package.
    """
    import xgrammar

    from ..format.tokens import STOP_TOKENS, special_token_spelling
    from ..format.vocabulary import load_encoding, token_bytes_table

    vocab = list(token_bytes_table(load_encoding()))
    vocab += [special_token_spelling(i).encode() for i in range(len(vocab), LAST_SPECIAL_ID + 1)]
    return xgrammar.TokenizerInfo(
        vocab,
        xgrammar.VocabType.RAW,
        vocab_size=len(vocab),
        stop_token_ids=sorted(token.id for token in STOP_TOKENS),
    )
