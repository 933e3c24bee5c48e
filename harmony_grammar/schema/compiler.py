"""JSON Schema to IR: a table from keyword to IR, one small function per type.

Theory of operation. ``Compiler.value(schema, pointer)`` turns one schema into an expression:

1. ``enum``/``const`` (here or merged in by step 2): each candidate value is kept when the
   whole schema accepts it (the reference validator decides, whatever other keywords are
   present), and printed as a JSON literal.
2. ``$ref`` alone becomes a rule reference (so recursion works); with sibling keywords it is
   merged like ``allOf``. ``allOf`` is merged into one schema (:mod:`.merge`).
3. ``anyOf``/``oneOf`` distribute the remaining keywords over their branches and take the
   union; ``oneOf`` only when the branches are provably disjoint.
4. Otherwise one alternative per allowed ``type``; each type reads its own keywords.

Otherwise, keywords in ``REFUSED`` raise UnsupportedSchemaError unless their value is
trivially true; annotations and unknown keywords constrain nothing, as the specification says.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any
from urllib.parse import unquote

import jsonschema

from .errors import UnsupportedSchemaError
from .formats import format_ir
from .ir import (
    EMPTY,
    NOTHING,
    Alt,
    Both,
    Chars,
    Expr,
    Grammar,
    Lit,
    Ref,
    Repeat,
    Seq,
    Token,
    alt,
    both,
    chars,
    is_nothing,
    opt,
    repeat,
    seq,
)
from .merge import ANNOTATIONS, json_equal, merge_schemas
from .numbers import Bound, NotExact, number_token
from .regex import ANY_CHAR, RegexError, parse_pattern, search_ir
from .strings import json_string, literal_string, string_not_in

__all__ = ["Compiler", "Whitespace", "property_rank", "sort_keys"]

Schema = dict[str, Any]
Whitespace = str  # "compact" | "flexible"

TYPES = ("null", "boolean", "object", "array", "string", "number", "integer")
#: Keywords with no exact translation; refused unless their value is trivially satisfied.
REFUSED = (
    "not", "if", "contains", "uniqueItems", "propertyNames",
    "unevaluatedProperties", "unevaluatedItems", "dependentSchemas", "$dynamicRef",
    "$recursiveRef",
)  # fmt: skip
#: Formats the specification defines but this compiler does not implement: refused, because a
#: validator asserting them would disagree. Formats nobody defines stay annotations.
SPECIFIED_FORMATS = frozenset({
    "idn-hostname", "idn-email", "iri", "iri-reference", "uri-reference",
    "uri-template", "json-pointer", "relative-json-pointer", "regex", "duration",
})  # fmt: skip
#: Meta-schemas whose vocabulary this compiler implements (the ``$schema`` values accepted).
KNOWN_DIALECTS = frozenset(
    f"{scheme}://json-schema.org/{path}"
    for scheme in ("http", "https")
    for path in ("draft-04/schema", "draft-06/schema", "draft-07/schema",
                 "draft/2019-09/schema", "draft/2020-12/schema")
)  # fmt: skip
_WS_CHARS = chars([(0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20)])


def _trivial(keyword: str, value: Any) -> bool:
    """True when ``keyword: value`` constrains nothing."""
    if keyword == "uniqueItems":
        return bool(value is False)
    if keyword == "dependentSchemas":
        return bool(value == {})
    if keyword in ("if", "contains"):
        return False  # `contains: true` still demands one item; a lone `if` is refused too
    return value is True or value == {}


def property_rank(root: Any) -> dict[str, int]:
    """The canonical property order: names ranked as a depth-first walk of the document meets
    them, a whole ``properties`` block at once (also ``required``, ``dependentRequired`` and
    ``dependencies``), so the root object keeps its declared order. Every object of the
    schema lists its properties in this order: one schema, one key order
    (docs/schema-grammar.md).
    """
    rank: dict[str, int] = {}

    def add(names: Any) -> None:
        for name in names:
            if isinstance(name, str):
                rank.setdefault(name, len(rank))

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            if key in ("properties", "dependentRequired", "dependencies") and isinstance(
                value, dict
            ):
                add(value)
                if key != "properties":
                    for deps in value.values():
                        if isinstance(deps, list):
                            add(deps)
            elif key == "required" and isinstance(value, list):
                add(value)
            if key not in ("enum", "const", "default", "examples"):
                walk(value)

    walk(root)
    return rank


def sort_keys(value: Any, rank: dict[str, int]) -> Any:
    """``value`` with every object's keys in canonical order (ranked names, then the rest)."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (0, rank[k], "") if k in rank else (1, 0, k))
        return {k: sort_keys(value[k], rank) for k in keys}
    if isinstance(value, list):
        return [sort_keys(v, rank) for v in value]
    return value


