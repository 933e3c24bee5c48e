"""``oneOf``: a union only when no value can satisfy two branches.

A sufficient disjointness test (types through ``$ref``s, ``const``/``enum``, and for objects a
name one side requires that the other forbids or that both require with disjoint values), and
one rewrite: branches that only require names become pairwise disjoint.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

from .context import CompilerContext, Schema
from .errors import UnsupportedSchemaError
from .ir import Expr, alt
from .merge import ANNOTATIONS, json_equal, merge_schemas

__all__ = ["disjoint", "one_of", "type_set"]


def one_of(c: CompilerContext, s: Schema, pointer: str) -> Expr:
    """``oneOf`` as a union of branches proven pairwise disjoint (or rewritten to be)."""
    base = {k: v for k, v in s.items() if k != "oneOf"}
    members = [b for b in s["oneOf"] if b is not False]
    if not _disjoint_all(c, _branches(c, base, members, pointer)):
        exclusive = _exclusive_requirements(members)
        if exclusive is None:
            raise UnsupportedSchemaError("oneOf", pointer, "branches are not provably disjoint")
        members = exclusive
    branches = _branches(c, base, members, pointer)
    return alt(*(c.value(b, f"{pointer}/oneOf/{i}") for i, b in enumerate(branches)))


def _branches(c: CompilerContext, base: Schema, members: list[Any], pointer: str) -> list[Schema]:
    return [
        c.flatten(merge_schemas(base, b) if isinstance(b, dict) else base, pointer) for b in members
    ]


def _disjoint_all(c: CompilerContext, branches: list[Schema]) -> bool:
    try:
        flat = [_dereferenced(c, b) for b in branches]  # once per branch, not per pair
    except UnsupportedSchemaError:
        return False
    # Fast path, linear: `const`/`enum` branches whose values are all different.
    values = [_values_of(f) for f in flat]
    if all(v is not None for v in values):
        keys = [{_value_key(x) for x in v or ()} for v in values]
        if sum(len(k) for k in keys) == len(set().union(*keys)):
            return True
    return all(_disjoint_flat(c, a, b, 0) for a, b in itertools.combinations(flat, 2))


def _value_key(value: Any) -> Any:
    """A hashable key, equal for JSON values :func:`json_equal` calls equal."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        return ("number", Fraction(value))
    if isinstance(value, list):
        return ("array", tuple(_value_key(v) for v in value))
    if isinstance(value, dict):
        return ("object", frozenset((k, _value_key(v)) for k, v in value.items()))
    return ("other", repr(value))


def disjoint(c: CompilerContext, a: Any, b: Any, depth: int = 0) -> bool:
    """A sufficient test that no value is valid under both ``a`` and ``b``."""
    try:
        fa, fb = _dereferenced(c, a), _dereferenced(c, b)
    except UnsupportedSchemaError:
        return False
    return _disjoint_flat(c, fa, fb, depth)


def _disjoint_flat(c: CompilerContext, fa: Any, fb: Any, depth: int) -> bool:
    """:func:`disjoint` for schemas already flattened and dereferenced."""
    if fa is False or fb is False:
        return True
    if fa is True or fb is True:
        return False
    # Each test below reads a branch's own keywords: a nested anyOf/oneOf only narrows it.
    ta, tb = type_set(c.types(fa)), type_set(c.types(fb))
    if not (ta & tb):
        return True
    ea, eb = _values_of(fa), _values_of(fb)
    if ea is not None and eb is not None:
        return not any(json_equal(x, y) for x in ea for y in eb)
    if ea is not None:
        return not any(c.validator.evolve(schema=fb).is_valid(x) for x in ea)
    if eb is not None:
        return not any(c.validator.evolve(schema=fa).is_valid(y) for y in eb)
    if depth < 8 and ta & tb <= {"object"}:
        # Objects: a name one side requires that the other forbids, or that both require
        # with disjoint values. Each value schema here is a superset of the real one
        # (patterns are left out), so disjoint supersets prove it.
        ra, rb = set(fa.get("required", [])), set(fb.get("required", []))
        if any(_value_schema(fb, n) is False for n in ra - rb) or any(
            _value_schema(fa, n) is False for n in rb - ra
        ):
            return True
        return any(
            disjoint(c, _value_schema(fa, n), _value_schema(fb, n), depth + 1) for n in ra & rb
        )
    return False


def _dereferenced(c: CompilerContext, schema: Any) -> Any:
    """``schema`` flattened, following a lone ``$ref`` to its target; booleans as they are."""
    for _ in range(16):
        if isinstance(schema, bool):
            return schema
        if not isinstance(schema, dict):
            raise UnsupportedSchemaError("", "", "not a schema")
        flat = c.flatten(schema, "")
        if "$ref" not in flat:
            return flat
        schema = c.resolve(flat["$ref"], "")[0]
    raise UnsupportedSchemaError("$ref", "", "reference chain too long")


def _values_of(schema: Any) -> list[Any] | None:
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return [schema["const"]]
    return list(schema["enum"]) if "enum" in schema else None


def _value_schema(schema: Schema, name: str) -> Any:
    """A superset of what ``schema`` allows as the value of property ``name``."""
    props = schema.get("properties", {})
    if name in props:
        return props[name]
    if schema.get("patternProperties"):
        return True
    return schema.get("additionalProperties", True)


def _exclusive_requirements(members: list[Any]) -> list[Any] | None:
    """``oneOf`` branches that only require names, rewritten to be pairwise disjoint.

    Branch i holds when all of its names are present and no other branch j holds, that is,
    some name of j that i does not require is absent. When that is a single name it is
    banned in branch i (a ``false`` property schema); a branch that implies another one
    can never be the only one to hold and is dropped. Anything else returns None.
    """
    names: list[set[str]] = []
    for member in members:
        if not isinstance(member, dict) or set(member) - {"required"} - ANNOTATIONS:
            return None
        names.append(set(member.get("required", [])))
    rewritten: list[Any] = []
    for i, own in enumerate(names):
        banned: set[str] = set()
        for j, other in enumerate(names):
            missing = other - own
            if j == i:
                continue
            if not missing:
                break  # branch j holds whenever branch i does
            if len(missing) > 1:
                return None
            banned |= missing
        else:
            required = list(dict.fromkeys(members[i].get("required", [])))
            rewritten.append({"required": required, "properties": dict.fromkeys(banned, False)})
    return rewritten


def type_set(types: list[str]) -> set[str]:
    """The types as a set, ``integer`` included where ``number`` is (they overlap)."""
    # number includes integer: {"integer"} and {"number"} overlap
    return set(types) | ({"integer"} if "number" in types else set())
