"""What every emitter shares: naming tokens, walking rules in a stable order, and the one
driver that prints a grammar's rules (:class:`RulePrinter`, for the Lark and GBNF targets)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from .ir import Alt, Chars, Expr, Grammar, Lit, Ref, Repeat, Seq, Token

__all__ = ["RulePrinter", "TokenNames", "reachable_rules", "rule_depth"]


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


class RulePrinter:
    """The one driver of the rule-printing emitters: a target supplies its leaves and its
    spelling of repetition; the rules, the sequences, the choices and the order are here.

    :meth:`emit` prints the rules reachable from the start rule (start first), then each
    token as a rule of its own (``TOKEN_PREFIX`` and a number, in order of first use), then
    the helper rules the target made on the way (:meth:`helper`). A subclass writes
    ``literal``, ``chars``, ``both`` (a string token with an intersection), ``nested_choice``
    (a choice inside a sequence) and ``repeat``.
    """

    #: Between a rule's name and its body (``": "``, ``" ::= "``).
    DEFINES: ClassVar[str]
    #: The prefix of the token rules' names.
    TOKEN_PREFIX: ClassVar[str]
    #: An empty sequence.
    EMPTY: ClassVar[str]
    #: The lines before the rules (GBNF's ``root ::= start``).
    HEADER: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self.tokens = TokenNames(self.TOKEN_PREFIX)
        self.helpers: dict[str, str] = {}  # body -> name, in order of creation

    def helper(self, body: str, prefix: str) -> str:
        """The helper rule whose body is ``body`` (one per distinct body), by name."""
        name = self.helpers.get(body)
        if name is None:
            name = self.helpers[body] = f"{prefix}{len(self.helpers)}"
        return name

    def expr(self, expr: Expr, nested: bool = False) -> str:
        """``expr`` as the target writes it; ``nested`` inside a sequence or a repetition."""
        special = self.both(expr)
        if special is not None:
            return special
        if isinstance(expr, Lit):
            return self.literal(expr.text)
        if isinstance(expr, Token):
            return self.tokens(expr)
        if isinstance(expr, Chars):
            return self.chars(expr)
        if isinstance(expr, Ref):
            return expr.name
        if isinstance(expr, Seq):
            if not expr.items:
                return self.EMPTY
            text = " ".join(self.expr(i, True) for i in expr.items)
            return f"({text})" if nested and len(expr.items) > 1 else text
        if isinstance(expr, Alt):
            text = " | ".join(self.expr(i) for i in expr.items)
            return self.nested_choice(text) if nested else text
        if isinstance(expr, Repeat):
            return self.repeat(expr)
        raise TypeError(expr)

    def emit(self, grammar: Grammar) -> str:
        """The grammar's text: the header, the rules, the tokens, the helpers."""
        lines = list(self.HEADER)
        for name in reachable_rules(grammar):
            lines.append(f"{name}{self.DEFINES}{self.expr(grammar.rules[name])}".rstrip())
        # Printing a token may name more (at the end): print in batches, not by indexing a
        # fresh copy of the table per token (quadratic in the token count).
        done = 0
        while done < len(self.tokens.names):
            batch = list(self.tokens.names.items())[done:]
            for body, name in batch:
                lines.append(f"{name}{self.DEFINES}{self.expr(body)}")
            done += len(batch)
        lines.extend(f"{name}{self.DEFINES}{body}" for body, name in self.helpers.items())
        return "\n".join(lines) + "\n"

    # -- what a target supplies
    def both(self, expr: Expr) -> str | None:
        """A string token with an intersection or complement written as one piece, or None
        when ``expr`` is not one (the default: the target has none)."""
        return None

    def literal(self, text: str) -> str:
        raise NotImplementedError

    def chars(self, expr: Chars) -> str:
        raise NotImplementedError

    def nested_choice(self, text: str) -> str:
        """A choice (``a | b``) inside a sequence or a repetition."""
        raise NotImplementedError

    def repeat(self, expr: Repeat) -> str:
        raise NotImplementedError
