"""What the render endpoints answer, and the headers that report what a request left out.

``POST /v1/chat/completions/render`` and ``POST /v1/responses/render`` (as vLLM 0.34 has
them; each API's ``serving`` module has the route) take the body their API takes and answer
``{"prompt": TEXT, "prompt_token_ids": [...]}`` (:func:`rendered`): the Harmony prompt the
gateway would hand the engine, planned exactly as a generation request is (same checks,
same 400s, sealed reasoning opened), without generating. A client or a test can see what
the model would read.

Hosted tools (``web_search``, ``file_search``, ...) cannot run here; they are left out of
the prompt, and every Responses answer that left any out names them, once each, in the
``x-hosted-tools-ignored`` header. Request fields nothing reads (``top_k``,
``messages[1].x``: :mod:`harmony_grammar.rendering.request_fields`) are accepted and named
in the ``x-harmony-grammar-ignored-fields`` header of every answer (docs/serving.md).
"""

from __future__ import annotations

from starlette.responses import JSONResponse, Response

from ..rendering.request_fields import named_fields
from .plan import Plan

__all__ = ["HOSTED_TOOLS_HEADER", "IGNORED_FIELDS_HEADER", "rendered", "report_headers"]

#: The response header naming the hosted tools a request sent and the prompt left out.
HOSTED_TOOLS_HEADER = "x-hosted-tools-ignored"
#: The response header naming the request's fields nothing read (their paths).
IGNORED_FIELDS_HEADER = "x-harmony-grammar-ignored-fields"


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


def rendered(plan: Plan) -> Response:
    """A render endpoint's answer: the plan's prompt as text and as ids, with the report
    headers of a generation's answer."""
    body = {"prompt": plan.prompt_text, "prompt_token_ids": list(plan.prompt_ids)}
    return JSONResponse(body, headers=report_headers(plan))
