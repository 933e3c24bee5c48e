"""Is the schema a JSON Schema at all? Checked before compiling, so that a malformed schema is
one documented error (:class:`~.errors.InvalidSchemaError`) rather than whatever a keyword
builder happens to raise on a value of the wrong type.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import jsonschema

from .errors import InvalidSchemaError

__all__ = ["check_schema"]

#: Keywords whose value maps names to schemas, holds a list of schemas, or is one schema: the
#: walk from the document root to an error uses them to tell keywords from names.
_SCHEMA_MAPS = frozenset({
    "properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
})  # fmt: skip
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_VALUES = frozenset({
    "not", "if", "then", "else", "additionalProperties", "additionalItems", "contains",
    "propertyNames", "unevaluatedProperties", "unevaluatedItems", "items",
})  # fmt: skip


def check_schema(schema: Any, validator_class: Any) -> None:
    """Raise :class:`InvalidSchemaError` unless ``schema`` is valid under the meta-schema of
    ``validator_class`` (its draft; without ``$schema``, draft 2020-12, where draft 7's
    ``items: [...]`` is also valid) and every number in it is finite.

    Formats in the meta-schema (``format: regex`` on ``pattern``) are not asserted here: the
    compiler reads patterns as ECMA-262 itself, and Python's ``re`` would misjudge them.
    """
    errors = _meta_errors(schema, validator_class)
    error = jsonschema.exceptions.best_match(errors)
    # Without `$schema`, draft-07's `items: [...]` is common in the wild and the compiler
    # reads it. Tolerated only when that is all draft 2020-12 objects to (every other
    # keyword still meets 2020-12) and draft 7 accepts the schema, arrays included.
    undeclared = not (isinstance(schema, dict) and "$schema" in schema)
    if error is not None and undeclared and all(_draft7_items(e) for e in errors):
        draft7 = jsonschema.exceptions.best_match(_meta_errors(schema, jsonschema.Draft7Validator))
        # Report whichever draft's complaint points deeper: it names the culprit.
        if draft7 is None or len(draft7.absolute_path) > len(error.absolute_path):
            error = draft7
    if error is not None:
        path = list(error.absolute_path)
        raise InvalidSchemaError(_keyword(path), _pointer(path), error.message)
    for path, number in _numbers(schema, []):
        if not math.isfinite(number):
            raise InvalidSchemaError(_keyword(path), _pointer(path), f"{number} is not finite")


def _meta_errors(schema: Any, validator_class: Any) -> list[Any]:
    meta = validator_class(validator_class.META_SCHEMA)
    return list(meta.iter_errors(schema))


def _draft7_items(error: Any) -> bool:
    """Whether ``error`` is draft 2020-12 refusing draft 7's array form of ``items``."""
    path = error.absolute_path
    return bool(path) and path[-1] == "items" and isinstance(error.instance, list)


def _numbers(node: Any, path: list[Any]) -> Iterator[tuple[list[Any], float]]:
    if isinstance(node, float):
        yield path, node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _numbers(value, [*path, key])
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _numbers(value, [*path, i])


def _keyword(path: Sequence[Any]) -> str:
    """The last keyword on the way from the root to ``path`` (names and indexes skipped)."""
    keyword = ""
    kind = "schema"
    for part in path:
        if kind == "schema" or (kind == "items" and not isinstance(part, int)):
            keyword = str(part)
            kind = (
                "map" if part in _SCHEMA_MAPS
                else "list" if part in _SCHEMA_LISTS
                else "items" if part == "items"
                else "schema" if part in _SCHEMA_VALUES
                else "value"
            )  # fmt: skip
        elif kind in ("map", "list", "items"):
            kind = "schema"
        else:
            break
    return keyword


def _pointer(path: Sequence[Any]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)
