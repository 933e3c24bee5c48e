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

Float safety. Every number the grammar accepts means the same to an exact reader and to an
IEEE-754 double reader: it has at most ``SIGNIFICANT_DIGITS`` (15, DBL_DIG) digits from its
first non-zero integer digit (or from the decimal point, for a value under 1) to its last
non-zero digit, and a magnitude under ``10**MAX_INTEGER_DIGITS``; in exponent notation the
mantissa has at most 15 integer digits and the exponent is at most ``MAX_EXPONENT`` in
magnitude. Such decimals map to distinct doubles, in order, so no comparison with a bound of
the same kind changes its answer. A bound that is not of that kind is moved inward to the
nearest one whose double differs from the bound's double (so both readers agree) and made
inclusive.

A number with no bound, or only inclusive bounds that are float-safe (and doubles exactly,
when integers), takes up to ``ROUND_TRIP_DIGITS`` (17) significant digits, so every double's
shortest repr is accepted: a double reader may round it, but rounding is monotone, so never
across such a bound (:func:`_monotone`). An unbounded integer takes every integer up to 2**53
(each a double exactly) and 15 significant digits beyond.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..base.errors import HarmonyGrammarError
from .digits import decimal_digit, decimal_range
from .ir import NOTHING, Expr, Lit, Token, alt, chars, is_nothing, opt, repeat, seq

__all__ = ["JSON_NUMBER", "Bound", "NotExact", "number_token"]


class NotExact(HarmonyGrammarError, ValueError):
    """The bounds cannot be expressed exactly (a fractional bound with ``multipleOf``)."""


@dataclass(frozen=True)
class Bound:
    """A numeric bound; ``exclusive`` makes it strict."""

    value: Fraction
    exclusive: bool = False


_ZERO_FRACTION = opt(seq(Lit("."), repeat(decimal_digit(0, 0), 1, None)))


@dataclass(frozen=True)
class _Fractions:
    """The fraction parts a value may carry: any, and non-zero only."""

    any: Expr
    nonzero: Expr


#: Digits a double keeps for every decimal (DBL_DIG): at most this many significant digits.
SIGNIFICANT_DIGITS = 15
#: Digits that tell every double apart (a double's shortest repr has at most 17): the limit
#: for a number with no bound, where no comparison can change its verdict.
ROUND_TRIP_DIGITS = 17
#: Integer parts have at most this many digits: far from a double's overflow (1.8e308).
MAX_INTEGER_DIGITS = 300
#: Exponents, with a mantissa under 1e15 and over 1e-15: far from overflow and subnormals.
MAX_EXPONENT = 280


def _nonzero_digits(places: int) -> Expr:
    """Digit strings with a non-zero digit, the last one within the first ``places``."""
    digit, zeros = decimal_digit(0, 9), repeat(decimal_digit(0, 0), 0, None)
    # The last non-zero digit sits at place i + 1 <= places.
    nonzero = alt(*(seq(repeat(digit, 0, i), decimal_digit(1, 9)) for i in range(places)))
    return seq(nonzero, zeros)


@functools.lru_cache(maxsize=64)
def _fractions_upto(places: int) -> _Fractions:
    """Fractions with at most ``places`` significant digits (trailing zeros are free)."""
    if not places:
        return _Fractions(_ZERO_FRACTION, NOTHING)
    digit, zeros = decimal_digit(0, 9), repeat(decimal_digit(0, 0), 0, None)
    return _Fractions(
        any=opt(seq(Lit("."), repeat(digit, 1, places), zeros)),
        nonzero=seq(Lit("."), _nonzero_digits(places)),
    )


def _integers(a: int, b: int) -> Expr:
    """``a..b`` in decimal; whole widths (``1..999``) as one small regex, ``[1-9][0-9]{0,2}``
    rather than one alternative per width."""
    wa, wb = len(str(a)), len(str(b))
    if a == 10 ** (wa - 1) and b == 10**wb - 1 and a > 0:
        return seq(decimal_digit(1, 9), repeat(decimal_digit(0, 9), wa - 1, wb - 1))
    return decimal_range(a, b)


