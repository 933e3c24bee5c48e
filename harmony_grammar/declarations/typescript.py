"""Recovering tool schemas from the ``namespace NAME { ... }`` TypeScript of a rendered prompt.

This is the inverse of :mod:`harmony_grammar.rendering.typescript`: a transcript declares its
tools only as the text of its developer message (``namespace functions``) and system message
(``namespace browser``), so a validator that checks calls against those tools must read the
rendering back. The rendering is lossy, and the recovered schema is as permissive as the lost
information requires, so that a document valid against the original schema stays valid:

* ``number`` stands for both ``integer`` and ``number``: it becomes ``{"type": "number"}``;
* ``any`` (what ``anyOf``, ``$ref``, ``allOf``, ``const`` and unknown types render as) becomes
  ``{}``;
* a ``oneOf`` becomes ``anyOf``: variants that were distinct may coincide once recovered
  (``integer`` and ``number``), and ``oneOf`` would then reject a valid document;
* constraints that are not rendered (``minimum``, ``pattern``, ``format``,
  ``additionalProperties`` ...) are simply absent.

Names, required and optional properties, nesting, arrays, string enums, type lists and
``null`` survive exactly; descriptions, titles, examples and defaults come back as annotations.
A tool whose type cannot be read (the renderer writes a multi-line description inside a schema
without ``//`` on its later lines) is recovered as taking any JSON object.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..base.errors import HarmonyGrammarError
from .spec import ToolSpec

__all__ = [
    "Authored",
    "NamespaceDeclaration",
    "TypeScriptError",
    "declared_names",
    "declared_namespaces",
    "schema_from_typescript",
    "tools_from_typescript",
]

#: What a tool whose parameters cannot be read back is taken to accept.
ANY_OBJECT: dict[str, Any] = {"type": "object"}


class TypeScriptError(HarmonyGrammarError, ValueError):
    """The text is not a TypeScript type as the renderer writes it; ``pos`` is where."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(f"{message} at character {pos}")
        self.pos = pos


@dataclass(frozen=True)
class NamespaceDeclaration:
    """A ``## name`` block of a ``# Tools`` section.

    ``tools`` is None for a namespace described only in prose (the built-in ``python``), whose
    calls address the namespace itself.
    """

    name: str
    tools: tuple[ToolSpec, ...] | None


# ---------------------------------------------------------------------------------- reader

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING = re.compile(r'"[^"\n]*"')
# What this package's renderer writes for a string that needs escapes (issue 27): a JSON
# string literal. openai-harmony writes strings raw, so only a literal holding a backslash
# is decoded, and only when it is valid JSON.
_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
# A property's key is written raw; it ends at the first ":" (after an optional "?") that is
# followed by a space or the end of the line.
_KEY = re.compile(r"(?P<key>[^\n]*?)(?P<optional>\?)?:(?=[ \n])")
_QUOTED_KEY = re.compile(r'(?P<key>"(?:[^"\\\n]|\\.)*")(?P<optional>\?)?:(?=[ \n])')
_SIMPLE = {"string", "number", "boolean", "null", "object", "array", "integer"}


def _default_value(text: str, *, enum: bool, as_json: bool = False) -> Any:
    """A ``// default: X`` value. A string is written raw in quotes, or bare for an enum;
    anything else as JSON. ``as_json``: the enum exception does not hold (the variants of a
    ``oneOf`` that is not a property write an enum's string default as JSON)."""
    if as_json or not enum:
        try:
            return json.loads(text)
        except ValueError:
            pass
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        return text[1:-1]
    return text


