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

Every request goes through one lifecycle (:mod:`.lifecycle`): the key (:mod:`.intake`), the
body, the model and the queue first, then the plan, in a worker thread (:func:`plan_in_worker`:
reading tools, writing the turn grammar and rendering take seconds for a large request,
while ``/health`` and other streams go on), then the engine's first piece, then the payloads
(:mod:`.sse`). Routes are registered by what the backend can do: ``/v1/completions`` where
it is a :class:`~.backend.TokenSource`.

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

import dataclasses
import logging
import secrets
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..base.options import Options
from .backend import Backend, ScoredTokenSource, TokenSource
from .completions import CompletionRun, Draw, fold_completion, plan_completion, unscored
from .errors import GatewayError, UpstreamError, bad_request
from .intake import check_key, check_model, read_body
from .lifecycle import Generations, Run
from .metrics import Metrics, RequestLayer
from .planning import Limits, Plan, plan_chat, plan_responses
from .reasoning_seal import ReasoningSeal
from .render_endpoints import render_routes, report_headers
from .runs import ChatRun, ResponsesRun, chat_completion
from .security import RequestGuard, cors_middleware
from .sse import collect, event_stream
from .unsupported import check_honoured
from .validation import grammar_field

__all__ = ["GatewayConfig", "create_app", "plan_in_worker"]

_LOG = logging.getLogger("harmony_grammar.gateway")
T = TypeVar("T")


