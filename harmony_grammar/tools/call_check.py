"""Checking one tool call's arguments while the engine parses it (``tools=`` given).

The Harmony core declares what an argument check must do
(:class:`~harmony_grammar.format.options.ArgumentCheck`) and never imports one:
:data:`SCHEMA_CHECK` is the library's, which the package's root installs: the default
``argument_check`` of every :class:`~harmony_grammar.format.options.ParseOptions` asks it. When
a call's header completes, the engine finds the call's tool (HG181 for none,
:mod:`harmony_grammar.format.calls`) and opens a :class:`CallCheck`, feeds it each piece of the
body, and closes it with the terminator. It reports through the engine's ``diagnose``: HG180 at
the first character after which no JSON object can follow, HG182-HG184 when the complete body
is beyond the limits of :mod:`.json_limits`, and HG180 with the schema's complaint otherwise.

:func:`arguments_problem` is the one judge of a complete body: the validator's HG180 rule and
the dialect's argument reader ask it too, so the three layers report one finding alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from .arguments import ArgumentChecker, first_schema_error
from .json_limits import MAX_JSON_DEPTH, json_limit, json_message, loads_bounded
from .parameters import schema_problem

__all__ = ["SCHEMA_CHECK", "CallCheck", "SchemaCheck", "arguments_problem"]

#: The engine's ``diagnose(code, message, start, end)``
#: (:data:`harmony_grammar.format.options.Diagnose`, spelled out: this module does not import
#: the format layer).
Diagnose = Callable[[str, str, int, int], None]


def arguments_problem(document: str, schema: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """Why a call's complete arguments are not acceptable, as ``(code, message)``, or None.

    First the JSON limits (HG182-HG184), before Python's ``json`` reads the text; then, with
    a ``schema``, its first complaint (HG180, with the JSON pointer); without one, only that
    the text is one JSON object (HG180).
    """
    limit = json_limit(document)
    if limit is not None:
        return limit.code, f"the arguments are beyond a limit: {limit.message}"
    if schema is not None:
        problem = first_schema_error(schema, document)
        if problem is None:
            return None
        return "HG180", f"the arguments do not match the tool's schema: {problem}"
    try:
        value = loads_bounded(document)
    except json.JSONDecodeError as exc:
        why = f"not JSON ({json_message(exc)} at column {exc.colno})"
    else:
        if isinstance(value, dict):
            return None
        why = f"a JSON {type(value).__name__}, not an object"
    return "HG180", f"the arguments are {why}"


class CallCheck:
    """The streaming check of one call's arguments against its tool's schema."""

    def __init__(self, schema: Mapping[str, Any], diagnose: Diagnose, *, exact: bool) -> None:
        self._schema = schema
        self._checker = ArgumentChecker(schema)
        self._diagnose = diagnose
        self._exact = exact  # positions are character offsets (text input)
        self._chars = 0

    def feed(self, text: str, start: int, end: int) -> None:
        """A piece of the body at ``[start, end)``."""
        bad = self._checker.feed(text)
        if bad is not None:
            within = bad - self._chars
            at = start + within if self._exact else start
            what = (
                f"the arguments nest deeper than {MAX_JSON_DEPTH} at character {bad}"
                if self._checker.failure == "HG182"
                else f"the arguments stop being a JSON object at character {bad}"
            )
            self._diagnose(
                self._checker.failure,
                # Only the bad character: what follows depends on how the input was chunked.
                f"{what} ({text[within : within + 1]!r})",
                at,
                at + 1 if self._exact else end,
            )
        self._chars += len(text)

    def close(self, content: str, start: int, end: int) -> None:
        """The body ended; check it against the schema (unless it already failed)."""
        checker = self._checker
        if checker.failed_at is not None:
            return
        found = arguments_problem(content, self._schema)
        if found is not None and not checker.complete() and json_limit(content) is None:
            # The text is a prefix of an object (nothing failed while it streamed): say so.
            problem = "they end before the JSON object is complete"
            found = "HG180", f"the arguments do not match the tool's schema: {problem}"
        if found is not None:
            self._diagnose(*found, start, end)


class SchemaCheck:
    """The library's :class:`~harmony_grammar.format.options.ArgumentCheck`: parameters
    judged by :func:`~.parameters.schema_problem`, each call by a :class:`CallCheck`."""

    def schema_problem(self, schema: Any) -> str | None:
        """Why ``schema`` cannot check a call's arguments (:func:`~.parameters.schema_problem`)."""
        return schema_problem(schema)

    def open(self, schema: Mapping[str, Any], diagnose: Diagnose, *, exact: bool) -> CallCheck:
        """A :class:`CallCheck` of one call's arguments against ``schema``."""
        return CallCheck(schema, diagnose, exact=exact)

    def __reduce__(self) -> str:
        return "SCHEMA_CHECK"  # one object: options that carry it pickle by reference

    def __repr__(self) -> str:
        return "SCHEMA_CHECK"


#: The one instance (the default argument check; harmony_grammar/__init__.py installs it).
SCHEMA_CHECK = SchemaCheck()
