"""The grammar gate on JSON schemas' ``$ref`` chains, and llguidance behind it.

llguidance follows each ``$ref`` recursively: a ``%json`` block of a few kilobytes whose
references chain a few thousand deep (aliases, objects holding the next, ``allOf`` /
``anyOf`` / ``items`` wrappers, cycles) crashes an 8 MiB stack. The gate bounds the depth a
schema can reach (:func:`ref_chain`), every shape at the limit builds on the compile stack,
and every shape past it is a :class:`GrammarLimitError` named ``ref_chain`` wherever the
schema sits: a ``%json`` block, one nested in a custom tool's ``%lark``, or the JSON form.
The crashing shapes themselves are built by a subprocess, so a crash is a failed test here
and not a dead test run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harmony_grammar.schema.grammar_gate import (
    MAX_REF_CHAIN,
    GrammarLimitError,
    build_matcher,
    grammar_limit_problem,
    ref_chain,
    validate_llguidance,
)
from harmony_grammar.schema.matcher import byte_tokenizer

SHAPES = ("alias", "object", "cycle", "all_of", "any_of", "items")


def ref_shape(kind: str, n: int) -> dict[str, Any]:
    """A schema whose references chain ``n`` deep, in one of :data:`SHAPES`."""

    def at(i: int) -> dict[str, str]:
        return {"$ref": f"#/$defs/d{(i % n) if kind == 'cycle' else i}"}

    wrap = {
        "alias": lambda i: at(i + 1),
        "object": lambda i: {"type": "object", "properties": {"a": at(i + 1)}, "required": ["a"]},
        "cycle": lambda i: {"type": "object", "properties": {"a": at(i + 1)}},
        "all_of": lambda i: {"allOf": [at(i + 1)]},
        "any_of": lambda i: {"anyOf": [at(i + 1), {"type": "null"}]},
        "items": lambda i: {"type": "array", "items": at(i + 1), "minItems": 1},
    }[kind]
    defs: dict[str, Any] = {f"d{i}": wrap(i) for i in range(n)}
    if kind != "cycle":
        defs[f"d{n}"] = {"type": "string"}
    return {"$ref": "#/$defs/d0", "$defs": defs}


def largest_within(kind: str) -> int:
    """The longest chain of ``kind`` the gate lets through."""
    low, high = 1, 2
    while ref_chain(ref_shape(kind, high)) <= MAX_REF_CHAIN:
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if ref_chain(ref_shape(kind, mid)) <= MAX_REF_CHAIN else (low, mid)
    return low


def _placements(schema: dict[str, Any]) -> list[str]:
    """The schema where a client's grammar can hold it."""
    text = json.dumps(schema)
    return [
        f"%llguidance {{}}\nstart: %json {text}\n",
        f'start: "<" body ">"\nbody: %json {text}\n',
        f"%llguidance {{}}\nstart: a0\na0: %lark {{\nstart: x\nx: %json {text}\n}}\n",
        json.dumps({"grammars": [{"json_schema": schema}]}),
        json.dumps({"grammars": [{"lark_grammar": f"start: %json {text}\n"}]}),
    ]


@pytest.mark.parametrize("kind", SHAPES)
def test_every_shape_past_the_limit_is_refused_wherever_it_sits(kind: str) -> None:
    schema = ref_shape(kind, largest_within(kind) + 1)
    for grammar in _placements(schema):
        problem = grammar_limit_problem(grammar)
        assert problem is not None and problem.limit == "ref_chain", grammar[:80]
        with pytest.raises(GrammarLimitError):
            validate_llguidance(grammar, byte_tokenizer())


@pytest.mark.parametrize("kind", SHAPES)
def test_every_shape_at_the_limit_builds(kind: str) -> None:
    """At the limit, on the compile stack, from this (pytest's) thread: each shape builds or
    is llguidance's own refusal, never a crash."""
    grammar = _placements(ref_shape(kind, largest_within(kind)))[0]
    assert grammar_limit_problem(grammar) is None
    try:
        build_matcher(grammar, byte_tokenizer())
    except GrammarLimitError:  # pragma: no cover - the gate passed it above
        raise
    except ValueError as exc:  # llguidance's own "schema too large" and the like
        assert "schema" in str(exc)


