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

import itertools
import json
import math
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any
from urllib.parse import unquote

import jsonschema

from .check import check_schema
from .ecma_search import ecma_validator_class
from .errors import UnsupportedSchemaError
from .formats import format_ir, grammar_format_checker
from .ir import (
    EMPTY,
    NOTHING,
    Chars,
    Expr,
    Grammar,
    Lit,
    Ref,
    Repeat,
    Token,
    alt,
    both,
    chars,
    is_nothing,
    opt,
    repeat,
    seq,
)
from .merge import ANNOTATIONS, is_true_schema, merge_schemas
from .numbers import JSON_NUMBER, Bound, NotExact, number_token
from .objects import ObjectBuilder
from .one_of import one_of, type_set
from .pointer import follow_fragment
from .regex import ANY_CHAR, RegexError, search_ir
from .strings import json_string, limit_length, literal_string

__all__ = ["Compiler", "Whitespace"]

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
    return is_true_schema(value)


def _exact(value: Any) -> Fraction:
    # The decimal text Python prints for a float is the number the schema author wrote.
    return Fraction(Decimal(repr(value))) if isinstance(value, float) else Fraction(value)


#: Past this magnitude an integer bound has no float-safe number near it (15 digits).
_SAFE_MAGNITUDE = 10**15


def _bound_keyword(s: Schema, lower: Bound | None, upper: Bound | None) -> str:
    """The keyword a refused numeric bound is spelled with in ``s``: the lower bound's when
    it is fractional or past the float-safe magnitudes, else the upper bound's, else the
    lower's, else ``multipleOf``. A refusal names a keyword the schema has, never another
    (``minimum: 1e300`` was reported as ``maximum``)."""

    def spelled(bound: Bound, keys: tuple[str, str]) -> str:
        return next(
            (k for k in keys if k in s and _exact(s[k]) == bound.value),
            keys[0] if keys[0] in s else keys[1],
        )

    def unusual(bound: Bound) -> bool:
        return bound.value.denominator != 1 or abs(bound.value) > _SAFE_MAGNITUDE

    lows, highs = ("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")
    if lower is not None and (unusual(lower) or upper is None):
        return spelled(lower, lows)
    if upper is not None:
        return spelled(upper, highs)
    return "multipleOf"


