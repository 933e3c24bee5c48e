"""The schema compiler's front door: a schema in, a grammar text (or the IR) out."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

import jsonschema

from .compiler import Compiler
from .ecma_search import ecma_validator_class
from .emit_gbnf import emit_gbnf
from .emit_lark import emit_lark, writes_bounded_ranges
from .emit_llguidance import emit_llguidance
from .emit_xgrammar import emit_xgrammar
from .errors import InvalidSchemaError, UnsupportedSchemaError
from .ir import Grammar, is_nothing, prune
from .nesting import nesting_exceeds
from .order import order_keys
from .regex import RegexError
from .stack import on_fresh_stack
from .versions import LLGUIDANCE_LARK_RANGES, older_than, version_tuple

__all__ = [
    "MAX_SCHEMA_DEPTH",
    "TARGETS",
    "Target",
    "WhitespaceMode",
    "canonical_json",
    "compile_schema",
    "schema_to_grammar",
]

#: The deepest nesting of objects and arrays in a schema document that is compiled. The
#: compiler and the emitters recurse a few frames per level; under this limit, and on a
#: stack of their own (:func:`.stack.on_fresh_stack`), they stay far inside Python's default
#: recursion limit, so whether a schema compiles never depends on the caller's stack depth.
MAX_SCHEMA_DEPTH = 128
_TOO_DEEP = (
    f"the schema nests too deeply (more than {MAX_SCHEMA_DEPTH} levels of objects and arrays)"
)

_TOO_BIG = "the grammar for this schema does not fit in the memory this process has"

Target = Literal["lark", "llguidance", "gbnf", "xgrammar"]
WhitespaceMode = Literal["compact", "flexible"]

TARGETS: dict[str, Callable[[Grammar], str]] = {
    "lark": emit_lark,
    "llguidance": emit_llguidance,
    "gbnf": emit_gbnf,
    # GBNF that xgrammar masks fast (xgrammar.GrammarCompiler.compile_grammar reads it).
    "xgrammar": emit_xgrammar,
}


def compile_schema(
    schema: Any,
    *,
    whitespace: WhitespaceMode = "compact",
    closed_objects: bool = False,
    float_safe: bool = True,
    escaped_ascii: bool = True,
    complements: bool = False,
) -> Grammar:
    """The IR grammar of ``schema`` (start rule ``start``), with dead rules removed.

    ``closed_objects=True`` is for generation: objects that leave ``additionalProperties``
    unset get only their declared properties, a subset of the valid documents (what OpenAI's
    strict function calling does); the default is the exact language. Raises
    :class:`UnsupportedSchemaError` when the schema cannot be compiled exactly, which
    includes a schema that no JSON value satisfies, and its subclass
    :class:`InvalidSchemaError` when ``schema`` is not a valid JSON Schema at all (checked
    against its draft's meta-schema first; non-finite numbers are invalid too).

    ``float_safe=False`` lets an unbounded number be any JSON number spelling: for checking
    documents a model wrote, not for generating them (docs/schema-grammar.md, float safety).

    ``escaped_ascii=False`` is for generation too: printable ASCII is spelled only as itself,
    never as ``\\u0061`` (no JSON encoder writes that), which halves the lexer states an
    engine builds; every decoded string keeps a spelling. ``complements=True`` is for a target
    that reads intersections and complements (llguidance): an object's names not declared are
    written as any name minus the declared ones (the same language; a grammar for GBNF or
    xgrammar must leave it unset, they have no complement).
    """
    if nesting_exceeds(schema, MAX_SCHEMA_DEPTH):
        raise UnsupportedSchemaError("", "", _TOO_DEEP)
    return on_fresh_stack(
        lambda: _compile(schema, whitespace, closed_objects, float_safe, escaped_ascii, complements)
    )


def _compile(
    schema: Any,
    whitespace: WhitespaceMode,
    closed_objects: bool,
    float_safe: bool,
    escaped_ascii: bool,
    complements: bool = False,
) -> Grammar:
    if isinstance(schema, dict) and isinstance(schema.get("$schema", ""), str) is False:
        raise InvalidSchemaError("$schema", "/$schema", "must be a string")
    try:
        grammar = Compiler(
            schema,
            whitespace,
            closed_objects=closed_objects,
            float_safe=float_safe,
            escaped_ascii=escaped_ascii,
            complements=complements,
        ).compile()
    except RecursionError:
        raise UnsupportedSchemaError("", "", _TOO_DEEP) from None
    except MemoryError:  # a refusal naming the limit, not an internal error
        raise UnsupportedSchemaError("", "", _TOO_BIG) from None
    except RegexError as exc:  # met by the reference validator, outside any keyword builder
        raise UnsupportedSchemaError("pattern", "", str(exc)) from None
    except (TypeError, AttributeError, KeyError, OverflowError) as exc:
        # Last resort: a value of the wrong type that the meta-schema check let through (an
        # older draft's meta-schema ignores newer keywords such as `prefixItems`).
        raise InvalidSchemaError("", "", f"malformed schema ({exc})") from None
    prune(grammar)
    if is_nothing(grammar.rules[grammar.start]):
        raise UnsupportedSchemaError("false", "", "no JSON value is valid under this schema")
    return grammar


def schema_to_grammar(
    schema: Any,
    *,
    target: Target = "lark",
    whitespace: WhitespaceMode = "compact",
    closed_objects: bool = False,
    float_safe: bool = True,
    escaped_ascii: bool = True,
    target_version: str | None = None,
) -> str:
    """A self-contained grammar, start rule ``start``, for exactly the JSON texts ``schema``
    accepts, with each object's members in its own declared order (see :func:`canonical_json`).

    ``target`` is ``"lark"``, ``"llguidance"``, ``"gbnf"`` or ``"xgrammar"`` (GBNF shaped for
    xgrammar's matcher); ``whitespace="flexible"`` allows JSON whitespace between tokens,
    ``"compact"`` allows none. ``closed_objects``, ``float_safe`` and ``escaped_ascii`` are
    :func:`compile_schema`'s; for a generation grammar pass ``closed_objects=True,
    escaped_ascii=False`` (what the turn grammar does).

    ``target_version`` is the version of the library that will read the grammar (llguidance's
    for ``lark`` and ``llguidance``, xgrammar's for ``xgrammar``; ``None``: the versions this
    project is tested with). Where that version cannot read what the schema needs, the export
    raises :class:`UnsupportedSchemaError` naming it (:mod:`.versions`, docs/schema-grammar.md).
    """
    emit = TARGETS.get(target)
    if emit is None:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, not {target!r}")
    if nesting_exceeds(schema, MAX_SCHEMA_DEPTH):
        raise UnsupportedSchemaError("", "", _TOO_DEEP)
    if target_version is not None:
        version_tuple(target_version)  # a malformed version is the caller's error, on any target
    old_lark = target == "lark" and older_than(target_version, LLGUIDANCE_LARK_RANGES)

    def work() -> str:
        try:
            complements = target == "llguidance"  # the one target that reads them
            grammar = _compile(
                schema, whitespace, closed_objects, float_safe, escaped_ascii, complements
            )
            if old_lark and writes_bounded_ranges(grammar):
                raise UnsupportedSchemaError(
                    "",
                    "",
                    f"its Lark grammar needs a bounded repetition (x ~ m..n), which llguidance "
                    f"{target_version} cannot read (llguidance reads it from 1.9 on); give that "
                    "llguidance the llguidance target instead",
                )
            return emit(grammar)
        except RecursionError:  # the emitters walk expressions recursively too
            raise UnsupportedSchemaError("", "", _TOO_DEEP) from None
        except MemoryError:
            raise UnsupportedSchemaError("", "", _TOO_BIG) from None

    return on_fresh_stack(work)


def canonical_json(value: Any, schema: Any, *, indent: int | None = None) -> str:
    """``value`` as JSON text in the key order the grammar of ``schema`` expects: each object
    in the declared order of the schemas that validate it (for ``anyOf``/``oneOf``, the first
    branch that does), other keys after them in the value's own order.
    """
    typed = schema if isinstance(schema, (dict, bool)) else {}
    cls = jsonschema.validators.validator_for(typed, default=jsonschema.Draft202012Validator)
    validator = ecma_validator_class(cls)(schema)

    def is_valid(instance: Any, subschema: Any) -> bool:
        return bool(validator.evolve(schema=subschema).is_valid(instance))

    ordered = order_keys(value, schema, schema, is_valid)
    if indent is None:
        return json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(ordered, ensure_ascii=False, indent=indent)
