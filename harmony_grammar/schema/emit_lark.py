"""IR to a Lark grammar (``lark.Lark(text)`` loads it; Earley, the default, parses it)."""

from __future__ import annotations

import json

from .emit_common import RulePrinter, reachable_rules
from .ir import Alt, Chars, Expr, Grammar, Repeat, Seq, Token, has_both
from .render_regex import render_regex

__all__ = ["emit_lark", "writes_bounded_ranges"]


def _regex(expr: Expr) -> str:
    return f"/{render_regex(expr, 'python').replace('/', chr(92) + '/')}/"


class _LarkPrinter(RulePrinter):
    """Lark's spelling. Optional parts become nullable helper rules ``_o0: x |``, nested
    choices and repeated groups ``_g1: x``.

    Lark expands ``x?`` and ``[x]`` into alternatives at load time, and two optional
    whitespace tokens side by side (``"{" ws? ws? "}"``) then expand into the same rule twice,
    which Lark refuses. A nullable rule is not expanded, and Earley copes with the ambiguity.
    """

    DEFINES = ": "
    TOKEN_PREFIX = "t"
    EMPTY = ""

    def both(self, expr: Expr) -> str | None:
        # A string token with an intersection: one terminal, lookaheads and all. Its match is
        # unique (it ends at the closing quote), so first-match regex semantics are harmless.
        return _regex(expr) if has_both(expr) else None

    def literal(self, text: str) -> str:
        return json.dumps(text)

    def chars(self, expr: Chars) -> str:
        return _regex(expr)

    def nested_choice(self, text: str) -> str:
        # Lark multiplies out alternatives nested in a sequence; a helper rule does not.
        return self.helper(text, "_g")

    def repeat(self, expr: Repeat) -> str:
        if (expr.min, expr.max) == (0, 1):
            return self.helper(f"{self.expr(expr.item)} |", "_o")
        inner = self.expr(expr.item, True)
        if inner.startswith("(") or isinstance(expr.item, Repeat):
            # Lark expands `~ m..n` by copying its operand; a rule name keeps copies small.
            # A repeated repetition needs one too: Lark refuses stacked quantifiers (`x++`).
            inner = self.helper(self.expr(expr.item), "_g")
        if expr.max is None and expr.min <= 1:
            return inner + ("*" if expr.min == 0 else "+")
        if expr.max is None:
            return f"({inner} ~ {expr.min} {inner}*)"
        return f"({inner} ~ {expr.min}..{expr.max})"


def emit_lark(grammar: Grammar) -> str:
    """Lark grammar text; tokens become character-level rules ``t0``...

    Lark's Earley lexer takes the match Python's ``re`` returns, and ``re`` alternation is
    first-match, not longest-match: a number terminal ``[1-9]|[1-9][0-9]+`` would stop after
    one digit. Rules over single-character terminals leave every choice to the parser.
    """
    return _LarkPrinter().emit(grammar)


def writes_bounded_ranges(grammar: Grammar) -> bool:
    """Whether :func:`emit_lark` writes Lark's bounded repetition ``x ~ m..n`` for
    ``grammar``: a form llguidance reads only from 1.9 on (:mod:`.versions`)."""
    seen: set[int] = set()
    todo = [grammar.rules[name] for name in reachable_rules(grammar)]
    while todo:
        expr = todo.pop()
        if id(expr) in seen or has_both(expr):  # a Both token is one regex, no `~`
            continue
        seen.add(id(expr))
        if isinstance(expr, Repeat):
            if expr.max is not None and (expr.min, expr.max) != (0, 1):
                return True
            todo.append(expr.item)
        elif isinstance(expr, (Seq, Alt)):
            todo.extend(expr.items)
        elif isinstance(expr, Token):
            todo.append(expr.item)
    return False
