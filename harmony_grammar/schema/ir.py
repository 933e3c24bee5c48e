"""The one intermediate representation every schema compiles to and every emitter prints.

Theory of operation: a grammar is a set of named rules whose bodies are expressions over
characters. ``Token`` marks a lexical unit (a JSON string, a number, a key): everything inside a
token is regular (no ``Ref``) and carries no whitespace, so a target may print it as one
terminal regex (Lark, llguidance) or inline (GBNF). Outside tokens, expressions are structural
(literal punctuation, references, optional parts). ``NOTHING`` is the empty language; the
smart constructors below propagate it so a contradiction deep in a schema shrinks the grammar
instead of producing a rule that can never match.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias

__all__ = [
    "EMPTY",
    "MAX_CODE_POINT",
    "NOTHING",
    "Alt",
    "Both",
    "Chars",
    "Expr",
    "Grammar",
    "Lit",
    "Ref",
    "Repeat",
    "Seq",
    "Token",
    "alt",
    "both",
    "chars",
    "has_both",
    "is_nothing",
    "opt",
    "prune",
    "repeat",
    "seq",
]

MAX_CODE_POINT = 0x10FFFF


class _Hashed:
    """Base of the compound nodes: a slot for their hash, computed once (:func:`_memo_hash`).

    The slot is not a dataclass field, so it is neither compared nor printed nor pickled: a
    node read back in another process (another string-hash seed) hashes itself afresh.
    """

    __slots__ = ("_hash",)


def _memo_hash(node: Any) -> int:
    """A compound node's hash, computed once and kept in its ``_hash`` slot.

    The generated dataclass hash re-hashes the whole subtree on every call; emitters and the
    compiler key dicts and caches on expressions, and string tokens are thousands of nodes
    deep, so that re-hashing was most of the compile time. Nodes are immutable: the hash of
    the fields that take part in equality never changes.
    """
    try:
        cached: int = node._hash
    except AttributeError:
        cached = hash((type(node), *(getattr(node, name) for name in node._HASHED)))
        object.__setattr__(node, "_hash", cached)
    return cached


@dataclass(frozen=True, slots=True)
class Chars(_Hashed):
    """One character from a set of inclusive code point ranges (sorted, disjoint)."""

    ranges: tuple[tuple[int, int], ...]
    _HASHED: ClassVar[tuple[str, ...]] = ("ranges",)
    __hash__ = _memo_hash


@dataclass(frozen=True, slots=True)
class Lit:
    """Exact text."""

    text: str


@dataclass(frozen=True, slots=True)
class Seq(_Hashed):
    """Concatenation; ``Seq(())`` is the empty string."""

    items: tuple[Expr, ...]
    _HASHED: ClassVar[tuple[str, ...]] = ("items",)
    __hash__ = _memo_hash


@dataclass(frozen=True, slots=True)
class Alt(_Hashed):
    """Union; ``Alt(())`` is the empty language."""

    items: tuple[Expr, ...]
    _HASHED: ClassVar[tuple[str, ...]] = ("items",)
    __hash__ = _memo_hash


@dataclass(frozen=True, slots=True)
class Repeat(_Hashed):
    """``item`` repeated ``min`` to ``max`` times (``max=None``: unbounded)."""

    item: Expr
    min: int
    max: int | None
    _HASHED: ClassVar[tuple[str, ...]] = ("item", "min", "max")
    __hash__ = _memo_hash


@dataclass(frozen=True, slots=True)
class Ref:
    """A reference to a named rule."""

    name: str


@dataclass(frozen=True, slots=True)
class Both(_Hashed):
    """The strings every one of ``items`` matches and none of ``excluded`` matches.

    Intersection and complement of regular languages, which llguidance's lexemes have (``&``,
    ``~``) and a Python regex can state with lookaheads. Only ever the whole content of a JSON
    string token, so it is always followed by the closing quote; the lookaheads rely on that.
    GBNF has neither, so its emitter refuses, naming ``keyword`` at ``pointer``.
    """

    items: tuple[Expr, ...]
    excluded: tuple[Expr, ...] = ()
    keyword: str = field(default="", compare=False)
    pointer: str = field(default="", compare=False)
    _HASHED: ClassVar[tuple[str, ...]] = ("items", "excluded")
    __hash__ = _memo_hash


@dataclass(frozen=True, slots=True)
class Token(_Hashed):
    """A lexical unit: ``item`` is regular (no ``Ref``) and contains no whitespace."""

    item: Expr
    _HASHED: ClassVar[tuple[str, ...]] = ("item",)
    __hash__ = _memo_hash


Expr: TypeAlias = Chars | Lit | Seq | Alt | Repeat | Ref | Token | Both

EMPTY: Expr = Seq(())
NOTHING: Expr = Alt(())


@dataclass
class Grammar:
    """Named rules; ``start`` names the start rule."""

    rules: dict[str, Expr] = field(default_factory=dict)
    start: str = "start"


def is_nothing(expr: Expr) -> bool:
    """True when ``expr`` is syntactically the empty language."""
    return isinstance(expr, Alt) and not expr.items


def chars(ranges: Iterable[tuple[int, int]]) -> Expr:
    """A normalised character set (merged ranges); the empty set is ``NOTHING``."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(r for r in ranges if r[0] <= r[1]):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return Chars(tuple(merged)) if merged else NOTHING


