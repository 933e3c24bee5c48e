"""What every emitter shares: naming tokens and walking rules in a stable order."""

from __future__ import annotations

from collections.abc import Callable

from .ir import Alt, Expr, Grammar, Ref, Repeat, Seq, Token

__all__ = ["TokenNames", "reachable_rules"]


class TokenNames:
    """Gives each distinct token body one name, in order of first use."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.names: dict[Expr, str] = {}

    def __call__(self, token: Token) -> str:
        name = self.names.get(token.item)
        if name is None:
            name = f"{self.prefix}{len(self.names)}"
            self.names[token.item] = name
        return name


def reachable_rules(grammar: Grammar) -> list[str]:
    """Rule names reachable from the start rule, start first, in discovery order."""
    seen = [grammar.start]
    known = {grammar.start}  # `name in seen` on the list was quadratic in the rule count
    index = 0

    def visit(expr: Expr, found: Callable[[str], None]) -> None:
        if isinstance(expr, Ref):
            found(expr.name)
        elif isinstance(expr, (Seq, Alt)):
            for item in expr.items:
                visit(item, found)
        elif isinstance(expr, Repeat):
            visit(expr.item, found)

    def found(name: str) -> None:
        if name not in known:
            known.add(name)
            seen.append(name)

    while index < len(seen):
        visit(grammar.rules[seen[index]], found)
        index += 1
    return seen
