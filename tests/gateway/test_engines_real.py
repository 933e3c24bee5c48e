"""The gateway in front of real engines, a stock llama-server and a CPU vLLM, and the
gateway inside vLLM, as its endpoint plugin.

Each engine is installed by its script in ``scripts/engines/`` (``.ci/run`` runs them) and
started here with the project's tiny random gpt-oss; a test skips, naming the script, where
its engine is not installed (fails in CI, which installs both). One vLLM serves the module
(starting it takes minutes on 2 cores): it runs with ``VLLM_PLUGINS=harmony_grammar``, so
the ``vllm`` target is the gateway in front of its ``/v1/completions`` and the
``vllm-plugin`` target is vLLM's own port, whose Chat and Responses routes the plugin
serves, with no gateway process. The model is random, so what it writes is not checked, only
that every answer is well-formed whatever it wrote: a call names a tool and its arguments
validate, a ``response_format`` answer parses and validates, a cut answer says so, no
Harmony markup reaches the client, and a streamed answer is the whole answer in pieces.
Each test also requires that the outcome it is about happened for at least one of a fixed
list of seeds (a call where one is forced, say), so a grammar that never let it happen
fails.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
httpx2 = pytest.importorskip("httpx2")

import jsonschema  # noqa: E402

from harmony_grammar.gateway import GatewayConfig  # noqa: E402
from harmony_grammar.gateway.server import build_backend, serving  # noqa: E402

from ..support.openai_sdk import check_chunk, check_event, check_response  # noqa: E402
from ..support.real_engines import RealEngine, llama_server, vllm_server  # noqa: E402

MARKERS = ("<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|call|>", "<|return|>", "<|constrain|>")
SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
TOOLS = [{"type": "function", "function": {"name": "check", "parameters": SCHEMA}}]
RESPONSES_TOOLS = [{"type": "function", "name": "check", "parameters": SCHEMA}]
FORMAT = {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}}
ASK = [{"role": "user", "content": "Is it ok?"}]
SEEDS = range(12)
MAX_TOKENS = 48


@pytest.fixture(scope="module")
def vllm() -> Iterator[RealEngine]:
    """The module's one vLLM, with the endpoint plugin loaded."""
    with vllm_server() as engine:
        yield engine


@pytest.fixture(scope="module", params=["llamacpp", "vllm", "vllm-plugin"])
def gateway(request: pytest.FixtureRequest) -> Iterator[tuple[str, RealEngine]]:
    """The URL that serves the OpenAI APIs over a real engine, and the engine: the gateway
    in front of llama-server or vLLM (``--model`` names the engine's model), or vLLM's own
    port with the plugin."""
    if request.param == "llamacpp":
        with llama_server() as engine:
            yield from _fronted(engine)
        return
    engine = request.getfixturevalue("vllm")
    if request.param == "vllm":
        yield from _fronted(engine)
    else:
        yield engine.url, engine


def _fronted(engine: RealEngine) -> Iterator[tuple[str, RealEngine]]:
    backend = build_backend(engine.backend, upstream=engine.url, model=engine.model, timeout=120)
    with serving(backend, GatewayConfig(model=engine.model)) as url:
        yield url, engine


def _post(url: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = httpx2.post(url + path, json=body, timeout=300)
    assert answer.status_code == 200, answer.text
    payload: dict[str, Any] = answer.json()
    return payload


def _chat(url: str, **body: Any) -> dict[str, Any]:
    payload = _post(url, "/v1/chat/completions", {"messages": ASK, "max_tokens": MAX_TOKENS, **body})
    choice: dict[str, Any] = payload["choices"][0]
    usage = payload["usage"]
    assert 0 < usage["completion_tokens"] <= body.get("max_tokens", MAX_TOKENS)
    return choice


def _chat_streamed(url: str, **body: Any) -> dict[str, Any]:
    """The streamed answer put back together as a whole answer's choice."""
    request = {"messages": ASK, "max_tokens": MAX_TOKENS, **body, "stream": True}
    with httpx2.stream("POST", url + "/v1/chat/completions", json=request, timeout=300) as answer:
        assert answer.status_code == 200
        lines = [line[6:] for line in answer.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    content, reasoning, calls, finish = "", "", {}, None
    for line in lines[:-1]:
        chunk = check_chunk(json.loads(line))
        for choice in chunk.choices:
            delta = choice.delta
            content += delta.content or ""
            reasoning += getattr(delta, "reasoning_content", None) or ""
            for call in delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"name": "", "arguments": ""})
                if call.function is not None:
                    entry["name"] += call.function.name or ""
                    entry["arguments"] += call.function.arguments or ""
            finish = choice.finish_reason or finish
    message = {
        "content": content or None,
        "reasoning_content": reasoning or None,
        "tool_calls": [{"function": calls[i]} for i in sorted(calls)] or None,
    }
    return {"message": message, "finish_reason": finish}


