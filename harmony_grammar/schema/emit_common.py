"""What every emitter shares: naming tokens and walking rules in a stable order."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .ir import Alt, Expr, Grammar, Ref, Repeat, Seq, Token

__all__ = ["TokenNames", "chain_depth", "reachable_rules", "rule_depth"]


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
    rules = grammar.rules
    return chain_depth(
        [grammar.start], lambda name: [r for r in _references(rules[name]) if r in rules]
    )


def chain_depth(roots: Iterable[str], references: Callable[[str], list[str]]) -> int:
    """The longest chain of references from any of ``roots`` (a reference back into the
    chain ends it), ``references(name)`` naming what ``name`` refers to. The one measure of
    depth, for the IR's rules and for a client's grammar text (:mod:`.grammar_gate`)."""
    depth: dict[str, int] = {}
    deepest = 0
    for root in roots:
        if root in depth:
            continue
        on_path = {root}
        # An explicit stack: a chain of thousands of rules is what this measures.
        stack: list[tuple[str, list[str]]] = [(root, list(references(root)))]
        while stack:
            name, pending = stack[-1]
            if pending:
                child = pending.pop()
                if child not in depth and child not in on_path:
                    on_path.add(child)
                    stack.append((child, list(references(child))))
                continue
            stack.pop()
            on_path.discard(name)
            children = [depth[c] for c in references(name) if c in depth]
            depth[name] = 1 + max(children, default=0)
        deepest = max(deepest, depth[root])
    return deepest


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
