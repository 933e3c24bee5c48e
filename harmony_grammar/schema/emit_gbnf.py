"""IR to GBNF, llama.cpp's grammar syntax (``root ::= start``; tokens are written inline)."""

from __future__ import annotations

from .emit_common import RulePrinter
from .errors import UnsupportedSchemaError
from .ir import Both, Chars, Expr, Grammar, Repeat
from .regex import complement

__all__ = ["emit_gbnf"]

_LITERAL_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


_HEX_DIGITS = frozenset("0123456789ABCDEFabcdef")


def _char(cp: int, in_class: bool, after_x_escape: bool = False) -> str:
    """One character as GBNF writes it; ``after_x_escape`` when it follows a ``\\xHH``."""
    c = chr(cp)
    if in_class and c in "]\\[":
        return "\\" + c
    if in_class and c in "-^":
        return f"\\x{cp:02X}"  # llama.cpp and llguidance read no `\-` or `\^` escape
    if not in_class and c in _LITERAL_ESCAPES:
        return _LITERAL_ESCAPES[c]
    # xgrammar reads every hex digit after `\x` (llama.cpp reads two), so a hex digit right
    # after an `\x` escape is escaped too: `[\x2D\x30-9]`, never `[\x2D0-9]`. `\u` would
    # do for xgrammar, but llguidance's GBNF reader drops its leading zeros.
    if 0x20 <= cp <= 0x7E and not (after_x_escape and c in _HEX_DIGITS):
        return c
    if cp <= 0xFF:
        return f"\\x{cp:02X}"
    return f"\\u{cp:04X}" if cp <= 0xFFFF else f"\\U{cp:08X}"


def _chars(cps: list[int], in_class: bool) -> list[str]:
    """Each character written by :func:`_char`, knowing what came before it."""
    written: list[str] = []
    for cp in cps:
        after_x = bool(written) and written[-1].startswith("\\x")
        written.append(_char(cp, in_class, after_x))
    return written


def _class(ranges: tuple[tuple[int, int], ...]) -> str:
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return '"' + _char(ranges[0][0], False) + '"'
    inverse = complement(ranges)
    negate = 0 < len(inverse) < len(ranges)
    body: list[str] = []
    for lo, hi in inverse if negate else ranges:
        after_x = bool(body) and body[-1].startswith("\\x")
        body.append(_char(lo, True, after_x))
        if lo != hi:
            body += ["-", _char(hi, True)]  # after "-": nothing to guard
    return f"[{'^' if negate else ''}{''.join(body)}]"


class _GbnfPrinter(RulePrinter):
    """GBNF's spelling. Repetitions that are themselves repeated get helper rules ``rep0``...:
    GBNF readers refuse stacked quantifiers (``x{1,4}?``) and some drop the parentheses of
    ``(x{1,4})?``."""

    DEFINES = " ::= "
    TOKEN_PREFIX = "tok"
    EMPTY = '""'
    HEADER = ("root ::= start",)

    def both(self, expr: Expr) -> str | None:
        if isinstance(expr, Both):
            raise UnsupportedSchemaError(
                expr.keyword, expr.pointer, "GBNF has no intersection or complement of languages"
            )
        return None

    def literal(self, text: str) -> str:
        return '"' + "".join(_chars([ord(c) for c in text], False)) + '"'

    def chars(self, expr: Chars) -> str:
        return _class(expr.ranges)

    def nested_choice(self, text: str) -> str:
        return f"({text})"

    def repeat(self, expr: Repeat) -> str:
        inner = self.expr(expr.item, True)
        if isinstance(expr.item, Repeat):
            inner = self.helper(inner, "rep")
        lo, hi = expr.min, expr.max
        if (lo, hi) == (0, 1):
            return inner + "?"
        if hi is None and lo <= 1:
            return inner + ("*" if lo == 0 else "+")
        return f"{inner}{{{lo},{'' if hi is None else hi}}}"


def emit_gbnf(grammar: Grammar) -> str:
    """GBNF text with ``root ::= start``; each token becomes a rule ``tok0`` ..."""
    return _GbnfPrinter().emit(grammar)
