"""JSON Schema to grammar: one IR (:mod:`.ir`), one compiler, one small emitter per target.

>>> print(schema_to_grammar({"type": "boolean"}, target="gbnf"), end="")
root ::= start
start ::= "true" | "false"
"""

from __future__ import annotations

from .api import TARGETS, canonical_json, compile_schema, schema_to_grammar
from .errors import InvalidSchemaError, UnsupportedSchemaError
from .order import declared_order

__all__ = [
    "TARGETS",
    "InvalidSchemaError",
    "UnsupportedSchemaError",
    "canonical_json",
    "compile_schema",
    "declared_order",
    "schema_to_grammar",
]
