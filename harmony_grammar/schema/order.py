"""The order in which generated objects write their properties.

A generation grammar fixes one key order per object (a grammar that allowed every order would
be exponential). Each object schema's own declaration decides it (:func:`declared_order`), as
models are trained, as llguidance and xgrammar do and as the TypeScript rendering shows.
:func:`order_keys` writes an instance in the order of the schemas that validate it, so
callers can give the grammar what it accepts (docs/schema-grammar.md, "Property order").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .ecma_search import ecma_search
from .merge import json_equal
from .pointer import resolve_local_ref
from .regex import RegexError

__all__ = ["declared_order", "order_keys"]

#: How many ``$ref``/``allOf`` hops one value may take before the walk gives up on a cycle.
_MAX_HOPS = 64


def declared_order(s: dict[str, Any]) -> list[str]:
    """The names an object schema places, in its own order: ``properties`` as declared, then
    names only ``required`` mentions, then names only ``dependentRequired`` mentions (each key
    followed by what it requires), each in the order written.
    """
    names: dict[str, None] = dict.fromkeys(s.get("properties", {}))
    names.update(dict.fromkeys(n for n in s.get("required", []) if isinstance(n, str)))
    for key, deps in s.get("dependentRequired", {}).items():
        names[key] = None
        names.update(dict.fromkeys(d for d in deps if isinstance(d, str)))
    return list(names)


def order_keys(value: Any, schema: Any, root: Any, is_valid: Any) -> Any:
    """``value`` with every object's keys in the order its grammar expects.

    An object takes the declared order of the schemas that apply to it, merged as the
    compiler merges them: the schema itself, then its ``$ref`` target and ``allOf`` members,
    and of each ``anyOf``/``oneOf`` the first branch that ``is_valid(value, branch)``
    accepts; their ``properties`` first, then names only ``required`` mentions, then names
    only ``dependentRequired`` mentions. Declared names come first in that order; other keys
    follow in the value's own order (the grammar lets additional members stand anywhere). A
    value equal to an ``enum`` or ``const`` literal of those schemas is written as that
    literal is.
    """
    applicable = list(_applicable(value, schema, root, is_valid, 0))
    for s in applicable:
        # An `enum`/`const` literal is written in its own key order, all the way down.
        literals = [s["const"]] if "const" in s else s.get("enum", [])
        for literal in literals if isinstance(literals, list) else []:
            if isinstance(value, (dict, list)) and json_equal(literal, value):
                return literal
    if isinstance(value, dict):
        # As the grammar orders the merged object (declared_order of the merge): every
        # schema's `properties` first, then names only `required` mentions, then names only
        # dependencies mention, each group in merge order.
        merged = [_legacy_dependencies(s) for s in applicable]
        groups = (
            [list(s.get("properties", {})) for s in merged]
            + [declared_order({"required": s.get("required", [])}) for s in merged]
            + [declared_order({"dependentRequired": s.get("dependentRequired", {})})
               for s in merged]
        )  # fmt: skip
        rank: dict[str, int] = {}
        for names in groups:
            for name in names:
                rank.setdefault(name, len(rank))
        keys = sorted(value, key=lambda k: rank.get(k, len(rank)))
        return {
            k: order_keys(value[k], {"allOf": _member_schemas(k, applicable)}, root, is_valid)
            for k in keys
        }
    if isinstance(value, list):
        return [
            order_keys(v, {"allOf": _item_schemas(i, applicable)}, root, is_valid)
            for i, v in enumerate(value)
        ]
    return value


def _applicable(
    value: Any, schema: Any, root: Any, is_valid: Any, hops: int
) -> Iterator[dict[str, Any]]:
    """The object schemas that apply to ``value`` under ``schema``, in merge order."""
    if not isinstance(schema, dict) or hops > _MAX_HOPS:
        return
    yield schema
    ref = schema.get("$ref")
    if isinstance(ref, str):
        yield from _applicable(value, resolve_local_ref(root, ref), root, is_valid, hops + 1)
    for part in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        yield from _applicable(value, part, root, is_valid, hops + 1)
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list):
            for branch in branches:
                if _safe_valid(is_valid, value, branch):
                    yield from _applicable(value, branch, root, is_valid, hops + 1)
                    break


def _safe_valid(is_valid: Any, value: Any, schema: Any) -> bool:
    try:
        return bool(is_valid(value, schema))
    except Exception:
        return False


def _legacy_dependencies(s: dict[str, Any]) -> dict[str, Any]:
    """``s`` with draft-7 ``dependencies`` name lists read as ``dependentRequired``."""
    deps = s.get("dependencies")
    if not isinstance(deps, dict):
        return s
    lists = {k: v for k, v in deps.items() if isinstance(v, list)}
    return {**s, "dependentRequired": {**lists, **s.get("dependentRequired", {})}}


def _member_schemas(name: str, applicable: list[dict[str, Any]]) -> list[Any]:
    """The schemas a member called ``name`` must satisfy."""
    out: list[Any] = []
    for s in applicable:
        props = s.get("properties", {})
        patterns = s.get("patternProperties", {})
        matched = [v for p, v in patterns.items() if _search(p, name)]
        if isinstance(props, dict) and name in props:
            out.append(props[name])
        if matched:
            out.extend(matched)
        elif not (isinstance(props, dict) and name in props) and "additionalProperties" in s:
            out.append(s["additionalProperties"])
    return out


def _item_schemas(index: int, applicable: list[dict[str, Any]]) -> list[Any]:
    """The schemas item ``index`` of an array must satisfy."""
    out: list[Any] = []
    for s in applicable:
        items = s.get("items")
        prefix = s.get("prefixItems", items if isinstance(items, list) else [])
        rest = s.get("additionalItems") if isinstance(items, list) else items
        if isinstance(prefix, list) and index < len(prefix):
            out.append(prefix[index])
        elif rest is not None:
            out.append(rest)
    return out


def _search(pattern: str, name: str) -> bool:
    try:
        return ecma_search(pattern, name)
    except RegexError:
        return False
