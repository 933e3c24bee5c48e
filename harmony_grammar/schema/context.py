"""What the keyword builders (:mod:`.objects`, :mod:`.one_of`) need of the compiler.

The compiler (:mod:`.compiler`) calls the builders, and the builders call back into the
compiler to compile subschemas. Typing that callback with this protocol, rather than with the
``Compiler`` class, keeps the imports one way: builders depend on this module, the compiler
on the builders.
"""

from __future__ import annotations

from typing import Any, Protocol

from .ir import Expr, Grammar, Ref

__all__ = ["CompilerContext", "Schema"]

Schema = dict[str, Any]


class CompilerContext(Protocol):
    """The compiler as its keyword builders see it."""

    #: Generation mode: objects without ``additionalProperties`` get only their properties.
    closed_objects: bool
    #: The target reads intersections and complements (names not declared as a complement).
    complements: bool
    #: The whitespace allowed between JSON tokens (empty in compact mode).
    ws: Expr
    #: The grammar being built; builders add rules to it.
    grammar: Grammar
    #: The reference validator for the root schema (``jsonschema``).
    validator: Any

    def new_rule(self, body: Expr | None = None, hint: str = "r") -> Ref:
        """Register a rule (body may be set later) and return a reference to it."""
        ...

    def resolve(self, ref: str, pointer: str) -> tuple[Any, str]:
        """The target of a local ``$ref`` and its pointer."""
        ...

    def flatten(self, schema: Schema, pointer: str, depth: int = 0) -> Schema:
        """Merge ``$ref`` siblings and ``allOf`` members into one schema."""
        ...

    def value(self, schema: Any, pointer: str) -> Expr:
        """The expression for every JSON text valid under ``schema``."""
        ...

    def types(self, s: Schema) -> list[str]:
        """The allowed types of ``s``."""
        ...

    def shared(self, expr: Expr) -> Expr:
        """``expr`` where it is small, else a rule for it (for expressions used twice)."""
        ...

    def sep(self) -> Expr:
        """The comma between members or items, with whitespace."""
        ...

    def member(self, key: Expr, value: Expr) -> Expr:
        """``key: value`` with whitespace."""
        ...

    def json_string(self, body: Expr) -> Expr:
        """A string token for the decoded strings ``body``, spelled as this grammar allows."""
        ...

    def literal_string(self, text: str) -> Expr:
        """A string token for exactly ``text``, spelled as this grammar allows."""
        ...