_MARGIN = textwrap.dedent(
    """
    import json, sys
    import llguidance
    from harmony_grammar.schema.grammar_gate import COMPILE_STACK_BYTES
    from harmony_grammar.schema.matcher import byte_tokenizer
    from harmony_grammar.schema.stack import on_fresh_stack
    grammar = sys.stdin.read()
    on_fresh_stack(lambda: llguidance.LLMatcher.validate_grammar(grammar, byte_tokenizer()),
                   stack_bytes=COMPILE_STACK_BYTES)
    print("built")
    """
)


@pytest.mark.parametrize("kind", ["object", "cycle"])
def test_the_compile_stack_holds_ten_times_the_limit(kind: str) -> None:
    """The margin the limit claims: ten times the longest chain the gate admits builds on
    the compile stack (gate bypassed, in a subprocess: a crash is a failure, not a kill)."""
    n = 10 * largest_within(kind)
    grammar = _placements(ref_shape(kind, n))[0]
    run = subprocess.run(
        [sys.executable, "-c", _MARGIN], input=grammar, text=True, capture_output=True, timeout=120
    )
    assert run.returncode == 0 and "built" in run.stdout, (run.returncode, run.stderr[-500:])


# -- the measure ------------------------------------------------------------------------------


def _nesting(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_nesting(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_nesting(v) for v in value), default=0)
    return 0


def _longest_path(schema: Any) -> int:
    """The deepest llguidance can go: nesting, entering each ``$ref`` target at most once on
    a path (brute force over simple paths; small schemas only)."""

    def resolve(ref: str) -> Any:
        node = schema
        for part in ref[2:].split("/") if ref.startswith("#/") else []:
            node = node[part]
        return node

    def walk(node: Any, on_path: frozenset[str]) -> int:
        if isinstance(node, dict):
            ref = node.get("$ref")
            deepest = max((walk(v, on_path) for v in node.values()), default=0)
            if isinstance(ref, str) and ref not in on_path:
                deepest = max(deepest, walk(resolve(ref), on_path | {ref}))
            return 1 + deepest
        if isinstance(node, list):
            return 1 + max((walk(v, on_path) for v in node), default=0)
        return 0

    return walk(schema, frozenset())


_names = st.sampled_from(["a", "b", "c", "d"])
_leaf = st.sampled_from([{"type": "string"}, {"type": "integer"}, {"$ref": "#"}]) | _names.map(
    lambda n: {"$ref": f"#/$defs/{n}"}
)
_node = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.dictionaries(_names, inner, max_size=3).map(
            lambda p: {"type": "object", "properties": p}
        ),
        st.lists(inner, min_size=1, max_size=3).map(lambda xs: {"anyOf": xs}),
        inner.map(lambda x: {"type": "array", "items": x}),
    ),
    max_leaves=8,
)


@settings(max_examples=settings.default.max_examples // 2)
@given(root=_node, defs=st.dictionaries(_names, _node, max_size=4))
def test_ref_chain_bounds_every_path_through_the_references(
    root: dict[str, Any], defs: dict[str, Any]
) -> None:
    schema = {**root, "$defs": {name: defs.get(name, {"type": "null"}) for name in "abcd"}}
    assert ref_chain(schema) >= _longest_path(schema)


def test_ref_chain_is_linear_and_never_recursive() -> None:
    deep: Any = {"type": "string"}
    for _ in range(50_000):  # far past Python's recursion limit
        deep = {"items": deep}
    assert ref_chain(deep) == 50_001
    assert ref_chain({"$ref": "#", "items": {"$ref": "elsewhere.json"}}) == 2 + 3 + 3