class _Reader:
    """A cursor over TypeScript text with the few scanning steps the grammar needs."""

    def __init__(self, text: str, pos: int = 0) -> None:
        self.text = text
        self.pos = pos

    def error(self, what: str) -> TypeScriptError:
        shown = self.text[self.pos : self.pos + 20]
        return TypeScriptError(f"expected {what}, found {shown!r}", self.pos)

    def spaces(self) -> None:
        while self.text.startswith(" ", self.pos):
            self.pos += 1

    def blank(self) -> None:
        """Skip spaces and newlines."""
        while self.pos < len(self.text) and self.text[self.pos] in " \n":
            self.pos += 1

    def take(self, literal: str) -> bool:
        if self.text.startswith(literal, self.pos):
            self.pos += len(literal)
            return True
        return False

    def expect(self, literal: str) -> None:
        if not self.take(literal):
            raise self.error(repr(literal))

    def rest_of_line(self) -> str:
        end = self.text.find("\n", self.pos)
        end = len(self.text) if end < 0 else end
        line, self.pos = self.text[self.pos : end], end
        return line

    def comment_lines(self) -> list[str]:
        """Consecutive ``//`` lines (indentation allowed), without their ``// `` prefix."""
        lines: list[str] = []
        while True:
            save = self.pos
            self.spaces()
            if not self.take("//"):
                self.pos = save
                return lines
            line = self.rest_of_line()
            lines.append(line[1:] if line.startswith(" ") else line)
            self.take("\n")

    def trailing_comment(self) -> str | None:
        """A `` // ...`` comment ending the current line, if any."""
        save = self.pos
        self.spaces()
        if self.take("//"):
            return self.rest_of_line().removeprefix(" ")
        self.pos = save
        return None


# ---------------------------------------------------------------------------------- types


def _annotate(schema: dict[str, Any], comments: list[str]) -> None:
    """Read a property's comment lines back into title, description and examples."""
    i = 0
    if len(comments) >= 2 and comments[1] == "":
        schema["title"] = comments[0]
        i = 2
    descriptions: list[str] = []
    while i < len(comments):
        line = comments[i]
        if line == "Examples:":
            examples = []
            i += 1
            while i < len(comments) and comments[i].startswith('- "'):
                examples.append(comments[i][3:].removesuffix('"'))
                i += 1
            schema["examples"] = examples
            continue
        if line.startswith("default: "):
            schema["default"] = _default_value(line[len("default: ") :], enum="enum" in schema)
        else:
            descriptions.append(line)
        i += 1
    if descriptions:
        schema["description"] = "\n".join(descriptions)


def _without_last_array(schema: dict[str, Any]) -> dict[str, Any] | None:
    """``schema`` with the array level of its last (innermost) ``anyOf`` variant removed,
    or None when that variant is not an array."""
    if "anyOf" in schema:
        *first, last = schema["anyOf"]
        inner = _without_last_array(last)
        return None if inner is None else {**schema, "anyOf": [*first, inner]}
    if schema.get("type") == "array" and "items" in schema:
        return dict(schema["items"])
    return None


def _unwrap(schema: dict[str, Any], depth: int) -> dict[str, Any]:
    for _ in range(depth):
        schema = schema["items"]
    return schema


def _union(members: list[dict[str, Any]]) -> dict[str, Any]:
    """``A | B | ...`` back into one schema (string enums, type lists, nullable, anyOf)."""
    if len(members) == 1:
        return members[0]
    enums = [m for m in members if "enum" in m]
    nulls = [m for m in members if m == {"type": "null"}]
    if enums and len(enums) + len(nulls) == len(members):
        values = [v for m in enums for v in m["enum"]]
        if nulls:
            return {"type": ["string", "null"], "enum": [*values, None]}
        return {"type": "string", "enum": values}
    if all(set(m) == {"type"} and isinstance(m["type"], str) for m in members):
        return {"type": [m["type"] for m in members]}
    return {"anyOf": members}


