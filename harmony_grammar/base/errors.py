"""The base of every error the library raises on purpose."""

from __future__ import annotations

__all__ = ["HarmonyGrammarError"]


class HarmonyGrammarError(Exception):
    """Base of every error harmony-grammar raises on purpose.

    Each error class also keeps the built-in base it always had (``ValueError`` for bad
    input, ``RuntimeError`` for a missing resource, ``ImportError`` for a missing extra), so
    ``except ValueError`` still catches what it caught; ``except HarmonyGrammarError``
    catches every one of them and nothing a bug raises.
    """
