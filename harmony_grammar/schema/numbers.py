"""JSON number tokens, bounded exactly.

A JSON number is ``-?I(.F)?([eE][+-]?D)?``. With bounds, the grammar splits the value line at
integers: between two integer bounds every integer part ``I`` has a known verdict for "any
fraction", "zero fraction only" or "non-zero fraction only", so integer bounds (all bounds of
``integer``, and of ``number`` when they are whole) are exact for every plain decimal spelling.
A fractional bound on ``number`` (``minimum: 0.25``) fixes its integer part and compares the
fraction's digits with the bound's, place by place (a regular language, built digit by digit).
Exponent notation is accepted only for unbounded ``number``: a bounded number is written in
plain decimals (see docs/schema-grammar.md), and ``integer`` accepts ``12`` and ``12.0`` but
never ``1.2e1``.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .digits import decimal_digit, decimal_range
from .ir import NOTHING, Expr, Lit, Token, alt, chars, opt, repeat, seq

__all__ = ["Bound", "NotExact", "number_token"]


class NotExact(ValueError):
    """The bounds cannot be expressed exactly (a fractional bound with ``multipleOf``)."""


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
    """The bound as an integer and a strictness flag, exactly (integers only, for a number)."""
    if bound is None:
        return None, False
    value = bound.value
    if value.denominator == 1:
        return int(value), bound.exclusive
    if not integer:
        raise NotExact("a fractional bound on a number")
    # For integers x > 2.5 and x >= 2.5 both mean x >= 3.
    return (math.floor(value) if upper else math.ceil(value)), False


def _fraction_digits(value: Fraction) -> str:
    """The digits after the point of ``0 <= value < 1``, without trailing zeros."""
    for places in range(64):
        scaled = value * 10**places
        if scaled.denominator == 1:
            return str(int(scaled)).zfill(places).rstrip("0") if places else ""
    raise NotExact("a bound with too many decimal places")


def _digits(lo: int, hi: int, count: int | None, at_least: int) -> Expr:
    return repeat(decimal_digit(lo, hi), at_least, count)


def _zero_within(low: str | None, low_ex: bool, high: str | None, high_ex: bool) -> bool:
    """Whether a fraction ending here (all zeros from now on) is within the bounds."""
    return (low is None or (low == "" and not low_ex)) and (high != "" or not high_ex)


def _digits_between(
    low: str | None, low_ex: bool, high: str | None, high_ex: bool, may_end: bool
) -> Expr:
    """Digit strings F (the rest of a fraction, read as ``0.F``) within the given bounds.

    ``low``/``high`` are the bounds' remaining digits (no trailing zeros, so a non-empty one
    is above zero) or None for no bound; ``""`` is zero. Digits compare one place at a time,
    a shorter string padded with zeros. ``may_end`` allows the empty string.
    """
    first = 0 if may_end else 1
    if low is None and high is None:
        return _digits(0, 9, None, first)
    if high is None and low == "":
        any_digits = _digits(0, 9, None, 0)
        return (
            seq(any_digits, decimal_digit(1, 9), any_digits)
            if low_ex
            else _digits(0, 9, None, first)
        )
    if high == "" and (low is None or low == ""):
        return NOTHING if high_ex or (low == "" and low_ex) else _digits(0, 0, None, first)
    by_rest: dict[Expr, list[int]] = {}
    for d in range(10):
        rest_low: str | None = None
        if low is not None:
            bound = int(low[0]) if low else 0
            if d < bound:
                continue
            rest_low = (low[1:] if low else "") if d == bound else None
        rest_high: str | None = None
        if high is not None:
            bound = int(high[0]) if high else 0
            if d > bound:
                continue
            rest_high = (high[1:] if high else "") if d == bound else None
        rest = _digits_between(rest_low, low_ex, rest_high, high_ex, True)
        if rest != NOTHING:
            by_rest.setdefault(rest, []).append(d)
    parts = [seq(chars([(0x30 + d, 0x30 + d) for d in digits]), rest)
             for rest, digits in by_rest.items()]  # fmt: skip
    ends = may_end and _zero_within(low, low_ex, high, high_ex)
    return alt(*(([seq()] if ends else []) + parts))


def _fraction_part(low: str | None, low_ex: bool, high: str | None, high_ex: bool) -> Expr:
    """The optional ``.F`` of a number whose fraction must lie within the bounds."""
    with_fraction = seq(Lit("."), _digits_between(low, low_ex, high, high_ex, False))
    return opt(with_fraction) if _zero_within(low, low_ex, high, high_ex) else with_fraction


def _fractional_magnitudes(
    lo: Fraction | int, lo_ex: bool, hi: Fraction | int | None, hi_ex: bool
) -> Expr:
    """Unsigned spellings of values ``m`` with ``lo (<|<=) m (<|<=) hi``, bounds any decimals."""
    if hi is not None and (lo > hi or (lo == hi and (lo_ex or hi_ex))):
        return NOTHING
    n = math.floor(lo)
    low = _fraction_digits(Fraction(lo) - n)
    if hi is not None and math.floor(hi) == n:
        high = _fraction_digits(Fraction(hi) - n)
        return seq(decimal_range(n, n), _fraction_part(low, lo_ex, high, hi_ex))
    parts = [seq(decimal_range(n, n), _fraction_part(low, lo_ex, None, False))]
    if hi is None:
        parts.append(seq(decimal_range(n + 1, None), _ANY_FRACTION))
        return alt(*parts)
    m = math.floor(hi)
    top = _fraction_part(None, False, _fraction_digits(Fraction(hi) - m), hi_ex)
    parts.append(seq(decimal_range(n + 1, m - 1), _ANY_FRACTION))
    parts.append(seq(decimal_range(m, m), top))
    return alt(*parts)


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
    A fractional bound on a number compares the fraction's digits place by place; it is not
    combined with ``places`` (NotExact).
    """
    fractional = not integer and any(
        b is not None and b.value.denominator != 1 for b in (lower, upper)
    )
    magnitudes: Callable[[Any, bool, Any, bool], Expr]
    if fractional:
        if places is not None:
            raise NotExact("a fractional bound together with multipleOf")
        lo: Any = None if lower is None else lower.value
        hi: Any = None if upper is None else upper.value
        lo_ex = lower is not None and lower.exclusive
        hi_ex = upper is not None and upper.exclusive
        magnitudes = _fractional_magnitudes
    else:
        whole = _ZERO_FRACTION if zero_fraction or not integer else seq()
        fractions = _ALL_FRACTIONS if places is None else _fractions_upto(places)
        lo, lo_ex = _whole(lower, integer, upper=False)
        hi, hi_ex = _whole(upper, integer, upper=True)
        if lo is None and hi is None and not integer and places is None:
            return Token(seq(opt(Lit("-")), decimal_range(0, None), _ANY_FRACTION, _EXPONENT))

        def magnitudes(lo: Any, lo_ex: bool, hi: Any, hi_ex: bool) -> Expr:
            return _magnitudes(lo, lo_ex, hi, hi_ex, integer, whole, fractions)

    # Non-negative values: magnitudes from max(lo, 0).
    if lo is None or lo < 0:
        pos = magnitudes(0, False, hi, hi_ex) if hi is None or hi >= 0 else alt()
    else:
        pos = magnitudes(lo, lo_ex, hi, hi_ex)
    # Negative spellings "-m" stand for -m: lo <= -m <= hi  <=>  -hi <= m <= -lo.
    if hi is None or hi > 0 or (hi == 0 and hi_ex):
        m_lo, m_lo_ex = 0, hi == 0 and hi_ex
    else:
        m_lo, m_lo_ex = -hi, hi_ex
    m_hi = None if lo is None else -lo
    neg = alt() if m_hi is not None and m_hi < 0 else magnitudes(m_lo, m_lo_ex, m_hi, lo_ex)
    return Token(alt(pos, seq(Lit("-"), neg)))
