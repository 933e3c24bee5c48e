"""Regular expressions (as IR) for integer ranges written with digits.

Used for numeric bounds (decimal, variable width) and for ``\\uXXXX`` escapes (hexadecimal,
fixed width, either letter case).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .ir import NOTHING, Expr, alt, chars, repeat, seq

__all__ = ["decimal_digit", "decimal_range", "fixed_width_range", "hex_digit"]

DigitSet = Callable[[int, int], Expr]


def decimal_digit(lo: int, hi: int) -> Expr:
    """Decimal digits with values ``lo..hi``."""
    return chars([(0x30 + lo, 0x30 + hi)])


def hex_digit(lo: int, hi: int) -> Expr:
    """Hexadecimal digits with values ``lo..hi``, letters in either case."""
    ranges = []
    if lo <= 9:
        ranges.append((0x30 + lo, 0x30 + min(hi, 9)))
    if hi >= 10:
        a, b = max(lo, 10) - 10, hi - 10
        ranges += [(0x61 + a, 0x61 + b), (0x41 + a, 0x41 + b)]
    return chars(ranges)


def _digits(value: int, width: int, base: int) -> list[int]:
    out = []
    for _ in range(width):
        value, d = divmod(value, base)
        out.append(d)
    return out[::-1]


@functools.lru_cache(maxsize=4096)  # pure, and the same ranges recur (\u escapes, bounds)
def fixed_width_range(lo: int, hi: int, width: int, base: int, digit: DigitSet) -> Expr:
    """Strings of exactly ``width`` digits whose value lies in ``lo..hi``."""
    if lo > hi:
        return NOTHING
    return _same_width(_digits(lo, width, base), _digits(hi, width, base), base, digit)


def _same_width(lo: list[int], hi: list[int], base: int, digit: DigitSet) -> Expr:
    if not lo:
        return seq()
    if lo[0] == hi[0]:
        return seq(digit(lo[0], lo[0]), _same_width(lo[1:], hi[1:], base, digit))
    rest = len(lo) - 1
    top, bottom = [base - 1] * rest, [0] * rest
    if lo[1:] == bottom and hi[1:] == top:  # the whole block: one class, any tail
        return seq(digit(lo[0], hi[0]), repeat(digit(0, base - 1), rest, rest))
    parts = [seq(digit(lo[0], lo[0]), _same_width(lo[1:], top, base, digit))]
    if hi[0] - lo[0] > 1:
        parts.append(seq(digit(lo[0] + 1, hi[0] - 1), repeat(digit(0, base - 1), rest, rest)))
    parts.append(seq(digit(hi[0], hi[0]), _same_width(bottom, hi[1:], base, digit)))
    return alt(*parts)


def decimal_range(lo: int, hi: int | None) -> Expr:
    """Canonical decimal numerals (no sign, no leading zeros) for values ``lo..hi``.

    ``hi=None`` means unbounded. ``lo`` must be non-negative.
    """
    if hi is not None and lo > hi:
        return NOTHING
    parts = []
    width = len(str(lo))
    last = len(str(hi)) if hi is not None else width
    for w in range(width, last + 1):
        first = 10 ** (w - 1) if w > 1 else 0
        block_hi = 10**w - 1 if hi is None or hi >= 10**w - 1 else hi
        parts.append(fixed_width_range(max(lo, first), block_hi, w, 10, decimal_digit))
    if hi is None:  # every longer numeral
        parts.append(seq(decimal_digit(1, 9), repeat(decimal_digit(0, 9), width, None)))
    return alt(*parts)
