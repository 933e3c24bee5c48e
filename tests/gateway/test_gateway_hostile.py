"""The gateway under attack (issue 33): each finding of the hostile round, and its class.

A live ``serve`` (embedded, ``prior`` model: no network, fast) on 127.0.0.1 with its
defaults, driven over HTTP: a client grammar past the gate's limits, requests that would
hold a worker for good, forged Host and Origin headers, text that has no UTF-8 form, engine
faults of every kind, and client mistakes that were 500s. What must hold: a 400 (or 401,
403, 415, 502) with an OpenAI error object naming the field or the limit, a stream that
ends properly, ``/health`` answering and counting only live streams, and never a 500.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
httpx2 = pytest.importorskip("httpx2")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import Response  # noqa: E402
from starlette.routing import Route  # noqa: E402

from harmony_grammar.format.vocabulary import load_encoding  # noqa: E402
from harmony_grammar.gateway import EmbeddedBackend, GatewayConfig, Output, serving  # noqa: E402
from harmony_grammar.gateway.app import create_app  # noqa: E402
from harmony_grammar.gateway.plan import Limits, Plan  # noqa: E402
from harmony_grammar.gateway.server import serving_app  # noqa: E402
from harmony_grammar.schema.grammar_gate import MAX_RULE_DEPTH  # noqa: E402

from ..support.serve_peers import deadline  # noqa: E402

JSON = {"content-type": "application/json"}
ASK = [{"role": "user", "content": "hi"}]
LIMIT = 64  # --max-tokens-limit for these tests


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    with deadline(120):
        yield


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    config = GatewayConfig(model="prior", limits=Limits(default_max_tokens=16, max_tokens=LIMIT))
    with serving(EmbeddedBackend("prior", workers=2), config) as base:
        yield base


def _post(url: str, path: str, body: Any, **headers: str) -> Any:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx2.post(url + path, content=data, headers={**JSON, **headers}, timeout=60)


def _error(answer: Any, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    error: dict[str, Any] = answer.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


def _health(url: str) -> dict[str, Any]:
    answer = httpx2.get(url + "/health", timeout=10)
    assert answer.status_code == 200
    health: dict[str, Any] = answer.json()
    return health


def _settled(url: str) -> None:
    """Every generation has ended (they end within one token of being closed)."""
    with deadline(30):
        while True:
            health = _health(url)
            if health["open_streams"] == 0 and health["active_generations"] == 0:
                return


def _chain(depth: int) -> str:
    lines = ["%llguidance {}", "start: r0"]
    lines += [f"r{i}: r{i + 1}" for i in range(depth)]
    return "\n".join([*lines, f'r{depth}: "a"']) + "\n"


# -- 1. the grammar gate ------------------------------------------------------------------


def test_a_grammar_chained_past_the_limit_is_a_400_and_the_server_lives(url: str) -> None:
    """3,000 chained rules crashed the process (SIGSEGV in llguidance); now a 400."""
    for depth in (3000, 10000):
        body = {"prompt": "hi", "max_tokens": 4, "structured_outputs": {"grammar": _chain(depth)}}
        error = _error(_post(url, "/v1/completions", body), 400)
        assert error["code"] == "grammar_rule_depth_exceeded"
        assert error["param"] == "structured_outputs.grammar"
        assert str(MAX_RULE_DEPTH) in error["message"]
    # Terminals chain too (llguidance inlines them recursively).
    terminals = "%llguidance {}\nstart: T0\n" + "".join(f"T{i}: T{i + 1}\n" for i in range(5000))
    body = {"prompt": "hi", "structured_outputs": {"grammar": terminals + 'T5000: "a"\n'}}
    assert _error(_post(url, "/v1/completions", body), 400)["code"] == "grammar_rule_depth_exceeded"
    assert _health(url)["status"] == "ok"


def test_a_grammar_within_the_limit_still_compiles(url: str) -> None:
    body = {"prompt": "hi", "max_tokens": 4, "structured_outputs": {"grammar": _chain(1500)}}
    answer = _post(url, "/v1/completions", body)
    assert answer.status_code == 200
    assert answer.json()["choices"][0]["text"] == "a"


def test_llguidance_refusing_a_grammar_is_a_400_streamed_or_not(url: str) -> None:
    for stream in (False, True):
        body = {"prompt": "hi", "stream": stream, "structured_outputs": {"grammar": "start: ("}}
        assert "llguidance" in _error(_post(url, "/v1/completions", body), 400)["message"]


# -- 2. bounded work per request ----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/completions", {"prompt": "hi", "max_tokens": LIMIT + 1}),
        ("/v1/chat/completions", {"messages": ASK, "max_tokens": LIMIT + 1}),
        ("/v1/chat/completions", {"messages": ASK, "max_completion_tokens": 10**12}),
        ("/v1/responses", {"input": "hi", "max_output_tokens": LIMIT + 1}),
    ],
)
def test_max_tokens_is_capped_on_every_route(url: str, path: str, body: dict[str, Any]) -> None:
    error = _error(_post(url, path, body), 400)
    assert error["param"] in ("max_tokens", "max_completion_tokens", "max_output_tokens")
    assert str(LIMIT) in error["message"]


def test_a_client_that_leaves_a_whole_completion_cancels_it() -> None:
    """A whole /v1/completions answer notices its client leaving, as Chat's does."""
    config = GatewayConfig(model="prior", limits=Limits(max_tokens=10**6))
    backend = EmbeddedBackend("prior", workers=1)
    with serving(backend, config) as base:
        # A grammar that cannot end before a million characters: the answer takes minutes.
        endless = '%llguidance {}\nstart: %json {"type": "string", "minLength": 1000000}\n'
        body = {"prompt": "hi", "max_tokens": 10**6, "structured_outputs": {"grammar": endless}}
        with pytest.raises(httpx2.TimeoutException):
            _post_with_timeout(base, body, seconds=1.0)
        _settled(base)
        assert backend.cancelled >= 1
        # The one worker is free again: a short request is served.
        assert _post(base, "/v1/completions", {"prompt": "hi", "max_tokens": 2}).status_code == 200


