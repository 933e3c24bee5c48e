"""``allOf`` as one schema: merging sibling schemas keyword by keyword.

Each merge rule is exact (the merged schema accepts exactly what all inputs accept); a
keyword present in several inputs with no exact rule raises UnsupportedSchemaError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import UnsupportedSchemaError

__all__ = ["ANNOTATIONS", "is_true_schema", "json_equal", "merge_schemas"]

Schema = dict[str, Any]


def json_equal(a: Any, b: Any) -> bool:
    """JSON Schema equality: numbers by value, booleans distinct from numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def is_true_schema(schema: Any) -> bool:
    """True for a schema every value satisfies, as written (``true`` or ``{}``)."""
    return schema is True or schema == {}


def _all_of(a: Any, b: Any) -> Any:
    if is_true_schema(a):
        return b
    if is_true_schema(b):
        return a
    if a is False or b is False:
        return False
    return {"allOf": [a, b]}


def _types(value: Any) -> set[str]:
    return {value} if isinstance(value, str) else set(value)


def _merge_type(a: Any, b: Any) -> Any:
    ta, tb = _types(a), _types(b)
    out = ta & tb
    # integer is a subset of number
    if ("integer" in ta and "number" in tb) or ("number" in ta and "integer" in tb):
        out.add("integer")
    return sorted(out)


def _enum_of(schema: Schema) -> list[Any] | None:
    if "const" in schema:
        return [schema["const"]]
    return list(schema["enum"]) if "enum" in schema else None


#: Keywords that only annotate: merging keeps the first value.
ANNOTATIONS = frozenset({
    "title", "description", "default", "examples", "$comment", "readOnly", "writeOnly",
    "deprecated", "$id", "id", "$schema", "$anchor", "$defs", "definitions",
    "contentMediaType", "contentEncoding",
})  # fmt: skip
_MAX = {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"}
_MIN = {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"}
_OBJECT_SHAPE = {"properties", "additionalProperties"}


def _for_name(schema: Schema, name: str) -> Any:
    props = schema.get("properties", {})
    if name in props:
        return props[name]
    return schema.get("additionalProperties", True)


def _merge_objects(a: Schema, b: Schema, out: Schema) -> None:
    if "patternProperties" in a or "patternProperties" in b:
        raise UnsupportedSchemaError("patternProperties", "", "inside allOf")
    names = list(a.get("properties", {})) + [
        n for n in b.get("properties", {}) if n not in a.get("properties", {})
    ]
    if names:
        out["properties"] = {n: _all_of(_for_name(a, n), _for_name(b, n)) for n in names}
    addl = _all_of(a.get("additionalProperties", True), b.get("additionalProperties", True))
    if addl is not True:
        out["additionalProperties"] = addl


def _merge_prefix(a: Schema, b: Schema, out: Schema) -> None:
    pa, pb = a.get("prefixItems", []), b.get("prefixItems", [])
    ia, ib = a.get("items", True), b.get("items", True)
    size = max(len(pa), len(pb))
    out["prefixItems"] = [
        _all_of(pa[i] if i < len(pa) else ia, pb[i] if i < len(pb) else ib) for i in range(size)
    ]
    out["items"] = _all_of(ia, ib)


def _merge_any_of(a: list[Any], b: list[Any]) -> list[Any]:
    if len(a) * len(b) > 64:
        raise UnsupportedSchemaError("anyOf", "", "too many branch combinations in allOf")
    return [_all_of(x, y) for x in a for y in b]


_RULES: dict[str, Callable[[Any, Any], Any]] = {
    "type": _merge_type,
    "required": lambda a, b: list(dict.fromkeys([*a, *b])),
    "items": _all_of,
    "anyOf": _merge_any_of,
    "dependentRequired": lambda a, b: {
        k: list(dict.fromkeys([*a.get(k, []), *b.get(k, [])])) for k in {**a, **b}
    },
}


def merge_schemas(a: Schema, b: Schema) -> Schema:
    """One schema accepting exactly what both ``a`` and ``b`` accept (no ``$ref``/``allOf``)."""
    out: Schema = dict(a)
    if (
        _OBJECT_SHAPE & (a.keys() | b.keys())
        and (_OBJECT_SHAPE & a.keys())
        and (_OBJECT_SHAPE & b.keys())
    ):
        _merge_objects(a, b, out)
    elif _OBJECT_SHAPE & b.keys():
        for key in _OBJECT_SHAPE & b.keys():
            out[key] = b[key]
    if "prefixItems" in a or "prefixItems" in b:
        _merge_prefix(a, b, out)
    ea, eb = _enum_of(a), _enum_of(b)
    if ea is not None and eb is not None:
        out.pop("const", None)
        out["enum"] = [v for v in ea if any(json_equal(v, w) for w in eb)]
    elif eb is not None:
        out.pop("const", None)
        out["enum"] = eb
    for key, value in b.items():
        if key in _OBJECT_SHAPE or key in ("prefixItems", "enum", "const"):
            continue
        if key == "items" and ("prefixItems" in a or "prefixItems" in b):
            continue
        if key not in out:
            out[key] = value
        elif key in _MAX:
            out[key] = max(out[key], value)
        elif key in _MIN:
            out[key] = min(out[key], value)
        elif key in _RULES:
            out[key] = _RULES[key](out[key], value)
        elif key in ANNOTATIONS:
            continue  # annotations constrain nothing; the first one stays
        elif not json_equal(out[key], value):
            raise UnsupportedSchemaError(key, "", "different values in allOf branches")
    return out
