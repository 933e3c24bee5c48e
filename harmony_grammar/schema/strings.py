"""JSON string syntax: from a language of decoded strings to the language of their JSON texts.

Patterns, formats, enum values and property names all describe *decoded* strings, while the
grammar reads the *encoded* text, where one character may be written raw, as a short escape
(``\\n``) or as ``\\uXXXX`` (a surrogate pair for astral characters). :func:`encode` rewrites
each character set into the union of all its spellings, so ``"\\u0061"`` is accepted wherever
``"a"`` is. Lone surrogate escapes are never accepted: they are not Unicode scalar values
(I-JSON forbids them) and no decoded-string language here contains them.

``escaped_ascii=False`` (generation grammars) drops the ``\\uXXXX`` spellings of printable
ASCII: no JSON encoder writes ``"\\u0061"`` for ``"a"``, every decoded string keeps a
spelling, and the lexemes lose half their states (llguidance's first masks are twice as fast).
"""

from __future__ import annotations

import functools

from .digits import fixed_width_range, hex_digit
from .ir import (
    NOTHING,
    Alt,
    Both,
    Chars,
    Expr,
    Lit,
    Repeat,
    Seq,
    Token,
    alt,
    both,
    chars,
    repeat,
    seq,
)
from .regex import ANY_CHAR, complement

__all__ = [
    "encode",
    "json_string",
    "length_range",
    "limit_length",
    "literal_string",
    "string_not_in",
]

_SHORT_ESCAPES = {0x22: '"', 0x5C: "\\", 0x2F: "/", 0x08: "b", 0x0C: "f", 0x0A: "n", 0x0D: "r"}
_SHORT_ESCAPES[0x09] = "t"
#: Characters JSON allows unescaped: everything from U+0020 but '"' and '\'.
_RAW = ((0x20, 0x21), (0x23, 0x5B), (0x5D, 0xD7FF), (0xE000, 0x10FFFF))
#: The characters a ``\\uXXXX`` escape may spell: the BMP without the surrogates...
_ESCAPABLE = ((0, 0xD7FF), (0xE000, 0xFFFF))
#: ...and the same without printable ASCII, for ``escaped_ascii=False``.
_ESCAPABLE_NOT_ASCII = ((0, 0x1F), (0x7F, 0xD7FF), (0xE000, 0xFFFF))


def _intersect(
    a: tuple[tuple[int, int], ...], b: tuple[tuple[int, int], ...]
) -> list[tuple[int, int]]:
    return [(max(x, y), min(p, q)) for x, p in a for y, q in b if max(x, y) <= min(p, q)]


def _hex4(ranges: list[tuple[int, int]]) -> Expr:
    return alt(*(fixed_width_range(lo, hi, 4, 16, hex_digit) for lo, hi in ranges))


def _bmp_escapes(bmp: list[tuple[int, int]]) -> Expr:
    """``\\uXXXX`` for the BMP characters ``bmp`` (no surrogates)."""
    low = _intersect(tuple(bmp), ((0, 0xFF),))
    if low != [(0, 0xFF)] and _intersect(tuple(bmp), ((0x100, 0xFFFF),)) == list(_HIGH_BMP):
        # Every character from U+0100 but only some below it (a names-not-declared trie has
        # one such set per node): `\u00` and two digits, then one expression for the rest
        # that every such set shares (an emitter writes it once) instead of a copy per set.
        two = alt(*(fixed_width_range(lo, hi, 2, 16, hex_digit) for lo, hi in low))
        return alt(seq(Lit("\\u00"), two), _high_escapes())
    return seq(Lit("\\u"), _hex4(bmp))


#: The BMP scalar values from U+0100 (no surrogates).
_HIGH_BMP = ((0x100, 0xD7FF), (0xE000, 0xFFFF))


@functools.cache
def _high_escapes() -> Expr:
    return seq(Lit("\\u"), _hex4(list(_HIGH_BMP)))


@functools.lru_cache(maxsize=1024)  # pure; mostly the same few astral ranges
def _pairs(lo: int, hi: int) -> Expr:
    """Surrogate-pair escapes for the astral characters ``lo..hi``."""

    def split(c: int) -> tuple[int, int]:
        return 0xD800 + ((c - 0x10000) >> 10), 0xDC00 + ((c - 0x10000) & 0x3FF)

    (h_lo, l_lo), (h_hi, l_hi) = split(lo), split(hi)

    def pair(h1: int, h2: int, l1: int, l2: int) -> Expr:
        return seq(Lit("\\u"), _hex4([(h1, h2)]), Lit("\\u"), _hex4([(l1, l2)]))

    if h_lo == h_hi:
        return pair(h_lo, h_lo, l_lo, l_hi)
    parts = [pair(h_lo, h_lo, l_lo, 0xDFFF)]
    if h_hi - h_lo > 1:
        parts.append(pair(h_lo + 1, h_hi - 1, 0xDC00, 0xDFFF))
    parts.append(pair(h_hi, h_hi, 0xDC00, l_hi))
    return alt(*parts)


@functools.lru_cache(maxsize=4096)
def _unit(ranges: tuple[tuple[int, int], ...], escaped_ascii: bool) -> Expr:
    """Every JSON spelling of one character from ``ranges`` (see the module docstring)."""
    parts: list[Expr] = [chars(_intersect(ranges, _RAW))]
    for cp, letter in _SHORT_ESCAPES.items():
        if any(lo <= cp <= hi for lo, hi in ranges):
            parts.append(Lit("\\" + letter))
    bmp = _intersect(ranges, _ESCAPABLE if escaped_ascii else _ESCAPABLE_NOT_ASCII)
    if bmp:
        parts.append(_bmp_escapes(bmp))
    parts.extend(_pairs(lo, hi) for lo, hi in _intersect(ranges, ((0x10000, 0x10FFFF),)))
    return alt(*parts)


