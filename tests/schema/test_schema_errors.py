"""Malformed schemas: one documented error (InvalidSchemaError), never a raw exception."""

from __future__ import annotations

import contextlib
import functools
import math
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.schema import (
    InvalidSchemaError,
    UnsupportedSchemaError,
    compile_schema,
    schema_to_grammar,
)


@pytest.mark.parametrize(
    ("schema", "keyword", "pointer"),
    [
        ([], "", ""),
        ("x", "", ""),
        (5, "", ""),
        (None, "", ""),
        ({"anyOf": 5}, "anyOf", "/anyOf"),
        ({"required": [5]}, "required", "/required/0"),
        ({"minLength": "3"}, "minLength", "/minLength"),
        ({"minimum": math.nan}, "minimum", "/minimum"),
        ({"maximum": math.inf}, "maximum", "/maximum"),
        ({"minimum": "3"}, "minimum", "/minimum"),  # used to compile silently
        ({"$schema": 5}, "$schema", "/$schema"),
        ({"properties": {"a/b": {"items": {"maxItems": -1}}}}, "maxItems",
         "/properties/a~1b/items/maxItems"),
        ({"items": [{"type": "string"}, {"type": 7}]}, "type", "/items/1/type"),
        # Draft 7's array `items` is tolerated without `$schema`, but not 2020-12 errors
        # beside it.
        ({"items": [{"type": "string"}], "prefixItems": 3}, "prefixItems", "/prefixItems"),
        ({"dependentRequired": {"a": 5}}, "dependentRequired", "/dependentRequired/a"),
        # Draft 7's meta-schema ignores `prefixItems`: the last-resort net still catches it.
        ({"$schema": "http://json-schema.org/draft-07/schema#", "prefixItems": 5}, "", ""),
    ],
)
def test_malformed_schemas_raise_one_error_naming_keyword_and_pointer(
    schema: object, keyword: str, pointer: str
) -> None:
    with pytest.raises(InvalidSchemaError) as info:
        schema_to_grammar(schema)
    assert (info.value.keyword, info.value.pointer) == (keyword, pointer)
    assert isinstance(info.value, UnsupportedSchemaError)  # one `except` catches both
    assert str(info.value).startswith("invalid schema")


def test_draft_7_spellings_without_dollar_schema_are_valid() -> None:
    compile_schema({"items": [{"type": "string"}], "additionalItems": False})
    compile_schema({"dependencies": {"a": ["b"]}})


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats() | st.sampled_from(["", "x", "a+"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(
        st.sampled_from(
            ["type", "items", "properties", "required", "anyOf", "minimum", "maxLength",
             "enum", "pattern", "additionalProperties", "$ref", "not", "a"]
        ),
        inner,
        max_size=3,
    ),
    max_leaves=8,
)


@given(_JSON)
def test_arbitrary_json_compiles_or_raises_the_documented_error(schema: object) -> None:
    with contextlib.suppress(UnsupportedSchemaError):
        schema_to_grammar(schema, target="llguidance")


def test_wide_and_deep_schemas_compile_without_hitting_the_recursion_limit() -> None:
    # 1,000 properties or prefixItems used to be refused as "'$ref' nests too deeply" (one
    # Python frame per member); nesting 100 arrays deep used to take minutes.
    wide_object = {"type": "object", "properties": {f"p{i}": {"type": "boolean"} for i in range(1000)}}
    wide_tuple = {"type": "array", "prefixItems": [{"type": "boolean"}] * 1000}
    deep: object = {"type": "boolean"}
    for _ in range(100):
        deep = {"type": "array", "items": deep}
    for schema in (wide_object, wide_tuple, deep):
        text = schema_to_grammar(schema, target="llguidance")
        assert len(text) < 2_000_000  # linear in the schema, not exponential


def test_nesting_past_the_recursion_limit_is_a_refusal_not_a_crash() -> None:
    deep: object = {"type": "boolean"}
    for _ in range(400):
        deep = {"type": "array", "items": deep}
    with pytest.raises(UnsupportedSchemaError, match="nests too deeply"):
        schema_to_grammar(deep)


def _at_depth(frames: int, work):
    """``work()`` called ``frames`` Python frames deeper than here."""
    return work() if frames <= 0 else _at_depth(frames - 1, work)


def _nested(levels: int) -> object:
    deep: object = {"type": "boolean"}
    for _ in range(levels):
        deep = {"type": "object", "properties": {"a": deep}, "required": ["a"]}
    return deep


@pytest.mark.parametrize("caller_depth", [0, 300, 800])
def test_the_nesting_refusal_does_not_depend_on_the_callers_stack_depth(caller_depth):
    # At 800 frames deep the caller has 200 of the default 1,000 left: the answer for each
    # schema must still be the one it gets from a shallow stack.
    too_deep, fine = _nested(70), _nested(60)  # 141 and 121 levels of objects
    limit = sys.getrecursionlimit()
    for target in ("lark", "gbnf", "xgrammar", "llguidance"):
        with pytest.raises(UnsupportedSchemaError, match="more than 128 levels"):
            _at_depth(caller_depth, functools.partial(schema_to_grammar, too_deep, target=target))
        text = _at_depth(caller_depth, functools.partial(schema_to_grammar, fine, target=target))
        assert text == schema_to_grammar(fine, target=target)
    assert sys.getrecursionlimit() == limit  # nothing raised it behind the caller's back
