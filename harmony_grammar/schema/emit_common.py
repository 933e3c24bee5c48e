"""What every emitter shares: naming tokens and walking rules in a stable order."""

from __future__ import annotations

from collections.abc import Callable

from .ir import Alt, Expr, Grammar, Ref, Repeat, Seq, Token

__all__ = ["TokenNames", "reachable_rules", "rule_depth"]


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


def _references(expr: Expr) -> list[str]:
    found: list[str] = []
    stack = [expr]
    while stack:
        item = stack.pop()
        if isinstance(item, Ref):
            found.append(item.name)
        elif isinstance(item, (Seq, Alt)):
            stack.extend(item.items)
        elif isinstance(item, Repeat):
            stack.append(item.item)
    return found


def rule_depth(grammar: Grammar) -> int:
    """The longest chain of rule references from the start rule (a reference back into the
    chain, recursion, ends it): how deep a parser that walks rules recursively must go."""
    depth: dict[str, int] = {}
    on_path: set[str] = set()
    # An explicit stack: a chain of thousands of rules is what this measures.
    stack: list[tuple[str, list[str]]] = [
        (grammar.start, _references(grammar.rules[grammar.start]))
    ]
    on_path.add(grammar.start)
    while stack:
        name, pending = stack[-1]
        if pending:
            child = pending.pop()
            if child not in depth and child not in on_path and child in grammar.rules:
                on_path.add(child)
                stack.append((child, _references(grammar.rules[child])))
            continue
        stack.pop()
        on_path.discard(name)
        children = [depth[c] for c in _references(grammar.rules[name]) if c in depth]
        depth[name] = 1 + max(children, default=0)
    return depth.get(grammar.start, 0)


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
