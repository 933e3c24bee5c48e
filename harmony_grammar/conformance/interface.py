"""The adapter interface: the shapes every implementation under test speaks.

An adapter is one callable: a JSON-shaped request in, a JSON-shaped response out (the shapes
are in ``conformance/README.md``, so an implementation in any language can be wrapped by a
few lines that speak them). A parse request carries the case's ``mode``, ``role``,
``strict``, ``text`` and/or ``tokens`` (and ``chunks`` or ``token_chunks`` for streaming
cases, ``tools`` where the case declares functions); the response is ``{"valid", "messages",
"error", "codes", "next_turn"}``, where ``error`` (the first error's position) and ``codes``
(harmony-grammar's diagnostic codes) are optional. A render request carries a Chat
Completions ``conversation`` and a render ``mode``; the response is ``{"text", "tokens"}``.
An adapter that cannot run a request raises :class:`Unsupported` (the case is *skipped*);
anything else it raises makes the case *errored*.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from ..base.errors import HarmonyGrammarError

__all__ = ["MESSAGE_FIELDS", "Adapter", "Json", "Unsupported"]

#: A JSON-shaped request or response.
Json: TypeAlias = dict[str, Any]
#: One implementation under test.
Adapter: TypeAlias = Callable[[Json], Json]

#: The fields of an expected message, in the order the README lists them.
MESSAGE_FIELDS = ("role", "name", "recipient", "channel", "content_type", "content", "terminator")


class Unsupported(HarmonyGrammarError):
    """Raised by an adapter for a request it does not handle (rendering, lenient parsing)."""
