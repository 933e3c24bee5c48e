"""Objects: declared properties in declared order, additional and pattern-named members.

``ObjectBuilder`` turns one object schema into a state machine of rules (see its docstring);
``patternProperties`` split the names that are not declared into regions, each an
intersection of pattern languages and complements (:class:`~.ir.Both`).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from typing import Any

from .context import CompilerContext, Schema
from .ecma_search import ecma_search
from .errors import UnsupportedSchemaError
from .ir import EMPTY, NOTHING, Alt, Expr, Lit, Ref, Repeat, Seq, alt, both, is_nothing, repeat, seq
from .merge import is_true_schema
from .order import declared_order
from .regex import RegexError, parse_pattern, search_ir
from .strings import string_not_in

__all__ = ["ObjectBuilder"]


class ObjectBuilder:
    """The members of one object schema, as a state machine of rules.

    Declared properties come in the object's declared order, each present or absent; the
    state records how many members were written (for min/maxProperties), which names are still owed
    (``required``, ``dependentRequired``) and which are now forbidden (a name whose
    dependency was skipped). Additional members may come anywhere, in any order.

    A state's ``owed`` holds only the names a dependency made owed: a required name at or
    after the state's position is always owed (the order is fixed, so it cannot have been
    written yet) and is never stored. Storing it made each of n states hold a set of up to n
    names: memory quadratic in the required properties.
    """

    def __init__(self, compiler: CompilerContext, s: Schema, pointer: str) -> None:
        self.c = compiler
        self.pointer = pointer
        props: dict[str, Any] = dict(s.get("properties", {}))
        addl = s.get("additionalProperties", not compiler.closed_objects)
        self.patterns: dict[str, Any] = dict(s.get("patternProperties", {}))
        self.required = set(s.get("required", []))
        self.deps: dict[str, set[str]] = {
            k: set(v) for k, v in s.get("dependentRequired", {}).items()
        }
        mentioned = self.required | set(self.deps) | set().union(*self.deps.values())
        # A named property's value obeys its own schema and every pattern that matches its
        # name; additionalProperties only covers names that nothing else matches.
        schemas = {name: [props[name]] for name in props}
        schemas.update({name: [] for name in mentioned - props.keys()})
        #: The patterns each named property matches (searched once, used twice).
        # A pattern under `true`, beside `additionalProperties: true`, constrains nothing:
        # whether it matches does not matter (so one this package cannot read is no reason
        # to refuse the schema).
        idle = is_true_schema(addl) and all(is_true_schema(v) for v in self.patterns.values())
        searched = {} if idle else self.patterns
        self.matches = {
            name: frozenset(p for p in searched if _search(p, name, pointer)) for name in schemas
        }
        for name, parts in schemas.items():
            parts.extend(self.patterns[p] for p in self.matches[name])
            if not parts:
                parts.append(addl)
        # This object's own declaration decides the order (schemas has exactly these names).
        self.order = declared_order({**s, "properties": props})
        self.position = {name: i for i, name in enumerate(self.order)}
        # A value appears in every state at its position: one rule each, not copies.
        self.values = {
            n: compiler.shared(
                compiler.value(_all_of(schemas[n]), f"{pointer}/properties/{_escape(n)}")
            )
            for n in self.order
        }
        self.keys = {n: compiler.literal_string(n) for n in self.order}
        self.extra = compiler.shared(self.extra_member(frozenset(schemas), addl))
        self.min = math.ceil(s.get("minProperties", 0))
        self.max = None if "maxProperties" not in s else math.floor(s["maxProperties"])
        counting = self.min > 0 or self.max is not None
        self.cap = (self.max + 1 if self.max is not None else self.min) if counting else 0
        self.states: dict[tuple[Any, ...], Ref] = {}
        self.pending: list[tuple[Ref, tuple[Any, ...]]] = []

    def extra_member(self, named: frozenset[str], addl: Any) -> Expr:
        """A member whose name is none of ``named``.

        Without patternProperties every such name obeys additionalProperties. With them, the
        names split into regions by which patterns they match: a region's values obey all of
        its patterns' schemas, and the region matching none obeys additionalProperties. Each
        region is an intersection of patterns and complements of the others (a :class:`Both`).
        """
        patterns = self.patterns
        if all(is_true_schema(s) for s in patterns.values()) and is_true_schema(addl):
            patterns = {}  # any name, any value, whichever patterns match
        if not patterns:
            return self._member(lambda: string_not_in(named, self.c.complements), addl)
        if len(patterns) > _MAX_PATTERNS:
            raise UnsupportedSchemaError(
                "patternProperties", self.pointer, f"more than {_MAX_PATTERNS} patterns"
            )
        try:
            languages = {p: search_ir(p) for p in patterns}
        except RegexError as exc:
            raise UnsupportedSchemaError("patternProperties", self.pointer, str(exc)) from None
        costly = [p for p in patterns if _costly_to_complement(p)]
        members = []
        for chosen in itertools.product((True, False), repeat=len(patterns)):
            inside = [p for p, keep in zip(patterns, chosen, strict=True) if keep]
            outside = [p for p, keep in zip(patterns, chosen, strict=True) if not keep]
            if any(p in _UNIVERSAL_PATTERNS for p in outside):
                continue  # no name escapes a pattern that matches every string
            # Only the named properties that would fall in this region need excluding.
            clash = frozenset(name for name in named if self.matches[name] == frozenset(inside))
            positive = [languages[p] for p in inside if p not in _UNIVERSAL_PATTERNS]
            if clash or not positive:
                positive.append(string_not_in(clash, self.c.complements))
            excluded = [languages[p] for p in outside]
            schema = _all_of([patterns[p] for p in inside]) if inside else addl
            names = functools.partial(
                both, positive, excluded, keyword="patternProperties", pointer=self.pointer
            )
            member = self._member(names, schema)
            complemented = [p for p in costly if p in outside]
            if complemented and not is_nothing(member):
                raise UnsupportedSchemaError(
                    "patternProperties",
                    self.pointer,
                    f"the complement of {complemented[0]!r} exceeds llguidance's regex budget",
                )
            members.append(member)
        return alt(*members)

    def _member(self, names: Callable[[], Expr], schema: Any) -> Expr:
        """A member whose name is in ``names()`` (built only when some value is allowed: the
        name languages are the costly part) and whose value obeys ``schema``."""
        value = self.c.value(schema, f"{self.pointer}/additionalProperties")
        return NOTHING if is_nothing(value) else self.c.member(self.c.json_string(names()), value)

    def build(self) -> Expr:
        c = self.c
        if any(is_nothing(self.values[n]) for n in self.required):
            return NOTHING
        body = self.state(0, 0, frozenset(), frozenset(), False)
        # States are filled from a worklist: recursing from one to the next went one Python
        # frame deeper per property (a thousand properties hit the recursion limit).
        while self.pending:
            rule, key = self.pending.pop()
            self.c.grammar.rules[rule.name] = self.transitions(*key)
        return seq(Lit("{"), c.ws, body, c.ws, Lit("}"))

    def state(
        self, i: int, count: int, owed: frozenset[str], banned: frozenset[str], started: bool
    ) -> Expr:
        """The rule for a state (its body is filled later, by :meth:`build`)."""
        key = (i, count, owed, banned, started)
        if key in self.states:
            return self.states[key]
        if i == len(self.order):
            return self.extras(count, owed, started)
        rule = self.c.new_rule(hint="o")
        self.states[key] = rule
        self.pending.append((rule, key))
        return rule

    def transitions(
        self, i: int, count: int, owed: frozenset[str], banned: frozenset[str], started: bool
    ) -> Expr:
        """What may follow in state ``(i, count, owed, banned, started)``."""
        name = self.order[i]
        branches: list[Expr] = []
        value = self.values[name]
        room = self.max is None or count < self.max
        if name not in banned and room and not is_nothing(value):
            lead = (self.c.sep(),) if started else ()
            # Dependencies placed earlier were settled already: present, or this name banned.
            later = {
                d
                for d in self.deps.get(name, ())
                if self.position[d] > i and d not in self.required
            }
            nxt = self.state(i + 1, min(count + 1, self.cap), (owed - {name}) | later, banned, True)
            branches.append(seq(*lead, self.c.member(self.keys[name], value), nxt))
        if name not in owed and name not in self.required:
            newly = frozenset(k for k, v in self.deps.items() if name in v)
            branches.append(self.state(i + 1, count, owed, banned | newly, started))
        if room and not is_nothing(self.extra):
            # Additional members may come anywhere between declared ones, in any order.
            lead = (self.c.sep(),) if started else ()
            again = self.state(i, min(count + 1, self.cap), owed, banned, True)
            branches.append(seq(*lead, self.extra, again))
        return alt(*branches)

    def extras(self, count: int, owed: frozenset[str], started: bool) -> Expr:
        if owed:
            return NOTHING
        need = max(0, self.min - count)
        room = None if self.max is None else self.max - count
        if is_nothing(self.extra) or room == 0:
            return EMPTY if need == 0 else NOTHING
        more = seq(self.c.sep(), self.extra)
        if started:
            return repeat(more, need, room)
        first = seq(self.extra, repeat(more, max(0, need - 1), None if room is None else room - 1))
        return first if need else alt(EMPTY, first)


#: patternProperties splits names into 2**n regions: more patterns than this are refused.
_MAX_PATTERNS = 4
#: Patterns that find a match in every string (a search, not a full match).
_UNIVERSAL_PATTERNS = frozenset({"", ".*", "^", "$", "^.*", ".*$"})


def _costly_to_complement(pattern: str) -> bool:
    """Whether llguidance's lexer would run out of derivatives on the pattern's complement.

    Measured: searching ``x[a-z]{1,12}y`` (no anchor at either end) under ``~`` fails at
    run time with "too many expressions constructed"; ``{1,8}``, an anchor at either end, or
    the repetition at an edge are fine. So: no anchors, and a ranged repetition inside.
    """
    for start, body, end in parse_pattern(pattern):
        items = body.items if isinstance(body, Seq) else (body,)
        if not start and not end and any(_wide_repeat(i) for i in items[1:-1]):
            return True
    return False


def _wide_repeat(expr: Expr) -> bool:
    if isinstance(expr, Repeat):
        wide = expr.max is not None and expr.max - expr.min > 4
        return wide or _wide_repeat(expr.item)
    if isinstance(expr, (Seq, Alt)):
        return any(_wide_repeat(i) for i in expr.items)
    return False


def _search(pattern: str, name: str, pointer: str) -> bool:
    """Whether ``pattern`` matches ``name``, with ECMA-262 semantics (as for ``pattern``)."""
    try:
        return ecma_search(pattern, name)
    except RegexError as exc:
        raise UnsupportedSchemaError("patternProperties", pointer, str(exc)) from None


def _all_of(parts: list[Any]) -> Any:
    return parts[0] if len(parts) == 1 else {"allOf": parts}


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")
