"""IR to xgrammar's EBNF: GBNF, reshaped for xgrammar's matcher.

xgrammar reads GBNF, so :func:`~.emit_gbnf.emit_gbnf` already gives a grammar it accepts, but
one it masks slowly: in xgrammar 0.2.9 a repetition of a parenthesised alternative (the
characters of a JSON string: a class or one of the escapes) costs 150-300 ms per token inside
the string, and an alternative whose branches share a leading literal (``"\\u"``, ``"\\n"``,
...) tens of microseconds. This emitter rewrites the IR first, keeping the language exactly:

* ``x*`` and ``x+`` become right-recursive rules (``r ::= x r | ""``, an alternative ``x``
  distributed over the branches), the shape of xgrammar's own JSON grammar;
* every alternative inside a rule gets a rule of its own (xgrammar masks a parenthesised
  alternative in a recursive rule at hundreds of milliseconds a token);
* branches of an alternative that start with the same character are left-factored
  (``"\\n" | "\\t"`` becomes ``"\\" ("n" | "t")``);
* tokens are inlined (GBNF has no lexer), so their repetitions get rules too;
* a repetition's lower bound is xgrammar's ``{n}`` (a counter in its matcher), never ``n``
  copies, so no grammar is more than a constant factor larger than its schema.

benchmarks/bench_xgrammar_tag.py measures the result.
"""

from __future__ import annotations

from .emit_gbnf import emit_gbnf
from .ir import Alt, Expr, Grammar, Lit, Ref, Repeat, Seq, Token

__all__ = ["emit_xgrammar"]

#: xgrammar's lookahead assertion for a rule that ends a JSON string: in a JSON text a string
#: is followed by whitespace and then `,` `}` `]` or `:`, or by nothing (the text's end, or a
#: special token). xgrammar does not enforce it when matching; it uses it to rule out, when it
#: precomputes masks, the tokens that run past the closing quote into anything else (as its
#: own JSON grammar does): 46 -> about 25-40 us a token inside a string.
_STRING_END = "(= [ \\n\\r\\t]* [,}\\]:])"

#: Bounded repetitions before a literal up to this many items are unrolled into a chain of
#: rules (see ``_Reshaper.loop_until``); longer ones keep xgrammar's ``{m,n}``.
_UNROLL_LIMIT = 32


def _head(expr: Expr) -> str | None:
    """The first character every string of ``expr`` starts with, when a literal fixes it."""
    if isinstance(expr, Lit) and expr.text:
        return expr.text[0]
    if isinstance(expr, Seq) and expr.items:
        return _head(expr.items[0])
    return None


def _tail(expr: Expr) -> Expr:
    """``expr`` without its first character (``_head`` is not None)."""
    if isinstance(expr, Lit):
        return Lit(expr.text[1:]) if len(expr.text) > 1 else Seq(())
    assert isinstance(expr, Seq)
    first = _tail(expr.items[0])
    rest = expr.items[1:]
    return Seq((first, *rest)) if first != Seq(()) else (Seq(rest) if len(rest) != 1 else rest[0])


