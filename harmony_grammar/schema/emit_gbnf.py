"""IR to GBNF, llama.cpp's grammar syntax (``root ::= start``; tokens are written inline)."""

from __future__ import annotations

from .emit_common import TokenNames, reachable_rules
from .errors import UnsupportedSchemaError
from .ir import Alt, Both, Chars, Expr, Grammar, Lit, Ref, Repeat, Seq, Token
from .regex import complement

__all__ = ["emit_gbnf", "gbnf_literal", "gbnf_rules"]

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


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    return '"' + "".join(_chars([ord(c) for c in text], False)) + '"'


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


class _Helpers:
    """Rules ``rep0``... for repetitions that are themselves repeated: GBNF readers refuse
    stacked quantifiers (``x{1,4}?``) and some drop the parentheses of ``(x{1,4})?``."""

    def __init__(self, prefix: str = "rep") -> None:
        self.prefix = prefix
        self.rules: dict[str, str] = {}

    def __call__(self, body: str) -> str:
        name = self.rules.get(body)
        if name is None:
            name = self.rules[body] = f"{self.prefix}{len(self.rules)}"
        return name


def _expr(
    expr: Expr, tokens: TokenNames, helpers: _Helpers, prefix: str, nested: bool = False
) -> str:
    if isinstance(expr, Both):
        raise UnsupportedSchemaError(
            expr.keyword, expr.pointer, "GBNF has no intersection or complement of languages"
        )
    if isinstance(expr, Lit):
        return gbnf_literal(expr.text)
    if isinstance(expr, Chars):
        return _class(expr.ranges)
    if isinstance(expr, Token):
        return tokens(expr)
    if isinstance(expr, Ref):
        return prefix + expr.name
    if isinstance(expr, Seq):
        if not expr.items:
            return '""'
        text = " ".join(_expr(i, tokens, helpers, prefix, True) for i in expr.items)
        return f"({text})" if nested and len(expr.items) > 1 else text
    if isinstance(expr, Alt):
        text = " | ".join(_expr(i, tokens, helpers, prefix) for i in expr.items)
        return f"({text})" if nested else text
    if isinstance(expr, Repeat):
        inner = _expr(expr.item, tokens, helpers, prefix, True)
        if isinstance(expr.item, Repeat):
            inner = helpers(inner)
        lo, hi = expr.min, expr.max
        if (lo, hi) == (0, 1):
            return inner + "?"
        if hi is None and lo <= 1:
            return inner + ("*" if lo == 0 else "+")
        return f"{inner}{{{lo},{'' if hi is None else hi}}}"
    raise TypeError(expr)


def gbnf_rules(grammar: Grammar, prefix: str = "") -> list[str]:
    """The rule lines of ``grammar`` (its start rule is ``{prefix}start``), every name
    prefixed, to embed several grammars in one (the whole-turn GBNF does)."""
    tokens = TokenNames(f"{prefix}tok")
    helpers = _Helpers(f"{prefix}rep")
    lines = []
    for name in reachable_rules(grammar):
        lines.append(f"{prefix}{name} ::= {_expr(grammar.rules[name], tokens, helpers, prefix)}")
    # Token bodies never hold tokens, but stay safe: a token named while writing one is
    # written too. Copying the dict once per token here was quadratic in the token count.
    done = 0
    while done < len(tokens.names):
        batch = list(tokens.names.items())[done:]
        for body, tname in batch:
            lines.append(f"{tname} ::= {_expr(body, tokens, helpers, prefix)}")
        done += len(batch)
    lines.extend(f"{name} ::= {body}" for body, name in helpers.rules.items())
    return lines


def emit_gbnf(grammar: Grammar) -> str:
    """GBNF text with ``root ::= start``; each token becomes a rule ``tok0`` ..."""
    return "\n".join(["root ::= start", *gbnf_rules(grammar)]) + "\n"
