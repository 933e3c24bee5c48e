"""The ASGI app: OpenAI's HTTP surface over a :class:`~.backend.Backend`.

Routes: ``POST /v1/chat/completions`` and ``POST /v1/responses`` (whole, or streamed as
server-sent events with ``stream: true``), their ``/render`` twins (the prompt, not
generated: :mod:`.render_endpoints`), ``GET /v1/models``, ``GET /health`` (200 once the
backend answers, with the number of open generations), and, on the embedded backend, the
vLLM-style ``POST /v1/completions`` with token ids (:mod:`.completions`), so that a gateway
can front another.

Starlette, not FastAPI: the gateway has five routes whose bodies are OpenAI's JSON, checked
field by field by the bridges with paths in the errors; FastAPI's value is pydantic models
and generated docs for such bodies, which would be a second, competing reading of the same
fields. Starlette is what FastAPI runs on, so the server, the streaming and the disconnect
handling are the same either way.

Every failure is an OpenAI error object with its status: 400 for a request the planner
rejects, 401 for a missing or wrong key, 404 for an unknown route, 413 past
``max_request_bytes``, 502 / 504 when the engine fails before any output. Once a stream has
started, an engine fault ends it properly instead (a ``finish_reason`` chunk, or
``response.failed``). A client that disconnects cancels the engine request: Starlette
cancels the response's body, whose ``finally`` closes the backend's generator.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .backend import Backend, Output
from .completions import completions_endpoint
from .embedded import EmbeddedBackend
from .errors import GatewayError, UpstreamError, bad_request
from .planning import Limits, Plan, plan_chat, plan_responses
from .reasoning_seal import ReasoningSeal
from .render_endpoints import hosted_tools_header, render_routes
from .replay import ReplayBackend
from .runs import ChatRun, ResponsesRun, chat_completion

__all__ = ["GatewayConfig", "create_app"]

#: How long closing an engine request may take once the client has gone.
_CLOSE_SECONDS = 5.0


@dataclass(frozen=True)
class GatewayConfig:
    """The gateway's settings (``harmony-grammar serve``'s options)."""

    model: str = "tiny"
    api_key: str | None = None
    max_request_bytes: int = 4 * 1024 * 1024
    limits: Limits = field(default_factory=Limits)
    #: Seals Responses reasoning for the client to send back (a random key by default).
    reasoning_seal: ReasoningSeal = field(default_factory=ReasoningSeal)


class Gateway:
    """The app's state: the backend, the settings, and the open generations."""

    def __init__(self, backend: Backend, config: GatewayConfig) -> None:
        self.backend = backend
        self.config = config
        self.open_streams = 0  # generations in flight (tests check it returns to 0)
        self.created = int(time.time())

    # -- request plumbing ----------------------------------------------------------------

    def check_key(self, request: Request) -> None:
        """401 unless the request carries the configured key (``Authorization: Bearer``)."""
        key = self.config.api_key
        if key is None:
            return
        header = request.headers.get("authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip(), key):
            raise GatewayError(
                401,
                "missing or wrong API key: send it as 'Authorization: Bearer KEY'",
                type="invalid_request_error",
                code="invalid_api_key",
            )

    async def body(self, request: Request) -> Any:
        """The JSON body, read up to ``max_request_bytes`` (413 past it, 400 if not JSON)."""
        limit = self.config.max_request_bytes
        too_big = GatewayError(
            413,
            f"the request body is larger than {limit} bytes (the gateway's "
            "--max-request-bytes); send less input or raise the limit",
            code="request_too_large",
        )
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise too_big
        data = bytearray()
        try:
            async for chunk in request.stream():
                data += chunk
                if len(data) > limit:
                    raise too_big
        except ClientDisconnect:
            raise bad_request("the client closed the connection mid-body") from None
        try:
            return json.loads(data)
        except ValueError as exc:
            raise bad_request(f"the body is not JSON: {exc}") from None

    async def start(self, plan: Plan) -> tuple[AsyncIterator[Output], Output | None]:
        """The backend's generator and its first output (None when it wrote nothing).

        Waiting for the first piece before answering means an engine that refuses, fails or
        times out up front is an HTTP error (502 / 504), not a stream that dies at once.
        """
        outputs = self.backend.generate(plan)
        try:
            first = await anext(outputs)
        except StopAsyncIteration:
            return outputs, None
        except BaseException:
            await _close(outputs)
            raise
        return outputs, first

    # -- one generation --------------------------------------------------------------------

    async def payloads(
        self, run: ChatRun | ResponsesRun, outputs: AsyncIterator[Output], first: Output | None
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Every payload of the run; the engine is closed at the turn's end or on a fault."""
        self.open_streams += 1
        fault: UpstreamError | None = None
        try:
            try:
                if first is not None:
                    for payload in run.feed(first):
                        yield payload
                while not run.should_stop:
                    try:
                        output = await anext(outputs)
                    except StopAsyncIteration:
                        break
                    for payload in run.feed(output):
                        yield payload
            except UpstreamError as exc:
                fault = exc
            except GatewayError as exc:  # a malformed engine answer the backend caught
                fault = UpstreamError(exc.message)
            for payload in run.close(fault):
                yield payload
        finally:
            await _close(outputs)
            self.open_streams -= 1

    # -- endpoints -------------------------------------------------------------------------

    async def chat(self, request: Request) -> Response:
        """``POST /v1/chat/completions``."""
        self.check_key(request)
        plan = self.plan_chat(await self.body(request))
        outputs, first = await self.start(plan)
        payloads = self.payloads(ChatRun(plan), outputs, first)
        if plan.stream:
            return _sse(payloads, named=False)
        chunks = await _collect(request, payloads)
        if chunks is None:
            return Response(status_code=499)  # nobody is listening any more
        return JSONResponse(chat_completion(chunks))

    def plan_chat(self, body: Any) -> Plan:
        """The plan of a Chat Completions body."""
        return plan_chat(body, model=self.config.model, limits=self.config.limits)

    def plan_responses(self, body: Any) -> Plan:
        """The plan of a Responses body, sealed reasoning opened under the gateway's key."""
        config = self.config
        return plan_responses(
            body, model=config.model, limits=config.limits, seal=config.reasoning_seal
        )

    async def responses(self, request: Request) -> Response:
        """``POST /v1/responses``."""
        self.check_key(request)
        plan = self.plan_responses(await self.body(request))
        outputs, first = await self.start(plan)
        run = ResponsesRun(plan, seal=self.config.reasoning_seal)
        payloads = self.payloads(run, outputs, first)
        headers = hosted_tools_header(plan)
        if plan.stream:
            return _sse(payloads, named=True, headers=headers)
        if await _collect(request, payloads) is None:
            return Response(status_code=499)
        return JSONResponse(run.response(), headers=headers)

    async def models(self, request: Request) -> Response:
        """``GET /v1/models``: the one model this gateway serves."""
        self.check_key(request)
        model = {
            "id": self.config.model,
            "object": "model",
            "created": self.created,
            "owned_by": "harmony-grammar",
        }
        return JSONResponse({"object": "list", "data": [model]})

    async def health(self, request: Request) -> Response:
        """``GET /health``: 200 once the backend answers (no key needed: load balancers)."""
        ready = await self.backend.ready()
        body = {
            "status": "ok" if ready else "unavailable",
            "backend": self.backend.name,
            "open_streams": self.open_streams,
        }
        active = getattr(self.backend, "active", None)
        if active is not None:
            body["active_generations"] = active
            body["cancelled_generations"] = getattr(self.backend, "cancelled", 0)
        return JSONResponse(body, status_code=200 if ready else 503)


#: How often a whole (non-streamed) request checks that its client is still there.
_DISCONNECT_POLL_SECONDS = 0.25


async def _collect(
    request: Request, payloads: AsyncGenerator[dict[str, Any], None]
) -> list[dict[str, Any]] | None:
    """Every payload of a whole answer; None when the client left first.

    A streamed answer learns of a disconnect from Starlette; a whole one asks, so that a
    client that gives up on a long answer cancels the engine request here too.
    """
    out: list[dict[str, Any]] = []
    gone = False
    try:
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                nonlocal gone
                while not await request.is_disconnected():
                    await anyio.sleep(_DISCONNECT_POLL_SECONDS)
                gone = True
                group.cancel_scope.cancel()

            group.start_soon(watch)
            async for payload in payloads:
                out.append(payload)
            group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await payloads.aclose()  # closes the engine request if it is still open
    return None if gone else out


async def _close(outputs: AsyncIterator[Output]) -> None:
    # Shielded: when the client has gone, this task is being cancelled, and the engine
    # request must still be closed (that is what cancels it upstream).
    aclose = getattr(outputs, "aclose", None)
    if aclose is None:
        return
    # An engine that fails while closing has nothing more to say: suppressed.
    with (
        anyio.CancelScope(shield=True),
        anyio.move_on_after(_CLOSE_SECONDS),
        contextlib.suppress(Exception),
    ):
        await aclose()


def _sse(
    payloads: AsyncIterator[dict[str, Any]],
    *,
    named: bool,
    headers: Mapping[str, str] | None = None,
) -> StreamingResponse:
    """Server-sent events: ``data:`` lines and ``[DONE]`` (Chat), or named events (Responses)."""

    async def body() -> AsyncIterator[bytes]:
        async for payload in payloads:
            data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
            if named:
                yield f"event: {payload['type']}\ndata: {data}\n\n".encode()
            else:
                yield f"data: {data}\n\n".encode()
        if not named:
            yield b"data: [DONE]\n\n"

    return StreamingResponse(
        body(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **(headers or {})},
    )


def _errors(
    handler: Callable[[Request], Awaitable[Response]],
) -> Callable[[Request], Awaitable[Response]]:
    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except GatewayError as exc:
            return JSONResponse(exc.body(), status_code=exc.status)

    return wrapped


def create_app(
    backend: Backend,
    config: GatewayConfig | None = None,
    *,
    extra_routes: list[Route] | None = None,
) -> Starlette:
    """The gateway as an ASGI app over ``backend``; the backend is closed on shutdown."""
    gateway = Gateway(backend, config or GatewayConfig())
    routes = [
        Route("/v1/chat/completions", _errors(gateway.chat), methods=["POST"]),
        Route("/v1/responses", _errors(gateway.responses), methods=["POST"]),
        Route("/v1/models", _errors(gateway.models), methods=["GET"]),
        *render_routes(gateway, _errors),
        Route("/health", _errors(gateway.health), methods=["GET"]),
        *(extra_routes or []),
    ]
    if isinstance(backend, (EmbeddedBackend, ReplayBackend)):
        handler = completions_endpoint(
            backend, gateway.check_key, gateway.body, gateway.config.model
        )
        routes.append(Route("/v1/completions", _errors(handler), methods=["POST"]))

    async def not_found(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        error = GatewayError(
            status, f"{request.method} {request.url.path} is not an endpoint of this gateway"
        )
        return JSONResponse(error.body(), status_code=status)

    async def crashed(request: Request, exc: Exception) -> Response:
        # A bug of ours: still an OpenAI error object, never a traceback on the wire.
        error = GatewayError(
            500, f"internal error: {type(exc).__name__}: {exc}", type="server_error"
        )
        return JSONResponse(error.body(), status_code=500)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # Plan one request before serving: the grammar parser, the vocabulary and the turn
        # grammar's caches are built now, not inside the first client's request.
        plan_chat({"messages": [{"role": "user", "content": "hi"}]}, model="", limits=Limits())
        yield
        await backend.aclose()

    app = Starlette(
        routes=routes,
        exception_handlers={404: not_found, 405: not_found, 500: crashed},
        lifespan=lifespan,
    )
    app.state.gateway = gateway
    return app
