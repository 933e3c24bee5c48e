"""Print the regular part of the IR (a ``Token``'s body) as regex text.

Two dialects: Python ``re`` (Lark terminals) and Rust ``regex`` (llguidance terminals). They
differ only in how code points are escaped; both accept ``(?:...)`` and ``{m,n}``.
"""

from __future__ import annotations

import functools
from typing import Literal

from .ir import Alt, Both, Chars, Expr, Lit, Repeat, Seq, Token
from .regex import complement

__all__ = ["Dialect", "render_regex"]

Dialect = Literal["python", "rust"]

# Escaped everywhere; '-', '&' and '~' matter in Rust classes ('&&', '--', '~~' are set ops).
_META = set("\\.+*?()|[]{}^$#&-~\"'")


def _char(cp: int, dialect: Dialect) -> str:
    c = chr(cp)
    if 0x21 <= cp <= 0x7E:
        return "\\" + c if c in _META else c
    if cp == 0x20:
        return "\\x20"
    if dialect == "rust":
        return f"\\x{{{cp:X}}}"
    if cp <= 0xFF:
        return f"\\x{cp:02X}"
    return f"\\u{cp:04X}" if cp <= 0xFFFF else f"\\U{cp:08X}"


@functools.lru_cache(maxsize=4096)
def _class(ranges: tuple[tuple[int, int], ...], dialect: Dialect) -> str:
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _char(ranges[0][0], dialect)
    inverse = complement(ranges)
    negate = 0 < len(inverse) < len(ranges)  # `[^]` is not a class in Python or Rust
    body = "".join(
        _char(lo, dialect) + ("" if lo == hi else ("-" if hi > lo + 1 else "") + _char(hi, dialect))
        for lo, hi in (inverse if negate else ranges)
    )
    return f"[{'^' if negate else ''}{body}]"


def _atomic(expr: Expr) -> bool:
    if isinstance(expr, Chars):
        return True
    if isinstance(expr, Lit):
        return len(expr.text) == 1
    return False


def _lookaheads(node: Both, follow: Expr | None, dialect: Dialect) -> str:
    """A :class:`Both` as Python lookaheads, each carried through to the literal after it.

    The node is a JSON string's whole content, so ``follow`` is the closing quote, which no
    spelling inside the content contains unescaped: every lookahead must therefore cover the
    same, whole content, and the intersection is exact.
    """
    if dialect != "python" or not isinstance(follow, Lit):
        raise TypeError("an intersection needs Python lookaheads and a literal after it")
    tail = render_regex(follow, dialect)
    *checks, last = node.items
    positive = "".join(f"(?=(?:{render_regex(x, dialect)}){tail})" for x in checks)
    negative = "".join(f"(?!(?:{render_regex(x, dialect)}){tail})" for x in node.excluded)
    return f"{positive}{negative}(?:{render_regex(last, dialect)})"


@functools.lru_cache(maxsize=4096)
def render_regex(expr: Expr, dialect: Dialect) -> str:
    """Regex text for a regular expression of the IR (memoised: the IR is immutable, and
    format and string tokens recur across schemas)."""
    if isinstance(expr, Token):
        return render_regex(expr.item, dialect)
    if isinstance(expr, Chars):
        if not expr.ranges:
            return "[^\\x00-\\x{10FFFF}]" if dialect == "rust" else "(?!)"
        return _class(expr.ranges, dialect)
    if isinstance(expr, Lit):
        return "".join(_char(ord(c), dialect) for c in expr.text)
    if isinstance(expr, Seq):
        parts = []
        for i, item in enumerate(expr.items):
            if isinstance(item, Both):
                follow = expr.items[i + 1] if i + 1 < len(expr.items) else None
                parts.append(_lookaheads(item, follow, dialect))
            elif isinstance(item, Alt):
                parts.append(f"(?:{render_regex(item, dialect)})")
            else:
                parts.append(render_regex(item, dialect))
        return "".join(parts)
    if isinstance(expr, Alt):
        if not expr.items:
            return "(?!)" if dialect == "python" else "[^\\x00-\\x{10FFFF}]"
        return "|".join(render_regex(i, dialect) for i in expr.items)
    if isinstance(expr, Repeat):
        inner = render_regex(expr.item, dialect)
        if not _atomic(expr.item):
            inner = f"(?:{inner})"
        lo, hi = expr.min, expr.max
        if (lo, hi) == (0, 1):
            suffix = "?"
        elif (lo, hi) == (0, None):
            suffix = "*"
        elif (lo, hi) == (1, None):
            suffix = "+"
        elif hi is None:
            suffix = f"{{{lo},}}"
        elif lo == hi:
            suffix = f"{{{lo}}}"
        else:
            suffix = f"{{{lo},{hi}}}"
        return inner + suffix
    raise TypeError(f"not a regular expression: {expr!r}")