def encode(expr: Expr, escaped_ascii: bool = True) -> Expr:
    """Rewrite IR over decoded characters into IR over their JSON spellings."""
    if isinstance(expr, Chars):
        return _unit(expr.ranges, escaped_ascii)
    if isinstance(expr, Lit):
        return seq(*(_unit(((ord(c), ord(c)),), escaped_ascii) for c in expr.text))
    if isinstance(expr, Seq):
        return seq(*(encode(i, escaped_ascii) for i in expr.items))
    if isinstance(expr, Alt):
        return alt(*(encode(i, escaped_ascii) for i in expr.items))
    if isinstance(expr, Repeat):
        return repeat(encode(expr.item, escaped_ascii), expr.min, expr.max)
    if isinstance(expr, Both):
        # Each text spells exactly one decoded string, so spelling commutes with both.
        return both(
            (encode(i, escaped_ascii) for i in expr.items),
            (encode(e, escaped_ascii) for e in expr.excluded),
            keyword=expr.keyword,
            pointer=expr.pointer,
        )
    raise TypeError(f"not a decoded-string expression: {expr!r}")


def json_string(body: Expr, escaped_ascii: bool = True) -> Expr:
    """A JSON string token whose decoded value is in the language ``body``."""
    inner = encode(body, escaped_ascii)
    return NOTHING if inner == NOTHING else Token(seq(Lit('"'), inner, Lit('"')))


def literal_string(text: str, escaped_ascii: bool = True) -> Expr:
    """A JSON string token for exactly ``text`` (any spelling)."""
    return json_string(Lit(text), escaped_ascii)


def string_not_in(names: frozenset[str], complement_of: bool = False) -> Expr:
    """Decoded strings that are none of ``names``: a trie walked into a regular expression,
    or, with ``complement_of`` (for a target that reads complements), any string minus the
    names (a :class:`Both`: llguidance masks a token inside such a name 60x faster than
    inside the trie, whose lexer states defeat its string fast path)."""
    anything = repeat(ANY_CHAR, 0, None)
    if complement_of and names:
        excluded = alt(*(Lit(n) for n in sorted(names)))
        return both([anything], [excluded], keyword="additionalProperties", pointer="")

    def node(prefix: str, here: list[str]) -> Expr:
        # ``here``: the names under ``prefix``, grouped by their next character (a scan of
        # every name at every node was names x nodes).
        below: dict[str, list[str]] = {}
        for n in here:
            if len(n) > len(prefix):
                below.setdefault(n[len(prefix)], []).append(n)
        children = sorted(below)
        parts: list[Expr] = [] if prefix in names else [seq()]
        taken = tuple((ord(c), ord(c)) for c in children)
        parts.append(seq(chars(complement(getattr(chars(taken), "ranges", ()))), anything))
        parts.extend(seq(Lit(c), node(prefix + c, below[c])) for c in children)
        return alt(*parts)

    return node("", list(names)) if names else anything


def limit_length(body: Expr, lo: int, hi: int | None) -> Expr | None:
    """``body`` restricted to lengths ``lo..hi`` when that is simple to do exactly."""
    blo, bhi = length_range(body)
    if blo >= lo and (hi is None or (bhi is not None and bhi <= hi)):
        return body
    if (hi is not None and blo > hi) or (bhi is not None and bhi < lo):
        return NOTHING
    items: list[Expr] = list(body.items) if isinstance(body, Seq) else [body]
    ranges = [length_range(item) for item in items]
    variable = [i for i, (a, b) in enumerate(ranges) if a != b]
    if len(variable) != 1:
        return None
    k = variable[0]
    item = items[k]
    if not (isinstance(item, Repeat) and isinstance(item.item, Chars)):
        return None
    fixed = blo - item.min
    new_lo = max(item.min, lo - fixed)
    new_hi: int | None = item.max
    if hi is not None:
        new_hi = hi - fixed if new_hi is None else min(new_hi, hi - fixed)
    items[k] = repeat(item.item, new_lo, new_hi)
    return seq(*items)


def length_range(expr: Expr) -> tuple[int, int | None]:
    """The shortest and longest (None: unbounded) strings of a decoded-string expression."""
    if isinstance(expr, Chars):
        return 1, 1
    if isinstance(expr, Lit):
        return len(expr.text), len(expr.text)
    if isinstance(expr, Seq):
        lo = 0
        total: int | None = 0
        for item in expr.items:
            a, b = length_range(item)
            lo += a
            total = None if total is None or b is None else total + b
        return lo, total
    if isinstance(expr, Alt):
        ranges = [length_range(i) for i in expr.items]
        his = [b for _, b in ranges]
        longest = None if None in his else max(h for h in his if h is not None)
        return min(a for a, _ in ranges), longest
    if isinstance(expr, Repeat):
        a, b = length_range(expr.item)
        return a * expr.min, None if b is None or expr.max is None else b * expr.max
    if isinstance(expr, Both):
        ranges = [length_range(i) for i in expr.items]
        finite = [b for _, b in ranges if b is not None]
        return max(a for a, _ in ranges), min(finite) if finite else None
    raise TypeError(expr)
