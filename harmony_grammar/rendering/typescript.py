"""JSON Schema to the TypeScript-like ``namespace functions`` text, byte-exact with openai-harmony.

gpt-oss reads tool definitions as TypeScript types (harmony-format.md §3). The rules here are
openai-harmony 0.0.8's ``json_schema_to_typescript`` and ``template_tools_section``, including
their quirks, because the model was trained on exactly that text:

* a schema that is not an object, or has no ``type`` it knows, renders as ``any``;
* a ``oneOf`` property writes its description above the name, one ``| variant`` per line, and
  drops a variant description equal to the property's;
* a string ``default`` is quoted unless the schema has an ``enum``, and is written raw, without
  escaping (but an enum's default in a non-property ``oneOf`` variant is JSON); any other
  default is compact JSON in serde_json's spelling (``1e20``, ``1.0``);
* descriptions inside the schema are written as one ``// `` line even when they span lines,
  while tool and namespace descriptions get ``// `` on every line.

The tests compare all of this with the package token for token
(tests/rendering/test_typescript*.py).

Where openai-harmony writes schema text raw, a hostile schema could close its declaration and
declare a tool nobody declared (an enum value ``paris"\\n}) => any;\\ntype delete_all = …``).
Here schema text can never change the structure of the namespace, and text that cannot do
so renders byte for byte as openai-harmony writes it:

* a comment's text is split at every TypeScript line terminator (``\\n``, ``\\r``, U+2028,
  U+2029) and each further line starts with ``// ``, so it stays a comment;
* enum strings are written as TypeScript string literals (JSON escapes, and U+2028/U+2029
  as ``\\u`` escapes), and a property name that holds anything but name characters is quoted;
* what cannot be escaped is refused with :class:`RenderError`, naming the tool and the JSON
  pointer: a ``type`` list entry that is not a type name, and a tool or namespace name that
  fails :func:`~harmony_grammar.declarations.names.name_problem` (the one name check, shared with
  the grammars).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..declarations.names import name_problem
from ..declarations.spec import ToolNamespace, ToolSpec
from ..tools.json_limits import MAX_JSON_DEPTH, too_deep
from .errors import RenderError

__all__ = [
    "RenderError",
    "comment_lines",
    "json_display",
    "namespace_typescript",
    "response_format_text",
    "rust_lines",
    "schema_to_typescript",
    "tool_typescript",
    "tools_section",
]


class _Unrenderable(Exception):
    """Schema text that no escape can keep inert, at ``pointer`` (turned into RenderError)."""

    def __init__(self, pointer: str, why: str) -> None:
        super().__init__(pointer, why)
        self.pointer = pointer
        self.why = why


#: What ends a ``//`` comment in TypeScript (and JavaScript).
_LINE_TERMINATORS = re.compile("\r\n|[\n\r\u2028\u2029]")
#: A property name written as is: anything else is quoted.
_PLAIN_KEY = re.compile("[^\\s\"'`:;,{}()\\[\\]<>=/\\\\|?*]+")
_TYPE_NAME = re.compile("[A-Za-z_$][\\w$]*")


def _comment(text: str, indent: str) -> str:
    """``text`` as the body of a ``// `` comment: each line break starts a new comment line."""
    return f"\n{indent}// ".join(_LINE_TERMINATORS.split(text))


def _string_literal(text: str) -> str:
    """A TypeScript string literal: JSON's escapes, plus the two line separators."""
    literal = json.dumps(text, ensure_ascii=False)
    return literal.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _key(key: str) -> str:
    return key if _PLAIN_KEY.fullmatch(key) else _string_literal(key)


