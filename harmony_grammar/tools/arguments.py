"""Checking tool-call arguments while they stream, against the tool's JSON Schema.

A host that streams a tool call wants to know the first character after which no valid
argument document can follow, so it can stop generating there. llguidance's matcher over a
byte-level tokenizer answers that: it consumes bytes while some valid completion remains.

The streaming check must never cry wolf, so it uses a grammar of *any* JSON object: the
schema-derived grammars (``harmony_grammar.schema``) fix the property order, which is right
for generation but would reject valid arguments written in another order. When the document
is complete, it is validated against the schema with jsonschema, and the first failure is
reported with its JSON pointer.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import unquote

from .custom import FUNCTIONS, CustomBody, entry_body, namespace_entries
from .json_limits import DepthTracker, JsonLimitError, json_message, loads_bounded
from .names import check_tool_name

__all__ = [
    "ArgumentChecker",
    "ToolsArgument",
    "first_schema_error",
    "namespace_targets",
    "schema_problem",
    "tool_schemas",
    "tool_targets",
]

#: What ``tools=`` accepts: OpenAI-style or plain tool lists, or ``{name: schema}``.
ToolsArgument = Iterable[Mapping[str, Any]] | Mapping[str, Any] | None


def tool_schemas(tools: ToolsArgument) -> dict[str, Any]:
    """``{name: parameters schema}`` from OpenAI-style or plain tool lists (or a mapping).

    These are the ``functions`` namespace: a custom tool's value is its
    :class:`~.custom.CustomBody`, and ``namespace`` entries are left to :func:`tool_targets`.

    Raises ``ValueError`` with one line naming the tool for a malformed list, a name that
    fails the one name check (:class:`~.names.ToolNameError`, see :mod:`.names`) or a
    parameters schema that cannot check anything (see :func:`schema_problem`).
    """
    if tools is None:
        return {}
    if isinstance(tools, Mapping):
        schemas = dict(tools)
    else:
        schemas = {}
        for tool in tools:
            if not isinstance(tool, Mapping):
                raise ValueError(f"a tool must be an object, not {type(tool).__name__}")
            if tool.get("type") == "namespace":
                continue  # its tools are called as NAMESPACE.fn, not functions.fn: tool_targets
            spec = (
                tool.get("function", tool) if tool.get("type", "function") == "function" else tool
            )
            name = spec.get("name") if isinstance(spec, Mapping) else None
            if not isinstance(name, str):
                raise ValueError(f"a tool without a name: {_short(tool)}")
            schemas[name] = entry_body(tool)
    for name, schema in schemas.items():
        check_tool_name(name)  # the one name check (tools/names.py), wherever tools enter
        if isinstance(schema, CustomBody):
            continue  # raw text, not JSON: the turn grammar holds it to its grammar
        problem = schema_problem(schema)
        if problem is not None:
            raise ValueError(f"tool {name!r}: the parameters {problem}")
    return schemas


def tool_targets(tools: ToolsArgument) -> dict[str, Any]:
    """Every callable tool by the recipient a call to it is written to.

    Function and custom tools are ``functions.NAME`` (a ``{name: schema}`` mapping is read so
    too); the tools of a ``namespace`` entry are ``NAMESPACE.NAME``. Each value is the
    parameters schema, or the custom tool's :class:`~.custom.CustomBody`. Raises
    ``ValueError`` as :func:`tool_schemas` does, and for two tools with one recipient.
    """
    targets = {f"{FUNCTIONS}.{name}": body for name, body in tool_schemas(tools).items()}
    if tools is None or isinstance(tools, Mapping):
        return targets
    for tool in tools:
        if not (isinstance(tool, Mapping) and tool.get("type") == "namespace"):
            continue
        for namespace, entry in namespace_entries(tool):
            name = check_tool_name(entry.get("name"))
            body = entry_body(entry)
            problem = None if isinstance(body, CustomBody) else schema_problem(body)
            if problem is not None:
                raise ValueError(f"tool {namespace}.{name}: the parameters {problem}")
            recipient = f"{namespace}.{name}"
            if recipient in targets:
                raise ValueError(f"two tools are called as {recipient!r}")
            targets[recipient] = body
    return targets


def namespace_targets(tools: ToolsArgument) -> dict[str, Any]:
    """The tools of the ``namespace`` entries by recipient (``NAMESPACE.NAME``): the part of
    :func:`tool_targets` that :func:`tool_schemas` leaves out, for the parser's call check."""
    prefix = f"{FUNCTIONS}."
    return {r: body for r, body in tool_targets(tools).items() if not r.startswith(prefix)}


