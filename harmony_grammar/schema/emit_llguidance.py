"""IR to llguidance's Lark dialect (``%llguidance {}`` header, Rust regex terminals)."""

from __future__ import annotations

import json

from .emit_common import TokenNames, reachable_rules, rule_depth
from .errors import UnsupportedSchemaError
from .grammar_gate import MAX_GRAMMAR_RULES, MAX_RULE_DEPTH
from .ir import EMPTY, Alt, Both, Chars, Expr, Grammar, Lit, Ref, Repeat, Seq, Token, has_both
from .render_regex import render_regex

__all__ = ["emit_llguidance", "llguidance_rules"]


def _rule_expr(
    expr: Expr, tokens: TokenNames, nested: bool = False, names: dict[str, str] | None = None
) -> str:
    if isinstance(expr, Lit):
        return json.dumps(expr.text)  # llguidance string literals are JSON strings
    if isinstance(expr, (Token, Chars)):
        return tokens(expr if isinstance(expr, Token) else Token(expr))
    if isinstance(expr, Ref):
        return expr.name if names is None else names[expr.name]
    if isinstance(expr, Seq):
        if not expr.items:
            return '""'
        text = " ".join(_rule_expr(i, tokens, True, names) for i in expr.items)
        return f"({text})" if nested and len(expr.items) > 1 else text
    if isinstance(expr, Alt):
        if all(isinstance(i, Token) and not has_both(i.item) for i in expr.items):
            # A choice of tokens (an enum's strings, anyOf's numbers) is one terminal: the
            # same strings, and llguidance builds one lexeme instead of one per value.
            return tokens(Token(Alt(tuple(i.item for i in expr.items))))  # type: ignore[union-attr]
        text = " | ".join(_rule_expr(i, tokens, False, names) for i in expr.items)
        return f"({text})" if nested else text
    if isinstance(expr, Repeat):
        inner = _rule_expr(expr.item, tokens, True, names)
        if (expr.min, expr.max) == (0, 1):
            return inner + "?"
        if expr.max is None and expr.min <= 1:
            return inner + ("*" if expr.min == 0 else "+")
        high = "" if expr.max is None else expr.max
        return f"{inner}{{{expr.min},{high}}}"
    raise TypeError(expr)


def llguidance_rules(grammar: Grammar, prefix: str = "") -> list[str]:
    """The rule and terminal lines, names prefixed (to embed several grammars in one).

    A grammar whose rules chain deeper than :data:`~.grammar_gate.MAX_RULE_DEPTH` is
    refused: llguidance builds its parser recursively and crashes the process (a
    segmentation fault, measured with llguidance 1.x at about 2,500 chained rules: an object
    with 3,000 required properties, or a rule chain of 3,000 written by hand). So is one of
    more than :data:`~.grammar_gate.MAX_GRAMMAR_RULES` rules. The limits are the gate's, the
    same for a client's grammar text (:mod:`.grammar_gate`).
    """
    depth = rule_depth(grammar)
    if depth > MAX_RULE_DEPTH:
        raise UnsupportedSchemaError(
            "",
            "",
            f"its grammar chains {depth} rules deep; llguidance crashes past about 2,500, so "
            f"the llguidance target's limit is {MAX_RULE_DEPTH} (an object's declared "
            "properties each add one)",
        )
    if len(grammar.rules) > MAX_GRAMMAR_RULES:
        raise UnsupportedSchemaError(
            "",
            "",
            f"its grammar has {len(grammar.rules)} rules; the llguidance target's limit is "
            f"{MAX_GRAMMAR_RULES}",
        )
    tokens = TokenNames(f"{prefix.upper()}T")
    # Rules with the same body are one rule (the any-value member, say, recurs per object):
    # references to a later one print the first one's name, and it is not printed.
    first: dict[Expr, str] = {}
    names: dict[str, str] = {}
    order = reachable_rules(grammar)
    for name in order:
        names[name] = f"{prefix}{first.setdefault(grammar.rules[name], name)}"
    lines = []
    for name in order:
        if names[name] != f"{prefix}{name}":
            continue
        body = grammar.rules[name]
        text = _rule_expr(body, tokens, False, names) if body != EMPTY else '""'
        lines.append(f"{names[name]}: {text}")
    lexemes = _Lexemes(list(tokens.names), f"{prefix.upper()}S")
    for body, tname in tokens.names.items():
        lines.append(f"{tname}: {lexemes.body(body)}")
    lines.extend(f"{name}: {text}" for name, text in lexemes.shared.values())
    return lines


