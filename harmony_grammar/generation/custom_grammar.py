"""A custom tool's grammar inside the turn grammar: the one way a client's grammar enters.

A custom tool (:class:`~harmony_grammar.declarations.custom.CustomBody`) constrains its call's body
by a grammar the client wrote. :func:`custom_body_rules` is the single function that turns
one into llguidance rules, so every check on client grammars lives here (and a stricter
gate can wrap this one function):

* a **regex** becomes one terminal, escaped for llguidance by llguidance itself
  (``regex_to_lark``); the body must match it whole;
* a **Lark** grammar is nested as ``%lark { ... }``: llguidance compiles it with its own
  rule names, so it can neither see nor redefine the turn's rules. Before that it must
  compile alone, and it may not name a token (``<|call|>``, ``<[200012]>``) or set
  llguidance options: a body is text, and text never holds a control token.

Every text here passes the grammar gate (:mod:`~harmony_grammar.schema.grammar_gate`:
rule chains, nesting, ``$ref`` chains, size) before llguidance reads it, and llguidance
reads it on a stack of its own (:func:`~harmony_grammar.schema.grammar_gate.validate_llguidance`):
a grammar llguidance would recurse through until it crashed is a
:class:`~harmony_grammar.schema.grammar_gate.GrammarLimitError` naming the limit.
"""

from __future__ import annotations

from ..declarations.custom import CustomBody
from ..schema.grammar_gate import check_grammar, validate_llguidance
from ..schema.matcher import byte_tokenizer
from .options import TurnGrammarError

__all__ = ["custom_body_rules"]


def custom_body_rules(body: CustomBody, prefix: str) -> tuple[str, list[str]]:
    """The start rule and the llguidance rule lines holding a call's body to ``body``.

    Rule names begin with ``prefix`` (``a0_``). Raises :class:`TurnGrammarError` naming
    the problem for a grammar llguidance refuses or one that reaches outside its body, and
    :class:`~harmony_grammar.schema.grammar_gate.GrammarLimitError` for one past the gate.
    """
    import llguidance

    check_grammar(body.definition)  # the size limit, before even the regex is translated
    if body.syntax == "regex":
        terminal = f"{prefix.upper()}RE"
        try:
            pattern = llguidance.regex_to_lark(body.definition)
        except Exception as exc:  # llguidance raises ValueError / RuntimeError by case
            raise TurnGrammarError(f"the custom tool's regex is not valid: {exc}") from None
        rules = [f"{prefix}: {terminal}", f"{terminal}: /{pattern}/"]
        _check(rules, prefix, "regex")
        return prefix, rules
    if body.syntax != "lark":
        raise TurnGrammarError(f"a custom tool's grammar syntax must be lark or regex: {body!r}")
    problem = _outside_text(body.definition)
    if problem is not None:
        raise TurnGrammarError(f"the custom tool's Lark grammar {problem}")
    alone = validate_llguidance(body.definition, byte_tokenizer())
    if alone:
        raise TurnGrammarError(f"llguidance rejects the custom tool's Lark grammar: {alone}")
    rules = [f"{prefix}: %lark {{\n{body.definition}\n}}"]
    _check(rules, prefix, "Lark grammar")
    return prefix, rules


def _check(rules: list[str], start: str, what: str) -> None:
    """The rules compile as a grammar of their own (a problem is the client's, said so)."""
    grammar = "\n".join(["%llguidance {}", f"start: {start}", *rules]) + "\n"
    problem = validate_llguidance(grammar, byte_tokenizer())
    if problem:
        raise TurnGrammarError(f"llguidance rejects the custom tool's {what}: {problem}")


def _outside_text(definition: str) -> str | None:
    """Why a Lark definition reaches outside a text body, or None.

    Scans the grammar's lexemes as llguidance reads them: string literals, ``/regex/``
    literals and comments are skipped; outside them a ``<`` names a token, a ``%llguidance``
    sets options, and unbalanced braces would close the nested ``%lark { }`` block early.
    """
    depth = 0
    i, n = 0, len(definition)
    while i < n:
        c = definition[i]
        if c in "\"'":
            i = _skip_quoted(definition, i, c)
            continue
        if (c == "/" and definition.startswith("//", i)) or c == "#":
            end = definition.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == "/":
            i = _skip_quoted(definition, i, "/")
            continue
        if c == "<":
            return f"names a token at character {i}; a custom tool's input is text only"
        if definition.startswith("%llguidance", i):
            return f"sets llguidance options at character {i} (%llguidance); leave them out"
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return f"closes a brace it never opened at character {i}"
        i += 1
    return None if depth == 0 else "leaves a brace open"


def _skip_quoted(text: str, start: int, quote: str) -> int:
    """The index after the literal that opens at ``start`` (backslash escapes honoured)."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote or (text[i] == "\n" and quote == "/"):
            return i + 1
        i += 1
    return len(text)
