"""Who may talk to the gateway: the Host and Origin checks, the JSON-only rule, and CORS.

A gateway on ``127.0.0.1`` is still reachable from any web page the user opens: the browser
sends the page's requests to ``localhost`` for it. Two attacks use that, and each check here
stops one (the class of Ollama's CVE-2024-28224):

* **DNS rebinding.** A page on ``evil.example`` makes its own name resolve to ``127.0.0.1``;
  its requests then reach the gateway, same-origin as far as the browser knows, and it can
  read the answers. They carry ``Host: evil.example``. A request whose Host is not the
  bound address, ``localhost`` (or a loopback address) or an ``--allow-host`` entry is
  refused (403), so the rebound name gets nothing.
* **Cross-site requests.** Any page may POST to ``http://127.0.0.1:8000`` without asking
  (a "simple" request: ``text/plain`` body, no preflight). It cannot read the answer, but
  the gateway would do the work. A request with an ``Origin`` that is not the gateway's own
  is refused (403) unless ``--allow-origin`` lists it, and a request with a body must say
  ``Content-Type: application/json`` (415 otherwise), which a page can only send after a
  CORS preflight, which the gateway answers only for allowed origins.

Every refusal is an OpenAI error object. ``--allow-origin`` also turns on CORS for those
origins (Starlette's ``CORSMiddleware``: preflights answered, ``Access-Control-Allow-Origin``
on answers), for browser clients the user trusts.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from .errors import GatewayError

__all__ = ["RequestGuard", "cors_middleware", "host_name"]

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "127.0.0.1", "::1"})
_JSON = "application/json"


def host_name(value: str) -> str:
    """The host of a ``Host`` header or an address (port and IPv6 brackets removed),
    lower-cased."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    if value.count(":") == 1:
        return value.partition(":")[0]
    return value


def _is_loopback(name: str) -> bool:
    if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class _Policy:
    bound: str
    hosts: frozenset[str]
    origins: frozenset[str]

    def host_ok(self, host: str | None) -> bool:
        if "*" in self.hosts:
            return True
        if not host:
            return False  # HTTP/1.1 requires Host; a request without one is not a browser's
        name = host_name(host)
        return name == self.bound or _is_loopback(name) or name in self.hosts

    def origin_ok(self, origin: str, host: str | None) -> bool:
        if "*" in self.origins or origin in self.origins:
            return True
        # Same origin: the page was served by this gateway (its scheme, host and port).
        parts = urlsplit(origin)
        return host is not None and parts.scheme in ("http", "https") and (
            parts.netloc.lower() == host.strip().lower()
        )


class RequestGuard:
    """ASGI middleware: the Host, Origin and Content-Type checks (see the module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        bound_host: str = "127.0.0.1",
        allow_hosts: Iterable[str] = (),
        allow_origins: Iterable[str] = (),
    ) -> None:
        self.app = app
        self.policy = _Policy(
            host_name(bound_host),
            frozenset(h if h == "*" else host_name(h) for h in allow_hosts),
            frozenset(o.rstrip("/") for o in allow_origins),
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        error = self._refusal(scope, headers)
        if error is None:
            await self.app(scope, receive, send)
            return
        body = json.dumps(error.body()).encode()
        await send(
            {
                "type": "http.response.start",
                "status": error.status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> GatewayError | None:
        host = headers.get("host")
        if not self.policy.host_ok(host):
            return GatewayError(
                403,
                f"the Host header {host!r} is not this gateway's address: a local gateway "
                "answers only requests to its bound address or localhost (DNS rebinding); "
                "start it with --allow-host NAME to accept another",
                code="host_not_allowed",
            )
        origin = headers.get("origin")
        if origin is not None and not self.policy.origin_ok(origin.rstrip("/"), host):
            return GatewayError(
                403,
                f"requests from the web origin {origin!r} are refused (a cross-site request); "
                "start the gateway with --allow-origin ORIGIN to accept it",
                code="origin_not_allowed",
            )
        if scope["method"] in ("POST", "PUT", "PATCH"):
            kind = headers.get("content-type", "").partition(";")[0].strip().lower()
            if kind != _JSON:
                return GatewayError(
                    415,
                    f"the body must be sent as Content-Type: {_JSON}, not {kind or 'none'!r}",
                    code="unsupported_media_type",
                )
        return None


def cors_middleware(origins: Iterable[str]) -> Middleware:
    """Starlette's CORS for ``origins`` (``--allow-origin``): preflights answered, the
    ``Access-Control-Allow-Origin`` header on answers. Placed outside :class:`RequestGuard`,
    so a preflight from an allowed origin is answered before the Content-Type rule applies."""
    return Middleware(
        CORSMiddleware,
        allow_origins=[o.rstrip("/") for o in origins],
        allow_methods=["GET", "POST", "OPTIONS"],
        allow_headers=["authorization", "content-type", "x-request-id"],
    )