async def plan_in_worker(work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``work(*args, **kwargs)`` in a worker thread: planning (reading tools, writing the
    turn grammar, rendering) never holds the event loop."""
    return await anyio.to_thread.run_sync(lambda: work(*args, **kwargs))


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


class Gateway:
    """The app's state and endpoints: the backend, the settings, the generations."""

    def __init__(self, backend: Backend, config: GatewayConfig) -> None:
        self.backend = backend
        self.config = config
        self.created = int(time.time())
        self.metrics = Metrics()
        self.generations = Generations(self.metrics, config.max_queue)

    # -- before any work ---------------------------------------------------------------------

    def check_key(self, request: Request) -> None:
        """401 unless the request carries the configured key (``Authorization: Bearer``)."""
        check_key(request, self.config.api_key)

    async def body(self, request: Request) -> Any:
        """The JSON body, read up to ``max_request_bytes`` (413 past it, 400 if not JSON)."""
        config = self.config
        return await read_body(request, limit=config.max_request_bytes, seconds=config.body_seconds)

    async def admitted(self, request: Request, api: str | None) -> Any:
        """The body of a generation request that may go on: the key, the body, the model
        served, the fields the backend honours (``api``'s), and room in the queue."""
        self.check_key(request)
        body = await self.body(request)
        check_model(body, self.config.served_models)
        if api is not None:
            check_honoured(body, api, self.backend.name)
        self.generations.admit()
        return body

    async def plan_chat(self, body: Any) -> Plan:
        """The plan of a Chat Completions body (in a worker thread)."""
        return await plan_in_worker(
            plan_chat, body, model=self.config.model, limits=self.config.limits
        )

    async def plan_responses(self, body: Any) -> Plan:
        """The plan of a Responses body, sealed reasoning opened under the gateway's key
        (in a worker thread)."""
        config = self.config
        return await plan_in_worker(
            plan_responses,
            body,
            model=config.model,
            limits=config.limits,
            seal=config.reasoning_seal,
        )

    # -- one generation ----------------------------------------------------------------------

    async def answer(
        self,
        request: Request,
        run: Run,
        outputs: AsyncIterator[Any],
        *,
        stream: bool,
        named: bool,
        whole: Callable[[list[dict[str, Any]]], dict[str, Any]],
        grammar_param: str,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        """The generation's answer: its first piece awaited, then a stream of events, or the
        whole answer (``whole`` of its payloads; 502 after an engine fault; 499 when the
        client left). An engine's refusal up front (a grammar it rejects) is a 400 naming
        ``grammar_param``, the request field the grammar came from."""
        first = await self.generations.start(outputs, grammar_param=grammar_param)
        faults: list[UpstreamError] = []
        payloads = self.generations.payloads(run, outputs, first, faults)
        if stream:
            return event_stream(payloads, named=named, headers=headers)
        chunks = await collect(request, payloads)
        if chunks is None:
            return Response(status_code=499)  # nobody is listening any more
        if faults:
            return JSONResponse(faults[0].body(), status_code=faults[0].status)
        return JSONResponse(whole(chunks), headers=headers)

    # -- endpoints ---------------------------------------------------------------------------

    async def chat(self, request: Request) -> Response:
        """``POST /v1/chat/completions``."""
        plan = await self.plan_chat(await self.admitted(request, "chat"))
        outputs = self.backend.generate(plan)
        return await self.answer(
            request,
            ChatRun(plan),
            outputs,
            stream=plan.stream,
            named=False,
            whole=chat_completion,
            grammar_param=grammar_field(plan.api, plan.response_format is not None),
            headers=report_headers(plan),
        )

    async def responses(self, request: Request) -> Response:
        """``POST /v1/responses``."""
        plan = await self.plan_responses(await self.admitted(request, "responses"))
        run = ResponsesRun(plan, seal=self.config.reasoning_seal)
        return await self.answer(
            request,
            run,
            self.backend.generate(plan),
            stream=plan.stream,
            named=True,
            whole=lambda _: run.response(),
            grammar_param=grammar_field(plan.api, plan.response_format is not None),
            headers=report_headers(plan),
        )

    async def completions(self, request: Request) -> Response:
        """``POST /v1/completions`` (a backend that draws ids: :mod:`.completions`)."""
        source = self.backend
        assert isinstance(source, TokenSource)  # the route exists only then
        body = await self.admitted(request, None)
        config = self.config
        plan = await plan_in_worker(plan_completion, body, model=config.model, limits=config.limits)
        if not plan.stream:
            plan = dataclasses.replace(plan, include_usage=True)  # whole answers carry usage
        sampling: dict[str, Any] = {
            "max_tokens": plan.max_tokens,
            "temperature": plan.temperature,
            "seed": plan.seed,
            "stop_ids": plan.stop_ids,
        }
        tokens: AsyncGenerator[Draw, None]
        if isinstance(source, ScoredTokenSource):
            tokens = source.draws(plan.prompt, plan.grammar, logprobs=plan.logprobs, **sampling)
        elif plan.logprobs is not None:
            raise bad_request(f"the {source.name} backend gives no log-probabilities", "logprobs")
        else:
            tokens = unscored(source.tokens(plan.prompt, plan.grammar, **sampling))
        return await self.answer(
            request,
            CompletionRun(plan),
            tokens,
            stream=plan.stream,
            named=False,
            whole=fold_completion,
            grammar_param="structured_outputs.grammar",  # the one thing a draw refuses
        )

    def _model(self, name: str) -> dict[str, Any]:
        owner = "harmony-grammar"
        return {"id": name, "object": "model", "created": self.created, "owned_by": owner}

    async def models(self, request: Request) -> Response:
        """``GET /v1/models``: the names of the model this gateway serves."""
        self.check_key(request)
        models = [self._model(name) for name in self.config.served_models]
        return JSONResponse({"object": "list", "data": models})

    async def model(self, request: Request) -> Response:
        """``GET /v1/models/{id}``: the model served, or 404 ``model_not_found``."""
        self.check_key(request)
        name = request.path_params["model"]
        check_model({"model": name}, self.config.served_models)
        return JSONResponse(self._model(name))

    async def metrics_text(self, request: Request) -> Response:
        """``GET /metrics``: Prometheus text (no key needed, as ``/health``)."""
        body, content_type = self.metrics.exposition()
        return Response(body, media_type=content_type)

    async def health(self, request: Request) -> Response:
        """``GET /health``: 200 once the backend answers (no key needed: load balancers)."""
        ready = await self.backend.ready()
        body = {
            "status": "ok" if ready else "unavailable",
            "backend": self.backend.name,
            "open_streams": self.generations.open_streams,
        }
        active = getattr(self.backend, "active", None)
        if active is not None:
            body["active_generations"] = active
            body["cancelled_generations"] = getattr(self.backend, "cancelled", 0)
        return JSONResponse(body, status_code=200 if ready else 503)


def routes(gateway: Gateway) -> list[Route]:
    """The gateway's routes, by what its backend can do."""
    table = [
        Route("/v1/chat/completions", gateway.chat, methods=["POST"]),
        Route("/v1/responses", gateway.responses, methods=["POST"]),
        Route("/v1/models", gateway.models, methods=["GET"]),
        Route("/v1/models/{model:path}", gateway.model, methods=["GET"]),
        *render_routes(gateway),
        Route("/health", gateway.health, methods=["GET"]),
        Route("/metrics", gateway.metrics_text, methods=["GET"]),
    ]
    if isinstance(gateway.backend, TokenSource):
        table.append(Route("/v1/completions", gateway.completions, methods=["POST"]))
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
) -> Starlette:
    """The gateway as an ASGI app over ``backend``; the backend is closed on shutdown."""
    gateway = Gateway(backend, config or GatewayConfig())

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
