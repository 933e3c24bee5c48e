"""The ASGI app: OpenAI's HTTP surface over a :class:`~.backend.Backend`.

Routes: ``POST /v1/chat/completions`` and ``POST /v1/responses`` (whole, or streamed as
server-sent events with ``stream: true``), their ``/render`` twins (the prompt, not
generated: :mod:`.render_endpoints`), ``GET /v1/models`` and ``/v1/models/{id}`` (a
``model`` other than the one served is 404 ``model_not_found``), ``GET /metrics``
(Prometheus text, :mod:`.metrics`), ``GET /health`` (200 once the backend answers, with the
number of open generations), and, on the embedded and replay backends, the vLLM-style
``POST /v1/completions`` with token ids (:mod:`.completions`), so that a gateway can front
another. Every response carries an ``x-request-id``.

Starlette, not FastAPI: the gateway has five routes whose bodies are OpenAI's JSON, checked
field by field by the bridges with paths in the errors; FastAPI's value is pydantic models
and generated docs for such bodies, which would be a second, competing reading of the same
fields. Starlette is what FastAPI runs on, so the server, the streaming and the disconnect
handling are the same either way.

This module is the router: it registers each API's routes (its ``serving`` module:
:class:`~.chat.serving.ChatServing`, :class:`~.responses.serving.ResponsesServing`,
:class:`~.completions.serving.CompletionsServing`) by what the backend can do
(``/v1/completions`` where it is a :class:`~.backend.TokenSource`), answers the models,
health and metrics routes, and maps errors to OpenAI error objects in Starlette's
``exception_handlers``. Every generation goes through one lifecycle (:mod:`.service`'s
steps over :mod:`.lifecycle`): the key (:mod:`.intake`), the body, the model and the queue
first, then the plan, in a worker thread (reading tools, writing the turn grammar and
rendering take seconds for a large request, while ``/health`` and other streams go on),
then the engine's first piece, then the payloads (:mod:`.sse`).

Every failure is an OpenAI error object with its status: 400 for a request the planner
rejects, 401 for a missing or wrong key, 403 for a foreign Host or Origin and 415 for a body
that is not ``application/json`` (:mod:`.security`), 404 for an unknown route, 408 for a
body that does not arrive in time, 413 past ``max_request_bytes``, 502 / 504 when the engine
fails before any output, or at any point of a whole answer. Once a stream has started, an
engine fault of any kind ends it properly instead (a ``finish_reason`` chunk, or
``response.failed``; the SSE writer's own guard for anything else). A bug of ours is a 500
that names only a request id; the traceback is logged under it. A client that disconnects
cancels the engine request: Starlette cancels the response's body, whose ``finally`` closes
the backend's generator; a whole answer polls for the disconnect.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .backend import Backend, TokenSource
from .chat.protocol import plan_chat
from .chat.serving import ChatServing
from .completions.serving import CompletionsServing
from .config import GatewayConfig
from .errors import GatewayError
from .intake import check_model
from .metrics import Metrics
from .plan import Limits
from .request_layer import RequestLayer
from .responses.serving import ResponsesServing
from .security import RequestGuard, cors_middleware
from .service import Gateway

__all__ = ["create_app", "routes"]

_LOG = logging.getLogger("harmony_grammar.gateway")


class _Operations:
    """The routes that generate nothing: the models served, health, metrics."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    def _model(self, name: str) -> dict[str, Any]:
        owner = "harmony-grammar"
        return {"id": name, "object": "model", "created": self.gateway.created, "owned_by": owner}

    async def models(self, request: Request) -> Response:
        """``GET /v1/models``: the names of the model this gateway serves."""
        self.gateway.check_key(request)
        models = [self._model(name) for name in self.gateway.config.served_models]
        return JSONResponse({"object": "list", "data": models})

    async def model(self, request: Request) -> Response:
        """``GET /v1/models/{id}``: the model served, or 404 ``model_not_found``."""
        self.gateway.check_key(request)
        name = request.path_params["model"]
        check_model({"model": name}, self.gateway.config.served_models)
        return JSONResponse(self._model(name))

    async def metrics(self, request: Request) -> Response:
        """``GET /metrics``: Prometheus text (no key needed, as ``/health``)."""
        body, content_type = self.gateway.metrics.exposition()
        return Response(body, media_type=content_type)

    async def health(self, request: Request) -> Response:
        """``GET /health``: 200 once the backend answers (no key needed: load balancers)."""
        backend = self.gateway.backend
        ready = await backend.ready()
        body = {
            "status": "ok" if ready else "unavailable",
            "backend": backend.name,
            "open_streams": self.gateway.generations.open_streams,
        }
        active = getattr(backend, "active", None)
        if active is not None:
            body["active_generations"] = active
            body["cancelled_generations"] = getattr(backend, "cancelled", 0)
        return JSONResponse(body, status_code=200 if ready else 503)