def _post_with_timeout(url: str, body: Any, *, seconds: float) -> Any:
    return httpx2.post(url + "/v1/completions", json=body, timeout=seconds)


# -- 4. no 500 for client input ------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/v1/chat/completions", {"messages": ASK, "model": "a\ud800b"}, None),
        ("/v1/responses", {"input": "hi", "instructions": "x\udfff"}, None),
        ("/v1/chat/completions", {"messages": ASK, "n": True}, "n"),
        ("/v1/chat/completions", {"messages": ASK, "n": 2}, "n"),
        ("/v1/chat/completions", {"messages": []}, "messages"),
        ("/v1/chat/completions", {}, "messages"),
        ("/v1/responses", {"input": []}, "input"),
        ("/v1/chat/completions", {"messages": ASK, "stream": "yes"}, "stream"),
        ("/v1/chat/completions", {"messages": ASK, "model": 7}, "model"),
        ("/v1/completions", {"prompt": "hi", "temperature": True}, "temperature"),
        ("/v1/completions", {"prompt": "hi", "seed": 2**70}, "seed"),
        ("/v1/completions", {"prompt": "hi", "stop_token_ids": [True]}, "stop_token_ids"),
    ],
)
def test_client_mistakes_are_400s_naming_the_field(
    url: str, path: str, body: dict[str, Any], param: str | None
) -> None:
    for stream in (False, True):
        error = _error(_post(url, path, {**body, "stream": body.get("stream", stream)}), 400)
        assert error["param"] == param


def test_a_lone_surrogate_in_any_echoed_field_is_a_400(url: str) -> None:
    tool = {"type": "function", "function": {"name": "f", "description": "d\ud83d"}}
    for body in (
        {"messages": ASK, "tools": [tool]},
        {"messages": [{"role": "user", "content": "\udc00"}], "stream": True},
        {"messages": ASK, "user": "\ud800"},
    ):
        error = _error(_post(url, "/v1/chat/completions", body), 400)
        assert "surrogate" in error["message"]