class _TypeParser:
    """Recursive descent over the TypeScript the renderer writes (module docstring)."""

    def __init__(self, reader: _Reader) -> None:
        self.r = reader

    def type(self) -> dict[str, Any]:
        """A type, possibly a ``oneOf`` written as ``\\n | variant`` lines."""
        r = self.r
        r.spaces()
        if r.text.startswith("\n", r.pos):
            save = r.pos
            r.blank()
            if r.text.startswith("|", r.pos):
                r.pos = save
                return {"anyOf": self.variants(json_defaults=True)}
            r.pos = save
        comments = r.comment_lines()  # an object's description stands before its "{"
        schema = self.union()
        if comments and schema.get("type") == "object":
            schema = {"type": "object", "description": "\n".join(comments), **schema}
        return schema

    def variants(self, *, json_defaults: bool) -> list[dict[str, Any]]:
        """``| variant // comment`` lines, each on its own line: a newline and ``|`` go on.

        ``json_defaults``: the variants of a ``oneOf`` that is not a property, whose enum
        defaults are JSON."""
        r = self.r
        variants: list[dict[str, Any]] = []
        column = -1  # a nested oneOf's lines are indented further: the column tells them apart
        while True:
            save = r.pos
            r.blank()
            here = r.pos - (r.text.rfind("\n", 0, r.pos) + 1)
            if not r.text.startswith("|", r.pos) or column not in (-1, here):
                r.pos = save
                break
            column = here
            r.pos += 1
            variant = self.type()
            comment = r.trailing_comment()
            if comment is not None:
                _variant_comment(variant, comment, json_defaults=json_defaults)
            variants.append(variant)
        if not variants:
            raise r.error("'|'")
        return variants

    def items_variants(self) -> dict[str, Any]:
        """``key: \n | a\n | b[],``: an array whose items are a ``oneOf`` (the renderer
        writes the ``[]`` after the last variant)."""
        variants: dict[str, Any] = {"anyOf": self.variants(json_defaults=True)}
        items = _without_last_array(variants)
        return variants if items is None else {"type": "array", "items": items}

    def union(self) -> dict[str, Any]:
        r = self.r
        members = [self.postfix()]
        while True:
            save = r.pos
            r.spaces()
            if not r.take("| "):
                r.pos = save
                break
            members.append(self.postfix())
        # An array of a string enum or of a type list is written "a" | "b"[]: inline unions
        # never hold an array otherwise, so "[]" after the last member applies to them all.
        depth = members[-1][1] if len(members) > 1 else 0
        if depth:
            members[-1] = (_unwrap(members[-1][0], depth), 0)
        schema = _union([member for member, _ in members])
        for _ in range(depth):
            schema = {"type": "array", "items": schema}
        return schema

    def postfix(self) -> tuple[dict[str, Any], int]:
        """A primary type and how many ``[]`` follow it."""
        r = self.r
        schema, depth = self.primary(), 0
        while r.take("[]"):
            schema, depth = {"type": "array", "items": schema}, depth + 1
        return schema, depth

    def primary(self) -> dict[str, Any]:
        r = self.r
        if r.text.startswith("{", r.pos):
            return self.object()
        escaped = _JSON_STRING.match(r.text, r.pos)
        if escaped and "\\" in escaped.group():
            value = _json_string(escaped.group())
            if value is not None:
                r.pos = escaped.end()
                return {"type": "string", "enum": [value]}
        match = _STRING.match(r.text, r.pos)
        if match:
            r.pos = match.end()
            return {"type": "string", "enum": [match.group()[1:-1]]}
        if r.take("Array<any>"):
            return {"type": "array"}
        match = _IDENT.match(r.text, r.pos)
        if not match:
            raise r.error("a type")
        r.pos = match.end()
        name = match.group()
        # A type list writes JSON type names raw (``date | string`` for an unknown "date"),
        # so an unknown name is some type we cannot know: any.
        return {"type": name} if name in _SIMPLE else {}

    def object(self) -> dict[str, Any]:
        r = self.r
        r.expect("{")
        r.expect("\n")
        properties: dict[str, Any] = {}
        required: list[str] = []
        while True:
            comments = r.comment_lines()
            r.spaces()
            if r.take("}"):
                break
            key, optional = self.key()
            if r.take("\n"):  # a oneOf property: variant lines, then a line holding ","
                schema: dict[str, Any] = {"anyOf": self.variants(json_defaults=False)}
                r.blank()
                r.expect(",")
            else:
                r.expect(" ")
                schema = self.items_variants() if r.text.startswith("\n", r.pos) else self.type()
                r.expect(",")
                comment = r.trailing_comment()
                if comment is not None:
                    comments = [*comments, comment]
            _annotate(schema, comments)
            r.expect("\n")
            properties[key] = schema
            if not optional:
                required.append(key)
        schema = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        return schema

    def key(self) -> tuple[str, bool]:
        r = self.r
        quoted = _QUOTED_KEY.match(r.text, r.pos)
        if quoted:  # a name the renderer had to quote: it may hold ": " itself
            value = _json_string(quoted.group("key"))
            if value is not None:
                r.pos = quoted.end()
                return value, quoted.group("optional") is not None
        match = _KEY.match(r.text, r.pos)
        if not match or not match.group("key"):
            raise r.error("a property")
        r.pos = match.end()
        return match.group("key"), match.group("optional") is not None


