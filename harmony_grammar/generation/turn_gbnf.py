"""The whole-turn grammar as GBNF for a stock llama.cpp server (no llguidance in the build).

llama.cpp's GBNF names a special token by id, ``<[200005]>`` (llama.cpp PR #17816), so the
same :func:`~.turn_plan.turn_plan` the llguidance and xgrammar targets write is written here
with control tokens by id. Three things differ from the llguidance form, each because of how
llama.cpp's grammar sampler works (docs/serving.md, "llama.cpp"):

* **The grammar ends before the stop token.** llama.cpp never matches an end-of-generation
  token (``<|call|>``, ``<|return|>``) against the grammar: it allows one exactly when the
  grammar is complete, and a grammar that names one answers 500 ("Unexpected empty grammar
  stack"). So a call ends after its arguments, a final answer after its text, and the
  engine stops on the stop token by id. The stop tokens a turn cannot use, and every other
  special token llama.cpp might take for an end of generation, are :func:`banned_ids`,
  which the backend sends as ``logit_bias``. Where a turn may both call and answer, the
  engine, not the grammar, picks between ``<|call|>`` and ``<|return|>``.
* **Special tokens are text to a character rule.** The sampler matches a token's text
  against character rules, and a special token's text is its spelling (``<|channel|>``):
  a free-text rule ``[^x]*`` would take ``<|channel|>`` as text. Every special token of
  o200k_harmony is spelled ``<|`` name ``|>`` with a name of ``[a-z0-9_]``, so free text here
  is any text that does not contain such a spelling (:data:`FREE_TEXT_RULES`, a
  five-state automaton); ``<|`` and ``<|x`` alone stay allowed. Text that spells a special
  token character by character is excluded too: a character grammar cannot tell the two
  apart.
* **JSON strings spell ``<`` only as ``\\u003c``.** Every special token's text starts with
  ``<``; a body grammar with no raw ``<`` takes none of them, and every JSON value keeps a
  spelling (``"a<b"`` is written ``"a\\u003cb"``, which decodes to the same string).
  Outside strings JSON has no ``<``, so the rewrite is of the whole body grammar.
"""

from __future__ import annotations

import functools
import json
import re

from ..declarations.custom import CustomBody
from ..declarations.toolset import ToolsArgument
from ..format.tokens import FIRST_SPECIAL_ID, ControlToken
from ..schema.emit_gbnf import gbnf_literal, gbnf_rules
from ..schema.ir import (
    Alt,
    Chars,
    Expr,
    Grammar,
    Lit,
    Repeat,
    Seq,
    Token,
    alt,
    chars,
    repeat,
    seq,
)
from .options import TurnGrammarError, TurnOptions
from .turn_plan import CONTROL_TERMINALS, MessageKind, body_grammar, message_text, turn_plan

__all__ = [
    "FREE_TEXT_RULES",
    "SPECIAL_SPELLING",
    "banned_ids",
    "gbnf_turn_grammar",
]

#: How every special token of o200k_harmony is spelled
#: (tests/generation/test_turn_gbnf.py checks the whole vocabulary): free text excludes
#: exactly these spellings.
SPECIAL_SPELLING = re.compile(r"<\|[a-z0-9_]+\|>")

#: Free text: any text without a :data:`SPECIAL_SPELLING` in it. One rule per state of the
#: automaton that reads the text: ``text`` (nothing pending), ``text-lt`` (after ``<``),
#: ``text-bar`` (after ``<|``), ``text-name`` (after ``<|`` and a name), ``text-end``
#: (after ``<|name|``, where ``>`` would complete a spelling). Each rule is right-recursive,
#: so llama.cpp's stacks do not grow with the text; every state may end the text.
FREE_TEXT_RULES = (
    'text ::= [^<] text | "<" text-lt | ""',
    'text-lt ::= "<" text-lt | "|" text-bar | [^<|] text | ""',
    'text-bar ::= "<" text-lt | [a-z0-9_] text-name | [^<a-z0-9_] text | ""',
    'text-name ::= [a-z0-9_] text-name | "|" text-end | "<" text-lt | [^<|a-z0-9_] text | ""',
    'text-end ::= "<" text-lt | [^<>] text | ""',
)

#: The stop tokens: the grammar ends before them (see the module docstring).
_STOPS = frozenset({ControlToken.CALL, ControlToken.RETURN})
#: The ids llama.cpp may take for an end of generation: the named special tokens (its list
#: is by name: ``<|endoftext|>``, ``<|return|>``, ``<|call|>``, ...). Reserved ids above
#: ``<|endofprompt|>`` are never ends of generation, and free text already excludes them.
_NAMED_SPECIAL_IDS = range(FIRST_SPECIAL_ID, 200019)
_LT = ord("<")
_LT_ESCAPE = Lit("\\u003c")


