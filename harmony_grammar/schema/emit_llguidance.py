"""IR to llguidance's Lark dialect (``%llguidance {}`` header, Rust regex terminals)."""

from __future__ import annotations

import json

from .emit_common import TokenNames, reachable_rules
from .ir import EMPTY, Alt, Both, Chars, Expr, Grammar, Lit, Ref, Repeat, Seq, Token, has_both
from .render_regex import render_regex

__all__ = ["emit_llguidance", "llguidance_rules"]


def _rule_expr(expr: Expr, tokens: TokenNames, nested: bool = False) -> str:
    if isinstance(expr, Lit):
        return json.dumps(expr.text)  # llguidance string literals are JSON strings
    if isinstance(expr, (Token, Chars)):
        return tokens(expr if isinstance(expr, Token) else Token(expr))
    if isinstance(expr, Ref):
        return expr.name
    if isinstance(expr, Seq):
        if not expr.items:
            return '""'
        text = " ".join(_rule_expr(i, tokens, True) for i in expr.items)
        return f"({text})" if nested and len(expr.items) > 1 else text
    if isinstance(expr, Alt):
        text = " | ".join(_rule_expr(i, tokens) for i in expr.items)
        return f"({text})" if nested else text
    if isinstance(expr, Repeat):
        inner = _rule_expr(expr.item, tokens, True)
        if (expr.min, expr.max) == (0, 1):
            return inner + "?"
        if expr.max is None and expr.min <= 1:
            return inner + ("*" if expr.min == 0 else "+")
        high = "" if expr.max is None else expr.max
        return f"{inner}{{{expr.min},{high}}}"
    raise TypeError(expr)


def llguidance_rules(grammar: Grammar, prefix: str = "") -> list[str]:
    """The rule and terminal lines, names prefixed (to embed several grammars in one)."""
    tokens = TokenNames(f"{prefix.upper()}T")
    renamed = {name: f"{prefix}{name}" for name in grammar.rules}
    lines = []
    for name in reachable_rules(grammar):
        body = _rename(grammar.rules[name], renamed)
        text = _rule_expr(body, tokens) if body != EMPTY else '""'
        lines.append(f"{renamed[name]}: {text}")
    for body, tname in tokens.names.items():
        lines.append(f"{tname}: {_lexeme(body)}")
    return lines


def _lexeme(expr: Expr) -> str:
    """A terminal's body: one regex, or llguidance's ``&``/``~`` around regexes."""
    if isinstance(expr, Both):
        parts = [_lexeme(i) for i in expr.items] + [f"~{_lexeme(e)}" for e in expr.excluded]
        return f"({' & '.join(parts)})"
    if isinstance(expr, Seq) and has_both(expr):
        return f"({' '.join(_lexeme(i) for i in expr.items)})"
    if has_both(expr):
        raise TypeError(f"an intersection must be a string token's content: {expr!r}")
    return f"/{render_regex(expr, 'rust').replace('/', chr(92) + '/')}/"


def _rename(expr: Expr, names: dict[str, str]) -> Expr:
    if isinstance(expr, Ref):
        return Ref(names[expr.name])
    if isinstance(expr, Seq):
        return Seq(tuple(_rename(i, names) for i in expr.items))
    if isinstance(expr, Alt):
        return Alt(tuple(_rename(i, names) for i in expr.items))
    if isinstance(expr, Repeat):
        return Repeat(_rename(expr.item, names), expr.min, expr.max)
    return expr


def emit_llguidance(grammar: Grammar) -> str:
    """A complete llguidance grammar whose start rule is ``start``."""
    return "%llguidance {}\n\n" + "\n".join(llguidance_rules(grammar)) + "\n"
