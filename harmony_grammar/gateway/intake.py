"""Reading a request before any work: the key, the body, the model it names.

Each check is cheap and comes first: a missing key is a 401 before the body is read, a body
past ``max_request_bytes`` a 413 as soon as it is (or as its ``Content-Length`` says), one
that does not arrive in time a 408, and a model other than the one served a 404.
"""

from __future__ import annotations

import hmac
from typing import Any

import anyio
from starlette.requests import ClientDisconnect, Request

from ..tools.json_limits import JsonLimitError, loads_bounded
from .errors import GatewayError, bad_request

__all__ = ["check_key", "check_model", "read_body"]


def check_key(request: Request, key: str | None) -> None:
    """401 unless the request carries ``key`` (``Authorization: Bearer``); None: no key."""
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


async def read_body(request: Request, *, limit: int, seconds: float) -> Any:
    """The JSON body, read up to ``limit`` bytes (413 past it, 400 if not JSON) within
    ``seconds`` (408 after)."""
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
        with anyio.fail_after(seconds):
            async for chunk in request.stream():
                data += chunk
                if len(data) > limit:
                    raise too_big
    except ClientDisconnect:
        raise bad_request("the client closed the connection mid-body") from None
    except TimeoutError:
        raise GatewayError(
            408, f"the request body did not arrive within {seconds:g} s", code="request_timeout"
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


def check_model(body: Any, served: tuple[str, ...]) -> None:
    """404 ``model_not_found`` unless the body names one of ``served`` (or none)."""
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return  # no model, or not a string: the planner's field check says so (a 400)
    if body["model"] not in served:
        raise GatewayError(
            404,
            f"the model {body['model']!r} does not exist here: this gateway serves "
            f"{' or '.join(map(repr, served))} (GET /v1/models)",
            param="model",
            code="model_not_found",
        )
