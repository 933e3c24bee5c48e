"""JSON Schema to grammar: one IR (:mod:`.ir`), one compiler, one small emitter per target.

>>> print(schema_to_grammar({"type": "boolean"}, target="gbnf"), end="")
root ::= start
start ::= "true" | "false"
"""

from __future__ import annotations

from .api import TARGETS, canonical_json, compile_schema, schema_to_grammar
from .errors import UnsupportedSchemaError
from .order import property_rank

__all__ = [
    "TARGETS",
    "UnsupportedSchemaError",
    "canonical_json",
    "compile_schema",
    "property_rank",
    "schema_to_grammar",
]