def routes(gateway: Gateway) -> list[Route]:
    """The gateway's routes, by what its backend can do."""
    chat, responses, ops = ChatServing(gateway), ResponsesServing(gateway), _Operations(gateway)
    table = [
        Route("/v1/chat/completions", chat.create, methods=["POST"]),
        Route("/v1/responses", responses.create, methods=["POST"]),
        Route("/v1/models", ops.models, methods=["GET"]),
        Route("/v1/models/{model:path}", ops.model, methods=["GET"]),
        Route("/v1/chat/completions/render", chat.render, methods=["POST"]),
        Route("/v1/responses/render", responses.render, methods=["POST"]),
        Route("/health", ops.health, methods=["GET"]),
        Route("/metrics", ops.metrics, methods=["GET"]),
    ]
    if isinstance(gateway.backend, TokenSource):
        completions = CompletionsServing(gateway, gateway.backend)
        table.append(Route("/v1/completions", completions.create, methods=["POST"]))
    return table


async def _gateway_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, GatewayError)
    return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)


async def _not_found(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 404)
    error = GatewayError(
        status, f"{request.method} {request.url.path} is not an endpoint of this gateway"
    )
    return JSONResponse(error.body(), status_code=status)


async def _crashed(request: Request, exc: Exception) -> Response:
    # A bug of ours: the traceback goes to the log under an id, the client gets the id
    # only (an exception's text can hold request or server details).
    request_id = f"req_{secrets.token_hex(8)}"
    _LOG.error("internal error in request %s", request_id, exc_info=exc)
    error = GatewayError(
        500, f"internal error (request {request_id})", type="server_error", code=request_id
    )
    return JSONResponse(error.body(), status_code=500)


def create_app(
    backend: Backend,
    config: GatewayConfig | None = None,
    *,
    extra_routes: list[Route] | None = None,
    metrics: Metrics | None = None,
) -> Starlette:
    """The gateway as an ASGI app over ``backend``; the backend is closed on shutdown.

    ``metrics``: where the gateway counts (default: a registry of its own, served at its
    ``/metrics``); the vLLM plugin passes the metrics in vLLM's registry
    (:func:`~.metrics.metrics_in`), so that vLLM's ``/metrics`` shows them."""
    gateway = Gateway(backend, config or GatewayConfig(), metrics)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # Plan one request before serving: the grammar parser, the vocabulary and the turn
        # grammar's caches are built now, not inside the first client's request.
        plan_chat({"messages": [{"role": "user", "content": "hi"}]}, model="", limits=Limits())
        yield
        await backend.aclose()

    settings = gateway.config
    middleware = [
        Middleware(
            RequestGuard,
            bound_host=settings.bound_host,
            allow_hosts=settings.allow_hosts,
            allow_origins=settings.allow_origins,
        )
    ]
    if settings.allow_origins:
        # Outside the guard: a preflight from an allowed origin is answered by CORS.
        middleware.insert(0, cors_middleware(settings.allow_origins))
    # Outermost: every response, errors, refusals and 404s included, gets its x-request-id.
    middleware.insert(0, Middleware(RequestLayer, metrics=gateway.metrics))
    app = Starlette(
        routes=[*routes(gateway), *(extra_routes or [])],
        middleware=middleware,
        exception_handlers={
            GatewayError: _gateway_error,
            404: _not_found,
            405: _not_found,
            500: _crashed,
        },
        lifespan=lifespan,
    )
    app.state.gateway = gateway
    return app
