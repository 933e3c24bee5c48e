"""Whether a tool's parameters schema can check a call's arguments: :func:`schema_problem`.

A tools list is read by the declarations layer (:meth:`~harmony_grammar.declarations.ToolSet.read`),
which knows names and shapes but no JSON Schema: judging a schema takes jsonschema and the
schema compiler's meta-schema check, which the Harmony core must not load. So the judge is
here, beside the argument check that needs a valid schema, and is handed down:
``ToolSet.read(tools).check(schema_problem)`` (and a parse's
:attr:`~harmony_grammar.format.options.ParseOptions.argument_check` carries it).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from ..declarations.toolset import ToolsArgument, ToolSet
from .json_limits import JsonLimitError, loads_bounded

__all__ = ["checked_tools", "schema_problem"]


def checked_tools(tools: ToolsArgument, *, chat: bool = False) -> ToolSet:
    """:meth:`ToolSet.read <harmony_grammar.declarations.ToolSet.read>` of ``tools`` with
    every parameters schema judged by :func:`schema_problem`: ``ValueError`` with one line
    naming the tool for a list that cannot be declared or a schema that cannot check."""
    return ToolSet.read(tools, chat=chat).check(schema_problem)


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
    from ..schema.grammar_gate import schema_refs

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
    for ref in sorted(schema_refs(schema)):  # sorted: the same ref named every run
        if not ref.startswith("#"):
            return f"schema refers outside itself ($ref {ref[:80]!r}); only '#...' references"
        if _pointer_target(schema, ref[1:]) is None:
            return f"schema has an unresolvable $ref {ref[:80]!r}"
    return None


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