def test_a_deeply_nested_body_is_a_400(url: str) -> None:
    deep = b'{"messages": [{"role": "user", "content": "hi"}], "metadata": ' + b"[" * 5000
    deep += b"]" * 5000 + b"}"
    assert "nest" in _error(_post(url, "/v1/chat/completions", deep), 400)["message"]
    not_utf8 = b'{"messages": "\xff"}'
    assert "UTF-8" in _error(_post(url, "/v1/chat/completions", not_utf8), 400)["message"]


def test_a_bad_tool_schema_is_a_400_whatever_tool_choice_says(url: str) -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": 12}}}
    for choice in ("none", "auto", "required"):
        body = {"messages": ASK, "tools": [tool], "tool_choice": choice}
        assert _error(_post(url, "/v1/chat/completions", body), 400)["param"] == "tools"


def test_duplicate_tool_names_are_a_400(url: str) -> None:
    tool = {"type": "function", "function": {"name": "f"}}
    error = _error(_post(url, "/v1/chat/completions", {"messages": ASK, "tools": [tool, tool]}), 400)
    assert error["param"] == "tools[1]" and "already declared" in error["message"]
    flat = {"type": "function", "name": "f"}
    assert _error(_post(url, "/v1/responses", {"input": "hi", "tools": [flat, flat]}), 400)


def test_accepted_edges(url: str) -> None:
    """``n: null`` is n left out; any int64 seed draws (numpy takes none below 0)."""
    for body in ({"messages": ASK, "n": None}, {"messages": ASK, "seed": -1, "max_tokens": 4}):
        assert _post(url, "/v1/chat/completions", body).status_code == 200
    assert _post(url, "/v1/completions", {"prompt": "x", "seed": -(2**63)}).status_code == 200


# A third of the profile's budget: each example is a request to a served gateway.
@settings(
    max_examples=settings.default.max_examples // 3,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    field=st.sampled_from(
        ["model", "n", "stream", "tools", "tool_choice", "response_format", "stop", "seed",
         "temperature", "top_p", "max_tokens", "stream_options", "metadata", "user",
         "parallel_tool_calls", "reasoning_effort", "messages"]
    ),
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=6,
    ),
)
def test_any_value_in_any_field_is_never_a_500(url: str, field: str, value: Any) -> None:
    body = {"messages": ASK, "max_tokens": 4, field: value}
    answer = _post(url, "/v1/chat/completions", body)
    assert answer.status_code in (200, 400), answer.text
    if answer.status_code == 400:
        _error(answer, 400)


# -- engine faults of any kind -------------------------------------------------------------


class _Faulty:
    """A backend that writes a few ids of a final answer, then fails in a way no engine
    reports as an upstream error (``fail_first``: before any output)."""

    name = "faulty"

    def __init__(self, *, fail_first: bool = False) -> None:
        self.fail_first = fail_first
        self.closed = 0

    async def ready(self) -> bool:
        return True

    async def aclose(self) -> None:
        return None

    async def generate(self, plan: Plan) -> AsyncIterator[Output]:
        try:
            if self.fail_first:
                raise RecursionError("maximum recursion depth exceeded while decoding JSON")
            text = "<|channel|>final<|message|>Hello"
            ids = load_encoding().encode(text, allowed_special="all")
            for i in ids:
                yield Output(ids=(i,))
            raise RecursionError("maximum recursion depth exceeded while decoding JSON")
        finally:
            self.closed += 1


def test_an_engine_fault_of_any_kind_ends_streams_properly_and_whole_answers_502() -> None:
    backend = _Faulty()
    with serving(backend, GatewayConfig(model="m")) as base:  # type: ignore[arg-type]
        whole = _post(base, "/v1/chat/completions", {"messages": ASK})
        assert _error(whole, 502)["code"] == "upstream_error"
        assert "RecursionError" in whole.json()["error"]["message"]
        with httpx2.stream(
            "POST", base + "/v1/chat/completions", json={"messages": ASK, "stream": True}
        ) as answer:
            assert answer.status_code == 200
            lines = [line[6:] for line in answer.iter_lines() if line.startswith("data: ")]
        assert lines[-1] == "[DONE]"
        last = json.loads(lines[-2])
        assert last["error"]["code"] == "upstream_error"  # the error chunk (docs/serving.md)
        with httpx2.stream(
            "POST", base + "/v1/responses", json={"input": "hi", "stream": True}
        ) as answer:
            events = [json.loads(line[6:]) for line in answer.iter_lines() if line.startswith("data: ")]
        assert events[-1]["type"] == "response.failed"
        assert _error(_post(base, "/v1/responses", {"input": "hi"}), 502)
        assert _health(base)["open_streams"] == 0
        assert backend.closed == 4
    first = _Faulty(fail_first=True)
    with serving(first, GatewayConfig(model="m")) as base:  # type: ignore[arg-type]
        for stream in (False, True):
            body = {"messages": ASK, "stream": stream}
            assert _error(_post(base, "/v1/chat/completions", body), 502)["code"] == "upstream_error"