def banned_ids(tools: ToolsArgument, options: TurnOptions) -> tuple[int, ...]:
    """The named special ids the turn never writes, for the engine to never sample: llama.cpp
    allows any end-of-generation token wherever the grammar may end, so a turn that cannot
    call bans ``<|call|>``, one that cannot answer bans ``<|return|>``, and every turn bans
    ``<|endoftext|>`` and the like."""
    plan = turn_plan(tools, options)
    used = {token.id for kind in plan.kinds.values() for token in _controls(kind)}
    return tuple(i for i in _NAMED_SPECIAL_IDS if i not in used)


def _controls(kind: MessageKind) -> list[ControlToken]:
    shapes = [kind.shape(first=True)]
    shapes.append(kind.shape(first=False))
    return [CONTROL_TERMINALS[t] for shape in shapes for t in shape if t in CONTROL_TERMINALS]


def _name(key: str) -> str:
    """A plan key as a rule name: llama.cpp's rule names are letters, digits and ``-``."""
    return key.replace("_", "-")


def _token(token: ControlToken) -> str | None:
    # The stop tokens are left out: the engine stops on them by id (the module docstring).
    return None if token in _STOPS else f"<[{token.id}]>"


def _message(kind: MessageKind, body: str, *, first: bool) -> str:
    return message_text(kind, body, first=first, control=_token, literal=gbnf_literal)


def _escape_lt(expr: Expr) -> Expr:
    """``expr`` with every raw ``<`` spelled ``\\u003c`` (see the module docstring)."""
    if isinstance(expr, Chars):
        if not any(lo <= _LT <= hi for lo, hi in expr.ranges):
            return expr
        rest = [
            part
            for lo, hi in expr.ranges
            for part in ((lo, min(hi, _LT - 1)), (max(lo, _LT + 1), hi))
        ]
        return alt(chars(rest), _LT_ESCAPE)
    if isinstance(expr, Lit):
        if "<" not in expr.text:
            return expr
        pieces = expr.text.split("<")
        items: list[Expr] = [Lit(pieces[0])] if pieces[0] else []
        for piece in pieces[1:]:
            items += [_LT_ESCAPE] + ([Lit(piece)] if piece else [])
        return seq(*items)
    if isinstance(expr, Seq):
        return seq(*(_escape_lt(i) for i in expr.items))
    if isinstance(expr, Alt):
        return alt(*(_escape_lt(i) for i in expr.items))
    if isinstance(expr, Repeat):
        return repeat(_escape_lt(expr.item), expr.min, expr.max)
    if isinstance(expr, Token):
        return Token(_escape_lt(expr.item))
    return expr  # Ref; Both, which GBNF refuses by keyword when the rule is written


@functools.lru_cache(maxsize=512)
def _body_rules(
    schema_json: str, prefix: str, whitespace: str, closed: bool
) -> tuple[str, tuple[str, ...]]:
    """The start rule's name and the rule lines of one body, names prefixed."""
    # A server sees the same tools on request after request: compile each schema once.
    grammar = body_grammar(schema_json, whitespace, closed)
    escaped = Grammar({name: _escape_lt(e) for name, e in grammar.rules.items()}, grammar.start)
    return f"{prefix}{grammar.start}", tuple(gbnf_rules(escaped, prefix))


def gbnf_turn_grammar(tools: ToolsArgument, options: TurnOptions) -> str:
    """The GBNF of the model's output after ``<|start|>assistant`` (see the module
    docstring): :func:`~.turn_grammar.completion_grammar` with ``target="gbnf"``."""
    plan = turn_plan(tools, options)
    bodies = {"text": "text"}
    body_rules: list[str] = []
    for prefix, schema in plan.schemas.items():
        if isinstance(schema, CustomBody):
            raise TurnGrammarError(
                "a custom tool with a grammar needs the llguidance grammar (a llama.cpp build "
                "with llguidance, --grammar llguidance): GBNF here writes JSON and free text"
            )
        closed = not options.undeclared_properties
        start, rules = _body_rules(json.dumps(schema), _name(prefix), options.whitespace, closed)
        bodies[prefix] = start
        body_rules += rules

    alternatives = []
    for first, preambles, end in plan.openings:
        rest = (["preamble-next*"] if preambles else []) + (["end-next"] if end else [])
        alternatives.append(" ".join([f"{_name(first)}-first", *rest]))
    lines = ["root ::= " + " | ".join(f"({a})" for a in alternatives)]
    if any(opening.end for opening in plan.openings):
        lines.append("end-next ::= " + " | ".join(f"{_name(k)}-next" for k in plan.ends))
    for key, kind in plan.kinds.items():
        body = bodies[kind.body]
        lines.append(f"{_name(key)}-first ::= {_message(kind, body, first=True)}")
        if key != "analysis" and any(opening.end for opening in plan.openings):
            lines.append(f"{_name(key)}-next ::= {_message(kind, body, first=False)}")
    if any(kind.body == "text" for kind in plan.kinds.values()):
        lines += FREE_TEXT_RULES
    lines += body_rules
    return "\n".join(lines) + "\n"