#: A terminal whose regexes come to fewer characters is written as before, one regex.
_SPLIT_AT = 2000
#: In a longer one, a part of at least this many characters met more than once (in it or in
#: another long terminal) is written once, as a named terminal (see :class:`_Lexemes`).
_SHARE_AT = 100
#: Parentheses a terminal's text may nest before a part is named (llguidance allows ~25).
_MAX_NESTING = 8


class _Lexemes:
    """Terminal bodies, with large repeated parts written once as named terminals.

    A regex cannot refer to another, so a part a token uses twice (the spellings of "any
    character" in each branch of a names-not-declared trie, a surrogate-pair escape) was
    printed in full each time: single terminals reached 80k characters, and llguidance's
    parse of the text cost more than compiling the schema. llguidance terminals may refer
    to other terminals (``T3: /"/ S0* /"/``), inlined by its regex builder, which shares
    equal parts itself: the language and the lexer are the same, only the text shrinks.
    """

    def __init__(self, bodies: list[Expr], prefix: str) -> None:
        self.prefix = prefix
        self.repeated = _repeated([b for b in bodies if _length(b) >= _SPLIT_AT])
        #: expression -> (name, definition), in order of first use
        self.shared: dict[Expr, tuple[str, str]] = {}
        self._inside: dict[int, bool] = {}  # id -> whether a shared part lies within

    def body(self, expr: Expr, split: bool | None = None) -> str:
        """A terminal's body: regexes, names of shared parts, llguidance's ``&``/``~``."""
        if split is None:
            split = bool(self.repeated) and _length(expr) >= _SPLIT_AT
        if isinstance(expr, Both):
            parts = [_atom(self.body(i, split)) for i in expr.items]
            parts += [f"~{_atom(self.body(e, split))}" for e in expr.excluded]
            return f"({' & '.join(parts)})"
        if isinstance(expr, Seq) and has_both(expr):
            quoted = _quoted_both(expr)
            if quoted is not None:
                # The quotes inside each operand: "A" & ~"B" is "(A & ~B)" (a string's
                # content holds no bare quote), and llguidance masks the outer form at its
                # JSON-string speed; with the quotes outside, each token inside a name not
                # declared cost about 2 ms (an open object's keys, 60x llguidance's %json).
                items, excluded = quoted
                parts = [_atom(self.body(Seq((_QUOTE, i, _QUOTE)), split)) for i in items]
                parts += [f"~{_atom(self.body(Seq((_QUOTE, e, _QUOTE)), split))}" for e in excluded]
                return f"({' & '.join(parts)})"
            return f"({' '.join(self.body(i, split) for i in expr.items)})"
        if has_both(expr):
            raise TypeError(f"an intersection must be a string token's content: {expr!r}")
        return self._term(expr) if split else _regex(expr)

    def _term(self, expr: Expr, depth: int = 0) -> str:
        # llguidance's grammar reader refuses deep parentheses (about 25): a part spelled at
        # depth gets a name too, which starts it afresh at depth 0.
        if expr in self.repeated or (depth > _MAX_NESTING and self._holds_shared(expr)):
            known = self.shared.get(expr)
            if known is None:
                name = f"{self.prefix}{len(self.shared)}"
                self.shared[expr] = (name, "")  # the name is taken before parts are named
                self.shared[expr] = (name, self._spelled(expr, 0))
                return name
            return known[0]
        return self._spelled(expr, depth)

    def _spelled(self, expr: Expr, depth: int) -> str:
        """``expr`` as one regex when no shared part lies within, else as terminal syntax."""
        if not self._holds_shared(expr):
            return _regex(expr)
        if isinstance(expr, Token):
            return self._term(expr.item, depth)
        if isinstance(expr, Seq):
            return " ".join(self._runs(expr.items, Seq, depth))
        if isinstance(expr, Alt):
            return f"({' | '.join(self._runs(expr.items, Alt, depth + 1))})"
        if isinstance(expr, Repeat):
            inner = f"({self._term(expr.item, depth + 1)})"
            if (expr.min, expr.max) == (0, 1):
                return inner + "?"
            if expr.max is None and expr.min <= 1:
                return inner + ("*" if expr.min == 0 else "+")
            return f"{inner}{{{expr.min},{'' if expr.max is None else expr.max}}}"
        raise TypeError(f"not a regular expression: {expr!r}")

    def _runs(self, items: tuple[Expr, ...], kind: type[Seq | Alt], depth: int) -> list[str]:
        """``items`` spelled one by one, except that neighbours with no shared part in them
        stay together as one regex (fewer, longer regexes for llguidance to read)."""
        out: list[str] = []
        plain: list[Expr] = []
        for item in items:
            if self._named_or_holds(item):
                if plain:
                    out.append(_regex(plain[0] if len(plain) == 1 else kind(tuple(plain))))
                    plain = []
                out.append(self._term(item, depth))
            else:
                plain.append(item)
        if plain:
            out.append(_regex(plain[0] if len(plain) == 1 else kind(tuple(plain))))
        return out

    def _named_or_holds(self, expr: Expr) -> bool:
        return isinstance(expr, _COMPOUND) and (expr in self.repeated or self._holds_shared(expr))

    def _holds_shared(self, expr: Expr) -> bool:
        known = self._inside.get(id(expr))
        if known is None:
            if isinstance(expr, (Seq, Alt)):
                items: tuple[Expr, ...] = expr.items
            elif isinstance(expr, (Repeat, Token)):
                items = (expr.item,)
            else:
                return False
            # Shorter than any shared part: none lies within.
            known = len(render_regex(expr, "rust")) >= _SHARE_AT and any(
                self._named_or_holds(i) for i in items
            )
            self._inside[id(expr)] = known
        return known


