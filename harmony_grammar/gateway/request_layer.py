"""The outermost ASGI layer: an ``x-request-id`` on every response, responses counted, and
an answer for a request that shutdown cuts.

:class:`RequestLayer` gives every response an ``x-request-id`` (the client's own when it sent
a usable one, else a fresh one) and counts each response by route and status
(:class:`~.metrics.Metrics`). When ``--drain-seconds`` run out, uvicorn cancels what is still
open: a request that has not answered yet gets a 503 error object naming its id; a stream
that has started gets a last event saying so (:func:`~.sse.error_event`), then ends.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio

from .errors import GatewayError
from .metrics import ROUTES, Metrics
from .sse import DONE, error_event

__all__ = ["REQUEST_ID", "RequestLayer"]

REQUEST_ID = "x-request-id"
#: A client's request id is echoed only when it is short printable ASCII (it goes in a header).
_USABLE_ID = re.compile(r"[\x21-\x7e]{1,200}")
#: How long the last event of a stream cut by shutdown may take to send.
_LAST_EVENT_SECONDS = 1.0

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


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
        #: For an event stream: None until its first event, then whether its events are named
        #: (Responses) or ``data:`` lines (Chat, completions); None after its last byte.
        events: dict[str, bool | None] = {}

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
                kind = dict(headers).get(b"content-type", b"")
                if kind.startswith(b"text/event-stream"):
                    events["named"] = None
            elif message["type"] == "http.response.body" and "named" in events:
                body = bytes(message.get("body", b""))
                if body and events["named"] is None:
                    events["named"] = body.startswith(b"event:")
                if not message.get("more_body", False):
                    events.clear()  # the stream ended on its own
            await send(message)

        try:
            await self.app(scope, receive, tagged)
        except asyncio.CancelledError:
            # uvicorn cancels what is still open when --drain-seconds run out; left alone it
            # would answer a plain-text 500 without the request id, or cut a stream with no
            # word. A request that has not answered yet gets a 503 error object naming its id;
            # a stream gets a last error event naming it (between two events: each event is
            # one send), then ends.
            if started and "named" in events:
                error = GatewayError(
                    503,
                    f"the gateway shut down before this answer was complete (request "
                    f"{request_id}): its drain time ran out; send it again",
                    type="server_error",
                    code="server_shutting_down",
                )
                named = events["named"] is True
                last = error_event(error.body()["error"], named=named) + (b"" if named else DONE)
                with anyio.CancelScope(shield=True), anyio.move_on_after(_LAST_EVENT_SECONDS):
                    await send({"type": "http.response.body", "body": last, "more_body": False})
            elif not started:
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
