"""The error every renderer raises: a conversation that cannot be rendered as asked.

One class for the whole package, defined here with the renderer: the TypeScript rendering of
tool schemas (:mod:`.typescript`) raises it for schema text it cannot make inert, and the
renderer and the profiles raise it too (a tool message without a name, a conversation the
chosen profile cannot express: the message says which profile and which message).
"""

from __future__ import annotations

from ..base.errors import HarmonyGrammarError

__all__ = ["RenderError"]


class RenderError(HarmonyGrammarError, ValueError):
    """The conversation cannot be rendered (for example a tool message without a name, or a
    tool schema whose text would change the declarations)."""
