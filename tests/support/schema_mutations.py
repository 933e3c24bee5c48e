"""Instances mutated near a schema's bounds, for the differential schema test.

Given a value and the schema it was generated from, :func:`mutations` yields variants that sit
on or just past the limits the schema states: numbers at and beside ``minimum``/``maximum``
and their exclusive forms (and off a ``multipleOf`` step), strings one character short of
``minLength`` or past ``maxLength``, arrays one item short of ``minItems`` or past
``maxItems``, objects with a member dropped or one added, ``enum``/``const`` values
perturbed. Whether a variant is valid is for the oracle to say; these only aim at the edges.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from harmony_grammar.schema.pointer import resolve_local_ref

__all__ = ["mutations"]

#: How many ``$ref``/``allOf`` hops the walk follows before it stops (cycles).
_MAX_HOPS = 8


def mutations(value: Any, schema: Any, root: Any, limit: int = 40) -> list[Any]:
    """Up to ``limit`` whole-document variants of ``value`` (deterministic order)."""
    out: list[Any] = []
    for variant in _variants(value, schema, root, 0):
        if len(out) >= limit:
            break
        if variant != value or type(variant) is not type(value):
            out.append(variant)
    return out


def _applicable(schema: Any, root: Any, hops: int = 0) -> list[dict[str, Any]]:
    """``schema`` with its ``$ref`` target and ``allOf`` members (those always apply)."""
    if not isinstance(schema, dict) or hops > _MAX_HOPS:
        return []
    out = [schema]
    ref = schema.get("$ref")
    if isinstance(ref, str):
        out += _applicable(resolve_local_ref(root, ref), root, hops + 1)
    for part in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        out += _applicable(part, root, hops + 1)
    return out


def _variants(value: Any, schema: Any, root: Any, hops: int) -> Iterator[Any]:
    """Variants of ``value`` (itself mutated, or one member/item mutated in place)."""
    schemas = _applicable(schema, root)
    for s in schemas:
        yield from _enum_variants(value, s)
    if isinstance(value, bool) or value is None:
        yield from ([not value] if isinstance(value, bool) else [0])
    elif isinstance(value, (int, float)):
        for s in schemas:
            yield from _number_variants(value, s)
        yield from (value + 0.5, -value if value else -1, str(value))
    elif isinstance(value, str):
        for s in schemas:
            yield from _string_variants(value, s)
        yield from (value + "x", "")
    elif isinstance(value, list):
        yield from _array_variants(value, schemas, root, hops)
    elif isinstance(value, dict):
        yield from _object_variants(value, schemas, root, hops)


def _enum_variants(value: Any, s: dict[str, Any]) -> Iterator[Any]:
    literals = [s["const"]] if "const" in s else s.get("enum")
    if not isinstance(literals, list):
        return
    for literal in literals[:3]:
        if isinstance(literal, str):
            yield from (literal + "x", literal[:-1], literal.upper())
        elif isinstance(literal, (int, float)) and not isinstance(literal, bool):
            yield from (literal + 1, literal - 0.5)
        elif isinstance(literal, (dict, list)) and literal:
            yield _drop_one(literal)


def _drop_one(value: Any) -> Any:
    if isinstance(value, dict):
        return dict(list(value.items())[:-1])
    return value[:-1]


def _near(bound: int | float) -> list[int | float]:
    """The bound and numbers beside it: one unit, and a small step at its last place."""
    if isinstance(bound, int):
        return [bound, bound - 1, bound + 1, bound - 0.5, bound + 0.5]
    places = max(1, -int(Decimal(repr(bound)).as_tuple().exponent) + 1)  # type: ignore[operator]
    step = float(Decimal(1).scaleb(-places))
    return [bound, bound - step, bound + step, round(bound) - 1, round(bound) + 1]


def _number_variants(value: int | float, s: dict[str, Any]) -> Iterator[Any]:
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bound = s.get(key)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool):
            yield from _near(bound)
    step = s.get("multipleOf")
    if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
        yield from (value + step, value + step / 2, step * 7)
    if s.get("type") == "integer":
        yield from (value + 0.5, float(value))


def _string_variants(value: str, s: dict[str, Any]) -> Iterator[str]:
    low, high = s.get("minLength"), s.get("maxLength")
    pad = value[-1:] or "a"
    if isinstance(low, int) and low > 0:
        yield from ((value + pad * low)[: low - 1], (value + pad * low)[:low])
    if isinstance(high, int):
        yield from ((value + pad * (high + 1))[: high + 1], (value + pad * high)[:high])


def _array_variants(
    value: list[Any], schemas: list[dict[str, Any]], root: Any, hops: int
) -> Iterator[Any]:
    filler = value[-1] if value else 0
    for s in schemas:
        low, high = s.get("minItems"), s.get("maxItems")
        if isinstance(low, int) and low > 0:
            yield (value + [filler] * low)[: low - 1]
        if isinstance(high, int):
            yield (value + [filler] * (high + 1))[: high + 1]
    yield value[:-1]
    yield [*value, filler]
    if hops >= _MAX_HOPS:
        return
    for i, item in enumerate(value[:4]):
        item_schemas = [_item_schema(s, i) for s in schemas]
        for variant in _variants(item, {"allOf": item_schemas}, root, hops + 1):
            copied = list(value)
            copied[i] = variant
            yield copied


def _item_schema(s: dict[str, Any], index: int) -> Any:
    prefix = s.get("prefixItems", s["items"] if isinstance(s.get("items"), list) else [])
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index]
    rest = s.get("additionalItems", True) if isinstance(s.get("items"), list) else s.get("items")
    return rest if rest is not None else True


def _object_variants(
    value: dict[str, Any], schemas: list[dict[str, Any]], root: Any, hops: int
) -> Iterator[Any]:
    for key in value:
        yield {k: v for k, v in value.items() if k != key}
    yield {**value, "zz_extra": 1}
    for s in schemas:
        names = s.get("properties")
        for name in list(names)[:4] if isinstance(names, dict) else []:
            if name not in value:
                yield {**value, name: None}
    if hops >= _MAX_HOPS:
        return
    for key in list(value)[:6]:
        member = [s["properties"][key] for s in schemas
                  if isinstance(s.get("properties"), dict) and key in s["properties"]]  # fmt: skip
        for variant in _variants(value[key], {"allOf": member}, root, hops + 1):
            copied = copy.copy(value)
            copied[key] = variant
            yield copied
