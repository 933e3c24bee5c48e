"""harmony-grammar inside ``vllm serve``: the ``vllm.endpoint_plugins`` entry point.

    pip install 'harmony-grammar[vllm]'
    VLLM_PLUGINS=harmony_grammar vllm serve openai/gpt-oss-20b \\
        --structured-outputs-config.backend guidance

vLLM loads the entry point's factory (:class:`HarmonyGrammarPlugin`), calls
:meth:`~HarmonyGrammarPlugin.attach_router` after its own routers, and keeps, for each path
and method, the last FastAPI ``APIRoute`` registered: the plugin's routes replace vLLM's
``POST /v1/chat/completions``, ``/v1/responses`` and their ``/render`` twins. Each route
hands its request to the gateway's own app (:func:`~.app.create_app`), so a request is
planned, rendered, constrained to the turn grammar, read back leniently and answered, errors
and request guard included, exactly as ``harmony-grammar serve`` does it; the only
difference is the backend, :class:`~.vllm_engine.VllmEngineBackend`, which calls the engine
in the same process. :meth:`~HarmonyGrammarPlugin.init_state` builds that app once vLLM has
its engine client.

What stays vLLM's: every other route (``/v1/completions``, ``/v1/models``, ``/health``,
``/metrics``, ...), the ``--api-key`` check and CORS (vLLM's middleware runs before any
route), and the server. The gateway counts its requests, tokens, queue and engine faults
in prometheus_client's default registry, the one vLLM's ``/metrics`` serves
(:func:`~.metrics.metrics_in`): ``harmony_gateway_*`` beside vLLM's ``vllm:*``, under the
same names as ``serve``'s ``/metrics``. The gateway's Host check applies where vLLM listens
on one address (a loopback vLLM refuses rebound names); on a wildcard address any Host is
served, as vLLM serves it. docs/serving.md ("vLLM endpoint plugin") says what the replaced
routes give up.
"""

from __future__ import annotations

import logging
from argparse import Namespace
from typing import Any

from prometheus_client import REGISTRY
from starlette.types import ASGIApp, Receive, Scope, Send

from .app import create_app
from .chat.protocol import plan_chat
from .config import GatewayConfig
from .errors import GatewayError
from .metrics import metrics_in
from .plan import Limits
from .vllm_engine import EngineClient, RequestFactory, VllmEngineBackend, vllm_request

__all__ = ["PATHS", "HarmonyGrammarPlugin", "plugin_config"]

#: The routes the plugin serves (``POST``), replacing vLLM's.
PATHS = (
    "/v1/chat/completions",
    "/v1/chat/completions/render",
    "/v1/responses",
    "/v1/responses/render",
)
#: vLLM's logger tree: a message here is printed in vLLM's log, in vLLM's format.
_LOG = logging.getLogger("vllm.plugins.harmony_grammar")
_WILDCARDS = frozenset({"", "0.0.0.0", "::"})


def plugin_config(args: Namespace, engine: Any = None) -> GatewayConfig:
    """The gateway's settings from vLLM's parsed arguments (and its engine client).

    The model is vLLM's first served name (``--served-model-name``, else ``--model``); the
    context is vLLM's ``max_model_len``, so a request that cannot fit is a 400 before the
    engine sees it; web origins are vLLM's ``--allowed-origins``. The API key is left to
    vLLM, whose middleware checks every ``/v1`` route, these included.
    """
    names = getattr(args, "served_model_name", None) or [getattr(args, "model", "model")]
    if isinstance(names, str):
        names = [names]
    context = getattr(getattr(engine, "model_config", None), "max_model_len", None)
    context = context or getattr(args, "max_model_len", None)
    host = getattr(args, "host", None) or ""
    origins = tuple(getattr(args, "allowed_origins", None) or ())
    return GatewayConfig(
        model=str(names[0]),
        limits=Limits(context_tokens=int(context) if context else None),
        bound_host=host or "0.0.0.0",
        allow_hosts=("*",) if host in _WILDCARDS else (),
        allow_origins=origins,
    )


class HarmonyGrammarPlugin:
    """The endpoint plugin vLLM builds from the ``harmony_grammar`` entry point."""

    #: The entry point's name: what ``VLLM_PLUGINS`` must list.
    name = "harmony_grammar"
    #: Loaded only by a server that generates (not vLLM's render-only server).
    required_tasks: tuple[str, ...] | None = ("generate",)

    def __init__(self, request: RequestFactory = vllm_request) -> None:
        #: The gateway's app once :meth:`init_state` ran; until then the routes answer 503.
        self.gateway: ASGIApp | None = None
        #: How a plan becomes the engine's prompt and sampling parameters (vLLM's objects).
        self._request = request

    def attach_router(self, app: Any) -> None:
        """Add a FastAPI ``APIRoute`` per path of :data:`PATHS`, served by the gateway."""
        from fastapi.routing import APIRoute
        from starlette.requests import Request
        from starlette.responses import Response

        async def endpoint(request: Request) -> Response:  # pragma: no cover - never called
            raise AssertionError("the route's ASGI app is the gateway's")

        for path in PATHS:
            route = APIRoute(path, endpoint, methods=["POST"], name=f"harmony_grammar:{path}")
            # The route matches as any APIRoute (vLLM replaces its own by path and method);
            # what answers is the gateway's whole app, its middleware and errors included.
            route.app = self._serve
            app.router.routes.append(route)
        _LOG.info(
            "harmony_grammar replaces vLLM's POST %s: Harmony rendering, the whole-turn "
            "grammar and the lenient streaming reader of harmony-grammar serve",
            ", ".join(PATHS),
        )

    async def init_state(self, engine_client: EngineClient | None, state: Any, args: Any) -> None:
        """Build the gateway over ``engine_client`` with settings from vLLM's ``args``."""
        if engine_client is None:
            _LOG.warning("harmony_grammar: no engine client; its routes answer 503")
            return
        config = plugin_config(args, engine_client)
        # The caches the first request would build (grammar parser, vocabulary, turn
        # grammar): built now, while vLLM starts, as `serve` builds them before listening.
        plan_chat({"messages": [{"role": "user", "content": "hi"}]}, model="", limits=Limits())
        backend = VllmEngineBackend(engine_client, request=self._request)
        # vLLM serves prometheus_client's default registry at /metrics (with one API server,
        # its default): the gateway's counters go there, made once however many plugins run.
        self.gateway = create_app(backend, config, metrics=metrics_in(REGISTRY))
        state.harmony_grammar = self.gateway
        _LOG.info(
            "harmony_grammar serves model %r (context %s tokens)",
            config.model,
            config.limits.context_tokens,
        )

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.gateway is not None:
            await self.gateway(scope, receive, send)
            return
        from starlette.responses import JSONResponse

        error = GatewayError(
            503,
            "the harmony_grammar plugin has no engine yet (vLLM has not finished starting)",
            type="server_error",
            code="engine_unavailable",
        )
        await JSONResponse(error.body(), status_code=503)(scope, receive, send)
