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

import contextlib
import dataclasses
import hmac
import json
import logging
import secrets
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..base.options import Options
from ..tools.json_limits import JsonLimitError, loads_bounded
from .backend import Backend, Output
from .completions import Draw, completion_payloads, fold_completion, plan_completion, unscored
from .embedded import EmbeddedBackend
from .errors import GatewayError, UpstreamError, bad_request
from .metrics import Metrics, RequestLayer
from .planning import Limits, Plan, plan_chat, plan_responses
from .reasoning_seal import ReasoningSeal
from .render_endpoints import render_routes, report_headers
from .replay import ReplayBackend
from .runs import ChatRun, ResponsesRun, chat_completion
from .security import RequestGuard, cors_middleware
from .unsupported import check_honoured

__all__ = ["GatewayConfig", "create_app"]

_LOG = logging.getLogger("harmony_grammar.gateway")
#: How long closing an engine request may take once the client has gone.
_CLOSE_SECONDS = 5.0


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
    """The app's state: the backend, the settings, and the open generations."""

    def __init__(self, backend: Backend, config: GatewayConfig) -> None:
        self.backend = backend
        self.config = config
        self.open_streams = 0  # generations in flight (tests check it returns to 0)
        self.created = int(time.time())
        self.metrics = Metrics()
        self.held = 0  # generation requests admitted and not yet finished (--max-queue)

    # -- request plumbing ----------------------------------------------------------------

    def check_key(self, request: Request) -> None:
        """401 unless the request carries the configured key (``Authorization: Bearer``)."""
        key = self.config.api_key
        if key is None:
            return
        header = request.headers.get("authorization", "")
        scheme, _, given = header.partition(" ")
        # Compared as bytes: the header's own bytes (Starlette decodes them as latin-1) and
        # the key's UTF-8, so neither a non-ASCII header nor a non-ASCII key is an error.
        given_bytes = given.strip().encode("latin-1")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given_bytes, key.encode()):
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
            # Bounded in time too: a client that announces a body and never sends it all
            # would hold the request (and its connection) for good.
            with anyio.fail_after(self.config.body_seconds):
                async for chunk in request.stream():
                    data += chunk
                    if len(data) > limit:
                        raise too_big
        except ClientDisconnect:
            raise bad_request("the client closed the connection mid-body") from None
        except TimeoutError:
            raise GatewayError(
                408,
                f"the request body did not arrive within {self.config.body_seconds:g} s",
                code="request_timeout",
            ) from None
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise bad_request(f"the body is not UTF-8: {exc}") from None
        try:
            # Bounded: nesting, huge numbers and lone surrogates are a 400 here, never a
            # RecursionError, or a 500 when an echoed field is encoded after generating.
            return loads_bounded(text)
        except JsonLimitError as exc:
            raise bad_request(f"the body is over a limit: {exc}") from None
        except ValueError as exc:
            raise bad_request(f"the body is not JSON: {exc}") from None

    def check_model(self, body: Any) -> None:
        """404 ``model_not_found`` unless the body names the model served (or none)."""
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            return  # no model, or not a string: the planner's field check says so (a 400)
        if body["model"] not in self.config.served_models:
            raise GatewayError(
                404,
                f"the model {body['model']!r} does not exist here: this gateway serves "
                f"{' or '.join(map(repr, self.config.served_models))} (GET /v1/models)",
                param="model",
                code="model_not_found",
            )

    def admit(self, body: Any, api: str) -> None:
        """The checks before planning: the model, the fields the backend cannot honour, and
        room in the queue (429 with ``Retry-After`` when ``max_queue`` requests are held)."""
        self.check_model(body)
        check_honoured(body, api, self.backend.name)
        limit = self.config.max_queue
        if limit is not None and self.held >= limit:
            error = GatewayError(
                429,
                f"the gateway holds {self.held} requests, its --max-queue: retry shortly",
                type="rate_limit_error",
                code="queue_full",
            )
            error.headers = {"Retry-After": "1"}
            raise error

    async def start(self, plan: Plan) -> tuple[AsyncIterator[Output], Output | None]:
        """The backend's generator and its first output (None when it wrote nothing).

        Waiting for the first piece before answering means an engine that refuses, fails or
        times out up front is an HTTP error (502 / 504), not a stream that dies at once. The
        request is held (``max_queue``) from here until :meth:`payloads` ends, or until this
        fails.
        """
        arrived = time.monotonic()
        self.held += 1
        self.metrics.queued.inc()
        outputs = self.backend.generate(plan)
        try:
            first = await anext(outputs)
        except StopAsyncIteration:
            return outputs, None
        except GatewayError as exc:
            self.held -= 1
            if isinstance(exc, UpstreamError):
                self.metrics.upstream_errors.labels(exc.code or "upstream_error").inc()
            await _close(outputs)
            raise
        except Exception as exc:  # any other engine fault: a 502, logged, never a 500
            self.held -= 1
            await _close(outputs)
            fault = _engine_fault(exc)
            self.metrics.upstream_errors.labels(fault.code or "upstream_error").inc()
            raise fault from exc
        except BaseException:
            self.held -= 1
            await _close(outputs)
            raise
        finally:
            self.metrics.queued.dec()
        self.metrics.time_to_first_token.observe(time.monotonic() - arrived)
        return outputs, first

    # -- one generation --------------------------------------------------------------------

    async def payloads(
        self,
        run: ChatRun | ResponsesRun,
        outputs: AsyncIterator[Output],
        first: Output | None,
        faults: list[UpstreamError] | None = None,
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Every payload of the run; the engine is closed at the turn's end or on a fault.

        A fault of any kind ends the run properly (its last payloads say what happened) and
        is appended to ``faults``: a whole answer is then a 502.
        """
        self.open_streams += 1
        self.metrics.open_streams.inc()
        fault: UpstreamError | None = None
        began = time.monotonic()
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
            except Exception as exc:  # any other fault of the engine or its reading
                fault = _engine_fault(exc)
            if fault is not None:
                self.metrics.upstream_errors.labels(fault.code or "upstream_error").inc()
                if faults is not None:
                    faults.append(fault)
            for payload in run.close(fault):
                yield payload
        finally:
            await _close(outputs)
            self.open_streams -= 1
            self.held -= 1
            self.metrics.open_streams.dec()
            self.metrics.prompt_tokens.inc(run.prompt_tokens)
            self.metrics.completion_tokens.inc(run.output_tokens)
            if run.output_tokens > 1:
                spent = time.monotonic() - began
                self.metrics.time_per_output_token.observe(spent / (run.output_tokens - 1))

    # -- endpoints -------------------------------------------------------------------------

    async def chat(self, request: Request) -> Response:
        """``POST /v1/chat/completions``."""
        self.check_key(request)
        body = await self.body(request)
        self.admit(body, "chat")
        plan = self.plan_chat(body)
        outputs, first = await self.start(plan)
        faults: list[UpstreamError] = []
        payloads = self.payloads(ChatRun(plan), outputs, first, faults)
        headers = report_headers(plan)
        if plan.stream:
            return _sse(payloads, named=False, headers=headers)
        chunks = await _collect(request, payloads)
        if chunks is None:
            return Response(status_code=499)  # nobody is listening any more
        if faults:
            return JSONResponse(faults[0].body(), status_code=faults[0].status)
        return JSONResponse(chat_completion(chunks), headers=headers)

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
        body = await self.body(request)
        self.admit(body, "responses")
        plan = self.plan_responses(body)
        outputs, first = await self.start(plan)
        run = ResponsesRun(plan, seal=self.config.reasoning_seal)
        faults: list[UpstreamError] = []
        payloads = self.payloads(run, outputs, first, faults)
        headers = report_headers(plan)
        if plan.stream:
            return _sse(payloads, named=True, headers=headers)
        if await _collect(request, payloads) is None:
            return Response(status_code=499)
        if faults:
            return JSONResponse(faults[0].body(), status_code=faults[0].status)
        return JSONResponse(run.response(), headers=headers)

    def _model(self, name: str) -> dict[str, Any]:
        owner = "harmony-grammar"
        return {"id": name, "object": "model", "created": self.created, "owned_by": owner}

    async def completions(self, request: Request) -> Response:
        """``POST /v1/completions`` (embedded backend only; :mod:`.completions`)."""
        self.check_key(request)
        backend = self.backend
        if not isinstance(backend, (EmbeddedBackend, ReplayBackend)):  # pragma: no cover
            raise GatewayError(404, "/v1/completions is served by a backend that draws ids")
        plan = plan_completion(
            await self.body(request), model=self.config.model, limits=self.config.limits
        )
        if not plan.stream:
            plan = dataclasses.replace(plan, include_usage=True)  # whole answers carry usage
        sampling: dict[str, Any] = {
            "max_tokens": plan.max_tokens,
            "temperature": plan.temperature,
            "seed": plan.seed,
            "stop_ids": plan.stop_ids,
        }
        tokens: AsyncGenerator[Draw, None]
        if isinstance(backend, EmbeddedBackend):
            tokens = backend.draws(plan.prompt, plan.grammar, logprobs=plan.logprobs, **sampling)
        elif plan.logprobs is not None:
            raise bad_request(f"the {backend.name} backend gives no log-probabilities", "logprobs")
        else:
            tokens = unscored(backend.tokens(plan.prompt, plan.grammar, **sampling))
        # The first id before answering: llguidance's refusal of the grammar is a 400.
        try:
            first: Draw | None = await anext(tokens)
        except StopAsyncIteration:
            first = None
        except BaseException:
            await tokens.aclose()
            raise
        faults: list[UpstreamError] | None = None if plan.stream else []
        payloads = self._counted(completion_payloads(plan, tokens, first), tokens, faults)
        if plan.stream:
            return _sse(payloads, named=False)  # a fault: an error event, then [DONE]
        chunks = await _collect(request, payloads)
        if chunks is None:
            return Response(status_code=499)
        if faults:
            return JSONResponse(faults[0].body(), status_code=faults[0].status)
        return JSONResponse(fold_completion(chunks))

    async def _counted(
        self,
        payloads: AsyncGenerator[dict[str, Any], None],
        tokens: AsyncGenerator[Draw, None],
        faults: list[UpstreamError] | None,
    ) -> AsyncGenerator[dict[str, Any], None]:
        # One open stream while it runs; the generation is closed however it ends. A fault
        # goes to ``faults`` (a whole answer: a 502) or on to the SSE writer (a stream).
        self.open_streams += 1
        try:
            async for payload in payloads:
                yield payload
        except Exception as exc:
            if faults is None:
                raise
            faults.append(_engine_fault(exc))
        finally:
            await _close(tokens)
            self.open_streams -= 1

    async def models(self, request: Request) -> Response:
        """``GET /v1/models``: the names of the model this gateway serves."""
        self.check_key(request)
        models = [self._model(name) for name in self.config.served_models]
        return JSONResponse({"object": "list", "data": models})

    async def model(self, request: Request) -> Response:
        """``GET /v1/models/{id}``: the model served, or 404 ``model_not_found``."""
        self.check_key(request)
        name = request.path_params["model"]
        self.check_model({"model": name})
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
            "open_streams": self.open_streams,
        }
        active = getattr(self.backend, "active", None)
        if active is not None:
            body["active_generations"] = active
            body["cancelled_generations"] = getattr(self.backend, "cancelled", 0)
        return JSONResponse(body, status_code=200 if ready else 503)


def _engine_fault(exc: BaseException) -> UpstreamError:
    """An unexpected exception while generating, as the 502 the client sees; logged whole."""
    if isinstance(exc, UpstreamError):
        return exc
    if isinstance(exc, GatewayError):
        return UpstreamError(exc.message)
    fault_id = f"req_{secrets.token_hex(8)}"
    _LOG.error("engine fault %s", fault_id, exc_info=exc)
    return UpstreamError(f"the generation failed ({type(exc).__name__}; logged as {fault_id})")


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


async def _close(outputs: AsyncIterator[Any]) -> None:
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


def _event(payload: dict[str, Any], *, named: bool) -> bytes:
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    if named:
        return f"event: {payload['type']}\ndata: {data}\n\n".encode()
    return f"data: {data}\n\n".encode()


def _sse(
    payloads: AsyncGenerator[dict[str, Any], None],
    *,
    named: bool,
    headers: Mapping[str, str] | None = None,
) -> StreamingResponse:
    """Server-sent events: ``data:`` lines and ``[DONE]`` (Chat), or named events (Responses).

    The last line of defence for a stream: whatever fails after the ``200`` (a bug of ours,
    an engine fault the run did not catch), the stream still ends properly, with an error
    event and ``[DONE]`` (Chat, completions) or an ``error`` event (Responses), and the
    generation is closed, so ``/health`` never counts a dead stream.
    """

    async def body() -> AsyncIterator[bytes]:
        try:
            async for payload in payloads:
                yield _event(payload, named=named)
        except Exception as exc:
            error = _engine_fault(exc).body()["error"]
            if named:
                yield _event({"type": "error", **error, "sequence_number": 0}, named=True)
            else:
                yield _event({"error": error}, named=False)
        finally:
            with anyio.CancelScope(shield=True):
                await payloads.aclose()
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
            return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)

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
        Route("/v1/models/{model:path}", _errors(gateway.model), methods=["GET"]),
        *render_routes(gateway, _errors),
        Route("/health", _errors(gateway.health), methods=["GET"]),
        Route("/metrics", _errors(gateway.metrics_text), methods=["GET"]),
        *(extra_routes or []),
    ]
    if isinstance(backend, (EmbeddedBackend, ReplayBackend)):
        routes.append(Route("/v1/completions", _errors(gateway.completions), methods=["POST"]))

    async def not_found(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        error = GatewayError(
            status, f"{request.method} {request.url.path} is not an endpoint of this gateway"
        )
        return JSONResponse(error.body(), status_code=status)

    async def crashed(request: Request, exc: Exception) -> Response:
        # A bug of ours: the traceback goes to the log under an id, the client gets the id
        # only (an exception's text can hold request or server details).
        request_id = f"req_{secrets.token_hex(8)}"
        _LOG.error("internal error in request %s", request_id, exc_info=exc)
        error = GatewayError(
            500, f"internal error (request {request_id})", type="server_error", code=request_id
        )
        return JSONResponse(error.body(), status_code=500)

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
        routes=routes,
        middleware=middleware,
        exception_handlers={404: not_found, 405: not_found, 500: crashed},
        lifespan=lifespan,
    )
    app.state.gateway = gateway
    return app
