"""Hypothesis strategies for the JSON Schemas real tools declare.

Tool schemas in the wild are not hypothesis-jsonschema's random schemas: they are objects of
named properties, a discriminated ``oneOf``/``anyOf`` of objects, ``enum``s of mixed types,
patterns with Unicode classes, ``format``s, ``const``s, ``$ref``s into ``$defs``,
``additionalProperties`` schemas, ``dependentRequired``, numeric bounds with a power-of-ten
``multipleOf``, ``prefixItems``. :func:`tool_schemas` draws such schemas (draft 2020-12), each
with properties in a drawn declared order, so a test does not tune itself to one file's
shapes. :func:`tool_sets` draws whole tool lists (``{name: schema}``) for turn grammars.

Every keyword drawn is one the compiler states exactly (docs/schema-grammar.md); a drawn
schema may still be refused (an unsatisfiable combination), which callers count.
"""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as fixed_seed
from hypothesis import strategies as st

__all__ = ["COUNT_KEYWORDS", "seeded_examples", "tool_schemas", "tool_sets"]

#: The keywords whose value is a repetition count (what must never be written as copies).
COUNT_KEYWORDS = (
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)

#: Patterns as tools write them, Unicode classes and escapes included (ECMA-262).
PATTERNS = (
    "^[a-z][a-z0-9_]*$",
    "^[A-Za-z\\u00C0-\\u024F ]+$",
    "^[\\u0400-\\u04FF]+$",
    "^\\d{3}-\\d{4}$",
    "^[^\\s@]+@[^\\s@]+$",
    "^\\w+$",
    "^[\\u4e00-\\u9fff]{1,8}$",
    "^(GET|POST|PUT|DELETE)$",
    "^#[0-9a-fA-F]{6}$",
    "[A-Z]{2}",
    "^\\S.*$",
    "^[α-ωΑ-Ω]+$",
)
FORMATS = ("date", "date-time", "time", "email", "uuid", "ipv4", "ipv6", "hostname", "uri")
#: Property names: identifiers, and a few that need care (spaces, escapes, non-ASCII).
NAMES = st.one_of(
    st.from_regex(r"[a-z][a-zA-Z0-9_]{0,11}", fullmatch=True),
    st.sampled_from(["type", "id", "x y", 'q"uote', "back\\slash", "naïve", "名前", "$ref"]),
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.sampled_from([0.5, -2.25, 3.0, 1e-3]),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6),
)


def _counts(low_key: str, high_key: str) -> st.SearchStrategy[dict[str, int]]:
    """An optional lower and upper count, the lower never above the upper."""

    def build(low: int | None, span: int | None) -> dict[str, int]:
        out: dict[str, int] = {}
        if low is not None:
            out[low_key] = low
        if span is not None:
            out[high_key] = (low or 0) + span
        return out

    return st.builds(build, st.none() | st.integers(0, 4), st.none() | st.integers(0, 6))


def _string() -> st.SearchStrategy[dict[str, Any]]:
    plain = st.builds(lambda c: {"type": "string", **c}, _counts("minLength", "maxLength"))
    pattern = st.sampled_from(PATTERNS).map(lambda p: {"type": "string", "pattern": p})
    fmt = st.sampled_from(FORMATS).map(lambda f: {"type": "string", "format": f})
    return st.one_of(plain, pattern, fmt)


def _number() -> st.SearchStrategy[dict[str, Any]]:
    def build(kind: str, low: int | None, span: int | None, step: float | None) -> dict[str, Any]:
        out: dict[str, Any] = {"type": kind}
        if low is not None:
            out["minimum"] = low
        if span is not None:
            out["maximum"] = (low if low is not None else -50) + span
        if step is not None and (kind == "number" or step >= 1):
            out["multipleOf"] = step
        return out

    return st.builds(
        build,
        st.sampled_from(["integer", "number"]),
        st.none() | st.integers(-100, 100),
        st.none() | st.integers(0, 1000),
        st.none() | st.sampled_from([1, 0.1, 0.01]),
    )


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        _string(),
        _number(),
        st.just({"type": "boolean"}),
        st.lists(_SCALARS, min_size=1, max_size=5, unique_by=repr).map(lambda v: {"enum": v}),
        _SCALARS.map(lambda v: {"const": v}),
        st.just({"type": ["string", "null"]}),
    )


