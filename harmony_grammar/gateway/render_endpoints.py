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


class Planner(Protocol):
    """What the render endpoints need of the gateway: the key check, the body, the plans
    (made in a worker thread, as a generation's are)."""

    def check_key(self, request: Request) -> None: ...

    async def body(self, request: Request) -> Any: ...

    async def plan_chat(self, body: Any) -> Plan: ...

    async def plan_responses(self, body: Any) -> Plan: ...


def report_headers(plan: Plan) -> dict[str, str]:
    """What the answer reports of the request: ``x-hosted-tools-ignored: web_search,
    file_search`` and ``x-harmony-grammar-ignored-fields: top_k, messages[0].x``, each only
    when there is something to name (a client's words made safe for a header)."""
    headers: dict[str, str] = {}
    if plan.hosted_tools:
        names = [_header_safe(name) for name in plan.hosted_tools[:MAX_HOSTED_NAMES]]
        if len(plan.hosted_tools) > MAX_HOSTED_NAMES:
            names.append(f"... ({len(plan.hosted_tools) - MAX_HOSTED_NAMES} more)")
        headers[HOSTED_TOOLS_HEADER] = ", ".join(names)
    if plan.ignored_fields:
        headers[IGNORED_FIELDS_HEADER] = named_fields(plan.ignored_fields)
    return headers


#: How many hosted tools' names the header lists, and how long each may be.
MAX_HOSTED_NAMES = 16
MAX_HOSTED_NAME_CHARS = 64


def _header_safe(name: str) -> str:
    """A client's tool type as a header value can hold it: printable ASCII, escaped as a
    Python literal otherwise (no CR, LF, NUL or non-Latin-1 reaches the header), cut short."""
    if not (name.isascii() and name.isprintable()):
        name = ascii(name)[1:-1]
    if len(name) > MAX_HOSTED_NAME_CHARS:
        name = name[:MAX_HOSTED_NAME_CHARS] + "..."
    return name


def _rendered(plan: Plan) -> Response:
    body = {"prompt": plan.prompt_text, "prompt_token_ids": list(plan.prompt_ids)}
    return JSONResponse(body, headers=report_headers(plan))


def render_routes(gateway: Planner) -> list[Route]:
    """The two render routes over ``gateway`` (its errors are the app's to answer)."""

    async def chat(request: Request) -> Response:
        gateway.check_key(request)
        return _rendered(await gateway.plan_chat(await gateway.body(request)))

    async def responses(request: Request) -> Response:
        gateway.check_key(request)
        return _rendered(await gateway.plan_responses(await gateway.body(request)))

    return [
        Route("/v1/chat/completions/render", chat, methods=["POST"]),
        Route("/v1/responses/render", responses, methods=["POST"]),
    ]