def seq(*items: Expr) -> Expr:
    """Concatenation, flattened; any ``NOTHING`` makes the whole ``NOTHING``."""
    out: list[Expr] = []
    for item in items:
        # The hottest constructor: exact type tests (no subclasses exist), cheapest first.
        if type(item) is Seq:
            out.extend(item.items)
        elif type(item) is Lit:
            last = out[-1] if out else None
            if type(last) is Lit:
                out[-1] = Lit(last.text + item.text)
            elif item.text:
                out.append(item)
        elif type(item) is Alt and not item.items:
            return NOTHING
        else:
            out.append(item)
    return out[0] if len(out) == 1 else Seq(tuple(out))


def alt(*items: Expr) -> Expr:
    """Union, flattened and de-duplicated; an empty-string branch becomes an optional."""
    unique: dict[Expr, None] = {}  # ordered, and linear: a list search was quadratic
    has_empty = False
    for item in items:
        parts = item.items if isinstance(item, Alt) else (item,)
        for part in parts:
            if part == EMPTY:
                has_empty = True
            else:
                unique[part] = None
    out = list(unique)
    if not out:
        return EMPTY if has_empty else NOTHING
    body: Expr = out[0] if len(out) == 1 else Alt(tuple(out))
    return opt(body) if has_empty else body


def both(
    items: Iterable[Expr], excluded: Iterable[Expr] = (), *, keyword: str, pointer: str
) -> Expr:
    """Intersection of ``items`` minus every ``excluded`` language, simplified (a nested
    intersection among ``items`` is flattened into this one)."""
    flat: list[Expr] = []
    negatives: list[Expr] = list(excluded)
    for item in items:
        if isinstance(item, Both):
            flat.extend(item.items)
            negatives.extend(item.excluded)
        else:
            flat.append(item)
    positive = tuple(dict.fromkeys(flat))
    negative = tuple(e for e in dict.fromkeys(negatives) if not is_nothing(e))
    if not positive or any(is_nothing(i) for i in positive):
        return NOTHING
    if len(positive) == 1 and not negative:
        return positive[0]
    return Both(positive, negative, keyword, pointer)


def has_both(expr: Expr) -> bool:
    """True when a token body holds a :class:`Both` (so it is not a plain regex).

    A ``Both`` is only ever a JSON string's whole content, ``"`` Both ``"``, so looking one
    level down is enough (and cheap: token bodies can be large). A ``Both`` anywhere else
    makes the regex renderers raise rather than print something wrong.
    """
    if isinstance(expr, Both):
        return True
    return isinstance(expr, Seq) and any(isinstance(i, Both) for i in expr.items)


def opt(item: Expr) -> Expr:
    """Zero or one ``item``."""
    if is_nothing(item) or item == EMPTY:
        return EMPTY
    return Repeat(item, 0, 1)


def repeat(item: Expr, lo: int, hi: int | None) -> Expr:
    """``item`` repeated ``lo..hi`` times, simplified."""
    if hi is not None and hi < lo:
        return NOTHING
    if hi == 0 or item == EMPTY:
        return EMPTY
    if is_nothing(item):
        return EMPTY if lo == 0 else NOTHING
    if lo == hi == 1:
        return item
    return Repeat(item, lo, hi)


def _refs(expr: Expr) -> set[str]:
    """The names of the rules ``expr`` refers to."""
    found: set[str] = set()
    seen: set[int] = set()  # expressions are shared (a DAG): visit each node once
    stack = [expr]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Ref):
            found.add(node.name)
        elif isinstance(node, (Seq, Alt)):
            stack.extend(node.items)
        elif isinstance(node, Repeat):
            stack.append(node.item)
        # A Token's body is regular (no Ref): not walked, and string tokens are large.
    return found


def prune(grammar: Grammar) -> set[str]:
    """Rewrite rules that can produce no string to ``NOTHING`` and return their names.

    A rule is productive when some branch reaches only literals and productive rules; found
    by fixpoint, so recursive rules with no base case (``a: "[" a "]"``) are caught too.
    """
    productive: set[str] = set()
    token_ok: dict[int, bool] = {}  # a Token holds no Ref: its answer never changes

    def ok(expr: Expr) -> bool:
        if isinstance(expr, Ref):
            return expr.name in productive
        if isinstance(expr, Seq):
            return all(ok(i) for i in expr.items)
        if isinstance(expr, Alt):
            return any(ok(i) for i in expr.items)
        if isinstance(expr, Repeat):
            return expr.min == 0 or ok(expr.item)
        if isinstance(expr, Token):
            known = token_ok.get(id(expr))
            if known is None:
                known = token_ok[id(expr)] = ok(expr.item)
            return known
        return True

    # Worklist fixpoint: a rule is looked at again only when a rule it uses became
    # productive (a sweep over every rule until nothing changed was quadratic in depth).
    users: dict[str, list[str]] = {}
    for name, body in grammar.rules.items():
        for used in _refs(body):
            users.setdefault(used, []).append(name)
    pending = list(grammar.rules)
    while pending:
        name = pending.pop()
        if name not in productive and ok(grammar.rules[name]):
            productive.add(name)
            pending.extend(users.get(name, ()))
    dead = set(grammar.rules) - productive
    if not dead:
        return dead

    def strip(expr: Expr) -> Expr:
        if isinstance(expr, Ref):
            return NOTHING if expr.name in dead else expr
        if isinstance(expr, Seq):
            return seq(*(strip(i) for i in expr.items))
        if isinstance(expr, Alt):
            return alt(*(strip(i) for i in expr.items))
        if isinstance(expr, Repeat):
            return repeat(strip(expr.item), expr.min, expr.max)
        return expr

    for name in list(grammar.rules):
        grammar.rules[name] = NOTHING if name in dead else strip(grammar.rules[name])
    return dead
