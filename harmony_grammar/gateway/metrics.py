"""The gateway's Prometheus metrics (``GET /metrics``) and the ASGI layer that records them.

:class:`Metrics` holds one registry per app by default (so two gateways in one process, as in
the tests, never share counts); :func:`metrics_in` gives the one set of metrics registered in
a given registry (the vLLM plugin's, in vLLM's own registry, which vLLM's ``/metrics``
serves: the same names as ``serve``'s ``/metrics``, each metric object made once however
many apps count into it). The metrics: requests by route and status, prompt and completion tokens,
time to first token and time per output token (histograms), open streams, requests queued
(admitted, waiting for the engine's first output), and upstream errors by code.
:class:`RequestLayer` wraps the app: it gives every response an ``x-request-id`` (the
client's own when it sent a usable one, else a fresh one) and counts each response by route
and status; a request cut by shutdown before it answered gets a 503 error object with its
id. Needs ``prometheus_client`` (the ``serve`` extra).
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import weakref
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from .errors import GatewayError

__all__ = ["REQUEST_ID", "Metrics", "RequestLayer", "metrics_in"]

REQUEST_ID = "x-request-id"
#: A client's request id is echoed only when it is short printable ASCII (it goes in a header).
_USABLE_ID = re.compile(r"[\x21-\x7e]{1,200}")
#: The routes counted by name; anything else counts as ``other`` (bounded label values).
ROUTES = (
    "/v1/chat/completions",
    "/v1/chat/completions/render",
    "/v1/responses",
    "/v1/responses/render",
    "/v1/completions",
    "/v1/models",
    "/health",
    "/metrics",
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class Metrics:
    """The gateway's metrics, in ``registry`` (default: a registry of their own).

    A registry holds each metric name once: a second :class:`Metrics` in the same registry
    raises prometheus_client's ``ValueError``; :func:`metrics_in` shares the first."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "harmony_gateway_requests",
            "HTTP responses by route and status",
            ["route", "status"],
            registry=r,
        )
        self.prompt_tokens = Counter(
            "harmony_gateway_prompt_tokens", "prompt tokens of generation requests", registry=r
        )
        self.completion_tokens = Counter(
            "harmony_gateway_completion_tokens", "completion tokens sent to clients", registry=r
        )
        self.time_to_first_token = Histogram(
            "harmony_gateway_time_to_first_token_seconds",
            "from the request's arrival to its first output from the engine",
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=r,
        )
        self.time_per_output_token = Histogram(
            "harmony_gateway_time_per_output_token_seconds",
            "mean time between output tokens, one observation per generation",
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1),
            registry=r,
        )
        self.open_streams = Gauge(
            "harmony_gateway_open_streams", "generations sending output now", registry=r
        )
        self.queued = Gauge(
            "harmony_gateway_queue_depth",
            "generation requests admitted and waiting for the engine's first output",
            registry=r,
        )
        self.upstream_errors = Counter(
            "harmony_gateway_upstream_errors", "engine faults by code", ["code"], registry=r
        )

    def exposition(self) -> tuple[bytes, str]:
        """The Prometheus text exposition and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


#: The metrics made in each registry by :func:`metrics_in` (a registry that goes away takes
#: its entry with it).
_IN_REGISTRY: weakref.WeakKeyDictionary[CollectorRegistry, Metrics] = weakref.WeakKeyDictionary()


def metrics_in(registry: CollectorRegistry) -> Metrics:
    """The gateway's metrics registered in ``registry``, made on the first call and the same
    object on every later one: apps that count into one registry share its counters."""
    metrics = _IN_REGISTRY.get(registry)
    if metrics is None:
        metrics = _IN_REGISTRY[registry] = Metrics(registry)
    return metrics


class RequestLayer:
    """ASGI middleware: ``x-request-id`` on every response, and responses counted."""

    def __init__(self, app: App, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Tag and count one HTTP exchange (other scopes pass through)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or ()).get(REQUEST_ID.encode(), b"").decode("latin-1")
        request_id = given if _USABLE_ID.fullmatch(given) else f"req_{secrets.token_hex(12)}"
        scope.setdefault("state", {})["request_id"] = request_id
        path = scope.get("path", "")
        route = (
            path
            if path in ROUTES
            else "/v1/models/{id}"
            if path.startswith("/v1/models/")
            else "other"
        )

        started = False

        async def tagged(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [
                    (k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"
                ]
                headers.append((REQUEST_ID.encode(), request_id.encode()))
                message["headers"] = headers
                self.metrics.requests.labels(route, str(message["status"])).inc()
            await send(message)

        try:
            await self.app(scope, receive, tagged)
        except asyncio.CancelledError:
            # uvicorn cancels what is still open when --drain-seconds run out; left alone it
            # would answer a plain-text 500 without the request id. A request that has not
            # answered yet gets a 503 error object naming its id (a stream that has started
            # can only be cut; its client sees the connection close).
            if not started:
                error = GatewayError(
                    503,
                    f"the gateway shut down before this request was answered (request "
                    f"{request_id}): its drain time ran out; send it again",
                    type="server_error",
                    code="server_shutting_down",
                )
                body = json.dumps(error.body()).encode()
                await tagged(
                    {
                        "type": "http.response.start",
                        "status": 503,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close"),
                        ],
                    }
                )
                await tagged({"type": "http.response.body", "body": body})
            raise
