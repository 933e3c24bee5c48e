"""The error every renderer raises: a conversation that cannot be rendered as asked."""

from __future__ import annotations

__all__ = ["RenderError"]


class RenderError(ValueError):
    """The conversation cannot be rendered (a tool message without a name, or a conversation
    the chosen profile cannot express: the message says which profile and which message)."""
