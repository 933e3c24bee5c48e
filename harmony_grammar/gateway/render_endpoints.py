"""The render endpoints, and the header that reports hosted tools left out.

``POST /v1/chat/completions/render`` and ``POST /v1/responses/render`` (as vLLM 0.34 has
them) take the body their API takes and answer ``{"prompt": TEXT, "prompt_token_ids":
[...]}``: the Harmony prompt the gateway would hand the engine, planned exactly as a
generation request is (same checks, same 400s, sealed reasoning opened), without
generating. A client or a test can see what the model would read.

Hosted tools (``web_search``, ``file_search``, ...) cannot run here; they are left out of
the prompt, and every Responses answer that left any out names them, once each, in the
``x-hosted-tools-ignored`` header. Request fields nothing reads (``top_k``,
``messages[1].x``: :mod:`harmony_grammar.rendering.request_fields`) are accepted and named
in the ``x-harmony-grammar-ignored-fields`` header of every answer (docs/serving.md).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..rendering.request_fields import named_fields
from .planning import Plan

__all__ = ["HOSTED_TOOLS_HEADER", "IGNORED_FIELDS_HEADER", "render_routes", "report_headers"]

#: The response header naming the hosted tools a request sent and the prompt left out.
HOSTED_TOOLS_HEADER = "x-hosted-tools-ignored"
#: The response header naming the request's fields nothing read (their paths).
IGNORED_FIELDS_HEADER = "x-harmony-grammar-ignored-fields"

Handler = Callable[[Request], Awaitable[Response]]


class Planner(Protocol):
    """What the render endpoints need of the gateway: the key check, the body, the plans."""

    def check_key(self, request: Request) -> None: ...

    async def body(self, request: Request) -> Any: ...

    def plan_chat(self, body: Any) -> Plan: ...

    def plan_responses(self, body: Any) -> Plan: ...


def report_headers(plan: Plan) -> dict[str, str]:
    """What the answer reports of the request: ``x-hosted-tools-ignored: web_search,
    file_search`` and ``x-harmony-grammar-ignored-fields: top_k, messages[0].x``, each only
    when there is something to name."""
    headers: dict[str, str] = {}
    if plan.hosted_tools:
        headers[HOSTED_TOOLS_HEADER] = ", ".join(plan.hosted_tools)
    if plan.ignored_fields:
        headers[IGNORED_FIELDS_HEADER] = named_fields(plan.ignored_fields)
    return headers


def _rendered(plan: Plan) -> Response:
    body = {"prompt": plan.prompt_text, "prompt_token_ids": list(plan.prompt_ids)}
    return JSONResponse(body, headers=report_headers(plan))


def render_routes(gateway: Planner, errors: Callable[[Handler], Handler]) -> list[Route]:
    """The two render routes over ``gateway``, each wrapped by ``errors`` (OpenAI errors)."""

    async def chat(request: Request) -> Response:
        gateway.check_key(request)
        return _rendered(gateway.plan_chat(await gateway.body(request)))

    async def responses(request: Request) -> Response:
        gateway.check_key(request)
        return _rendered(gateway.plan_responses(await gateway.body(request)))

    return [
        Route("/v1/chat/completions/render", errors(chat), methods=["POST"]),
        Route("/v1/responses/render", errors(responses), methods=["POST"]),
    ]