def test_the_500_handler_tells_only_an_id() -> None:
    async def broken(request: Request) -> Response:
        raise KeyError("secret server detail")

    app = create_app(
        EmbeddedBackend("prior", workers=1),
        GatewayConfig(model="prior"),
        extra_routes=[Route("/broken", broken)],
    )
    with serving_app(app) as base:
        answer = httpx2.get(base + "/broken", timeout=10)
        error = _error(answer, 500)
        assert "secret" not in answer.text and "KeyError" not in answer.text
        assert error["message"].startswith("internal error (request req_")
        assert error["code"] in error["message"]


# -- the key --------------------------------------------------------------------------------


def test_non_ascii_keys_and_headers_are_401_or_accepted() -> None:
    config = GatewayConfig(model="prior", api_key="clé-secrète")
    with serving(EmbeddedBackend("prior", workers=1), config) as base:
        body = {"messages": ASK, "max_tokens": 2}
        for wrong in ("Bearer été".encode(), "Bearer été".encode("latin-1"), b"Bearer \xff"):
            headers = [(b"authorization", wrong)]
            answer = httpx2.post(base + "/v1/chat/completions", json=body, headers=headers)
            assert _error(answer, 401)["code"] == "invalid_api_key"
        right = [(b"authorization", "Bearer clé-secrète".encode())]
        answer = httpx2.post(base + "/v1/chat/completions", json=body, headers=right)
        assert answer.status_code == 200


# -- 5. Host and Origin ---------------------------------------------------------------------


def test_a_foreign_host_is_refused_dns_rebinding(url: str) -> None:
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", ""):
        answer = _post(url, "/v1/chat/completions", {"messages": ASK}, host=host)
        assert _error(answer, 403)["code"] == "host_not_allowed"
    assert _error(httpx2.get(url + "/health", headers={"host": "evil.example"}), 403)
    for host in ("localhost", "localhost:1234", "127.0.0.1", "[::1]:80", "LOCALHOST"):
        body = {"messages": ASK, "max_tokens": 2}
        assert _post(url, "/v1/chat/completions", body, host=host).status_code == 200


def test_a_cross_site_origin_and_a_simple_content_type_are_refused(url: str) -> None:
    body = {"messages": ASK, "max_tokens": 2}
    answer = _post(url, "/v1/chat/completions", body, origin="https://evil.example")
    assert _error(answer, 403)["code"] == "origin_not_allowed"
    # The attack as a browser sends it: text/plain, no preflight.
    plain = httpx2.post(
        url + "/v1/chat/completions",
        content=json.dumps(body),
        headers={"content-type": "text/plain"},
        timeout=10,
    )
    assert _error(plain, 415)["code"] == "unsupported_media_type"
    form = httpx2.post(url + "/v1/chat/completions", data={"a": "b"}, timeout=10)
    assert _error(form, 415)
    same = _post(url, "/v1/chat/completions", body, origin=url)
    assert same.status_code == 200
    charset = _post(url, "/v1/chat/completions", body, **{"content-type": "application/json; charset=utf-8"})
    assert charset.status_code == 200


