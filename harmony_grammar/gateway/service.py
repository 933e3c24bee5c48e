"""The gateway's state, and the steps every generation route takes in the same order.

:class:`Gateway` holds the backend, the settings (:class:`~.config.GatewayConfig`), the
metrics and the generations (:class:`~.lifecycle.Generations`). Each API's ``serving``
module (:mod:`.chat.serving`, :mod:`.responses.serving`, :mod:`.completions.serving`) answers
its route with these steps:

1. :meth:`Gateway.admitted`: the key, the body (bounded in bytes and time), the model
   served, the fields the backend honours, room in the queue, before any planning;
2. :meth:`Gateway.plan`: the API's ``protocol`` planner, in a worker thread (reading tools,
   writing the turn grammar and rendering take seconds for a large request, while
   ``/health`` and other streams go on);
3. :meth:`Gateway.answer`: the engine's first piece awaited (a refusal up front is an HTTP
   error), then the run's payloads streamed as events or folded into one answer.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, TypeVar

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .backend import Backend
from .config import GatewayConfig
from .errors import UpstreamError
from .intake import check_key, check_model, read_body
from .lifecycle import Generations, Run
from .metrics import Metrics
from .sse import collect, event_stream
from .unsupported import check_honoured

__all__ = ["Gateway", "plan_in_worker"]

T = TypeVar("T")


async def plan_in_worker(work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``work(*args, **kwargs)`` in a worker thread: planning (reading tools, writing the
    turn grammar, rendering) never holds the event loop."""
    return await anyio.to_thread.run_sync(lambda: work(*args, **kwargs))


class Gateway:
    """The app's state (the backend, the settings, the metrics, the generations) and the
    steps of a generation route (see the module docstring)."""

    def __init__(
        self, backend: Backend, config: GatewayConfig, metrics: Metrics | None = None
    ) -> None:
        self.backend = backend
        self.config = config
        self.created = int(time.time())
        self.metrics = metrics if metrics is not None else Metrics()
        self.generations = Generations(self.metrics, config.max_queue)

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

    async def plan(self, planner: Callable[..., T], body: Any, **options: Any) -> T:
        """``planner(body, model=..., limits=..., **options)`` (an API's ``protocol``
        planner) under the gateway's settings, in a worker thread."""
        config = self.config
        return await plan_in_worker(
            planner, body, model=config.model, limits=config.limits, **options
        )

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
