"""Checking one tool call's arguments while the engine parses it (``tools=`` given).

The engine opens a :class:`CallCheck` when a call's header completes, feeds it each piece of
the body, and closes it with the terminator. It reports through the engine's ``diagnose``:
HG181 for a function that is not among the tools, HG180 at the first character after which
no JSON object can follow, HG182-HG184 when the complete body is beyond the limits of
:mod:`harmony_grammar.tools.json_limits`, and HG180 with the schema's complaint otherwise.

:func:`arguments_problem` is the one judge of a complete body: the validator's HG180 rule and
the dialect's argument reader ask it too, so the three layers report one finding alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ..tools.arguments import ArgumentChecker, first_schema_error
from ..tools.custom import CustomBody
from ..tools.json_limits import MAX_JSON_DEPTH, json_limit, json_message, loads_bounded

__all__ = ["CallCheck", "Diagnose", "arguments_problem"]

#: The engine's ``diagnose(code, message, start, end)``.
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

    def __init__(self, schema: Mapping[str, Any], diagnose: Diagnose, exact: bool) -> None:
        self._schema = schema
        self._checker = ArgumentChecker(schema)
        self._diagnose = diagnose
        self._exact = exact  # positions are character offsets (text input)
        self._chars = 0

    @classmethod
    def open(
        cls,
        tools: Mapping[str, Any],
        recipient: str,
        diagnose: Diagnose,
        *,
        exact: bool,
        start: int,
        end: int,
        namespaced: Mapping[str, Any] | None = None,
    ) -> CallCheck | None:
        """A check for a call to ``recipient``, or None when there is nothing to check.

        ``tools`` is the ``functions`` namespace by name; ``namespaced`` the tools of the
        other declared namespaces by recipient (``NAMESPACE.fn``). A call into a namespace
        neither declares (``browser.*``, ``python``: built-in tools) is not checked.
        """
        namespaced = namespaced or {}
        if recipient.startswith("functions."):
            name = recipient.removeprefix("functions.")
        else:
            namespace = recipient.partition(".")[0]
            if not any(key.partition(".")[0] == namespace for key in namespaced):
                return None  # built-in tools (browser.*, python) have no schema here
            name, tools = recipient, namespaced
        if name not in tools:
            known = ", ".join(sorted(tools)) or "none"
            diagnose("HG181", f"{name!r} is not among the tools ({known})", start, end)
            return None
        if isinstance(tools[name], CustomBody):
            return None  # a custom tool's input is raw text: the turn grammar holds it
        return cls(tools[name], diagnose, exact)

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
