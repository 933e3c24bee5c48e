"""ECMA-262 regular expressions (JSON Schema ``pattern``) to IR over decoded characters.

The parser covers what is regular: literals, classes, ``.``, escapes, groups, alternation,
greedy and lazy quantifiers (laziness does not change the language) and the anchors ``^`` and
``$`` at the edges of a top-level alternative. Backreferences, lookarounds, word boundaries,
Unicode property escapes and anchors elsewhere raise :class:`RegexError`: they cannot be
expressed exactly by a context-free grammar, or not cheaply.

JSON Schema patterns are not implicitly anchored: ``"abc"`` matches any string containing
``abc``. :func:`search_ir` adds the unanchored ends.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base.errors import HarmonyGrammarError
from .ir import MAX_CODE_POINT, NOTHING, Expr, Repeat, Seq, alt, chars, repeat, seq

__all__ = ["ANY_CHAR", "ECMA_SPACE", "RegexError", "complement", "parse_pattern", "search_ir"]

#: Every Unicode scalar value: decoded JSON strings never hold lone surrogates (see docs).
UNIVERSE: tuple[tuple[int, int], ...] = ((0, 0xD7FF), (0xE000, MAX_CODE_POINT))
ANY_CHAR: Expr = chars(UNIVERSE)
_LINE_TERMINATORS = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))
#: ECMA-262 WhiteSpace and LineTerminator, the set ``\s`` matches.
ECMA_SPACE: tuple[tuple[int, int], ...] = (
    (0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
    (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF),
)  # fmt: skip
_DIGIT = ((0x30, 0x39),)
_WORD = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
_SINGLE_ESCAPES = {"n": 0x0A, "r": 0x0D, "t": 0x09, "f": 0x0C, "v": 0x0B, "0": 0x00}


class RegexError(HarmonyGrammarError, ValueError):
    """The pattern is malformed or uses a construct outside the regular subset."""


def complement(ranges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """The ranges of the universe not covered by ``ranges`` (which must be normalised)."""
    out: list[tuple[int, int]] = []
    for ulo, uhi in UNIVERSE:
        pos = ulo
        for lo, hi in ranges:
            if hi < pos or lo > uhi:
                continue
            if lo > pos:
                out.append((pos, lo - 1))
            pos = max(pos, hi + 1)
        if pos <= uhi:
            out.append((pos, uhi))
    return tuple(out)


def _normal(
    ranges: list[tuple[int, int]] | tuple[tuple[int, int], ...],
) -> tuple[tuple[int, int], ...]:
    expr = chars(ranges)
    return getattr(expr, "ranges", ())


@dataclass
class _Anchor:
    kind: str  # "^" or "$"


class _Parser:
    def __init__(self, source: str) -> None:
        self.src = source
        self.pos = 0

    def fail(self, message: str) -> RegexError:
        return RegexError(f"{message} at offset {self.pos} of pattern {self.src!r}")

    def peek(self, k: int = 0) -> str:
        i = self.pos + k
        return self.src[i] if i < len(self.src) else ""

    # disjunction := alternative ('|' alternative)*
    def disjunction(self) -> list[list[Expr | _Anchor]]:
        branches = [self.alternative()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.alternative())
        return branches

    def alternative(self) -> list[Expr | _Anchor]:
        items: list[Expr | _Anchor] = []
        while self.peek() not in ("", "|", ")"):
            atom = self.atom()
            if isinstance(atom, _Anchor):
                if self.peek() in ("*", "+", "?", "{") and self._quantifier_ahead():
                    raise self.fail("quantified anchor")
                items.append(atom)
                continue
            items.append(self.quantified(atom))
        return items

    def _quantifier_ahead(self) -> bool:
        if self.peek() != "{":
            return True
        save = self.pos
        try:
            return self._brace_quantifier() is not None
        finally:
            self.pos = save

    def _brace_quantifier(self) -> tuple[int, int | None] | None:
        # Annex B: a '{' that does not start a well-formed quantifier is a literal.
        src, i = self.src, self.pos + 1
        j = i
        while j < len(src) and src[j].isdigit():
            j += 1
        if j == i:
            return None
        lo = int(src[i:j])
        hi: int | None = lo
        if j < len(src) and src[j] == ",":
            k = j + 1
            while k < len(src) and src[k].isdigit():
                k += 1
            hi = int(src[j + 1 : k]) if k > j + 1 else None
            j = k
        if j >= len(src) or src[j] != "}":
            return None
        self.pos = j + 1
        return lo, hi

    def quantified(self, atom: Expr) -> Expr:
        c = self.peek()
        bounds: tuple[int, int | None] | None = None
        if c == "*":
            bounds, self.pos = (0, None), self.pos + 1
        elif c == "+":
            bounds, self.pos = (1, None), self.pos + 1
        elif c == "?":
            bounds, self.pos = (0, 1), self.pos + 1
        elif c == "{":
            bounds = self._brace_quantifier()
        if bounds is None:
            return atom
        if bounds[1] is not None and bounds[1] < bounds[0]:
            raise self.fail("numbers out of order in quantifier")
        if self.peek() == "?":  # lazy: same language
            self.pos += 1
        return repeat(atom, bounds[0], bounds[1])

    def atom(self) -> Expr | _Anchor:
        c = self.peek()
        if c in ("^", "$"):
            self.pos += 1
            return _Anchor(c)
        if c == ".":
            self.pos += 1
            return chars(complement(_normal(list(_LINE_TERMINATORS))))
        if c == "(":
            return self.group()
        if c == "[":
            return chars(self.char_class())
        if c == "\\":
            return self.atom_escape()
        if c in ("*", "+", "?"):
            raise self.fail("nothing to repeat")
        if c == "{" and self._quantifier_ahead():
            raise self.fail("nothing to repeat")
        if c in (")", "]", "}") and c == ")":
            raise self.fail("unmatched ')'")
        cp = ord(c)
        self.pos += 1
        return chars([(cp, cp)])

    def group(self) -> Expr:
        self.pos += 1
        if self.peek() == "?":
            nxt = self.peek(1)
            if nxt == ":":
                self.pos += 2
            elif nxt == "<" and self.peek(2) not in ("=", "!"):
                end = self.src.find(">", self.pos)
                if end < 0:
                    raise self.fail("unterminated group name")
                self.pos = end + 1
            else:
                raise self.fail("lookaround assertions are not supported")
        branches = self.disjunction()
        if self.peek() != ")":
            raise self.fail("missing ')'")
        self.pos += 1
        return alt(*(_plain(b, self) for b in branches))

    def _code_escape(self) -> int | None:
        """\\xHH, \\uHHHH (with surrogate pairs), \\u{...}; None when not one of those."""
        c = self.peek()
        hexdigits = "0123456789abcdefABCDEF"
        if c == "x" and all(ch and ch in hexdigits for ch in (self.peek(1), self.peek(2))):
            self.pos += 3
            return int(self.src[self.pos - 2 : self.pos], 16)
        if c == "u" and self.peek(1) == "{":
            end = self.src.find("}", self.pos)
            digits = self.src[self.pos + 2 : end] if end > 0 else ""
            if digits and all(ch in hexdigits for ch in digits) and int(digits, 16) <= 0x10FFFF:
                self.pos = end + 1
                return int(digits, 16)
            raise self.fail("malformed \\u{...} escape")
        if c == "u" and all(ch and ch in hexdigits for ch in self.src[self.pos + 1 : self.pos + 5]):
            if len(self.src) < self.pos + 5:
                return None
            cp = int(self.src[self.pos + 1 : self.pos + 5], 16)
            self.pos += 5
            tail = self.src[self.pos : self.pos + 6]
            if 0xD800 <= cp <= 0xDBFF and len(tail) == 6 and tail[:2] == "\\u":
                try:
                    low = int(tail[2:], 16)
                except ValueError:
                    return cp
                if 0xDC00 <= low <= 0xDFFF:
                    self.pos += 6
                    return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
            return cp
        return None

    def _class_escape(self) -> tuple[tuple[int, int], ...] | None:
        c = self.peek()
        table = {"d": _DIGIT, "w": _WORD, "s": ECMA_SPACE}
        if c.lower() in table:
            self.pos += 1
            base = _normal(list(table[c.lower()]))
            return complement(base) if c.isupper() else base
        if c in ("p", "P"):
            raise self.fail("Unicode property escapes are not supported")
        return None

    def _single_char_escape(self, in_class: bool) -> int:
        c = self.peek()
        if c == "":
            raise self.fail("trailing backslash")
        if c == "b" and in_class:
            self.pos += 1
            return 0x08
        if c in _SINGLE_ESCAPES and not (c == "0" and self.peek(1).isdigit()):
            self.pos += 1
            return _SINGLE_ESCAPES[c]
        if c == "c" and self.peek(1).isalpha():
            self.pos += 2
            return ord(self.peek(-1)) % 32
        code = self._code_escape()
        if code is not None:
            return code
        if c.isdigit():
            raise self.fail("backreferences are not supported")
        if c.isalnum() and c not in ("x", "u", "c"):
            raise self.fail(f"unsupported escape \\{c}")
        self.pos += 1
        return ord(c)

    def atom_escape(self) -> Expr:
        self.pos += 1
        c = self.peek()
        if c in ("b", "B"):
            raise self.fail("word boundaries are not supported")
        if c == "k":
            raise self.fail("named backreferences are not supported")
        ranges = self._class_escape()
        if ranges is not None:
            return chars(ranges)
        cp = self._single_char_escape(in_class=False)
        return chars([(cp, cp)])

    def char_class(self) -> tuple[tuple[int, int], ...]:
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        ranges: list[tuple[int, int]] = []
        while True:
            c = self.peek()
            if c == "":
                raise self.fail("unterminated character class")
            if c == "]":
                self.pos += 1
                break
            first = self._class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                second = self._class_atom()
                if isinstance(first, int) and isinstance(second, int):
                    if second < first:
                        raise self.fail("range out of order in character class")
                    ranges.append((first, second))
                    continue
                # Annex B: a class escape next to '-' makes the '-' literal.
                ranges.append((0x2D, 0x2D))
                for part in (first, second):
                    ranges.extend([(part, part)] if isinstance(part, int) else part)
                continue
            ranges.extend([(first, first)] if isinstance(first, int) else first)
        normal = _normal(ranges)
        return complement(normal) if negated else normal

    def _class_atom(self) -> int | tuple[tuple[int, int], ...]:
        c = self.peek()
        if c != "\\":
            self.pos += 1
            return ord(c)
        self.pos += 1
        ranges = self._class_escape()
        if ranges is not None:
            return ranges
        if self.peek() == "-":
            self.pos += 1
            return 0x2D
        return self._single_char_escape(in_class=True)


def _plain(items: list[Expr | _Anchor], parser: _Parser) -> Expr:
    if any(isinstance(i, _Anchor) for i in items):
        raise parser.fail("anchors are supported only at the ends of the pattern")
    return seq(*(i for i in items if not isinstance(i, _Anchor)))


def parse_pattern(source: str) -> list[tuple[bool, Expr, bool]]:
    """Parse ``source``; one ``(anchored_start, body, anchored_end)`` per top-level branch."""
    parser = _Parser(source)
    branches = parser.disjunction()
    if parser.pos != len(source):
        raise parser.fail("unmatched ')'")
    out: list[tuple[bool, Expr, bool]] = []
    for items in branches:
        start = end = False
        # Repeated edge anchors (`^^a$$`) mean the same as single ones.
        while items and isinstance(items[0], _Anchor) and items[0].kind == "^":
            items, start = items[1:], True
        while items and isinstance(items[-1], _Anchor) and items[-1].kind == "$":
            items, end = items[:-1], True
        out.append((start, _plain(items, parser), end))
    return out


def search_ir(source: str) -> Expr:
    """The set of strings in which ``source`` finds a match, as IR over decoded characters."""
    anywhere = repeat(ANY_CHAR, 0, None)
    branches = []
    for start, body, end in parse_pattern(source):
        items: list[Expr] = list(body.items) if isinstance(body, Seq) else [body]
        # Next to an unanchored end, `x{m,n}` finds a match exactly where `x{m}` does, and
        # the shorter form keeps engines' regex derivatives (under complement) small.
        for index, anchored in ((0, start), (-1, end)):
            item = items[index] if items else None
            if not anchored and isinstance(item, Repeat) and item.max != item.min:
                items[index] = repeat(item.item, item.min, item.min)
        branches.append(seq(*(() if start else (anywhere,)), *items, *(() if end else (anywhere,))))
    result = alt(*branches)
    return result if branches else NOTHING