def _object(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    def build(
        props: dict[str, Any], required: list[bool], extra: Any, depends: bool
    ) -> dict[str, Any]:
        names = list(props)
        out: dict[str, Any] = {"type": "object", "properties": props}
        needed = [n for n, r in zip(names, required, strict=False) if r]
        if needed:
            out["required"] = needed
        if extra is not None:
            out["additionalProperties"] = extra
        optional = [n for n in names if n not in needed]
        if depends and len(optional) >= 2:
            out["dependentRequired"] = {optional[0]: [optional[1]]}
        return out

    return st.builds(
        build,
        st.dictionaries(NAMES, values, min_size=1, max_size=5),
        st.lists(st.booleans(), max_size=5),
        st.none() | st.just(False) | st.just({"type": "string"}) | st.just({"type": "integer"}),
        st.booleans(),
    )


def _tagged_union(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """``oneOf``/``anyOf`` of objects told apart by a ``const`` discriminator."""

    def build(keyword: str, tag: str, branches: list[dict[str, Any]]) -> dict[str, Any]:
        out = []
        for index, branch in enumerate(branches):
            props = {tag: {"const": f"kind{index}"}}
            props.update({k: v for k, v in branch["properties"].items() if k != tag})
            required = [tag, *[n for n in branch.get("required", []) if n != tag]]
            out.append({**branch, "properties": props, "required": required})
        return {keyword: out}

    return st.builds(
        build,
        st.sampled_from(["oneOf", "anyOf"]),
        st.sampled_from(["type", "kind", "action"]),
        st.lists(_object(values), min_size=2, max_size=3),
    )


def _array(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    items = st.builds(
        lambda item, counts: {"type": "array", "items": item, **counts},
        values,
        _counts("minItems", "maxItems"),
    )
    prefix = st.builds(
        lambda first, rest: {"type": "array", "prefixItems": first, "items": rest},
        st.lists(values, min_size=1, max_size=3),
        st.just(False) | values,
    )
    return items | prefix


@functools.cache
def _values() -> st.SearchStrategy[Any]:
    # Built once: hypothesis validates a new recursive strategy on its first draw, which
    # cost seconds per drawn schema when tool_schemas built it afresh on every call.
    return st.recursive(
        _leaf(),
        lambda inner: st.one_of(_object(inner), _array(inner), _tagged_union(inner)),
        max_leaves=8,
    )


@functools.cache
def _roots() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(_object(_values()), _tagged_union(_values()))


@st.composite
def tool_schemas(draw: st.DrawFn) -> dict[str, Any]:
    """A tool's parameters: an object (or a tagged union of objects), some parts moved into
    ``$defs`` and referenced (nested references included)."""
    root = draw(_roots())
    defs: dict[str, Any] = {}

    def hoist(node: Any, depth: int) -> Any:
        # Move some subschemas into $defs, deepest first, so a $ref may lead to more $refs.
        if isinstance(node, list):
            return [hoist(item, depth) for item in node]
        if not isinstance(node, dict):
            return node
        out = {
            key: (
                {name: hoist(sub, depth + 1) for name, sub in value.items()}
                if key == "properties"
                else hoist(value, depth + 1)
                if key in ("items", "prefixItems", "oneOf", "anyOf", "additionalProperties")
                else value
            )
            for key, value in node.items()
        }
        if _worth_a_def(out) and depth > 0 and draw(st.integers(0, 3)) == 0:
            name = f"d{len(defs)}"
            defs[name] = out
            return {"$ref": f"#/$defs/{name}"}
        return out

    root = hoist(root, 0)
    if defs:
        root = {**root, "$defs": defs}
    return root


def _worth_a_def(node: dict[str, Any]) -> bool:
    """Whether ``node`` is a schema worth a ``$defs`` entry (one that says something)."""
    return any(k in node for k in ("type", "enum", "const", "oneOf", "anyOf"))


def tool_sets(min_size: int = 1, max_size: int = 10) -> st.SearchStrategy[dict[str, Any]]:
    """``{name: parameters}`` for a few tools with distinct names."""
    names = st.from_regex(r"[a-z][a-z_]{2,15}", fullmatch=True)
    return st.dictionaries(names, tool_schemas(), min_size=min_size, max_size=max_size)


def seeded_examples(strategy: st.SearchStrategy[Any], count: int, seed: int = 43) -> list[Any]:
    """Up to ``count`` values of ``strategy``, the same on every run (for benchmarks, which
    must walk the same workload each time and are not tests)."""
    out: list[Any] = []

    @fixed_seed(seed)
    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(strategy)
    def draw(value: Any) -> None:
        out.append(value)

    draw()
    return out[:count]