def _exact(value: Any) -> Fraction:
    # The decimal text Python prints for a float is the number the schema author wrote.
    return Fraction(Decimal(repr(value))) if isinstance(value, float) else Fraction(value)


class Compiler:
    """Compiles one root schema into a :class:`Grammar`."""

    def __init__(
        self, root: Any, whitespace: Whitespace = "compact", *, closed_objects: bool = False
    ) -> None:
        if whitespace not in ("compact", "flexible"):
            raise ValueError(f"whitespace must be 'compact' or 'flexible', not {whitespace!r}")
        self.root = root
        # Generation mode: an object that leaves additionalProperties unset gets only its
        # declared properties (a narrower language, so every output is still valid).
        self.closed_objects = closed_objects
        self.ws = opt(Token(Repeat(_WS_CHARS, 1, None))) if whitespace == "flexible" else EMPTY
        self.grammar = Grammar()
        self.rank = property_rank(root)
        draft = root.get("$schema", "") if isinstance(root, dict) else ""
        if draft and str(draft).rstrip("#") not in KNOWN_DIALECTS:
            raise UnsupportedSchemaError("$schema", "", f"unknown dialect {draft!r}")
        self.legacy = any(f"draft-0{n}" in str(draft) for n in (3, 4, 6, 7))
        # Draft 4 counts 1.0 as a number but not as an integer.
        self.zero_fraction_integers = "draft-04" not in str(draft)
        cls = jsonschema.validators.validator_for(root, default=jsonschema.Draft202012Validator)
        self.validator = cls(root, format_checker=cls.FORMAT_CHECKER)
        self._pointer_rules: dict[str, str] = {}
        self._counter = itertools.count()

    # -- entry points -------------------------------------------------------------------------

    def compile(self) -> Grammar:
        """Compile the root schema; the start rule allows whitespace around the value."""
        self.grammar.rules["start"] = seq(self.ws, self.value(self.root, ""), self.ws)
        return self.grammar

    def new_rule(self, body: Expr | None = None, hint: str = "r") -> Ref:
        """Register a rule (body may be set later) and return a reference to it."""
        name = f"{hint}{next(self._counter)}"
        self.grammar.rules[name] = NOTHING if body is None else body
        return Ref(name)

    # -- references -----------------------------------------------------------------------------

    def resolve(self, ref: str, pointer: str) -> tuple[Any, str]:
        """The target of a local ``$ref`` and its pointer."""
        if not ref.startswith("#"):
            raise UnsupportedSchemaError("$ref", pointer, f"only local references ({ref!r})")
        fragment = unquote(ref[1:])
        if fragment and not fragment.startswith("/"):
            raise UnsupportedSchemaError("$ref", pointer, f"anchor references ({ref!r})")
        node = self.root
        for part in fragment.split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                raise UnsupportedSchemaError("$ref", pointer, f"unresolvable reference {ref!r}")
        return node, fragment

    def ref_rule(self, ref: str, pointer: str) -> Expr:
        target, target_pointer = self.resolve(ref, pointer)
        name = self._pointer_rules.get(target_pointer)
        if name is None:
            rule = self.new_rule()
            self._pointer_rules[target_pointer] = rule.name
            self.grammar.rules[rule.name] = self.value(target, target_pointer)
            return rule
        return Ref(name)

    # -- normalisation --------------------------------------------------------------------------

    def normalise(self, schema: Schema, pointer: str) -> Schema:
        """Draft differences and spelling variants, rewritten into one vocabulary."""
        s = dict(schema)
        nested_id = "$id" in s or isinstance(s.get("id"), str)
        if pointer and nested_id and "$ref" in str(s):
            raise UnsupportedSchemaError("$id", pointer, "references under a nested $id")
        if self.legacy and "$ref" in s:
            return {"$ref": s["$ref"]}
        for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if isinstance(s.get(key), bool):  # draft 4: a flag on minimum/maximum
                flag = s.pop(key)
                if flag and bound in s:
                    s[key] = s.pop(bound)
        if isinstance(s.get("items"), list):
            s["prefixItems"] = s.pop("items")
            s["items"] = s.pop("additionalItems", True)
        elif "prefixItems" not in s:
            s.pop("additionalItems", None)
        deps = s.pop("dependencies", None)
        if isinstance(deps, dict):
            for name, value in deps.items():
                if isinstance(value, list):
                    s.setdefault("dependentRequired", {})[name] = value
                elif value is not True:
                    raise UnsupportedSchemaError("dependencies", pointer, "schema dependencies")
        if s.get("nullable") is True and "type" in s:
            types = [s["type"]] if isinstance(s["type"], str) else list(s["type"])
            s["type"] = [*types, "null"]
        return s

    def flatten(self, schema: Schema, pointer: str, depth: int = 0) -> Schema:
        """Merge ``$ref`` siblings and ``allOf`` members into one schema."""
        if depth > 16:
            raise UnsupportedSchemaError("allOf", pointer, "recursion through allOf/$ref")
        s = self.normalise(schema, pointer)
        parts: list[Any] = []
        if "$ref" in s and len(s) > 1:
            parts.append(self.resolve(s.pop("$ref"), pointer)[0])
        parts.extend(s.pop("allOf", []))
        for part in parts:
            if part is False:
                return {"not": {}}
            if part is True:
                continue
            member = self.flatten(part, pointer, depth + 1)
            if "$ref" in member:  # inline it, so the merge sees the target's keywords
                target = self.resolve(member["$ref"], pointer)[0]
                if target is False:
                    return {"not": {}}
                member = self.flatten(target, pointer, depth + 1) if target is not True else {}
            s = merge_schemas(s, member)
        if "allOf" in s or ("$ref" in s and len(s) > 1):
            return self.flatten(s, pointer, depth + 1)
        return s

    # -- values ---------------------------------------------------------------------------------

    def value(self, schema: Any, pointer: str) -> Expr:
        """The expression for every JSON text valid under ``schema``."""
        if schema is True:
            return self.any_value()
        if schema is False:
            return NOTHING
        if not isinstance(schema, dict):
            raise UnsupportedSchemaError("", pointer, "a schema must be an object or a boolean")
        if "enum" in schema or "const" in schema:
            # A finite language: the reference validator judges each candidate against every
            # keyword here (`not`, `patternProperties`, ...), so nothing needs refusing.
            return self.enumeration(schema, pointer)
        s = self.flatten(schema, pointer)
        if s.get("not") == {} or s.get("not") is True:
            return NOTHING
        if "$ref" in s:
            return self.ref_rule(s["$ref"], pointer)
        if "enum" in s or "const" in s:  # brought in by an allOf member or a $ref sibling
            return self.enumeration(s, pointer)
        if isinstance(s.get("not"), dict):
            s = self.without_not(s, pointer)
        for keyword in REFUSED:
            if keyword in s and not _trivial(keyword, s[keyword]):
                raise UnsupportedSchemaError(keyword, pointer)
        if "anyOf" in s:
            base = {k: v for k, v in s.items() if k != "anyOf"}
            return alt(*(self._branch(base, b, f"{pointer}/anyOf/{i}")
                         for i, b in enumerate(s["anyOf"])))  # fmt: skip
        if "oneOf" in s:
            return self.one_of(s, pointer)
        types = self.types(s)
        return alt(*(TYPE_TABLE[t](self, s, pointer) for t in types))

    def without_not(self, s: Schema, pointer: str) -> Schema:
        """``s`` with a ``not`` that only narrows rewritten away; other ``not``s are kept
        (and refused). ``not: {type: T}`` removes types; ``not: {required: [n]}`` means an
        object without ``n`` (every other value satisfies ``required``, so the ``not`` fails).
        """
        negated = s["not"]
        keywords = set(negated) - ANNOTATIONS
        rest = {k: v for k, v in s.items() if k != "not"}
        if keywords == {"type"}:
            banned = _type_set(self.types(negated))
            allowed = [t for t in self.types(rest) if t not in banned]
            if "number" in allowed and "integer" in banned:
                return s  # numbers that are not integers: refused
            return {**rest, "type": allowed}
        required = negated.get("required")
        if keywords == {"required"} and isinstance(required, list) and len(required) == 1:
            no_name = {"type": "object", "properties": {required[0]: False}}
            return self.flatten({**rest, "allOf": [no_name]}, pointer)
        return s

    def _branch(self, base: Schema, branch: Any, pointer: str) -> Expr:
        if branch is False:
            return NOTHING
        if not base:
            return self.value(branch, pointer)
        return self.value({**base, "allOf": [branch]} if branch is not True else base, pointer)

    def one_of(self, s: Schema, pointer: str) -> Expr:
        base = {k: v for k, v in s.items() if k != "oneOf"}
        members = [b for b in s["oneOf"] if b is not False]
        if not self._disjoint_all(self._branches(base, members, pointer)):
            exclusive = _exclusive_requirements(members)
            if exclusive is None:
                raise UnsupportedSchemaError("oneOf", pointer, "branches are not provably disjoint")
            members = exclusive
        branches = self._branches(base, members, pointer)
        return alt(*(self.value(b, f"{pointer}/oneOf/{i}") for i, b in enumerate(branches)))

    def _branches(self, base: Schema, members: list[Any], pointer: str) -> list[Schema]:
        return [
            self.flatten(merge_schemas(base, b) if isinstance(b, dict) else base, pointer)
            for b in members
        ]

    def _disjoint_all(self, branches: list[Schema]) -> bool:
        return all(self.disjoint(a, b) for a, b in itertools.combinations(branches, 2))

    def disjoint(self, a: Any, b: Any, depth: int = 0) -> bool:
        """A sufficient test that no value is valid under both ``a`` and ``b``."""
        try:
            fa, fb = self._dereferenced(a), self._dereferenced(b)
        except UnsupportedSchemaError:
            return False
        if fa is False or fb is False:
            return True
        if (
            fa is True
            or fb is True
            or "anyOf" in fa
            or "anyOf" in fb
            or "oneOf" in fa
            or "oneOf" in fb
        ):
            return False
        ta, tb = _type_set(self.types(fa)), _type_set(self.types(fb))
        if not (ta & tb):
            return True
        ea, eb = self.values_of(fa), self.values_of(fb)
        if ea is not None and eb is not None:
            return not any(json_equal(x, y) for x in ea for y in eb)
        if ea is not None:
            return not any(self.validator.evolve(schema=fb).is_valid(x) for x in ea)
        if eb is not None:
            return not any(self.validator.evolve(schema=fa).is_valid(y) for y in eb)
        if depth < 8 and ta & tb <= {"object"}:
            # Objects: a name one side requires that the other forbids, or that both require
            # with disjoint values. Each value schema here is a superset of the real one
            # (patterns are left out), so disjoint supersets prove it.
            ra, rb = set(fa.get("required", [])), set(fb.get("required", []))
            if any(_value_schema(fb, n) is False for n in ra - rb) or any(
                _value_schema(fa, n) is False for n in rb - ra
            ):
                return True
            return any(
                self.disjoint(_value_schema(fa, n), _value_schema(fb, n), depth + 1)
                for n in ra & rb
            )
        return False

    def _dereferenced(self, schema: Any) -> Any:
        """``schema`` flattened, following a lone ``$ref`` to its target; booleans as they are."""
        for _ in range(16):
            if isinstance(schema, bool):
                return schema
            if not isinstance(schema, dict):
                raise UnsupportedSchemaError("", "", "not a schema")
            flat = self.flatten(schema, "")
            if "$ref" not in flat:
                return flat
            schema = self.resolve(flat["$ref"], "")[0]
        raise UnsupportedSchemaError("$ref", "", "reference chain too long")

    @staticmethod
    def values_of(schema: Any) -> list[Any] | None:
        if not isinstance(schema, dict):
            return None
        if "const" in schema:
            return [schema["const"]]
        return list(schema["enum"]) if "enum" in schema else None

    def types(self, s: Schema) -> list[str]:
        """The allowed types, with ``integer`` dropped where ``number`` covers it."""
        declared = s.get("type", list(TYPES))
        names = [declared] if isinstance(declared, str) else list(declared)
        for name in names:
            if name not in TYPES:
                raise UnsupportedSchemaError("type", "", f"unknown type {name!r}")
        if "number" in names and "integer" in names:
            names.remove("integer")
        return list(dict.fromkeys(names))

    def enumeration(self, s: Schema, pointer: str) -> Expr:
        candidates = [s["const"]] if "const" in s else list(s["enum"])
        check = self.validator.evolve(schema=s)
        out = []
        for v in candidates:
            if not check.is_valid(v):
                continue
            if isinstance(v, int) and not isinstance(v, bool) and not _float_ok(check, v):
                out.append(number_token(integer=True, lower=Bound(Fraction(v)),
                                        upper=Bound(Fraction(v)), zero_fraction=False))  # fmt: skip
            else:
                out.append(self.literal(v))
        return alt(*out)

    # -- literals and generic JSON ----------------------------------------------------------

    def literal(self, value: Any) -> Expr:
        """Every spelling of the JSON value ``value`` (numbers by value, strings by content)."""
        ws = self.ws
        if value is None or isinstance(value, bool):
            return Lit("null" if value is None else "true" if value else "false")
        if isinstance(value, (int, float)):
            return self._number_literal(_exact(value))
        if isinstance(value, str):
            return literal_string(value)
        if isinstance(value, list):
            return seq(Lit("["), ws, self.joined([self.literal(v) for v in value]), ws, Lit("]"))
        if isinstance(value, dict):
            keys = sort_keys(value, self.rank)
            members = [self.member(literal_string(k), self.literal(value[k])) for k in keys]
            return seq(Lit("{"), ws, self.joined(members), ws, Lit("}"))
        raise UnsupportedSchemaError("enum", "", f"not a JSON value: {value!r}")

    def _number_literal(self, value: Fraction) -> Expr:
        bound = Bound(value)
        if value.denominator == 1:
            return number_token(integer=False, lower=bound, upper=bound)
        # A non-integer literal: its shortest decimal, then optional trailing zeros.
        text = format(Decimal(value.numerator) / Decimal(value.denominator), "f")
        if Fraction(Decimal(text)) != value:
            raise UnsupportedSchemaError("enum", "", f"{float(value)!r} has no finite decimal")
        sign, digits = ("-", text[1:]) if text.startswith("-") else ("", text)
        return Token(seq(Lit(sign + digits), repeat(Lit("0"), 0, None)))

    def joined(self, items: list[Expr]) -> Expr:
        """``items`` separated by commas."""
        return seq(*itertools.chain.from_iterable(
            ((self.sep(),) if i else ()) + (item,) for i, item in enumerate(items)))  # fmt: skip

    def sep(self) -> Expr:
        return seq(self.ws, Lit(","), self.ws)

    def member(self, key: Expr, value: Expr) -> Expr:
        return seq(key, self.ws, Lit(":"), self.ws, value)

    def any_value(self) -> Expr:
        """The rule for an arbitrary JSON value (the ``true`` schema)."""
        name = self._pointer_rules.get("<any>")
        if name is not None:
            return Ref(name)
        rule = self.new_rule(hint="any")
        self._pointer_rules["<any>"] = rule.name
        self.grammar.rules[rule.name] = alt(
            *(TYPE_TABLE[t](self, {}, "<any>") for t in TYPES if t != "integer")
        )
        return rule

    # -- per type ---------------------------------------------------------------------------

    def null(self, s: Schema, pointer: str) -> Expr:
        return Lit("null")

    def boolean(self, s: Schema, pointer: str) -> Expr:
        return alt(Lit("true"), Lit("false"))

    def number(self, s: Schema, pointer: str, integer: bool = False) -> Expr:
        def tighter(incl: str, excl: str, pick: Callable[..., Any]) -> Bound | None:
            bounds = [Bound(_exact(s[incl]))] if incl in s else []
            bounds += [Bound(_exact(s[excl]), True)] if excl in s else []
            if not bounds:
                return None
            best = pick(b.value for b in bounds)
            return Bound(best, any(b.exclusive for b in bounds if b.value == best))

        lower = tighter("minimum", "exclusiveMinimum", max)
        upper = tighter("maximum", "exclusiveMaximum", min)
        places = None
        if "multipleOf" in s:
            places = _decimal_places(_exact(s["multipleOf"]))
            if places is None:
                raise UnsupportedSchemaError(
                    "multipleOf", pointer, "only powers of ten (1, 0.1, 0.01, ...) are exact"
                )
            if integer:
                places = None  # every integer is a multiple of 10**-k
        try:
            return number_token(
                integer=integer, lower=lower, upper=upper,
                zero_fraction=self.zero_fraction_integers, places=places,
            )  # fmt: skip
        except NotExact as exc:
            keyword = "minimum" if lower and lower.value.denominator != 1 else "maximum"
            raise UnsupportedSchemaError(keyword, pointer, str(exc)) from None

    def integer(self, s: Schema, pointer: str) -> Expr:
        return self.number(s, pointer, integer=True)

    def string(self, s: Schema, pointer: str) -> Expr:
        parts: list[tuple[str, Expr]] = []
        if "pattern" in s:
            try:
                parts.append(("pattern", search_ir(s["pattern"])))
            except RegexError as exc:
                raise UnsupportedSchemaError("pattern", pointer, str(exc)) from None
        fmt = format_ir(s["format"]) if isinstance(s.get("format"), str) else None
        if fmt is not None:
            parts.append(("format", fmt))
        elif s.get("format") in SPECIFIED_FORMATS:
            raise UnsupportedSchemaError("format", pointer, f"format {s['format']!r}")
        lo = math.ceil(s.get("minLength", 0))
        hi = None if "maxLength" not in s else math.floor(s["maxLength"])
        length = repeat(ANY_CHAR, lo, hi)
        if not parts:
            return json_string(length)
        keyword = parts[0][0]
        bodies = [body for _, body in parts]
        if lo or hi is not None:
            # Folded into a simple pattern's own repetition where possible: a plain regex
            # is cheaper for every engine than an intersection.
            limited = _limit_length(bodies[0], lo, hi) if len(bodies) == 1 else None
            bodies = [limited] if limited is not None else [*bodies, length]
        return json_string(both(bodies, keyword=keyword, pointer=pointer))

    def array(self, s: Schema, pointer: str) -> Expr:
        prefix = s.get("prefixItems", [])
        rest = s.get("items", True)
        lo, hi = math.ceil(s.get("minItems", 0)), s.get("maxItems")
        hi = None if hi is None else math.floor(hi)
        if hi is not None and lo > hi:
            return NOTHING
        elems = [self.value(p, f"{pointer}/prefixItems/{i}") for i, p in enumerate(prefix)]
        rest_expr = self.value(rest, f"{pointer}/items")

        def tail(i: int) -> Expr:
            """Elements from index i on, each preceded by a separator when i > 0."""
            lead = (self.sep(),) if i else ()
            if i < len(elems):
                if hi is not None and i >= hi:
                    return EMPTY
                more = seq(*lead, elems[i], tail(i + 1))
                return more if i < lo else alt(EMPTY, more)
            need = max(0, lo - i)
            room = None if hi is None else hi - i
            if i:
                return _unroll(seq(self.sep(), rest_expr), need, room)
            if room == 0:
                return EMPTY if need == 0 else NOTHING
            first = seq(rest_expr, _unroll(seq(self.sep(), rest_expr), max(0, need - 1),
                                           None if room is None else room - 1))  # fmt: skip
            return first if need else alt(EMPTY, first)

        return seq(Lit("["), self.ws, tail(0), self.ws, Lit("]"))

    def object(self, s: Schema, pointer: str) -> Expr:
        return _ObjectBuilder(self, s, pointer).build()


