"""Writing a generation's payloads: server-sent events, or one whole answer.

A streamed answer is ``data:`` lines ending in ``data: [DONE]`` (Chat Completions and
``/v1/completions``), or named events (Responses). A whole answer is every payload collected,
polling for a client that leaves so the engine request is cancelled then too.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import StreamingResponse

from .lifecycle import engine_fault

__all__ = ["DONE", "collect", "error_event", "event_stream"]

#: What ends a Chat Completions or ``/v1/completions`` stream.
DONE = b"data: [DONE]\n\n"

#: How often a whole (non-streamed) request checks that its client is still there.
_DISCONNECT_POLL_SECONDS = 0.25


def _event(payload: dict[str, Any], *, named: bool) -> bytes:
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    if named:
        return f"event: {payload['type']}\ndata: {data}\n\n".encode()
    return f"data: {data}\n\n".encode()


def error_event(error: Mapping[str, Any], *, named: bool) -> bytes:
    """The event that ends a stream on an error (an OpenAI error object's ``error``): an
    ``error`` event (Responses, ``named``) or a ``data: {"error": ...}`` line as vLLM sends
    one (Chat, completions; :data:`DONE` follows it there)."""
    if named:
        # OpenAI's ``error`` event: the error's fields, its ``type`` the event's own.
        return _event({**error, "type": "error", "sequence_number": 0}, named=True)
    return _event({"error": dict(error)}, named=False)


def event_stream(
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
            yield error_event(engine_fault(exc).body()["error"], named=named)
        finally:
            with anyio.CancelScope(shield=True):
                await payloads.aclose()
        if not named:
            yield DONE

    return StreamingResponse(
        body(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **(headers or {})},
    )


async def collect(
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