def _escape_pointer(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def rust_lines(text: str) -> list[str]:
    """Rust's ``str::lines()``: split at ``\\n`` or ``\\r\\n``; no empty last line.

    Python's ``splitlines()`` also splits at ``\\r``, ``\\x0b``, ``\\u2028`` and more, which
    would change the rendered bytes.
    """
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    last = len(lines) - 1
    ends_with_newline = text.endswith("\n")
    return [
        line[:-1] if line.endswith("\r") and (i < last or ends_with_newline) else line
        for i, line in enumerate(lines)
    ]


def _ryu_float(value: float) -> str:
    """A float as serde_json writes it (ryu): shortest digits, ``1e20``, ``1e-7``, ``0.00001``.

    Python's ``repr`` has the same shortest digits but switches to exponent form one place
    earlier for small numbers and writes ``1e+20`` / ``1e-05``.
    """
    if not math.isfinite(value):
        return "null"  # serde_json turns a non-finite f64 into Null
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    integer, _, fraction = mantissa.partition(".")
    digits = (integer + fraction).lstrip("0")
    # Position of the decimal point relative to the first significant digit.
    point = int(exp_text or 0) + len(integer.lstrip("0"))
    if not integer.lstrip("0"):  # 0.000ddd: leading zeros of the fraction move the point
        point -= len(fraction) - len(fraction.lstrip("0"))
    digits = digits.rstrip("0") or "0"
    n = len(digits)
    if n <= point <= 16:  # an integer: 1234e7 -> 12340000000.0
        return f"{sign}{digits}{'0' * (point - n)}.0"
    if 0 < point <= 16:
        return f"{sign}{digits[:point]}.{digits[point:]}"
    if -5 < point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    exponent = point - 1
    if n == 1:
        return f"{sign}{digits}e{exponent}"
    return f"{sign}{digits[0]}.{digits[1:]}e{exponent}"


_I64_MIN, _U64_MAX = -(2**63), 2**64 - 1
_POW10 = [float(f"1e{i}") for i in range(309)]


def _u64_overflows(significand: int, digit: int) -> bool:
    # serde_json's overflow!(significand * 10 + digit, u64::MAX)
    return significand >= _U64_MAX // 10 and (significand > _U64_MAX // 10 or digit > _U64_MAX % 10)


def _serde_f64(significand: int, exponent: int) -> float:
    """serde_json's ``f64_from_parts``: ``significand`` scaled by powers of ten in f64.

    This is not correctly rounded (serde_json without ``float_roundtrip``), so a float can come
    back one ulp away from Python's value; openai-harmony prints what serde_json parsed.
    """
    value = float(significand)
    while True:
        if abs(exponent) < len(_POW10):
            if exponent >= 0:
                value *= _POW10[exponent]
            else:
                value /= _POW10[-exponent]
            return value
        if value == 0.0 or exponent >= 0:
            return value  # (a positive overflow is an error in serde_json; inf prints null)
        value /= 1e308
        exponent += 308


def _serde_number(text: str) -> int | float:
    """A JSON number, parsed the way serde_json parses it (``text`` is Python's spelling)."""
    negative = text.startswith("-")
    digits = text.lstrip("-")
    mantissa, _, exp_text = digits.lower().partition("e")
    integer, dot, fraction = mantissa.partition(".")
    significand, exponent, overflowed = 0, 0, False
    for i, char in enumerate(integer + fraction):
        digit = int(char)
        if overflowed or _u64_overflows(significand, digit):
            # Further digits are ignored; integer digits still scale the value.
            overflowed = True
            exponent += 1 if i < len(integer) else 0
            continue
        significand = significand * 10 + digit
        exponent -= 1 if i >= len(integer) else 0
    if not dot and not exp_text and not overflowed:
        if not negative:
            return significand
        if significand <= -_I64_MIN and significand != 0:
            return -significand
        return -float(significand)
    value = _serde_f64(significand, exponent + int(exp_text or 0))
    return -value if negative else value


def json_display(value: Any) -> str:
    """``value`` as compact JSON, spelled the way serde_json's ``Display`` writes it.

    Key order is kept and non-ASCII is written raw. Numbers go through serde_json's own parse
    (integers beyond 64 bits become floats, floats may move by an ulp) and print in ryu's
    spelling, because openai-harmony hands the schema to serde_json as JSON text.
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        number = _serde_number(repr(value))
        return str(number) if isinstance(number, int) else _ryu_float(number)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        items = (f"{json_display(str(k))}:{json_display(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(json_display(v) for v in value) + "]"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def _get(schema: Any, key: str) -> Any:
    # serde_json's Value::get: None for anything that is not an object.
    return schema.get(key) if isinstance(schema, Mapping) else None


def _has(schema: Any, key: str) -> bool:
    return isinstance(schema, Mapping) and key in schema


def _is_enum(schema: Any) -> bool:
    values = _get(schema, "enum")
    return isinstance(values, list) and len(values) > 0


def _default_text(
    schema: Any, default: Any, indent: str, *, enum_string_as_json: bool = False
) -> str:
    """``default: …`` as openai-harmony writes it (string defaults raw, not JSON-escaped).

    An enum's string default is written bare, except in a ``oneOf`` that is not a property,
    where openai-harmony writes it as JSON (quoted and escaped). It is comment text: a line
    break in it starts a new comment line.
    """
    if isinstance(default, str):
        if not _is_enum(schema):
            return _comment(f'default: "{default}"', indent)
        if not enum_string_as_json:
            return _comment(f"default: {default}", indent)
    return _comment(f"default: {json_display(default)}", indent)


def _with_nullable(schema: Any, type_text: str) -> str:
    if _get(schema, "nullable") is True and "null" not in type_text:
        return f"{type_text} | null"
    return type_text


def _variant_comments(
    variant: Any,
    indent: str,
    *,
    skip_description: bool,
    property_description: str | None,
    enum_string_as_json: bool = False,
) -> str:
    comments: list[str] = []
    description = _get(variant, "description")
    if (
        not skip_description
        and isinstance(description, str)
        and description != property_description
    ):
        comments.append(_comment(description, indent))
    if _has(variant, "default"):
        comments.append(
            _default_text(
                variant, variant["default"], indent, enum_string_as_json=enum_string_as_json
            )
        )
    return f" // {' '.join(comments)}" if comments else ""


def _one_of(variants: list[Any], indent: str, pointer: str) -> str:
    """A ``oneOf`` schema that is not a property: each variant on its own ``| `` line."""
    out: list[str] = []
    for i, variant in enumerate(variants):
        out.append(f"\n{indent} | ")
        nested = _schema(variant, f"{indent}   ", f"{pointer}/oneOf/{i}")
        out.append(_with_nullable(variant, nested))
        out.append(
            _variant_comments(
                variant,
                indent,
                skip_description=False,
                property_description=None,
                enum_string_as_json=True,
            )
        )
    return "".join(out)


def _one_of_property(
    key: str,
    schema: Mapping[str, Any],
    variants: list[Any],
    required: bool,
    indent: str,
    pointer: str,
) -> str:
    out: list[str] = []
    description = schema.get("description")
    property_description = description if isinstance(description, str) else None
    # A property description equal to the first variant's is written once, by the variant.
    first_description = _get(variants[0], "description") if variants else None
    above = property_description is not None and property_description != first_description
    if above:
        out.append(f"{indent}// {_comment(str(property_description), indent)}\n")
    if "default" in schema:
        out.append(f"{indent}// {_default_text(schema, schema['default'], indent)}\n")
    out.append(f"{indent}{_key(key)}{'' if required else '?'}:\n")
    for i, variant in enumerate(variants):
        nested = _schema(variant, f"{indent}   ", f"{pointer}/oneOf/{i}")
        type_text = _with_nullable(variant, nested)
        comments = _variant_comments(
            variant,
            indent,
            skip_description=i == 0 and above,
            property_description=property_description,
        )
        out.append(f"{indent} | {type_text}{comments}\n")
    out.append(f"{indent},\n")
    return "".join(out)


def _property(key: str, schema: Any, required: bool, indent: str, pointer: str) -> str:
    out: list[str] = []
    title = _get(schema, "title")
    if isinstance(title, str):
        out.append(f"{indent}// {_comment(title, indent)}\n{indent}//\n")
    has_one_of = _has(schema, "oneOf")
    description = _get(schema, "description")
    if not has_one_of and isinstance(description, str):
        out.append(f"{indent}// {_comment(description, indent)}\n")
    examples = _get(schema, "examples")
    if isinstance(examples, list) and examples:
        out.append(f"{indent}// Examples:\n")
        quoted = ('"' + ex + '"' for ex in examples if isinstance(ex, str))
        out.extend(f"{indent}// - {_comment(text, indent)}\n" for text in quoted)
    variants = _get(schema, "oneOf")
    if isinstance(variants, list):
        out.append(_one_of_property(key, schema, variants, required, indent, pointer))
        return "".join(out)
    type_text = _with_nullable(schema, _schema(schema, f"{indent}    ", pointer))
    out.append(f"{indent}{_key(key)}{'' if required else '?'}: {type_text},")
    # A oneOf that is not a list still suppresses the default comment, as in openai-harmony.
    if not has_one_of and _has(schema, "default"):
        out.append(f" // {_default_text(schema, schema['default'], indent)}")
    out.append("\n")
    return "".join(out)


def _object(schema: Mapping[str, Any], indent: str, pointer: str) -> str:
    out: list[str] = []
    description = schema.get("description")
    if isinstance(description, str):
        out.append(f"{indent}// {_comment(description, indent)}\n")
    out.append("{\n")
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        required_list = schema.get("required")
        required = (
            {r for r in required_list if isinstance(r, str)}
            if isinstance(required_list, list)
            else set()
        )
        for key, value in properties.items():
            where = f"{pointer}/properties/{_escape_pointer(str(key))}"
            out.append(_property(str(key), value, key in required, indent, where))
    out.append(f"{indent}}}")
    return "".join(out)


_SIMPLE_TYPES = {"number": "number", "integer": "number", "boolean": "boolean"}


def _type_names(type_value: list[Any], pointer: str) -> list[str]:
    names = []
    for i, name in enumerate(type_value):
        if not isinstance(name, str):
            continue
        if _TYPE_NAME.fullmatch(name) is None:
            # Written raw as a type, it could close the declaration: nothing escapes a type.
            shown = name if len(name) <= 40 else name[:37] + "..."
            raise _Unrenderable(f"{pointer}/type/{i}", f"{shown!r} is not a type name")
        names.append("number" if name == "integer" else name)
    return names


def _schema(schema: Any, indent: str, pointer: str) -> str:
    variants = _get(schema, "oneOf")
    if isinstance(variants, list):
        return _one_of(variants, indent, pointer)
    type_value = _get(schema, "type")
    if isinstance(type_value, list):
        names = _type_names(type_value, pointer)
        if names:
            return " | ".join(names)
    if not isinstance(type_value, str):
        return "any"
    if type_value == "object":
        return _object(schema, indent, pointer)
    if type_value == "string":
        values = _get(schema, "enum")
        if isinstance(values, list):
            strings = [_string_literal(v) for v in values if isinstance(v, str)]
            if strings:
                return " | ".join(strings)
        return "string"
    if type_value == "array":
        if "items" in schema:
            return f"{_schema(schema['items'], indent, f'{pointer}/items')}[]"
        return "Array<any>"
    return _SIMPLE_TYPES.get(type_value, "any")


def schema_to_typescript(schema: Any, indent: str = "") -> str:
    """The TypeScript type openai-harmony writes for a JSON Schema, with its text escaped.

    ``indent`` prefixes the lines of nested object members (4 spaces per level; ``oneOf``
    variants add 3). Raises :class:`RenderError` naming the JSON pointer of schema text that
    cannot be written without changing the declarations.
    """
    if too_deep(schema):
        raise RenderError(f"the schema nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        return _schema(schema, indent, "")
    except _Unrenderable as exc:
        raise RenderError(f"schema at {exc.pointer}: {exc.why}") from None


def _description_lines(text: str) -> list[str]:
    # rust_lines keeps openai-harmony's lines; a lone \r or U+2028/U+2029 inside one would
    # still end a `//` comment for a TypeScript reader, so it starts a comment line too.
    return [part for line in rust_lines(text) for part in _LINE_TERMINATORS.split(line)]


def comment_lines(text: str) -> list[str]:
    """``text`` as ``// `` comment lines, one per line of it (every line terminator counts):
    how every description a request supplies is written (tools, namespaces, response
    formats), so no line of it can start a section or a declaration."""
    return [f"// {line}" for line in _description_lines(text)]


#: Lines of plain declaration text that would read as structure: a section or block heading,
#: a namespace or a type declaration, a namespace's end.
_STRUCTURE_LINE = re.compile(r"\s*(?:#|namespace\s|type\s|\})")


def response_format_text(name: str, description: str | None, schema: Any) -> str:
    """One ``## name`` entry of ``# Response Formats``: the name checked as a tool name is,
    the description as comment lines, the schema as JSON (whose strings escape every line
    break). Raises :class:`RenderError` for a name that fails :func:`~.names.name_problem`."""
    problem = name_problem(name, what="response format")
    if problem is not None:
        raise RenderError(problem)
    if too_deep(schema):
        raise RenderError(
            f"response format {name}: the schema nests deeper than {MAX_JSON_DEPTH} levels"
        )
    comment = ""
    if description is not None:
        comment = "".join(f"{line}\n" for line in comment_lines(description))
    # U+2028/U+2029 may stand raw in a JSON string, but end a line for a TypeScript reader:
    # escaped, as the enum strings are (they occur only inside strings, so it stays JSON).
    body = json_display(schema).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"## {name}\n\n{comment}{body}"


def _tool_typescript(tool: ToolSpec, namespace: str) -> str:
    problem = name_problem(tool.name)
    if problem is not None:
        raise RenderError(f"namespace {namespace!r}: {problem}")
    lines = comment_lines(tool.description)
    if tool.parameters is not None:
        if too_deep(tool.parameters):  # before the walk below, which recurses per level
            raise RenderError(
                f"tool {namespace}.{tool.name}: the parameters schema nests objects and arrays "
                f"deeper than {MAX_JSON_DEPTH} levels (its defaults and examples included)"
            )
        try:
            parameters = _schema(tool.parameters, "", "")
        except _Unrenderable as exc:
            raise RenderError(
                f"tool {namespace}.{tool.name}: parameters at {exc.pointer}: {exc.why}"
            ) from None
        lines.append(f"type {tool.name} = (_: {parameters}) => any;\n")
    else:
        lines.append(f"type {tool.name} = () => any;\n")
    return "\n".join(lines)


def tool_typescript(tool: ToolSpec) -> str:
    """One tool: its ``// description`` lines, then ``type name = (_: …) => any;``."""
    return _tool_typescript(tool, "functions")


def namespace_typescript(namespace: ToolNamespace) -> str:
    """A ``## name`` block: description, then ``namespace name { … } // namespace name``."""
    problem = name_problem(namespace.name, what="namespace")
    if problem is not None:
        raise RenderError(problem)
    parts = [f"## {namespace.name}\n"]
    if namespace.description is not None:
        # With tools the description is a comment above the namespace; without, plain text.
        if namespace.tools:
            parts.extend(comment_lines(namespace.description))
        else:
            # Plain text, as openai-harmony writes it; a line that would read as a heading
            # or a declaration cannot be kept inert there, so it is refused.
            lines = _description_lines(namespace.description)
            forged = next((line for line in lines if _STRUCTURE_LINE.match(line)), None)
            if forged is not None:
                raise RenderError(
                    f"namespace {namespace.name!r}: its description has a line that reads as "
                    f"a heading or a declaration: {forged[:40]!r}"
                )
            parts.extend(rust_lines(namespace.description))
    if namespace.tools:
        parts.append(f"namespace {namespace.name} {{\n")
        parts.extend(_tool_typescript(tool, namespace.name) for tool in namespace.tools)
        parts.append(f"}} // namespace {namespace.name}")
    return "\n".join(parts)


def tools_section(namespaces: Iterable[ToolNamespace]) -> str:
    """``# Tools`` followed by each namespace, sorted by name (openai-harmony keeps a BTreeMap).

    A later namespace with the same name replaces an earlier one.
    """
    by_name = {namespace.name: namespace for namespace in namespaces}
    blocks = [namespace_typescript(by_name[name]) for name in sorted(by_name)]
    return "\n\n".join(["# Tools", *blocks])