def test_allow_host_and_allow_origin() -> None:
    config = GatewayConfig(
        model="prior",
        allow_hosts=("gateway.internal",),
        allow_origins=("https://app.example",),
    )
    with serving(EmbeddedBackend("prior", workers=1), config) as base:
        body = {"messages": ASK, "max_tokens": 2}
        assert _post(base, "/v1/chat/completions", body, host="gateway.internal").status_code == 200
        assert _error(_post(base, "/v1/chat/completions", body, host="other.internal"), 403)
        allowed = _post(base, "/v1/chat/completions", body, origin="https://app.example")
        assert allowed.status_code == 200
        assert allowed.headers["access-control-allow-origin"] == "https://app.example"
        preflight = httpx2.options(
            base + "/v1/chat/completions",
            headers={
                "origin": "https://app.example",
                "access-control-request-method": "POST",
                "access-control-request-headers": "content-type,authorization",
            },
        )
        assert preflight.status_code == 200
        assert "POST" in preflight.headers["access-control-allow-methods"]
        other = _post(base, "/v1/chat/completions", body, origin="https://evil.example")
        assert _error(other, 403)["code"] == "origin_not_allowed"


def test_the_turn_grammar_passes_the_gate_for_every_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """Schemas each within the compiler's limits can still add up to a turn grammar past the
    gate (rule count); the planner refuses it for every backend, not only the embedded one.
    The limit is lowered here so that the test stays small; the check is the same."""
    from harmony_grammar.gateway import planning
    from harmony_grammar.gateway.chat.protocol import plan_chat
    from harmony_grammar.gateway.errors import GatewayError
    from harmony_grammar.schema import grammar_gate

    monkeypatch.setattr(grammar_gate, "MAX_GRAMMAR_RULES", 60)
    planning._grammar.cache_clear()
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(40)}}
    tools = [{"type": "function", "function": {"name": f"t{j}", "parameters": schema}} for j in range(3)]
    try:
        with pytest.raises(GatewayError) as caught:
            plan_chat({"messages": ASK, "tools": tools}, model="m", limits=Limits())
    finally:
        planning._grammar.cache_clear()
    assert caught.value.status == 400 and caught.value.code == "grammar_rule_count_exceeded"
    assert caught.value.param == "tools"


class _FaultyEmbedded(EmbeddedBackend):
    """The embedded engine, whose generation fails after three ids (a fault of no kind the
    route knows)."""

    async def draws(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        async for i, draw in _enumerate(super().draws(*args, **kwargs)):
            if i == 3:
                raise RuntimeError("the engine broke")
            yield draw


async def _enumerate(items: Any) -> Any:
    i = 0
    async for item in items:
        yield i, item
        i += 1


def test_an_engine_fault_on_the_completions_route_is_a_502_or_an_ended_stream() -> None:
    backend = _FaultyEmbedded("prior", workers=1)
    endless = '%llguidance {}\nstart: %json {"type": "string", "minLength": 1000}\n'
    body = {"prompt": "hi", "max_tokens": 50, "structured_outputs": {"grammar": endless}}
    with serving(backend, GatewayConfig(model="prior")) as base:
        whole = _post(base, "/v1/completions", body)
        assert _error(whole, 502)["code"] == "upstream_error"
        assert "RuntimeError" in whole.json()["error"]["message"]
        assert "the engine broke" not in whole.text  # logged, not sent
        with httpx2.stream("POST", base + "/v1/completions", json={**body, "stream": True}) as answer:
            assert answer.status_code == 200
            lines = [line[6:] for line in answer.iter_lines() if line.startswith("data: ")]
        assert lines[-1] == "[DONE]"
        assert json.loads(lines[-2])["error"]["code"] == "upstream_error"
        _settled(base)


def test_a_body_that_never_arrives_is_a_408() -> None:
    """A client that announces a body and stops sending holds nothing for good."""
    import socket

    config = GatewayConfig(model="prior", body_seconds=0.5)
    with serving(EmbeddedBackend("prior", workers=1), config) as base:
        host, port = base.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"messages\""
            )
            # The answer may come in several segments (headers, then the body): read to the
            # end, which the server marks by closing the connection it gave up on.
            received = b""
            while chunk := sock.recv(65536):
                received += chunk
            answer = received.decode()
        assert answer.startswith("HTTP/1.1 408")
        assert '"code":"request_timeout"' in answer.replace(" ", "")
        assert _health(base)["open_streams"] == 0
