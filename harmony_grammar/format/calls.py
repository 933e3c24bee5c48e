"""Which declared tool a call goes to, and opening the check of its arguments.

When a call's header completes (``tools=`` given), :func:`open_call_check` finds the call's
tool among the declarations: HG181 when the function is not declared; nothing to check for a
built-in namespace nobody declared (``browser.*``, ``python``) or a custom tool (its body is
raw text, held by the turn grammar). A declared JSON tool's arguments are then checked by the
parse's :class:`~.options.ArgumentCheck`, which this layer only calls (it lives above the
Harmony core, :mod:`harmony_grammar.tools.call_check`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..declarations.custom import CustomBody
from .options import ArgumentCheck, CallArguments, Diagnose

__all__ = ["open_call_check"]


def open_call_check(
    check: ArgumentCheck | None,
    tools: Mapping[str, Any],
    recipient: str,
    diagnose: Diagnose,
    *,
    exact: bool,
    start: int,
    end: int,
    namespaced: Mapping[str, Any] | None = None,
) -> CallArguments | None:
    """The check of a call to ``recipient``, or None when there is nothing to check.

    ``tools`` is the ``functions`` namespace by name; ``namespaced`` the tools of the other
    declared namespaces by recipient (``NAMESPACE.fn``). HG181 (at ``[start, end)``) for a
    call to a function neither declares; with ``check`` None, that is all.
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
    if check is None or isinstance(tools[name], CustomBody):
        return None  # a custom tool's input is raw text: the turn grammar holds it
    return check.open(tools[name], diagnose, exact=exact)
