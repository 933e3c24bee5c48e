"""The error every renderer raises: a conversation that cannot be rendered as asked.

One class for the whole package: the TypeScript rendering of tool schemas (``tools/``, below
this layer) raises it first, for schema text it cannot make inert, and the renderer and the
profiles raise the same class (a tool message without a name, a conversation the chosen
profile cannot express: the message says which profile and which message).
"""

from __future__ import annotations

from ..tools.typescript import RenderError

__all__ = ["RenderError"]
