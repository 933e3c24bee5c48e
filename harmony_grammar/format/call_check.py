"""Checking one tool call's arguments while the engine parses it (``tools=`` given).

The engine opens a :class:`CallCheck` when a call's header completes, feeds it each piece of
the body, and closes it with the terminator. It reports through the engine's ``diagnose``:
HG181 for a function that is not among the tools, HG180 at the first character after which
no JSON object can follow, HG182-HG184 when the complete body is beyond the limits of
:mod:`harmony_grammar.tools.json_limits`, and HG180 with the schema's complaint otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..tools.arguments import ArgumentChecker
from ..tools.custom import CustomBody
from ..tools.json_limits import MAX_JSON_DEPTH, json_limit

__all__ = ["CallCheck", "Diagnose"]

#: The engine's ``diagnose(code, message, start, end)``.
Diagnose = Callable[[str, str, int, int], None]


class CallCheck:
    """The streaming check of one call's arguments against its tool's schema."""

    def __init__(self, checker: ArgumentChecker, diagnose: Diagnose, exact: bool) -> None:
        self._checker = checker
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
        return cls(ArgumentChecker(tools[name]), diagnose, exact)

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
        limit = json_limit(content)  # before Python's json reads it (HG182-HG184)
        if limit is not None:
            self._diagnose(
                limit.code, f"the arguments are beyond a limit: {limit.message}", start, end
            )
            return
        problem = (
            checker.schema_error(content)
            if checker.complete()
            else "they end before the JSON object is complete"
        )
        if problem is not None:
            self._diagnose(
                "HG180", f"the arguments do not match the tool's schema: {problem}", start, end
            )
