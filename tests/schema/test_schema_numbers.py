"""Float-safe numbers: what the grammar accepts means the same to an exact and a double reader.

Every accepted number must read back unchanged through an IEEE-754 double (the shortest repr
of ``float(text)`` is the same decimal), and every bound must give the same verdict whether the
number and the bound are read exactly or as doubles (docs/schema-grammar.md, "Numbers").
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.schema import UnsupportedSchemaError, schema_to_grammar

pytest.importorskip("llguidance")
from harmony_grammar.schema.matcher import SchemaMatcher

from .test_schema_compiler import verdicts

_HOLDS: dict[str, Callable[[Any, Any], bool]] = {
    "minimum": operator.ge,
    "maximum": operator.le,
    "exclusiveMinimum": operator.gt,
    "exclusiveMaximum": operator.lt,
}


def _round_trips(text: str) -> bool:
    return Decimal(repr(float(text))) == Decimal(text)


def _fifteen(schema: dict[str, Any]) -> bool:
    """Whether the 15-digit rule holds (an integer, or an exclusive bound: the 17-digit rule
    of unbounded and inclusively bounded numbers may round, to the same verdict)."""
    return schema["type"] == "integer" or any(k.startswith("exclusive") for k in schema)


def _significant(text: str) -> int:
    """Significant digits of a decimal text (trailing zeros not counted)."""
    return len(Decimal(text).normalize().as_tuple().digits)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        # The issue's examples: each used to be accepted, and a double reader sees the bound
        # (or infinity) instead.
        ({"type": "number", "exclusiveMaximum": 1},
         {"0.99999999999999999999": False, "0.999999999999999": True, "1": False}),
        ({"type": "number", "exclusiveMinimum": 0},
         {"0." + "0" * 400 + "1": False, "0.000000000000001": True, "0": False}),
        # Integers up to 2**53 are doubles exactly; beyond, 15 significant digits.
        ({"type": "integer"},
         {"1" + "0" * 400 + ".0": False, "1" + "0" * 20 + ".0": True,
          "12345678901234567": False, "123456789012345": True, "9007199254740992": True,
          "-9007199254740992.0": True, "9007199254740993": False, "90071992547409920": False}),
        # With no bound, up to 17 significant digits: every double's shortest repr.
        ({"type": "number"},
         {"1e280": True, "1e281": False, "1e999": False, "-2.5E-3": True,
          "1234567890123456e2": True, "0.1234567890123456": True, "1.5707963267948966": True,
          "0.10000000000000001": True, "123456789012345678": False, "1.23456789012345678": False,
          "0.000000000000000001": False, "12345678901234567e280": True, "1e-297": False}),
        # Inclusive bounds too (rounding is monotone): latitude, say.
        ({"type": "number", "minimum": -90, "maximum": 90},
         {"37.774929499999996": True, "90.000000000000001": False, "-90": True,
          "-90.00000000000001": False, "0.10000000000000001": True}),
        # An exclusive bound keeps 15: 1.0000000000000001 reads as 1, which is excluded.
        ({"type": "number", "exclusiveMinimum": 1},
         {"1.5707963267948966": False, "1.0000000000000001": False, "1.57079632679489": True}),
        # So does an integer bound a double cannot hold (compared exactly, it could be crossed).
        ({"type": "number", "minimum": 9007199254740993},
         {"9007199254741000": True, "90071992547409931": False}),
        # A bound a double cannot hold exactly is moved inward, inclusive.
        ({"type": "integer", "maximum": 9223372036854775807},
         {"9223372036854775807": False, "9223372036854770000": True, "-1": True}),
    ],
)
def test_issue_examples_on_every_target(schema: Any, expected: dict[str, bool]) -> None:
    texts = list(expected)
    assert verdicts(schema, texts) == [expected[t] for t in texts]
    for text, ok in zip(texts, verdicts(schema, texts), strict=True):
        assert not ok or (_round_trips(text) if _fifteen(schema) else _significant(text) <= 17)


_DIGITS = st.text("0123456789", min_size=1, max_size=20)
_NUMBER_TEXT = st.builds(
    lambda sign, whole, fraction, exp: (
        f"{sign}{whole.lstrip('0') or '0'}{'.' + fraction if fraction else ''}{exp}"
    ),
    st.sampled_from(["", "-"]),
    _DIGITS,
    st.one_of(st.just(""), _DIGITS),
    st.sampled_from(["", "e5", "E-300", "e290", "e-17"]),
)
_BOUND = st.one_of(
    st.integers(-(10**20), 10**20),
    st.decimals(allow_nan=False, allow_infinity=False, places=20, min_value=-5, max_value=5),
)


@given(
    st.sampled_from(["number", "integer"]),
    st.dictionaries(st.sampled_from(sorted(_HOLDS)), _BOUND, max_size=2),
    st.lists(_NUMBER_TEXT, min_size=1, max_size=8),
)
def test_accepted_numbers_mean_the_same_to_both_readers(
    kind: str, bounds: dict[str, Any], texts: list[str]
) -> None:
    # Decimal bounds become floats, as a JSON reader reads them from a schema text.
    schema = {"type": kind, **{k: _plain(v) for k, v in bounds.items()}}
    try:
        matcher = SchemaMatcher(schema)
    except UnsupportedSchemaError:
        return  # no float-safe number satisfies the bounds
    for text in texts:
        if not matcher.accepts(text):
            continue
        exact, double = Fraction(Decimal(text)), float(text)
        # An unbounded number may round (17 digits), but never to infinity or zero, and an
        # integer only where a double holds it exactly (up to 2**53) or reads it back.
        assert math.isfinite(double) and (double != 0) == (exact != 0), text
        if kind == "integer":
            assert _round_trips(text) or abs(exact) <= 2**53, text
        else:
            assert _round_trips(text) if _fifteen(schema) else _significant(text) <= 17, text
        for keyword, bound in schema.items():
            if keyword in _HOLDS:
                exact_bound = Fraction(Decimal(repr(bound)) if isinstance(bound, float) else bound)
                assert _HOLDS[keyword](exact, exact_bound), (text, keyword, bound)
                assert _HOLDS[keyword](double, float(bound)), (text, keyword, bound)
                assert _HOLDS[keyword](double, bound), (text, keyword, bound)


def _plain(value: Any) -> Any:
    return float(value) if isinstance(value, Decimal) else value


def test_a_bound_no_float_safe_number_meets_is_refused() -> None:
    with pytest.raises(UnsupportedSchemaError):
        schema_to_grammar({"type": "number", "exclusiveMinimum": 0, "maximum": 1e-20})


@pytest.mark.parametrize(
    "bounds",
    [
        {"exclusiveMinimum": 99999999999999991808},  # moving inward crosses 10**20
        {"maximum": -99999999999999991808},
        {"minimum": 9999999999999999.5, "type": "number"},
    ],
)
def test_a_bound_just_below_a_power_of_ten_moves_inward(bounds: dict[str, Any]) -> None:
    # The float-safe spacing grows tenfold past a power of ten; the search for the nearest
    # float-safe bound used to keep the old spacing's offset and never find one (a hang).
    schema = {"type": "integer", **bounds}
    matcher = SchemaMatcher(schema)
    bound = next(iter(bounds.values()))
    inside = 100000000000001000000 if bound > 0 else -100000000000001000000
    if "minimum" in bounds:
        inside = 10000000000000010
    assert matcher.accepts(str(inside))