class Compiler:
    """Compiles one root schema into a :class:`Grammar`."""

    def __init__(
        self,
        root: Any,
        whitespace: Whitespace = "compact",
        *,
        closed_objects: bool = False,
        float_safe: bool = True,
        escaped_ascii: bool = True,
        complements: bool = False,
    ) -> None:
        if whitespace not in ("compact", "flexible"):
            raise ValueError(f"whitespace must be 'compact' or 'flexible', not {whitespace!r}")
        self.root = root
        # Checking mode (float_safe=False): an unbounded number is any JSON number spelling.
        self.float_safe = float_safe
        # Generation mode: an object that leaves additionalProperties unset gets only its
        # declared properties (a narrower language, so every output is still valid).
        self.closed_objects = closed_objects
        # Generation mode (escaped_ascii=False): printable ASCII only as itself, never \uXXXX.
        self.escaped_ascii = escaped_ascii
        # The target reads intersections and complements (llguidance): the names an object
        # did not declare are "any name" minus the declared ones, not a trie of the names.
        self.complements = complements
        self.ws = opt(Token(Repeat(_WS_CHARS, 1, None))) if whitespace == "flexible" else EMPTY
        self.grammar = Grammar()
        draft = root.get("$schema", "") if isinstance(root, dict) else ""
        if draft and str(draft).rstrip("#") not in KNOWN_DIALECTS:
            raise UnsupportedSchemaError("$schema", "", f"unknown dialect {draft!r}")
        self.legacy = any(f"draft-0{n}" in str(draft) for n in (3, 4, 6, 7))
        # Draft 4 counts 1.0 as a number but not as an integer.
        self.zero_fraction_integers = "draft-04" not in str(draft)
        # validator_for reads `$schema` with `in`, which a number or null cannot answer.
        typed = root if isinstance(root, (dict, bool)) else {}
        cls = jsonschema.validators.validator_for(typed, default=jsonschema.Draft202012Validator)
        check_schema(root, cls)
        # The reference validator reads patterns as ECMA-262, as the grammar does.
        ecma = ecma_validator_class(cls)
        # Formats as the grammar reads them, not as whichever optional checkers are installed.
        self.validator = ecma(root, format_checker=grammar_format_checker(cls.FORMAT_CHECKER))
        self._pointer_rules: dict[str, str] = {}
        # (reference target, the constraints around it) -> rule: see _branch.
        self._branch_rules: dict[tuple[str, str], str] = {}
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
        node = follow_fragment(self.root, fragment)
        if node is None:
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
        carried: str | None = None  # an anyOf/oneOf that an earlier member brought in
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
            if carried and _places_names(member):
                # Declared order: the branch an earlier member offers places its names before
                # this later member's (as canonical_json walks allOf), so the member joins each
                # branch; allOf[oneOf[b...], m] is exactly oneOf[allOf[b, m]...].
                s = {**s, carried: [_with_member(b, member) for b in s[carried]]}
                continue
            if carried is None:
                carried = next((k for k in ("oneOf", "anyOf") if k in member and k not in s), None)
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
            return one_of(self, s, pointer)
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
            banned = type_set(self.types(negated))
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
        # Annotations (a root's `$defs`, a title) constrain nothing: without this a root `$ref`
        # into anyOf chains merged `$defs` into every branch and inlined each reference again.
        base = {k: v for k, v in base.items() if k not in ANNOTATIONS}
        if not base:
            return self.value(branch, pointer)
        if branch is True:
            return self.value(base, pointer)
        if isinstance(branch, dict) and set(branch) - ANNOTATIONS == {"$ref"}:
            # A reference under constraints is inlined so the merge sees its keywords; the
            # same target under the same constraints is one shared rule, or a chain of
            # anyOf[ref, ref] would be expanded once per path (exponential).
            target_pointer = self.resolve(branch["$ref"], pointer)[1]
            key = (target_pointer, json.dumps(base, sort_keys=True, default=repr))
            name = self._branch_rules.get(key)
            if name is not None:
                return Ref(name)
            rule = self.new_rule()
            self._branch_rules[key] = rule.name
            self.grammar.rules[rule.name] = self.value({**base, "allOf": [branch]}, pointer)
            return rule
        return self.value({**base, "allOf": [branch]}, pointer)

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
        source = "const" if "const" in s else "enum"
        candidates = [s["const"]] if source == "const" else list(s["enum"])
        # Each candidate is in the keyword it came from: checking that too was quadratic.
        rest = {k: v for k, v in s.items() if k != source}
        check = self.validator.evolve(schema=rest)
        # Nothing else to check (a plain `enum`/`const`): skip the validator, which costs
        # about a millisecond a candidate.
        unchecked = not set(rest) - ANNOTATIONS
        out = []
        for v in candidates:
            try:
                if not unchecked and not check.is_valid(v):
                    continue
            except RegexError as exc:  # a pattern the reference validator cannot read
                raise UnsupportedSchemaError("pattern", pointer, str(exc)) from None
            try:
                is_int = isinstance(v, int) and not isinstance(v, bool)
                if is_int and not unchecked and not _float_ok(check, v):
                    exact = Bound(Fraction(v))
                    out.append(number_token(integer=True, lower=exact, upper=exact,
                                            zero_fraction=False))  # fmt: skip
                else:
                    out.append(self.literal(v))
            except NotExact as exc:  # a number a double reader would read as another
                raise UnsupportedSchemaError("enum", pointer, f"{v!r}: {exc}") from None
        return alt(*out)

    # -- literals and generic JSON ----------------------------------------------------------

    def json_string(self, body: Expr) -> Expr:
        """A string token for the decoded strings ``body``, spelled as this grammar allows."""
        return json_string(body, self.escaped_ascii)

    def literal_string(self, text: str) -> Expr:
        """A string token for exactly ``text``, spelled as this grammar allows."""
        return literal_string(text, self.escaped_ascii)

    def literal(self, value: Any) -> Expr:
        """Every spelling of the JSON value ``value`` (numbers by value, strings by content)."""
        ws = self.ws
        if value is None or isinstance(value, bool):
            return Lit("null" if value is None else "true" if value else "false")
        if isinstance(value, (int, float)):
            return self._number_literal(_exact(value))
        if isinstance(value, str):
            return self.literal_string(value)
        if isinstance(value, list):
            return seq(Lit("["), ws, self.joined([self.literal(v) for v in value]), ws, Lit("]"))
        if isinstance(value, dict):
            # An object literal keeps the key order it is written in (file key order).
            members = [
                self.member(self.literal_string(k), self.literal(v)) for k, v in value.items()
            ]
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

    def shared(self, expr: Expr) -> Expr:
        """``expr`` where it is small, else a rule for it: an expression used in several
        places must be one rule, or every emitter prints it once per use (nested arrays grew
        four times per two levels)."""
        if isinstance(expr, (Lit, Ref, Token, Chars)) or is_nothing(expr) or expr == EMPTY:
            return expr
        return self.new_rule(expr, hint="v")

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
        unbounded = lower is None and upper is None and places is None
        if not self.float_safe and not integer and unbounded:
            return JSON_NUMBER
        try:
            return number_token(
                integer=integer, lower=lower, upper=upper,
                zero_fraction=self.zero_fraction_integers, places=places,
            )  # fmt: skip
        except NotExact as exc:
            keyword = _bound_keyword(s, lower, upper)
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
            return self.json_string(length)
        keyword = parts[0][0]
        bodies = [body for _, body in parts]
        if lo or hi is not None:
            # Folded into a simple pattern's own repetition where possible: a plain regex
            # is cheaper for every engine than an intersection.
            limited = limit_length(bodies[0], lo, hi) if len(bodies) == 1 else None
            bodies = [limited] if limited is not None else [*bodies, length]
        return self.json_string(both(bodies, keyword=keyword, pointer=pointer))

    def array(self, s: Schema, pointer: str) -> Expr:
        prefix = s.get("prefixItems", [])
        rest = s.get("items", True)
        lo, hi = math.ceil(s.get("minItems", 0)), s.get("maxItems")
        hi = None if hi is None else math.floor(hi)
        if hi is not None and lo > hi:
            return NOTHING
        elems = [self.value(p, f"{pointer}/prefixItems/{i}") for i, p in enumerate(prefix)]
        rest_expr = self.shared(self.value(rest, f"{pointer}/items"))

        def rest_from(i: int) -> Expr:
            """Items from index i on, past the prefix, each after a separator when i > 0."""
            need = max(0, lo - i)
            room = None if hi is None else hi - i
            if i:
                return repeat(seq(self.sep(), rest_expr), need, room)
            if room == 0:
                return EMPTY if need == 0 else NOTHING
            first = seq(rest_expr, repeat(seq(self.sep(), rest_expr), max(0, need - 1),
                                           None if room is None else room - 1))  # fmt: skip
            return first if need else alt(EMPTY, first)

        # Built from the last prefix item back, iteratively (a recursion per item hit
        # Python's limit near 1,000 items); each optional tail is its own rule, so the
        # expression stays shallow and every emitter linear.
        tail = rest_from(len(elems))
        for i in reversed(range(len(elems))):
            if hi is not None and i >= hi:
                tail = EMPTY
                continue
            lead = (self.sep(),) if i else ()
            more = seq(*lead, elems[i], tail)
            tail = more if i < lo else self.shared(alt(EMPTY, more))

        return seq(Lit("["), self.ws, tail, self.ws, Lit("]"))

    def object(self, s: Schema, pointer: str) -> Expr:
        return ObjectBuilder(self, s, pointer).build()


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


TYPE_TABLE: dict[str, Callable[[Compiler, Schema, str], Expr]] = {
    "null": Compiler.null,
    "boolean": Compiler.boolean,
    "object": Compiler.object,
    "array": Compiler.array,
    "string": Compiler.string,
    "number": Compiler.number,
    "integer": Compiler.integer,
}


def _places_names(s: Schema) -> bool:
    """Whether an object schema declares names that take a place in the key order."""
    return any(k in s for k in ("properties", "required", "dependentRequired"))


def _with_member(branch: Any, member: Schema) -> Any:
    """``allOf: [branch, member]``, the branch first (its names come first)."""
    if branch is True:
        return member
    if branch is False:
        return False
    return {"allOf": [branch, member]}