def _json_string(literal: str) -> str | None:
    try:
        value = json.loads(literal)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _variant_comment(variant: dict[str, Any], comment: str, *, json_defaults: bool) -> None:
    """`` // description default: X`` after a ``oneOf`` variant."""
    description, _, default = comment.partition("default: ")
    if default:
        variant["default"] = _default_value(default, enum="enum" in variant, as_json=json_defaults)
    if description.strip():
        variant["description"] = description.rstrip()


def schema_from_typescript(text: str) -> dict[str, Any]:
    """The JSON Schema of one TypeScript type as :func:`typescript.schema_to_typescript`
    writes it (see the module docstring for what the rendering loses).

    Raises :class:`TypeScriptError` when ``text`` is not such a type.
    """
    reader = _Reader(text)
    schema = _TypeParser(reader).type()
    reader.blank()
    if reader.pos != len(text):
        raise reader.error("the end of the type")
    return schema


# ---------------------------------------------------------------------------------- tools

_TOOL = re.compile(r"^type (?P<name>[^\s=]+) = (?P<signature>\(\) => any;|\(_: )", re.MULTILINE)
_SIGNATURE_END = ") => any;\n"
_HEADING = re.compile(r"^## (?P<name>\S+)\n", re.MULTILINE)


def _namespace_body(text: str, name: str) -> tuple[int, int] | None:
    # Both ends at the start of a line: the same words inside a comment or a string (schema
    # text) are not the namespace's end, and must not hide the tools after them.
    opening = re.compile(f"^namespace {re.escape(name)} {{\n", re.MULTILINE).search(text)
    if opening is None:
        return None
    closing = re.compile(f"^}} // namespace {re.escape(name)}$", re.MULTILINE)
    end = closing.search(text, opening.end())
    return opening.end(), len(text) if end is None else end.start()


def _tool_description(body: str, type_start: int) -> str:
    """The ``// `` lines right above a ``type`` line."""
    lines = body[:type_start].split("\n")[:-1]
    comments: list[str] = []
    for line in reversed(lines):
        if not line.startswith("//"):
            break
        comments.append(line[3:] if line.startswith("// ") else line[2:])
    return "\n".join(reversed(comments))


def tools_from_typescript(text: str, namespace: str = "functions") -> tuple[ToolSpec, ...] | None:
    """The tools of the ``namespace {namespace} { ... }`` block in ``text``, or None without one.

    ``text`` is typically a developer message's content. A tool whose parameter type cannot be
    read back is recovered with ``{"type": "object"}`` (any object); a tool without parameters
    (``() => any``) has ``parameters=None``.
    """
    span = _namespace_body(text, namespace)
    if span is None:
        return None
    body = text[span[0] : span[1]]
    tools: list[ToolSpec] = []
    for match in _TOOL.finditer(body):
        description = _tool_description(body, match.start())
        if match.group("signature").startswith("()"):
            tools.append(ToolSpec(match.group("name"), description, None))
            continue
        reader = _Reader(body, match.end())
        try:
            parameters = _TypeParser(reader).type()
            reader.expect(_SIGNATURE_END)
        except TypeScriptError:
            parameters = dict(ANY_OBJECT)
        tools.append(ToolSpec(match.group("name"), description, parameters))
    return tuple(tools)


def declared_namespaces(text: str) -> tuple[NamespaceDeclaration, ...]:
    """Every ``## name`` block of the ``# Tools`` section of ``text`` (a system or developer
    message's content), with its tools when it has a ``namespace`` block."""
    start = text.find("# Tools\n")
    if start < 0:
        return ()
    section = text[start:]
    # The section ends at the next top-level heading (``# Valid channels``, ...).
    next_heading = re.search(r"\n# ", section)
    if next_heading is not None:
        section = section[: next_heading.start()]
    declarations = []
    for match in _HEADING.finditer(section):
        name = match.group("name")
        declarations.append(NamespaceDeclaration(name, tools_from_typescript(section, name)))
    return tuple(declarations)


class Authored(Protocol):
    """A message as :func:`declared_names` reads it (the format layer's
    :class:`~harmony_grammar.format.model.Message` is one): its author and its text."""

    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...


def declared_names(messages: Sequence[Authored]) -> frozenset[str]:
    """The function names the last developer message among ``messages`` declares (none
    when there is none): what a parse knows of the tools when ``tools=`` is not given."""
    for message in reversed(messages):
        if message.role == "developer":  # a Role is a str enum
            declared = tools_from_typescript(message.content)
            return frozenset(tool.name for tool in declared or ())
    return frozenset()
