"""JSON number tokens, bounded exactly.

A JSON number is ``-?I(.F)?([eE][+-]?D)?``. With bounds, the grammar splits the value line at
integers: between two integer bounds every integer part ``I`` has a known verdict for "any
fraction", "zero fraction only" or "non-zero fraction only", so integer bounds (all bounds of
``integer``, and of ``number`` when they are whole) are exact for every plain decimal spelling.
Exponent notation is accepted only for unbounded ``number``: a bounded number is written in
plain decimals (see docs/schema-grammar.md), and ``integer`` accepts ``12`` and ``12.0`` but
never ``1.2e1``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from .digits import decimal_digit, decimal_range
from .ir import NOTHING, Expr, Lit, Token, alt, opt, repeat, seq

__all__ = ["Bound", "NotExact", "number_token"]


class NotExact(ValueError):
    """The bounds cannot be expressed exactly (a fractional bound on ``number``)."""


@dataclass(frozen=True)
class Bound:
    """A numeric bound; ``exclusive`` makes it strict."""

    value: Fraction
    exclusive: bool = False


_ANY_FRACTION = opt(seq(Lit("."), repeat(decimal_digit(0, 9), 1, None)))
_ZERO_FRACTION = opt(seq(Lit("."), repeat(decimal_digit(0, 0), 1, None)))
_NONZERO_FRACTION = seq(
    Lit("."), repeat(decimal_digit(0, 9), 0, None), decimal_digit(1, 9),
    repeat(decimal_digit(0, 9), 0, None),
)  # fmt: skip
_EXPONENT = opt(seq(alt(Lit("e"), Lit("E")), opt(alt(Lit("+"), Lit("-"))),
                    repeat(decimal_digit(0, 9), 1, None)))  # fmt: skip


@dataclass(frozen=True)
class _Fractions:
    """The fraction parts a value may carry: any, and non-zero only."""

    any: Expr
    nonzero: Expr


_ALL_FRACTIONS = _Fractions(_ANY_FRACTION, _NONZERO_FRACTION)


def _fractions_upto(places: int) -> _Fractions:
    """Fractions with at most ``places`` significant digits (trailing zeros are free)."""
    if not places:
        return _Fractions(_ZERO_FRACTION, NOTHING)
    digit, zeros = decimal_digit(0, 9), repeat(decimal_digit(0, 0), 0, None)
    # The last non-zero digit sits at place i + 1 <= places.
    nonzero = alt(*(seq(repeat(digit, 0, i), decimal_digit(1, 9)) for i in range(places)))
    return _Fractions(
        any=opt(seq(Lit("."), repeat(digit, 1, places), zeros)),
        nonzero=seq(Lit("."), nonzero, zeros),
    )


def _magnitudes(
    lo: int,
    lo_ex: bool,
    hi: int | None,
    hi_ex: bool,
    integer: bool,
    whole: Expr,
    fractions: _Fractions = _ALL_FRACTIONS,
) -> Expr:
    """Unsigned spellings of values ``m`` with ``lo (<|<=) m (<|<=) hi``, all integers.

    ``whole`` is the fraction an integral value may carry (``.0``, or nothing in draft 4).
    """
    any_fraction = whole if integer else fractions.any
    if hi is not None and (lo > hi or (lo == hi and (lo_ex or hi_ex))):
        return alt()
    if hi is not None and lo == hi:
        return seq(decimal_range(lo, lo), whole)
    parts = []
    if not lo_ex:
        parts.append(seq(decimal_range(lo, lo), any_fraction))
    elif not integer:
        parts.append(seq(decimal_range(lo, lo), fractions.nonzero))
    top = None if hi is None else hi - 1
    parts.append(seq(decimal_range(lo + 1, top), any_fraction))
    if hi is not None and not hi_ex:
        parts.append(seq(decimal_range(hi, hi), whole))
    return alt(*parts)


def _whole(bound: Bound | None, integer: bool, upper: bool) -> tuple[int | None, bool]:
    """The bound as an integer and a strictness flag, exactly."""
    if bound is None:
        return None, False
    value = bound.value
    if value.denominator == 1:
        return int(value), bound.exclusive
    if not integer:
        raise NotExact("a fractional bound on a number")
    # For integers x > 2.5 and x >= 2.5 both mean x >= 3.
    return (math.floor(value) if upper else math.ceil(value)), False


def number_token(
    *,
    integer: bool,
    lower: Bound | None,
    upper: Bound | None,
    zero_fraction: bool = True,
    places: int | None = None,
) -> Expr:
    """The number (or integer) token with the given bounds.

    ``zero_fraction=False`` keeps ``integer`` from matching ``1.0`` (draft 4, where 1.0 is not
    an integer); a ``number`` always may carry a zero fraction. ``places`` limits a number to
    that many significant decimal places (``multipleOf: 0.01`` is 2), written in plain decimals.
    """
    whole = _ZERO_FRACTION if zero_fraction or not integer else seq()
    fractions = _ALL_FRACTIONS if places is None else _fractions_upto(places)
    lo, lo_ex = _whole(lower, integer, upper=False)
    hi, hi_ex = _whole(upper, integer, upper=True)
    if lo is None and hi is None and not integer and places is None:
        return Token(seq(opt(Lit("-")), decimal_range(0, None), _ANY_FRACTION, _EXPONENT))
    # Non-negative values: magnitudes from max(lo, 0).
    if lo is None or lo < 0:
        pos = (
            _magnitudes(0, False, hi, hi_ex, integer, whole, fractions)
            if hi is None or hi >= 0
            else alt()
        )
    else:
        pos = _magnitudes(lo, lo_ex, hi, hi_ex, integer, whole, fractions)
    # Negative spellings "-m" stand for -m: lo <= -m <= hi  <=>  -hi <= m <= -lo.
    if hi is None or hi > 0 or (hi == 0 and hi_ex):
        m_lo, m_lo_ex = 0, hi == 0 and hi_ex
    else:
        m_lo, m_lo_ex = -hi, hi_ex
    m_hi = None if lo is None else -lo
    neg = (
        alt()
        if m_hi is not None and m_hi < 0
        else _magnitudes(m_lo, m_lo_ex, m_hi, lo_ex, integer, whole, fractions)
    )
    return Token(alt(pos, seq(Lit("-"), neg)))