class _Reshaper:
    def __init__(self, grammar: Grammar, prefix: str) -> None:
        self.rules = dict(grammar.rules)
        self.prefix = prefix
        self.named: dict[Expr, str] = {}
        #: Rules that end a JSON string at its closing quote (see ``_STRING_END``).
        self.string_ends: set[str] = set()

    def rule(self, body: Expr) -> Ref:
        """A rule holding ``body`` (one per distinct body)."""
        name = self.named.get(body)
        if name is None:
            name = f"{self.prefix}{len(self.named)}"
            self.named[body] = name
            self.rules[name] = body
        return Ref(name)

    def nested(self, expr: Expr) -> Expr:
        # xgrammar masks a parenthesised alternative inside a rule slowly (hundreds of
        # milliseconds per token inside a recursive rule); a rule of its own is fast.
        return self.rule(expr) if isinstance(expr, Alt) else expr

    @staticmethod
    def at_least(item: Expr, count: int) -> list[Expr]:
        """``count`` items before a loop: the item itself for one, else xgrammar's ``{n}``,
        which it matches as a counter (``minLength: 100000000`` is a few bytes, not that many
        copies: the grammar stays within a constant factor of the schema)."""
        if count <= 1:
            return [item] * count
        return [Repeat(item, count, count)]

    def loop(self, item: Expr) -> Ref:
        """The rule ``r ::= item r | ""``, an alternative ``item`` distributed over it
        (``r ::= [a-z] r | "\\" e r | ""``: xgrammar is fast on a class repeated so)."""
        return self.loop_until(item, 0, None, Seq(()))

    def loop_until(self, item: Expr, low: int, high: int | None, end: Lit | Seq) -> Ref:
        """The rule for ``item{low,high} end``, the literal ``end`` inside the recursion:
        ``r ::= end | item r`` (unbounded) or a chain ``r0 ::= item r1 ... rk ::= end | ...``
        (bounded). xgrammar then knows where the repetition may stop (a JSON string's closing
        quote) and has far fewer tokens to check at run time: 46 instead of 80 microseconds a
        token inside a string (before the lookahead hint of ``_STRING_END``), and 11
        microseconds instead of 7 ms for a three-character string."""
        key = Seq((Repeat(item, low, high), end))
        name = self.named.get(key)
        if name is not None:
            return Ref(name)
        branches = item.items if isinstance(item, Alt) else (item,)
        closing_quote = end == Lit('"')
        if high is None:
            name = self.named[key] = f"{self.prefix}{len(self.named)}"
            self.rules[name] = Alt((*(Seq((b, Ref(name))) for b in branches), end))
            if closing_quote:
                self.string_ends.add(name)
            return Ref(name)
        head: Expr = end  # the last link: `end` only
        link = Ref("")
        for count in range(high, -1, -1):
            links: list[Expr] = [end] if count >= low else []
            if count < high:
                links += [Seq((b, head)) for b in branches]
            head = link = self.rule(links[0] if len(links) == 1 else Alt(tuple(links)))
            if closing_quote:
                self.string_ends.add(link.name)
        self.named[key] = link.name
        return link

    def sequence(self, items: tuple[Expr, ...]) -> Expr:
        """A sequence, a repetition followed by a literal folded as :meth:`loop_until`."""
        out: list[Expr] = []
        index = 0
        while index < len(items):
            item = items[index]
            after = items[index + 1] if index + 1 < len(items) else None
            if (
                isinstance(item, Repeat)
                and isinstance(after, Lit)
                and (item.max is None or item.max <= _UNROLL_LIMIT)
            ):
                body = self.expr(item.item, top=True)
                low = item.min if item.max is not None else 0
                if item.max is None:
                    out += self.at_least(self.nested(body), item.min)
                out.append(self.loop_until(body, low, item.max, after))
                index += 2
                continue
            out.append(self.expr(item))
            index += 1
        return Seq(tuple(out))

    def expr(self, expr: Expr, *, top: bool = False) -> Expr:
        if isinstance(expr, Token):
            return self.expr(expr.item, top=top)
        if isinstance(expr, Seq):
            return self.sequence(expr.items)
        if isinstance(expr, Alt):
            factored = self.factor(tuple(self.expr(item) for item in expr.items))
            return factored if top else self.nested(factored)
        if isinstance(expr, Repeat):
            if expr.max is None:
                item = self.expr(expr.item, top=True)
                return Seq((*self.at_least(self.nested(item), expr.min), self.loop(item)))
            item = self.expr(expr.item)
            if isinstance(item, Seq) and len(item.items) > 1:
                item = self.rule(item)
            return Repeat(item, expr.min, expr.max)
        return expr  # Chars, Lit, Ref; Both, which emit_gbnf refuses by keyword

    def factor(self, items: tuple[Expr, ...]) -> Expr:
        groups: dict[str | None, list[Expr]] = {}
        for item in items:
            groups.setdefault(_head(item), []).append(item)
        out: list[Expr] = []
        for head, members in groups.items():
            if head is None or len(members) == 1:
                out += members
            else:
                tails = self.factor(tuple(_tail(m) for m in members))
                out.append(Seq((Lit(head), self.nested(tails))))
        return out[0] if len(out) == 1 else Alt(tuple(out))


def emit_xgrammar(grammar: Grammar, prefix: str = "xr") -> str:
    """xgrammar EBNF text with ``root ::= start`` (rule names for loops start with ``prefix``)."""
    reshaper = _Reshaper(grammar, prefix)
    for name, body in grammar.rules.items():
        reshaper.rules[name] = reshaper.expr(body, top=True)
    text = emit_gbnf(Grammar(reshaper.rules, grammar.start))
    lines = []
    for line in text.splitlines():
        rule, _, rhs = line.partition(" ::= ")
        lines.append(f"{rule} ::= ({rhs}) {_STRING_END}" if rule in reshaper.string_ends else line)
    return "\n".join(lines) + "\n"