def _decimal_places(step: Fraction) -> int | None:
    """``k`` when ``step`` is ``10**-k`` (k >= 0), else None."""
    for k in range(16):
        if step == Fraction(1, 10**k):
            return k
    return None


def _float_ok(check: Any, value: int) -> bool:
    """Whether ``value.0`` is valid too (not under draft 4's integer, for one)."""
    try:
        return bool(check.is_valid(float(value)))
    except OverflowError:
        return False


def _value_schema(schema: Schema, name: str) -> Any:
    """A superset of what ``schema`` allows as the value of property ``name``."""
    props = schema.get("properties", {})
    if name in props:
        return props[name]
    if schema.get("patternProperties"):
        return True
    return schema.get("additionalProperties", True)


def _exclusive_requirements(members: list[Any]) -> list[Any] | None:
    """``oneOf`` branches that only require names, rewritten to be pairwise disjoint.

    Branch i holds when all of its names are present and no other branch j holds, that is,
    some name of j that i does not require is absent. When that is a single name it is
    banned in branch i (a ``false`` property schema); a branch that implies another one
    can never be the only one to hold and is dropped. Anything else returns None.
    """
    names: list[set[str]] = []
    for member in members:
        if not isinstance(member, dict) or set(member) - {"required"} - ANNOTATIONS:
            return None
        names.append(set(member.get("required", [])))
    rewritten: list[Any] = []
    for i, own in enumerate(names):
        banned: set[str] = set()
        for j, other in enumerate(names):
            missing = other - own
            if j == i:
                continue
            if not missing:
                break  # branch j holds whenever branch i does
            if len(missing) > 1:
                return None
            banned |= missing
        else:
            required = list(dict.fromkeys(members[i].get("required", [])))
            rewritten.append({"required": required, "properties": dict.fromkeys(banned, False)})
    return rewritten


