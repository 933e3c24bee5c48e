"""A refusal names a keyword the schema has (issue 40, item 8): ``minimum: 1e300`` was
refused as ``maximum``, which the schema did not hold.

Numeric schemas are drawn with any mix of the bound keywords and values (huge, tiny,
fractional, negative, equal bounds); whenever the compiler refuses one, the keyword it names
is one the refused schema spells.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.schema import UnsupportedSchemaError, compile_schema

_BOUNDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf")
_VALUES = st.one_of(
    st.sampled_from([1e300, -1e300, 1e20, -1e20, 1e-300, 0.5, 0.1, 0, 1, -1, 10**16, 2**53 + 1]),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
)


@given(
    kind=st.sampled_from(["number", "integer"]),
    bounds=st.dictionaries(st.sampled_from(_BOUNDS), _VALUES, min_size=1),
)
def test_a_refused_numeric_schema_names_a_keyword_it_has(kind: str, bounds: dict[str, Any]) -> None:
    if "multipleOf" in bounds and not bounds["multipleOf"] > 0:
        bounds["multipleOf"] = 1  # a non-positive multipleOf is invalid, not refused
    schema = {"type": "object", "properties": {"a": {"type": kind, **bounds}}, "required": ["a"]}
    try:
        compile_schema(schema)
    except UnsupportedSchemaError as exc:
        if exc.pointer == "/properties/a":
            assert exc.keyword in bounds, (exc.keyword, bounds, str(exc))


def test_minimum_1e300_is_named_minimum() -> None:
    for keyword in ("minimum", "exclusiveMinimum"):
        schema = {"type": "number", keyword: 1e300}
        try:
            compile_schema(schema)
        except UnsupportedSchemaError as exc:
            assert exc.keyword == keyword
        else:  # pragma: no cover - 1e300 has no float-safe number above it
            raise AssertionError("compiled")