def _well_formed(choice: dict[str, Any], allowed: set[str]) -> None:
    """What every answer must be, whatever the random model wrote."""
    message, finish = choice["message"], choice["finish_reason"]
    assert finish in allowed, choice
    for text in (message.get("content"), message.get("reasoning_content")):
        for marker in MARKERS:
            assert marker not in (text or ""), f"{marker} reached the client: {text!r}"
    calls = message.get("tool_calls") or []
    assert (finish == "tool_calls") == bool(calls), choice
    for call in calls:
        assert call["function"]["name"] == "check"
        jsonschema.validate(json.loads(call["function"]["arguments"]), SCHEMA)


def _same(whole: dict[str, Any], streamed: dict[str, Any]) -> None:
    keys = ("content", "reasoning_content")
    assert {k: whole["message"].get(k) for k in keys} == {k: streamed["message"].get(k) for k in keys}
    assert whole["finish_reason"] == streamed["finish_reason"]
    names = [(c["function"]["name"], c["function"]["arguments"]) for c in whole["message"]["tool_calls"] or []]
    streamed_names = [(c["function"]["name"], c["function"]["arguments"]) for c in streamed["message"]["tool_calls"] or []]
    assert names == streamed_names


def test_models_lists_the_engines_model(gateway: tuple[str, RealEngine]) -> None:
    url, engine = gateway
    models = httpx2.get(url + "/v1/models", timeout=30).json()
    assert engine.model in [m["id"] for m in models["data"]]


def test_forced_call_whole_and_streamed(gateway: tuple[str, RealEngine]) -> None:
    url, _ = gateway
    finishes = []
    for seed in SEEDS:
        whole = _chat(url, tools=TOOLS, tool_choice="required", seed=seed)
        _well_formed(whole, {"tool_calls", "length"})  # never a final answer
        streamed = _chat_streamed(url, tools=TOOLS, tool_choice="required", seed=seed)
        _well_formed(streamed, {"tool_calls", "length"})
        _same(whole, streamed)
        finishes.append(whole["finish_reason"])
    assert "tool_calls" in finishes, finishes


def test_optional_call(gateway: tuple[str, RealEngine]) -> None:
    url, _ = gateway
    finishes = []
    for seed in SEEDS:
        choice = _chat(url, tools=TOOLS, seed=seed)
        _well_formed(choice, {"tool_calls", "stop", "length"})
        finishes.append(choice["finish_reason"])
    assert "tool_calls" in finishes, finishes


def test_response_format(gateway: tuple[str, RealEngine]) -> None:
    url, _ = gateway
    answers = []
    for seed in SEEDS:
        choice = _chat(url, response_format=FORMAT, seed=seed)
        _well_formed(choice, {"stop", "length"})
        if choice["finish_reason"] == "stop":
            answers.append(json.loads(choice["message"]["content"]))
    assert answers, "no answer finished"
    for answer in answers:
        jsonschema.validate(answer, SCHEMA)


def test_truncation_is_reported(gateway: tuple[str, RealEngine]) -> None:
    url, _ = gateway
    payload = _post(url, "/v1/chat/completions", {"messages": ASK, "max_tokens": 3, "seed": 1})
    assert payload["choices"][0]["finish_reason"] == "length"
    assert payload["usage"]["completion_tokens"] == 3
    response = check_response(_post(url, "/v1/responses", {"input": "hi", "max_output_tokens": 3}))
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"


def test_responses_forced_call_whole_and_streamed(gateway: tuple[str, RealEngine]) -> None:
    url, _ = gateway
    calls = 0
    for seed in SEEDS:
        body = {"input": "Is it ok?", "tools": RESPONSES_TOOLS, "tool_choice": "required"}
        body |= {"max_output_tokens": MAX_TOKENS, "seed": seed}
        response = check_response(_post(url, "/v1/responses", body))
        items = [item for item in response.output if item.type == "function_call"]
        # A call or a cut: a cut call is an incomplete item of an incomplete response.
        whole_calls = [item for item in items if item.status == "completed"]
        assert response.status in ("completed", "incomplete")
        assert bool(whole_calls) == (response.status == "completed")
        assert all(item.status == "incomplete" for item in items if item not in whole_calls)
        for item in whole_calls:
            assert item.name == "check"
            jsonschema.validate(json.loads(item.arguments), SCHEMA)
        calls += len(whole_calls)
        with httpx2.stream("POST", url + "/v1/responses", json={**body, "stream": True}, timeout=300) as answer:
            assert answer.status_code == 200
            events = [check_event(json.loads(line[6:])) for line in answer.iter_lines() if line.startswith("data: ")]
        last = events[-1]
        assert last.type in ("response.completed", "response.incomplete")
        streamed_calls = [item for item in last.response.output if item.type == "function_call"]
        assert [(c.name, c.arguments, c.status) for c in streamed_calls] == [(c.name, c.arguments, c.status) for c in items]
    assert calls, "no seed gave a call"


