"""IR to a Lark grammar (``lark.Lark(text)`` loads it; Earley, the default, parses it)."""

from __future__ import annotations

import json

from .emit_common import TokenNames, reachable_rules
from .ir import EMPTY, Alt, Chars, Expr, Grammar, Lit, Ref, Repeat, Seq, Token, has_both
from .render_regex import render_regex

__all__ = ["emit_lark", "writes_bounded_ranges"]


class _Optionals:
    """Optional parts become nullable helper rules ``_o0: x |``, nested groups ``_g1: x``.

    Lark expands ``x?`` and ``[x]`` into alternatives at load time, and two optional
    whitespace tokens side by side (``"{" ws? ws? "}"``) then expand into the same rule twice,
    which Lark refuses. A nullable rule is not expanded, and Earley copes with the ambiguity.
    """

    def __init__(self) -> None:
        self.rules: dict[str, str] = {}
        self._names: dict[str, str] = {}  # text -> name (a search of rules was quadratic)

    def __call__(self, body: str, nullable: bool = True) -> str:
        """The helper rule for ``body`` (``_oN: body |``, or ``_gN: body`` when not nullable)."""
        text = f"{body} |" if nullable else body
        name = self._names.get(text)
        if name is None:
            name = f"_{'o' if nullable else 'g'}{len(self.rules)}"
            self.rules[name] = text
            self._names[text] = name
        return name


def _rule_expr(expr: Expr, tokens: TokenNames, optionals: _Optionals, nested: bool = False) -> str:
    if has_both(expr):
        # A string token with an intersection: one terminal, lookaheads and all. Its match is
        # unique (it ends at the closing quote), so first-match regex semantics are harmless.
        return f"/{render_regex(expr, 'python').replace('/', chr(92) + '/')}/"
    if isinstance(expr, Lit):
        return json.dumps(expr.text)
    if isinstance(expr, Token):
        return tokens(expr)
    if isinstance(expr, Chars):
        return f"/{render_regex(expr, 'python').replace('/', chr(92) + '/')}/"
    if isinstance(expr, Ref):
        return expr.name
    if isinstance(expr, Seq):
        if not expr.items:
            return ""
        text = " ".join(_rule_expr(i, tokens, optionals, True) for i in expr.items)
        return f"({text})" if nested and len(expr.items) > 1 else text
    if isinstance(expr, Alt):
        text = " | ".join(_rule_expr(i, tokens, optionals) for i in expr.items)
        # Lark multiplies out alternatives nested in a sequence; a helper rule does not.
        return optionals(text, nullable=False) if nested else text
    if isinstance(expr, Repeat):
        if (expr.min, expr.max) == (0, 1):
            return optionals(_rule_expr(expr.item, tokens, optionals))
        inner = _rule_expr(expr.item, tokens, optionals, True)
        if inner.startswith("(") or isinstance(expr.item, Repeat):
            # Lark expands `~ m..n` by copying its operand; a rule name keeps copies small.
            # A repeated repetition needs one too: Lark refuses stacked quantifiers (`x++`).
            inner = optionals(_rule_expr(expr.item, tokens, optionals), nullable=False)
        if expr.max is None and expr.min <= 1:
            return inner + ("*" if expr.min == 0 else "+")
        high = "" if expr.max is None else expr.max
        if expr.max is None:
            return f"({inner} ~ {expr.min} {inner}*)"
        return f"({inner} ~ {expr.min}..{high})"
    raise TypeError(expr)


def emit_lark(grammar: Grammar) -> str:
    """Lark grammar text; tokens become character-level rules ``t0``...

    Lark's Earley lexer takes the match Python's ``re`` returns, and ``re`` alternation is
    first-match, not longest-match: a number terminal ``[1-9]|[1-9][0-9]+`` would stop after
    one digit. Rules over single-character terminals leave every choice to the parser.
    """
    tokens = TokenNames("t")
    optionals = _Optionals()
    lines = []
    for name in reachable_rules(grammar):
        body = grammar.rules[name]
        text = _rule_expr(body, tokens, optionals) if body != EMPTY else ""
        lines.append(f"{name}: {text}".rstrip())
    done = 0
    while done < len(tokens.names):
        # Printing a token may name more (at the end): print in batches, not by indexing a
        # fresh copy of the table per token (quadratic).
        batch = list(tokens.names.items())[done:]
        for body, tname in batch:
            lines.append(f"{tname}: {_rule_expr(body, tokens, optionals)}")
        done += len(batch)
    lines.extend(f"{name}: {body}" for name, body in optionals.rules.items())
    return "\n".join(lines) + "\n"


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