def _short(value: Any) -> str:
    try:
        return json.dumps(value)[:80]
    except (TypeError, ValueError, RecursionError):
        return type(value).__name__


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot serve as a tool's parameters (one line), or None when it can.

    It must be a JSON Schema (an object or a boolean) valid against its metaschema, within the
    JSON limits, and every ``$ref`` must point into the schema itself: nothing is fetched.
    """
    if isinstance(schema, bool):
        return None
    if not isinstance(schema, Mapping):
        return f"must be a JSON Schema object, not {type(schema).__name__}"
    try:
        text = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError, RecursionError) as exc:
        return f"are not JSON ({type(exc).__name__})"
    return _schema_text_problem(text)


@functools.lru_cache(maxsize=256)
def _schema_text_problem(text: str) -> str | None:
    # Cached by the schema's text: a dataset run checks the same tools for every record.
    import jsonschema

    from ..schema.check import check_schema
    from ..schema.errors import InvalidSchemaError

    try:
        schema = loads_bounded(text)
    except JsonLimitError as exc:
        return f"schema is too large to check ({exc.limit.message})"
    validator_class = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )
    try:
        # The schema compiler's own meta-schema check: one definition of a valid schema.
        check_schema(schema, validator_class)
    except InvalidSchemaError as exc:
        message = " ".join(exc.reason.split())[:160]
        return f"schema is invalid at {exc.pointer or '/'}: {message}"
    except RecursionError:
        return "schema nests too deep to check"
    for ref in _refs(schema):
        if not ref.startswith("#"):
            return f"schema refers outside itself ($ref {ref[:80]!r}); only '#...' references"
        if _pointer_target(schema, ref[1:]) is None:
            return f"schema has an unresolvable $ref {ref[:80]!r}"
    return None


def _refs(schema: Any) -> Iterator[str]:
    """Every ``$ref`` string in ``schema``, walked without recursion."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                yield ref
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


_MISSING = object()


def _pointer_target(schema: Any, pointer: str) -> Any:
    """The value a JSON pointer (``/a/b``, or ``""`` for the root) names, or None."""
    node = schema
    if not pointer:
        return node
    if not pointer.startswith("/"):
        return _anchor(schema, pointer)
    for raw in pointer[1:].split("/"):
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            node = node.get(part, _MISSING)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
        if node is _MISSING:
            return None
    return node


def _anchor(schema: Any, name: str) -> Any:
    """The subschema with ``$anchor`` (or a draft-07 ``$id`` of ``#name``) ``name``, or None."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("$anchor") == name or node.get("$id") == f"#{name}":
                return node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


@functools.lru_cache(maxsize=1)
def _byte_tokenizer() -> Any:
    import llguidance

    return llguidance.LLTokenizer("byte")


@functools.lru_cache(maxsize=1)
def _object_grammar() -> str:
    # Our compiler's grammar of any object, in flexible whitespace: it accepts every JSON
    # spelling (llguidance's own %json grammar rejects escapes such as "\u0041").
    from ..schema import schema_to_grammar

    return schema_to_grammar(
        {"type": "object"}, target="llguidance", whitespace="flexible", float_safe=False
    )


class ArgumentChecker:
    """Feeds one tool call's argument text to a matcher and finds the first bad character."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        import llguidance

        self._schema = schema
        self._tokenizer = _byte_tokenizer()
        self._matcher = llguidance.LLMatcher(self._tokenizer, _object_grammar())
        self._chars = 0
        self._depth = DepthTracker()
        self.failed_at: int | None = None
        #: Why it failed: HG180 (no JSON object can follow) or HG182 (nested too deep).
        self.failure = "HG180"

    def feed(self, text: str) -> int | None:
        """Consume more argument text; the character offset of the first bad one, if any."""
        if self.failed_at is not None:
            return None
        too_deep = self._depth.feed(text)
        if too_deep is not None:
            # Stop before the matcher: it would grind through every level first.
            text = text[: too_deep - self._chars]
            if self._consume(text) is None:
                self.failed_at, self.failure = too_deep, "HG182"
            return self.failed_at
        return self._consume(text)

    def _consume(self, text: str) -> int | None:
        # A lone surrogate has no UTF-8 form: "?" stands in (one character for one, so offsets
        # hold), and the complete document's limit check reports it (HG184).
        data = text.encode("utf-8", errors="replace")
        tokens = self._tokenizer.tokenize_bytes(data)
        consumed = self._matcher.try_consume_tokens(tokens)
        if consumed < len(tokens):
            bad_char = len(data[:consumed].decode("utf-8", errors="ignore"))
            self.failed_at = self._chars + bad_char
            return self.failed_at
        self._chars += len(text)
        return None

    def complete(self) -> bool:
        """True when what was fed is a whole JSON object."""
        return self.failed_at is None and bool(self._matcher.is_accepting())

    def schema_error(self, document: str) -> str | None:
        """The first schema violation of the complete ``document``, with its JSON pointer."""
        return first_schema_error(self._schema, document)


def first_schema_error(schema: Mapping[str, Any], document: str) -> str | None:
    """``"at /pointer: message"`` for the first violation, or None when ``document`` is valid.

    Callers report a document over the limits of :mod:`.json_limits` with its own code first;
    here such a document is only described.
    """
    import jsonschema

    try:
        instance = loads_bounded(document)
    except JsonLimitError as exc:
        return f"not readable ({exc.limit.message})"
    except json.JSONDecodeError as exc:
        return f"not JSON ({json_message(exc)} at character {exc.pos})"
    validator_class = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )
    try:
        errors = sorted(
            validator_class(schema).iter_errors(instance), key=lambda e: list(e.absolute_path)
        )
    except RecursionError:
        # A recursive schema ($ref) over a document near the depth limit.
        return "the document nests too deep for the schema check"
    if not errors:
        return None
    error = errors[0]
    pointer = "".join(
        f"/{str(part).replace('~', '~0').replace('/', '~1')}" for part in error.absolute_path
    )
    return f"at {pointer or '/'}: {error.message}"