def _type_set(types: list[str]) -> set[str]:
    # number includes integer: {"integer"} and {"number"} overlap
    return set(types) | ({"integer"} if "number" in types else set())


def _limit_length(body: Expr, lo: int, hi: int | None) -> Expr | None:
    """``body`` restricted to lengths ``lo..hi`` when that is simple to do exactly."""
    blo, bhi = _length_range(body)
    if blo >= lo and (hi is None or (bhi is not None and bhi <= hi)):
        return body
    if (hi is not None and blo > hi) or (bhi is not None and bhi < lo):
        return NOTHING
    items: list[Expr] = list(body.items) if isinstance(body, Seq) else [body]
    ranges = [_length_range(item) for item in items]
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


def _length_range(expr: Expr) -> tuple[int, int | None]:
    if isinstance(expr, Chars):
        return 1, 1
    if isinstance(expr, Lit):
        return len(expr.text), len(expr.text)
    if isinstance(expr, Seq):
        lo = 0
        total: int | None = 0
        for item in expr.items:
            a, b = _length_range(item)
            lo += a
            total = None if total is None or b is None else total + b
        return lo, total
    if isinstance(expr, Alt):
        ranges = [_length_range(i) for i in expr.items]
        his = [b for _, b in ranges]
        longest = None if None in his else max(h for h in his if h is not None)
        return min(a for a, _ in ranges), longest
    if isinstance(expr, Repeat):
        a, b = _length_range(expr.item)
        return a * expr.min, None if b is None or expr.max is None else b * expr.max
    if isinstance(expr, Both):
        ranges = [_length_range(i) for i in expr.items]
        finite = [b for _, b in ranges if b is not None]
        return max(a for a, _ in ranges), min(finite) if finite else None
    raise TypeError(expr)


