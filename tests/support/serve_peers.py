"""Small local HTTP peers that stand in for engines in the serve tests.

Each peer speaks one engine's raw completion wire format (vLLM ``/v1/completions``, SGLang
``/generate``, llama.cpp ``/completion``, Ollama ``/api/generate``), records every request
body it receives so a test can check the exact request the gateway sent, and answers from a
script: the ids (or text) of a fixed completion, optionally slowly, with a dropped
connection, with malformed lines, or with a 5xx. They are not engines: they check the wire
format and play back output, nothing more; the vLLM backend is also tested against a real
second ``serve`` (tests/gateway/test_serve.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from harmony_grammar.format.harmony_ids import encode_harmony

#: The get_weather tool that CALL_TEXT calls, and the question that asks for it.
WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]

#: A call to get_weather, as the model writes it after ``<|start|>assistant``.
CALL_TEXT = (
    "<|channel|>analysis<|message|>Need the weather.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"city":"Paris"}<|call|>'
)
CALL_IDS = encode_harmony(CALL_TEXT)


class Dropped(Exception):
    """Raised inside a streaming body: uvicorn closes the connection mid-response."""


@dataclass
class Script:
    """How the peer answers: ``mode`` is ``ok``, ``slow``, ``drop``, ``garbage``, ``500`` or
    ``nodone`` (the stream ends cleanly without its end marker). ``finish`` is the engine's
    own finish word its last record carries (``stop`` by default, as real engines send at a
    stop token; ``length``; or none at all when None)."""

    mode: str = "ok"
    ids: list[int] = field(default_factory=lambda: list(CALL_IDS))
    text: str = CALL_TEXT
    delay: float = 0.0  # seconds before each piece after the first
    drop_after: int = 3  # pieces sent before a dropped connection
    finish: str | None = "stop"
    requests: list[dict[str, Any]] = field(default_factory=list)
    closed_early: int = 0  # streams whose client went away before the end


def _sse(record: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(record)}\n\n".encode()


def peer_app(script: Script) -> Starlette:
    """A Starlette app answering all four engines' endpoints from ``script``."""

    async def pieces(records: list[bytes], trailer: bytes | None) -> AsyncIterator[bytes]:
        finished = False
        try:
            for i, record in enumerate(records):
                if script.mode == "drop" and i == script.drop_after:
                    raise Dropped("the engine died")
                if script.mode == "garbage" and i == 2:
                    yield b"data: {this is not json\n\n"
                if script.delay and i > 0:  # the first piece comes at once
                    await asyncio.sleep(script.delay)
                yield record
            if trailer is not None and script.mode != "nodone":
                yield trailer
            finished = True
        finally:
            if not finished and script.mode not in ("drop", "garbage"):
                script.closed_early += 1

    async def read(request: Request) -> dict[str, Any] | Response:
        body = await request.json()
        script.requests.append(body)
        if script.mode == "500":
            return JSONResponse({"error": {"message": "engine overloaded"}}, status_code=500)
        if script.mode == "slow" and not script.delay:
            await asyncio.sleep(3)  # longer than the slow test's gateway timeout (1 s)
        return dict(body)

    async def vllm(request: Request) -> Response:
        body = await read(request)
        if isinstance(body, Response):
            return body
        records = [
            _sse({"choices": [{"index": 0, "text": "", "token_ids": [i], "finish_reason": None}]})
            for i in script.ids
        ]
        if script.finish is not None:
            end = {"index": 0, "text": "", "token_ids": [], "finish_reason": script.finish}
            records.append(_sse({"choices": [end]}))
        return StreamingResponse(pieces(records, b"data: [DONE]\n\n"), media_type="text/event-stream")

    async def sglang(request: Request) -> Response:
        body = await read(request)
        if isinstance(body, Response):
            return body
        last = len(script.ids) - 1
        records = [
            _sse({"text": "", "output_ids": script.ids[: n + 1], "meta_info": {
                "finish_reason": {"type": script.finish} if n == last and script.finish else None}})
            for n in range(len(script.ids))
        ]
        return StreamingResponse(pieces(records, b"data: [DONE]\n\n"), media_type="text/event-stream")

    async def llamacpp(request: Request) -> Response:
        body = await read(request)
        if isinstance(body, Response):
            return body
        records = [_sse({"content": "", "tokens": [i], "stop": False}) for i in script.ids]
        stop_type = {"length": "limit", "stop": "eos"}.get(script.finish or "", "none")
        trailer = _sse({"content": "", "tokens": [], "stop": True, "stop_type": stop_type,
                        "tokens_predicted": len(script.ids)})
        return StreamingResponse(pieces(records, trailer), media_type="text/event-stream")

    async def ollama(request: Request) -> Response:
        body = await read(request)
        if isinstance(body, Response):
            return body
        # Ollama removes the stop string from the text it returns: <|call|> never arrives.
        text = script.text.removesuffix("<|call|>")
        words = [text[i : i + 7] for i in range(0, len(text), 7)]
        records = [(json.dumps({"response": w, "done": False}) + "\n").encode() for w in words]
        end = {"response": "", "done": True, "eval_count": len(script.ids)}
        if script.finish is not None:
            end["done_reason"] = script.finish
        trailer = (json.dumps(end) + "\n").encode()
        return StreamingResponse(pieces(records, trailer), media_type="application/x-ndjson")

    async def ok(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(
        routes=[
            Route("/v1/completions", vllm, methods=["POST"]),
            Route("/generate", sglang, methods=["POST"]),
            Route("/completion", llamacpp, methods=["POST"]),
            Route("/api/generate", ollama, methods=["POST"]),
            Route("/health", ok),
            Route("/api/version", ok),
        ]
    )


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """No test may hang: past ``seconds`` the test fails with TimeoutError (SIGALRM)."""

    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"the test ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def tiny_client() -> Iterator[Any]:
    """An openai client of a gateway that serves the embedded tiny random gpt-oss (the one
    real model of the tests; building it takes seconds, so a module fixture holds it)."""
    import openai

    from harmony_grammar.gateway import EmbeddedBackend, GatewayConfig, serving

    with serving(EmbeddedBackend("tiny", workers=2), GatewayConfig(model="tiny")) as url:
        yield openai.OpenAI(base_url=url + "/v1", api_key="x", timeout=120, max_retries=0)