#: The expressions that may hold (or be) a shared part.
_COMPOUND = (Seq, Alt, Repeat, Token)


def _repeated(bodies: list[Expr]) -> set[Expr]:
    """The parts of ``bodies`` met more than once whose regex is long enough for a name."""
    # A Both is only ever a string's whole content (``"`` Both ``"``): start below it.
    stack: list[Expr] = []
    for body in bodies:
        for part in body.items if isinstance(body, Seq) and has_both(body) else (body,):
            stack.extend((*part.items, *part.excluded) if isinstance(part, Both) else (part,))
    seen: set[Expr] = set()
    again: set[Expr] = set()
    while stack:
        node = stack.pop()
        if isinstance(node, Token):
            node = node.item
        if not isinstance(node, (Seq, Alt, Repeat)) or len(render_regex(node, "rust")) < _SHARE_AT:
            continue  # too short to name, and so are its parts
        if node in seen:
            again.add(node)
            continue
        seen.add(node)
        if isinstance(node, Repeat):
            stack.append(node.item)
        else:
            stack.extend(node.items)
    return again


_QUOTE = Lit('"')


def _quoted_both(expr: Seq) -> tuple[tuple[Expr, ...], tuple[Expr, ...]] | None:
    """``(items, excluded)`` when ``expr`` is ``"`` Both ``"`` with plain parts, else None."""
    if len(expr.items) != 3 or expr.items[0] != _QUOTE or expr.items[2] != _QUOTE:
        return None
    middle = expr.items[1]
    if not isinstance(middle, Both):
        return None
    if any(has_both(p) for p in (*middle.items, *middle.excluded)):
        return None
    return middle.items, middle.excluded


def _length(expr: Expr) -> int:
    """The length of a token body's regex text (its parts', around an intersection)."""
    if isinstance(expr, Both):
        return sum(_length(i) for i in (*expr.items, *expr.excluded))
    if isinstance(expr, Seq) and has_both(expr):
        return sum(_length(i) for i in expr.items)
    return len(render_regex(expr, "rust"))  # memoised: printed from the same cache


def _atom(text: str) -> str:
    """``text`` made one operand of ``&`` or ``~`` (a spelled-out part is a sequence)."""
    return text if text.startswith("/") and text.endswith("/") and " " not in text else f"({text})"


def _regex(expr: Expr) -> str:
    return f"/{render_regex(expr, 'rust').replace('/', chr(92) + '/')}/"


def emit_llguidance(grammar: Grammar) -> str:
    """A complete llguidance grammar whose start rule is ``start``."""
    return "%llguidance {}\n\n" + "\n".join(llguidance_rules(grammar)) + "\n"