def _unroll(item: Expr, lo: int, hi: int | None) -> Expr:
    """Structural repetition of separator-led items (every target has ``{m,n}``)."""
    if hi is not None and hi < lo:
        return NOTHING
    if is_nothing(item):
        return EMPTY if lo == 0 else NOTHING
    return repeat(item, lo, hi)


class _ObjectBuilder:
    """The members of one object schema, as a state machine of rules.

    Declared properties come in canonical order, each present or absent; the state records
    how many members were written (for min/maxProperties), which names are still owed
    (``required``, ``dependentRequired``) and which are now forbidden (a name whose
    dependency was skipped). Additional members may come anywhere, in any order.
    """

    def __init__(self, compiler: Compiler, s: Schema, pointer: str) -> None:
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
        for name, parts in schemas.items():
            parts.extend(self.patterns[p] for p in self.patterns if _search(p, name, pointer))
            if not parts:
                parts.append(addl)
        rank = compiler.rank
        self.order = sorted(schemas, key=lambda k: (0, rank[k], "") if k in rank else (1, 0, k))
        self.position = {name: i for i, name in enumerate(self.order)}
        self.values = {
            n: compiler.value(_all_of(schemas[n]), f"{pointer}/properties/{_escape(n)}")
            for n in self.order
        }
        self.keys = {n: literal_string(n) for n in self.order}
        self.extra = self.extra_member(frozenset(schemas), addl)
        self.min = math.ceil(s.get("minProperties", 0))
        self.max = None if "maxProperties" not in s else math.floor(s["maxProperties"])
        counting = self.min > 0 or self.max is not None
        self.cap = (self.max + 1 if self.max is not None else self.min) if counting else 0
        self.states: dict[tuple[Any, ...], Ref] = {}

    def extra_member(self, named: frozenset[str], addl: Any) -> Expr:
        """A member whose name is none of ``named``.

        Without patternProperties every such name obeys additionalProperties. With them, the
        names split into regions by which patterns they match: a region's values obey all of
        its patterns' schemas, and the region matching none obeys additionalProperties. Each
        region is an intersection of patterns and complements of the others (a :class:`Both`).
        """
        patterns = self.patterns
        if all(_trivial("", s) for s in patterns.values()) and _trivial("", addl):
            patterns = {}  # any name, any value, whichever patterns match
        if not patterns:
            return self._member(lambda: string_not_in(named), addl)
        if len(patterns) > _MAX_PATTERNS:
            raise UnsupportedSchemaError(
                "patternProperties", self.pointer, f"more than {_MAX_PATTERNS} patterns"
            )
        try:
            languages = {p: search_ir(p) for p in patterns}
        except RegexError as exc:
            raise UnsupportedSchemaError("patternProperties", self.pointer, str(exc)) from None
        members = []
        for chosen in itertools.product((True, False), repeat=len(patterns)):
            inside = [p for p, keep in zip(patterns, chosen, strict=True) if keep]
            outside = [p for p, keep in zip(patterns, chosen, strict=True) if not keep]
            if any(p in _UNIVERSAL_PATTERNS for p in outside):
                continue  # no name escapes a pattern that matches every string
            # Only the named properties that would fall in this region need excluding.
            clash = frozenset(
                name
                for name in named
                if all(_search(p, name, self.pointer) for p in inside)
                and not any(_search(p, name, self.pointer) for p in outside)
            )
            positive = [languages[p] for p in inside if p not in _UNIVERSAL_PATTERNS]
            if clash or not positive:
                positive.append(string_not_in(clash))
            excluded = [languages[p] for p in outside]
            schema = _all_of([patterns[p] for p in inside]) if inside else addl
            names = functools.partial(
                both, positive, excluded, keyword="patternProperties", pointer=self.pointer
            )
            member = self._member(names, schema)
            costly = [p for p in outside if _costly_to_complement(p)]
            if costly and not is_nothing(member):
                raise UnsupportedSchemaError(
                    "patternProperties",
                    self.pointer,
                    f"the complement of {costly[0]!r} exceeds llguidance's regex budget",
                )
            members.append(member)
        return alt(*members)

    def _member(self, names: Callable[[], Expr], schema: Any) -> Expr:
        """A member whose name is in ``names()`` (built only when some value is allowed: the
        name languages are the costly part) and whose value obeys ``schema``."""
        value = self.c.value(schema, f"{self.pointer}/additionalProperties")
        return NOTHING if is_nothing(value) else self.c.member(json_string(names()), value)

    def build(self) -> Expr:
        c = self.c
        if any(is_nothing(self.values[n]) for n in self.required):
            return NOTHING
        body = self.state(0, 0, frozenset(self.required), frozenset(), False)
        return seq(Lit("{"), c.ws, body, c.ws, Lit("}"))

    def state(
        self, i: int, count: int, owed: frozenset[str], banned: frozenset[str], started: bool
    ) -> Expr:
        key = (i, count, owed, banned, started)
        if key in self.states:
            return self.states[key]
        if i == len(self.order):
            return self.extras(count, owed, started)
        rule = self.c.new_rule(hint="o")
        self.states[key] = rule
        name = self.order[i]
        branches: list[Expr] = []
        value = self.values[name]
        room = self.max is None or count < self.max
        if name not in banned and room and not is_nothing(value):
            lead = (self.c.sep(),) if started else ()
            # Dependencies placed earlier were settled already: present, or this name banned.
            later = {d for d in self.deps.get(name, ()) if self.position[d] > i}
            nxt = self.state(i + 1, min(count + 1, self.cap), (owed - {name}) | later, banned, True)
            branches.append(seq(*lead, self.c.member(self.keys[name], value), nxt))
        if name not in owed:
            newly = frozenset(k for k, v in self.deps.items() if name in v)
            branches.append(self.state(i + 1, count, owed, banned | newly, started))
        if room and not is_nothing(self.extra):
            # Additional members may come between declared ones: a name that the canonical
            # order ranks (declared by another object) but this object does not declare
            # sits at its rank, among this object's own properties.
            lead = (self.c.sep(),) if started else ()
            again = self.state(i, min(count + 1, self.cap), owed, banned, True)
            branches.append(seq(*lead, self.extra, again))
        self.c.grammar.rules[rule.name] = alt(*branches)
        return rule

    def extras(self, count: int, owed: frozenset[str], started: bool) -> Expr:
        if owed:
            return NOTHING
        need = max(0, self.min - count)
        room = None if self.max is None else self.max - count
        if is_nothing(self.extra) or room == 0:
            return EMPTY if need == 0 else NOTHING
        more = seq(self.c.sep(), self.extra)
        if started:
            return _unroll(more, need, room)
        first = seq(self.extra, _unroll(more, max(0, need - 1), None if room is None else room - 1))
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
    """Whether ``pattern`` matches ``name``, decided as the reference validator does."""
    try:
        return re.search(pattern, name) is not None
    except re.error as exc:
        raise UnsupportedSchemaError("patternProperties", pointer, str(exc)) from None


def _all_of(parts: list[Any]) -> Any:
    return parts[0] if len(parts) == 1 else {"allOf": parts}


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


TYPE_TABLE: dict[str, Callable[[Compiler, Schema, str], Expr]] = {
    "null": Compiler.null,
    "boolean": Compiler.boolean,
    "object": Compiler.object,
    "array": Compiler.array,
    "string": Compiler.string,
    "number": Compiler.number,
    "integer": Compiler.integer,
}