def _float_safe(
    lo: int,
    hi: int | None,
    fraction: Callable[[int], Expr],
    max_digits: int = MAX_INTEGER_DIGITS,
    significant: int = SIGNIFICANT_DIGITS,
) -> Expr:
    """Unsigned spellings ``I`` + ``fraction(budget)`` for integer parts ``lo <= I <= hi`` that
    keep a number float-safe: ``budget`` is the number of decimal places left for significant
    digits (15 for ``0``, ``15 - len(I)`` otherwise). Integer parts longer than 15 digits
    end in zeros from the 16th digit on, with no more than ``max_digits`` digits.
    ``significant`` replaces 15 (unbounded numbers take 17, see ``_UNBOUNDED``).
    """
    parts: list[Expr] = []
    if lo == 0:
        parts.append(seq(Lit("0"), fraction(significant)))
        lo = 1
    top = 10**max_digits - 1 if hi is None else min(hi, 10**max_digits - 1)
    # Ranges of integer parts up to 15 digits; neighbours with the same fraction merge.
    ranges: list[tuple[int, int, Expr]] = []
    for width in range(len(str(lo)), significant + 1):
        a, b = max(lo, 10 ** (width - 1)), min(top, 10**width - 1)
        if a > b:
            break
        tail = fraction(significant - width)
        if ranges and ranges[-1][2] == tail and ranges[-1][1] + 1 == a:
            ranges[-1] = (ranges[-1][0], b, tail)
        else:
            ranges.append((a, b, tail))
    parts.extend(seq(_integers(a, b), tail) for a, b, tail in ranges)
    # Longer integer parts: P * 10**k with a 15-digit P, no fraction but zeros.
    a, b = max(lo, 10**significant), top
    if a <= b:
        zero = fraction(0)
        head = (10 ** (significant - 1), 10**significant - 1)
        first, last = len(str(a)) - significant, len(str(b)) - significant
        full_lo, full_hi = first, last  # every k strictly between is a full range of P
        for k in sorted({first, last}):
            p_lo, p_hi = max(head[0], -(-a // 10**k)), min(head[1], b // 10**k)
            if (p_lo, p_hi) == head:
                continue
            full_lo, full_hi = (k + 1, full_hi) if k == first else (full_lo, k - 1)
            if p_lo <= p_hi:
                parts.append(seq(decimal_range(p_lo, p_hi), Lit("0" * k), zero))
        if full_lo <= full_hi:
            zeros = repeat(Lit("0"), full_lo, full_hi)
            parts.append(seq(decimal_range(*head), zeros, zero))
    return alt(*parts)


def _magnitudes(
    lo: int,
    lo_ex: bool,
    hi: int | None,
    hi_ex: bool,
    integer: bool,
    whole: Expr,
    places: int | None = None,
    significant: int = SIGNIFICANT_DIGITS,
) -> Expr:
    """Unsigned float-safe spellings of values ``m`` with ``lo (<|<=) m (<|<=) hi``, all
    integers.

    ``whole`` is the fraction an integral value may carry (``.0``, or nothing in draft 4);
    ``places`` limits the significant decimal places further (``multipleOf``);
    ``significant`` is :func:`_float_safe`'s.
    """

    def limit(budget: int) -> _Fractions:
        return _fractions_upto(budget if places is None else min(budget, places))

    def any_fraction(budget: int) -> Expr:
        return whole if integer else limit(budget).any

    def digits(lo: int, hi: int | None, fraction: Callable[[int], Expr]) -> Expr:
        return _float_safe(lo, hi, fraction, significant=significant)

    if hi is not None and (lo > hi or (lo == hi and (lo_ex or hi_ex))):
        return alt()
    if hi is not None and lo == hi:
        return digits(lo, lo, lambda _: whole)
    parts = []
    if not lo_ex:
        parts.append(digits(lo, lo, any_fraction))
    elif not integer:
        parts.append(digits(lo, lo, lambda budget: limit(budget).nonzero))
    top = None if hi is None else hi - 1
    if top is None or lo + 1 <= top:
        parts.append(digits(lo + 1, top, any_fraction))
    if hi is not None and not hi_ex:
        parts.append(digits(hi, hi, lambda _: whole))
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


def _up_to(budget: int, at_least: int) -> Expr:
    """Digit strings (at least ``at_least`` long) whose non-zero digits all lie in the first
    ``budget`` places."""
    zeros = _digits(0, 0, None, 0)
    if budget == 0:
        return _digits(0, 0, None, at_least)
    return seq(_digits(0, 9, budget, min(at_least, budget)), zeros)


def _zero_within(low: str | None, low_ex: bool, high: str | None, high_ex: bool) -> bool:
    """Whether a fraction ending here (all zeros from now on) is within the bounds."""
    return (low is None or (low == "" and not low_ex)) and (high != "" or not high_ex)


def _digits_between(
    low: str | None, low_ex: bool, high: str | None, high_ex: bool, may_end: bool, budget: int
) -> Expr:
    """Digit strings F (the rest of a fraction, read as ``0.F``) within the given bounds,
    with non-zero digits only in the first ``budget`` places (float safety).

    ``low``/``high`` are the bounds' remaining digits (no trailing zeros, so a non-empty one
    is above zero) or None for no bound; ``""`` is zero. Digits compare one place at a time,
    a shorter string padded with zeros. ``may_end`` allows the empty string.
    """
    first = 0 if may_end else 1
    if budget == 0:  # only zeros from here on: the rest is 0
        within = _zero_within(low, low_ex, high, high_ex)
        return _digits(0, 0, None, first) if within else NOTHING
    if low is None and high is None:
        return _up_to(budget, first)
    if high is None and low == "":
        return _nonzero_digits(budget) if low_ex else _up_to(budget, first)
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
        rest = _digits_between(rest_low, low_ex, rest_high, high_ex, True, budget - 1)
        if rest != NOTHING:
            by_rest.setdefault(rest, []).append(d)
    parts = [seq(chars([(0x30 + d, 0x30 + d) for d in digits]), rest)
             for rest, digits in by_rest.items()]  # fmt: skip
    ends = may_end and _zero_within(low, low_ex, high, high_ex)
    return alt(*(([seq()] if ends else []) + parts))


def _fraction_part(
    low: str | None, low_ex: bool, high: str | None, high_ex: bool, budget: int
) -> Expr:
    """The optional ``.F`` of a number whose fraction must lie within the bounds."""
    digits = _digits_between(low, low_ex, high, high_ex, False, budget)
    with_fraction = NOTHING if digits == NOTHING else seq(Lit("."), digits)
    return opt(with_fraction) if _zero_within(low, low_ex, high, high_ex) else with_fraction


def _fractional_magnitudes(
    lo: Fraction | int,
    lo_ex: bool,
    hi: Fraction | int | None,
    hi_ex: bool,
    significant: int = SIGNIFICANT_DIGITS,
) -> Expr:
    """Unsigned spellings of values ``m`` with ``lo (<|<=) m (<|<=) hi``, bounds any decimals;
    ``significant`` is :func:`_float_safe`'s."""
    if hi is not None and (lo > hi or (lo == hi and (lo_ex or hi_ex))):
        return NOTHING

    def digits(lo: int, hi: int | None, fraction: Callable[[int], Expr]) -> Expr:
        return _float_safe(lo, hi, fraction, significant=significant)

    n = math.floor(lo)
    low = _fraction_digits(Fraction(lo) - n)
    if hi is not None and math.floor(hi) == n:
        high = _fraction_digits(Fraction(hi) - n)
        return digits(n, n, lambda b: _fraction_part(low, lo_ex, high, hi_ex, b))
    parts = [digits(n, n, lambda b: _fraction_part(low, lo_ex, None, False, b))]
    if hi is None:
        parts.append(digits(n + 1, None, _any_fraction))
        return alt(*parts)
    m = math.floor(hi)
    top = _fraction_digits(Fraction(hi) - m)
    if n + 1 <= m - 1:
        parts.append(digits(n + 1, m - 1, _any_fraction))
    parts.append(digits(m, m, lambda b: _fraction_part(None, False, top, hi_ex, b)))
    return alt(*parts)


def _significant(value: Fraction) -> bool:
    """Whether ``value`` is a float-safe decimal (see the module docstring)."""
    if value == 0:
        return True
    magnitude = abs(value)
    if magnitude >= 10**MAX_INTEGER_DIGITS or magnitude < Fraction(1, 10**SIGNIFICANT_DIGITS):
        return False
    scale = max(0, SIGNIFICANT_DIGITS - len(str(math.floor(magnitude))))
    if magnitude < 1:
        scale = SIGNIFICANT_DIGITS
    scaled = magnitude * 10**scale
    if scaled.denominator != 1:
        return False
    digits = str(int(scaled)).rstrip("0")
    return len(digits) <= SIGNIFICANT_DIGITS


def _step(value: Fraction) -> Fraction:
    """The spacing of float-safe decimals at ``value`` (its 15th significant place)."""
    magnitude = abs(value)
    if magnitude < 1:
        return Fraction(1, 10**SIGNIFICANT_DIGITS)
    return Fraction(10) ** (len(str(math.floor(magnitude))) - SIGNIFICANT_DIGITS)


def _safe_bound(bound: Bound | None, upper: bool) -> Bound | None:
    """``bound``, or the nearest float-safe value inside it whose double differs from the
    bound's own double (inclusive), so exact and double readers judge every accepted number
    alike. A bound beyond the largest magnitude the grammar writes constrains nothing.
    """
    if bound is None or _significant(bound.value):
        return bound
    value = bound.value
    limit = 10**MAX_INTEGER_DIGITS
    if (upper and value >= limit) or (not upper and value <= -limit):
        return None
    if abs(value) >= limit:
        return Bound(Fraction(-limit if upper else limit), True)  # an empty side
    step = _step(value)
    inside = (math.floor(value / step) if upper else math.ceil(value / step)) * step
    while inside == value or float(inside) == float(value) or not _significant(inside):
        inside += -step if upper else step
        if inside:
            # Past a power of ten the spacing grows tenfold: realign to the new spacing
            # (inward), or every later step would miss the float-safe values (a hang on
            # exclusiveMinimum 99999999999999991808).
            step = _step(inside)
            inside = (math.floor(inside / step) if upper else math.ceil(inside / step)) * step
    return Bound(inside)


@functools.lru_cache(maxsize=1024)
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
    exact = (lower, upper)
    lower, upper = _safe_bound(lower, upper=False), _safe_bound(upper, upper=True)
    significant = ROUND_TRIP_DIGITS if _monotone(integer, places, *exact) else SIGNIFICANT_DIGITS
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

        def magnitudes(lo: Any, lo_ex: bool, hi: Any, hi_ex: bool) -> Expr:
            return _fractional_magnitudes(lo, lo_ex, hi, hi_ex, significant)
    else:
        whole = _ZERO_FRACTION if zero_fraction or not integer else seq()
        lo, lo_ex = _whole(lower, integer, upper=False)
        hi, hi_ex = _whole(upper, integer, upper=True)
        if lo is None and hi is None and not integer and places is None:
            return Token(seq(opt(Lit("-")), _UNBOUNDED))

        def magnitudes(lo: Any, lo_ex: bool, hi: Any, hi_ex: bool) -> Expr:
            return _magnitudes(lo, lo_ex, hi, hi_ex, integer, whole, places, significant)

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
    body = alt(pos, seq(Lit("-"), neg))
    if integer and lo is None and hi is None:
        # Integers up to 2**53 are doubles exactly, so 16 digits mean the same to both
        # readers; beyond it a double reader rounds (ids!): 15 significant digits again.
        body = alt(body, seq(opt(Lit("-")), _integers(10**15, 2**53), whole))
    if is_nothing(body) and _admits_some(*exact, 0 if integer else places):
        raise NotExact("no float-safe number (15 significant digits) lies within the bounds")
    return Token(body)


def _monotone(integer: bool, places: int | None, *bounds: Bound | None) -> bool:
    """Whether a ``number`` within ``bounds`` may take 17 significant digits: every bound is
    inclusive, float-safe itself, and exactly a double where it is an integer (a non-integer
    bound is a double to every double reader). Rounding to the nearest double is monotone, so
    ``lo <= x <= hi`` gives ``lo <= double(x) <= hi`` whether the reader compares with the
    bound or with its double; an exclusive bound could be reached (``1.0000000000000001``
    reads as ``1``), and an integer bound beyond 2**53 compared exactly could be crossed."""
    if integer or places is not None:
        return False
    return all(
        b is None
        or (
            not b.exclusive
            and _significant(b.value)
            and (b.value.denominator != 1 or Fraction(float(b.value)) == b.value)
        )
        for b in bounds
    )


def _admits_some(lower: Bound | None, upper: Bound | None, places: int | None) -> bool:
    """Whether some exact value (a multiple of ``10**-places`` when given) meets the bounds."""
    if lower is None or upper is None:
        return True
    if places is None:
        if lower.value == upper.value:
            return not (lower.exclusive or upper.exclusive)
        return lower.value < upper.value
    step = Fraction(1, 10**places)
    first = math.floor(lower.value / step) * step
    while first < lower.value or (lower.exclusive and first == lower.value):
        first += step
    return first < upper.value or (first == upper.value and not upper.exclusive)


def _any_fraction(budget: int) -> Expr:
    return _fractions_upto(budget).any


#: An unbounded number: plain decimals of at most ROUND_TRIP_DIGITS (17) significant digits,
#: or a mantissa of at most 17 integer digits with an exponent of at most MAX_EXPONENT
#: (leading zeros allowed, as JSON allows them). With nothing to compare against, a double
#: reader's rounding cannot change the verdict, and every double's shortest repr (up to 17
#: digits, ``1.5707963267948966``) is accepted; magnitudes stay between 1e-297 and 1e300.
_UNBOUNDED = alt(
    _float_safe(0, None, _any_fraction, significant=ROUND_TRIP_DIGITS),
    seq(
        _float_safe(
            0, None, _any_fraction, max_digits=ROUND_TRIP_DIGITS, significant=ROUND_TRIP_DIGITS
        ),
        alt(Lit("e"), Lit("E")),
        opt(alt(Lit("+"), Lit("-"))),
        repeat(Lit("0"), 0, None),
        decimal_range(0, MAX_EXPONENT),
    ),
)


_DIGITS = repeat(decimal_digit(0, 9), 1, None)
#: Any number as JSON spells it, with no float-safety limit: for checking documents (the
#: streaming argument check), never for generating them. Huge numbers are refused before a
#: reader sees them by harmony_grammar.tools.json_limits, not by the grammar.
JSON_NUMBER = Token(
    seq(
        opt(Lit("-")),
        alt(Lit("0"), seq(decimal_digit(1, 9), repeat(decimal_digit(0, 9), 0, None))),
        opt(seq(Lit("."), _DIGITS)),
        opt(seq(alt(Lit("e"), Lit("E")), opt(alt(Lit("+"), Lit("-"))), _DIGITS)),
    )
)
