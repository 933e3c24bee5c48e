"""The gateway's settings: :class:`GatewayConfig` (``harmony-grammar serve``'s options)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..base.options import Options
from .plan import Limits
from .reasoning_seal import ReasoningSeal

__all__ = ["GatewayConfig"]


@dataclass(frozen=True, kw_only=True)
class GatewayConfig(Options):
    """The gateway's settings (``harmony-grammar serve``'s options).

    ``model`` is the gateway's own name for its model (its alias); ``engine_model`` the name
    the engine serves it under (``--model`` of an engine backend), which the backend always
    sends. :attr:`served_models` is the one list of names a client may send.
    """

    model: str = "tiny"
    engine_model: str | None = None
    api_key: str | None = None
    max_request_bytes: int = 4 * 1024 * 1024
    limits: Limits = field(default_factory=Limits)
    #: At most this many generation requests held at once; the next gets 429 (None: no bound).
    max_queue: int | None = None
    #: Seals Responses reasoning for the client to send back (a random key by default).
    reasoning_seal: ReasoningSeal = field(default_factory=ReasoningSeal)
    #: The address the server listens on: a request's Host must name it, a loopback name or
    #: an ``allow_hosts`` entry (:mod:`.security`).
    bound_host: str = "127.0.0.1"
    allow_hosts: tuple[str, ...] = ()
    #: Web origins whose requests are served, with CORS (``*``: any).
    allow_origins: tuple[str, ...] = ()
    #: The longest wait for a request's whole body (408 after it).
    body_seconds: float = 30.0

    @property
    def served_models(self) -> tuple[str, ...]:
        """Every name this gateway answers to: the engine's model first, then the alias.
        ``GET /v1/models`` lists them; a request may name any of them."""
        names = (self.engine_model, self.model) if self.engine_model else (self.model,)
        return tuple(dict.fromkeys(names))