def _engine_state(engine: RealEngine) -> tuple[bool, float]:
    """Whether the engine is generating, and how many tokens it has generated so far."""
    metrics = httpx2.get(engine.url + "/metrics", timeout=10).text
    names = {
        "llamacpp": ("llamacpp:requests_processing", "llamacpp:tokens_predicted_total"),
        "vllm": ("vllm:num_requests_running", "vllm:generation_tokens_total"),
    }[engine.backend]
    values = [0.0, 0.0]
    for line in metrics.splitlines():
        for index, name in enumerate(names):
            if line.startswith(name):
                values[index] += float(line.rsplit(" ", 1)[1])
    return values[0] > 0, values[1]


def test_a_client_that_leaves_stops_the_engine(gateway: tuple[str, RealEngine]) -> None:
    url, engine = gateway
    _settle(url, engine)
    _, before = _engine_state(engine)
    # A long answer in free text: the random model's next stop token, under this seed, is
    # far beyond the first piece (llama.cpp cannot take a JSON answer too long to end early:
    # its GBNF reader refuses a string of 400 characters or more, docs/serving.md).
    body = {"messages": ASK, "max_tokens": 3000, "seed": 0, "stream": True}
    with httpx2.stream("POST", url + "/v1/chat/completions", json=body, timeout=300) as answer:
        assert answer.status_code == 200
        for line in answer.iter_lines():
            if line.startswith("data: "):
                break  # the first piece arrived; leave
    _settle(url, engine)
    _, after = _engine_state(engine)
    assert 0 < after - before < 3000, "the engine generated the whole answer for no one"


def _settle(url: str, engine: RealEngine) -> None:
    """Wait until the gateway has no open stream and the engine generates nothing."""
    deadline = time.monotonic() + 300
    while True:
        # vLLM's own /health (the plugin's URL) says nothing of streams: the engine does.
        health = {"open_streams": 0} if url == engine.url else httpx2.get(url + "/health", timeout=10).json()
        if health["open_streams"] == 0 and not _engine_state(engine)[0]:
            return
        assert time.monotonic() < deadline, f"still generating: {health}"
        time.sleep(0.2)


def test_the_plugin_replaces_vllms_routes(vllm: RealEngine) -> None:
    """vLLM's log names each override, and its port answers as the gateway does: the
    gateway's request id, its 400 for a forced call with no tools (vLLM's own handler
    answers that one differently), its render twins."""
    log = vllm.log()
    assert "Loaded endpoint plugin harmony_grammar" in log, log[-3000:]
    for path in ("/v1/chat/completions", "/v1/responses"):
        assert f"Endpoint plugin overrides POST {path}\n" in log, log[-3000:]
    answer = httpx2.post(vllm.url + "/v1/chat/completions", json={"messages": ASK, "tool_choice": "required"}, timeout=60)
    assert answer.status_code == 400, answer.text
    assert answer.headers["x-request-id"]
    assert answer.json()["error"]["param"] == "tools"  # the gateway's planner: no tools to call
    rendered = _post(vllm.url, "/v1/chat/completions/render", {"messages": ASK, "tools": TOOLS})
    assert rendered["prompt"].startswith("<|start|>system<|message|>")
    assert "namespace functions" in rendered["prompt"]
    # The routes it leaves are vLLM's: /v1/completions answers as vLLM does.
    completion = _post(vllm.url, "/v1/completions", {"model": vllm.model, "prompt": "hi", "max_tokens": 2})
    assert completion["object"] == "text_completion"
    # vLLM's own /metrics shows the gateway's counters (serve's names) beside vLLM's: the 400
    # above is counted under its route.
    metrics = httpx2.get(vllm.url + "/metrics", timeout=10).text
    assert "vllm:generation_tokens_total" in metrics
    refused = [
        line
        for line in metrics.splitlines()
        if line.startswith('harmony_gateway_requests_total{route="/v1/chat/completions",status="400"}')
    ]
    assert refused and float(refused[0].rsplit(" ", 1)[1]) >= 1, metrics[-3000:]
    assert "harmony_gateway_completion_tokens_total" in metrics
