"""``harmony-grammar serve`` live on 127.0.0.1, driven by real clients.

One embedded gateway (the tiny random gpt-oss, transformers' ``GptOssForCausalLM``) serves
the module; the openai SDK (sync, async, streaming; Chat Completions and Responses) talks
to it, a second gateway with ``--backend vllm`` fronts it, and the fault tests put the
gateway in front of the local peers of tests/support/serve_peers.py (which check the wire format
and play back scripted output) or of a real ``serve`` process that is killed mid-stream.
With a random model, what the model says is chance; what must hold is structural: the
grammar's shapes, schema-valid calls, no control-token spelling in any text field, the same
answer streamed and whole, usage from the token counts, OpenAI errors with their status.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("torch")
openai = pytest.importorskip("openai")
httpx2 = pytest.importorskip("httpx2")

import jsonschema  # noqa: E402

from harmony_grammar.gateway import (  # noqa: E402
    EmbeddedBackend,
    GatewayConfig,
    build_backend,
    serving,
)
from harmony_grammar.gateway.server import serving_app  # noqa: E402
from harmony_grammar.rendering.chat import from_chat_completions  # noqa: E402
from harmony_grammar.rendering.renderer import DropRule, render  # noqa: E402

from ..support.openai_sdk import check_chunk, check_event, check_response  # noqa: E402
from ..support.serve_peers import CALL_IDS, Script, deadline, peer_app  # noqa: E402

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
    "required": ["city"],
    "additionalProperties": False,
}
TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_weather", "description": "Weather", "parameters": WEATHER},
    }
]
RESPONSES_TOOLS = [
    {"type": "function", "name": "get_weather", "description": "Weather", "parameters": WEATHER}
]
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]
MARKERS = ("<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|call|>", "<|return|>", "<|constrain|>")
TEST_SECONDS = 120
#: An answer that cannot end before max_tokens: a JSON string of at least a million characters.
LONG = {"type": "json_schema", "json_schema": {"name": "long", "schema": {"type": "string", "minLength": 1000000}}}


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    """No test may hang: each gets TEST_SECONDS, then fails."""
    with deadline(TEST_SECONDS):
        yield


@pytest.fixture(scope="module")
def embedded() -> Iterator[tuple[str, EmbeddedBackend]]:
    backend = EmbeddedBackend("tiny", workers=4)
    with serving(backend, GatewayConfig(model="tiny")) as url:
        yield url, backend


@pytest.fixture(scope="module")
def client(embedded: tuple[str, EmbeddedBackend]) -> Any:
    return openai.OpenAI(base_url=embedded[0] + "/v1", api_key="unused", timeout=60, max_retries=0)


def _health(url: str) -> dict[str, Any]:
    return dict(httpx2.get(url + "/health", timeout=10).json())


def _settled(url: str) -> dict[str, Any]:
    """/health once no generation is open (a leak shows as a count that never drops)."""
    deadline = time.monotonic() + 20
    while True:
        health = _health(url)
        if health["open_streams"] == 0 and health.get("active_generations", 0) == 0:
            return health
        assert time.monotonic() < deadline, f"generations still open: {health}"
        time.sleep(0.05)


def _no_markers(*texts: str | None) -> None:
    for text in texts:
        for marker in MARKERS:
            assert marker not in (text or ""), f"{marker} leaked into {text!r}"


def _whole_from_stream(chunks: list[Any]) -> dict[str, Any]:
    content, reasoning, calls, finish = "", "", {}, None
    for chunk in chunks:
        for choice in chunk.choices:
            delta = choice.delta
            content += delta.content or ""
            reasoning += (delta.model_extra or {}).get("reasoning_content") or ""
            for call in delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"name": "", "arguments": ""})
                if call.function.name:
                    entry["name"] = call.function.name
                entry["arguments"] += call.function.arguments or ""
            finish = choice.finish_reason or finish
    return {"content": content or None, "reasoning": reasoning or None,
            "calls": [calls[i] for i in sorted(calls)], "finish": finish}


def _whole(completion: Any) -> dict[str, Any]:
    message = completion.choices[0].message
    return {
        "content": message.content,
        "reasoning": (message.model_extra or {}).get("reasoning_content"),
        "calls": [
            {"name": c.function.name, "arguments": c.function.arguments}
            for c in message.tool_calls or []
        ],
        "finish": completion.choices[0].finish_reason,
    }


# -- the server ------------------------------------------------------------------------


def test_health_and_models(embedded: tuple[str, EmbeddedBackend], client: Any) -> None:
    url, _ = embedded
    health = _health(url)
    assert health["status"] == "ok" and health["backend"] == "embedded"
    models = client.models.list()
    assert [m.id for m in models.data] == ["tiny"]
    missing = httpx2.get(url + "/v1/nothing", timeout=10)
    assert missing.status_code == 404 and missing.json()["error"]["message"]
    wrong_method = httpx2.get(url + "/v1/chat/completions", timeout=10)
    assert wrong_method.status_code == 405 and wrong_method.json()["error"]["message"]
    not_json = httpx2.post(
        url + "/v1/chat/completions",
        content=b"{nope",
        headers={"content-type": "application/json"},
        timeout=10,
    )
    assert not_json.status_code == 400
    assert not_json.json()["error"]["message"].startswith("the body is not JSON")


def test_embedded_model_is_gpt_oss(embedded: tuple[str, EmbeddedBackend]) -> None:
    transformers = pytest.importorskip("transformers")
    if not hasattr(transformers, "GptOssForCausalLM"):
        pytest.skip("this transformers has no GptOssForCausalLM: the Llama stand-in serves")
    scores = embedded[1]._scorer
    assert scores is not None
    assert type(scores([1])._model).__name__ == "GptOssForCausalLM"


# -- Chat Completions ----------------------------------------------------------------------


def test_chat_required_call_is_schema_valid(client: Any) -> None:
    completion = client.chat.completions.create(
        model="tiny", messages=ASK, tools=TOOLS, tool_choice="required", seed=7, max_tokens=300
    )
    check_response_like = completion.choices[0]
    assert check_response_like.finish_reason == "tool_calls"
    (call,) = check_response_like.message.tool_calls
    assert call.function.name == "get_weather" and call.id.startswith("call_")
    jsonschema.validate(json.loads(call.function.arguments), WEATHER)
    _no_markers(check_response_like.message.content, call.function.arguments, call.function.name)
    # usage is the token count: the prompt as the renderer renders it.
    prompt = render(
        from_chat_completions({"messages": ASK, "tools": TOOLS}),
        next_turn="assistant",
        tokens=True,
        drop_rule=DropRule.EVERY_FINAL,
    )
    assert completion.usage.prompt_tokens == len(prompt)
    assert completion.usage.total_tokens == len(prompt) + completion.usage.completion_tokens
    assert completion.usage.completion_tokens > 0


def test_chat_stream_equals_whole_at_temperature_zero(client: Any) -> None:
    request = {"model": "tiny", "messages": ASK, "tools": TOOLS, "temperature": 0, "max_tokens": 40}
    whole = _whole(client.chat.completions.create(**request))
    again = _whole(client.chat.completions.create(**request))
    assert whole == again  # greedy: deterministic
    chunks = list(client.chat.completions.create(**request, stream=True))
    for chunk in chunks:
        check_chunk(chunk.model_dump(exclude_unset=True))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert _whole_from_stream(chunks) == whole
    assert whole["finish"] in ("stop", "tool_calls", "length")
    _no_markers(whole["content"], whole["reasoning"], *(c["arguments"] for c in whole["calls"]))


def test_chat_named_tool_choice_and_usage_in_stream(client: Any) -> None:
    stream = client.chat.completions.create(
        model="tiny",
        messages=ASK,
        tools=TOOLS,
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        stream=True,
        stream_options={"include_usage": True},
        seed=3,
        max_tokens=300,
    )
    chunks = list(stream)
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    whole = _whole_from_stream(chunks)
    assert whole["finish"] == "tool_calls" and whole["calls"][0]["name"] == "get_weather"
    jsonschema.validate(json.loads(whole["calls"][0]["arguments"]), WEATHER)


def test_chat_response_format_json_schema(client: Any) -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string"}, "score": {"type": "integer"}},
        "required": ["answer", "score"],
        "additionalProperties": False,
    }
    completion = client.chat.completions.create(
        model="tiny",
        messages=[{"role": "user", "content": "Rate Paris."}],
        response_format={"type": "json_schema", "json_schema": {"name": "rating", "schema": schema}},
        seed=11,
        max_tokens=400,
        reasoning_effort="low",
    )
    assert completion.choices[0].finish_reason == "stop"
    jsonschema.validate(json.loads(completion.choices[0].message.content), schema)


@pytest.mark.parametrize("stop", ["lo wo", ["zzz", "sunny"], "Hello"])
def test_chat_stop_string_cuts_the_answer(stop: Any) -> None:
    from harmony_grammar.format.harmony_ids import encode_harmony

    answer = "<|channel|>final<|message|>Hello world, it is sunny today.<|return|>"
    script = Script(ids=encode_harmony(answer))
    with serving_app(peer_app(script)) as peer, serving(build_backend("vllm", upstream=peer, timeout=10)) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="x", timeout=30, max_retries=0)
        cut = client.chat.completions.create(model="tiny", messages=ASK, stop=stop)
        streamed = _whole_from_stream(list(client.chat.completions.create(model="tiny", messages=ASK, stop=stop, stream=True)))
        plain = client.chat.completions.create(model="tiny", messages=ASK)
    text = "Hello world, it is sunny today."
    first = min(text.find(s) for s in ([stop] if isinstance(stop, str) else stop) if s in text)
    assert cut.choices[0].message.content == (text[:first] or None)
    assert cut.choices[0].finish_reason == "stop"
    assert streamed == _whole(cut)
    assert plain.choices[0].message.content == text and plain.choices[0].finish_reason == "stop"


def test_chat_async_client_streams(embedded: tuple[str, EmbeddedBackend]) -> None:
    async def run() -> list[Any]:
        client = openai.AsyncOpenAI(base_url=embedded[0] + "/v1", api_key="x", timeout=60, max_retries=0)
        async with client:
            streams = [
                await client.chat.completions.create(
                    model="tiny", messages=ASK, tools=TOOLS, seed=s, max_tokens=100, stream=True
                )
                for s in range(3)
            ]

            async def drain(stream: Any) -> list[Any]:
                return [chunk async for chunk in stream]

            return await asyncio.gather(*(drain(s) for s in streams))

    for chunks in asyncio.run(run()):
        assert chunks[-1].choices[0].finish_reason in ("stop", "tool_calls", "length")
    _settled(embedded[0])


def test_chat_bad_requests_are_openai_errors(client: Any) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="tiny", messages=[{"role": "wizard", "content": "x"}])
    assert caught.value.status_code == 400
    assert caught.value.body["param"] == "messages[0]"
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="tiny", messages=ASK, temperature=5)
    assert caught.value.body["param"] == "temperature"
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="tiny", messages=ASK, tool_choice="required")
    assert "tool" in caught.value.body["message"]


# -- Responses -------------------------------------------------------------------------------


def test_responses_whole_and_streamed(client: Any) -> None:
    request = {
        "model": "tiny",
        "input": "What is the weather in Paris?",
        "tools": RESPONSES_TOOLS,
        "temperature": 0,
        "max_output_tokens": 40,
    }
    whole = client.responses.create(**request)
    check_response(whole.model_dump(exclude_unset=True))
    assert whole.status in ("completed", "incomplete")
    assert whole.usage.input_tokens > 0 and whole.usage.output_tokens > 0
    events = list(client.responses.create(**request, stream=True))
    for event in events:
        check_event(event.model_dump(exclude_unset=True))
    assert events[0].type == "response.created"
    final = events[-1]
    assert final.type in ("response.completed", "response.incomplete")

    def shape(response: Any) -> list[tuple[str, str]]:
        out = []
        for item in response.output:
            if item.type == "function_call":
                out.append((item.type, item.name + item.arguments))
            elif item.type == "message":
                out.append((item.type, item.content[0].text))
            else:
                out.append((item.type, item.content[0].text))
        return out

    assert shape(final.response) == shape(whole)
    for _, text in shape(whole):
        _no_markers(text)


def test_responses_forced_call_async(embedded: tuple[str, EmbeddedBackend]) -> None:
    async def run() -> Any:
        client = openai.AsyncOpenAI(base_url=embedded[0] + "/v1", api_key="x", timeout=60, max_retries=0)
        async with client:
            return await client.responses.create(
                model="tiny",
                input=[{"role": "user", "content": "Weather in Oslo?"}],
                tools=RESPONSES_TOOLS,
                tool_choice="required",
                reasoning={"effort": "high"},
                max_output_tokens=300,
                extra_body={"seed": 5},
            )

    response = asyncio.run(run())
    calls = [item for item in response.output if item.type == "function_call"]
    assert response.status == "completed" and len(calls) == 1
    jsonschema.validate(json.loads(calls[0].arguments), WEATHER)


def test_responses_previous_response_id_is_refused(client: Any) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="tiny", input="hi", previous_response_id="resp_1")
    assert caught.value.body["param"] == "previous_response_id"


# -- a gateway in front of another -----------------------------------------------------------


def test_vllm_backend_fronts_a_second_serve(embedded: tuple[str, EmbeddedBackend]) -> None:
    upstream, _ = embedded
    with serving(build_backend("vllm", upstream=upstream, timeout=30)) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="x", timeout=60, max_retries=0)
        request = {"model": "tiny", "messages": ASK, "tools": TOOLS, "temperature": 0, "max_tokens": 40}
        through = _whole(client.chat.completions.create(**request))
        direct = _whole(
            openai.OpenAI(base_url=upstream + "/v1", api_key="x", timeout=60).chat.completions.create(**request)
        )
        assert through == direct  # the same prompt ids, grammar and greedy draw, one hop more
        forced = client.chat.completions.create(
            model="tiny", messages=ASK, tools=TOOLS, tool_choice="required", seed=2, max_tokens=300
        )
        jsonschema.validate(json.loads(forced.choices[0].message.tool_calls[0].function.arguments), WEATHER)
        assert _health(url)["backend"] == "vllm"


def test_embedded_completions_endpoint_returns_token_ids(embedded: tuple[str, EmbeddedBackend]) -> None:
    grammar = '%llguidance {}\nstart: "hello" <|end|>\n'
    answer = httpx2.post(
        embedded[0] + "/v1/completions",
        json={"prompt": [200006, 1428], "max_tokens": 10, "structured_outputs": {"grammar": grammar}},
        timeout=30,
    ).json()
    choice = answer["choices"][0]
    assert choice["text"] == "hello<|end|>" and choice["token_ids"][-1] == 200007
    assert answer["usage"]["completion_tokens"] == len(choice["token_ids"])
    refused = httpx2.post(
        embedded[0] + "/v1/completions",
        json={"prompt": [1], "structured_outputs": {"structural_tag": "{}"}},
        timeout=30,
    )
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "structured_outputs"


# -- limits and keys -------------------------------------------------------------------------


def test_api_key_and_request_size() -> None:
    config = GatewayConfig(model="prior", api_key="sekret", max_request_bytes=2000)
    with serving(EmbeddedBackend("prior", workers=1), config) as url:
        for key in (None, "wrong"):
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            answer = httpx2.post(url + "/v1/chat/completions", json={"messages": ASK}, headers=headers, timeout=10)
            assert answer.status_code == 401
            assert answer.json()["error"]["code"] == "invalid_api_key"
        assert httpx2.get(url + "/health", timeout=10).status_code == 200  # probes need no key
        client = openai.OpenAI(base_url=url + "/v1", api_key="wrong", timeout=30, max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            client.models.list()
        client = openai.OpenAI(base_url=url + "/v1", api_key="sekret", timeout=30, max_retries=0)
        with pytest.raises(openai.APIStatusError) as caught:
            client.chat.completions.create(model="prior", messages=[{"role": "user", "content": "x" * 5000}])
        assert caught.value.status_code == 413
        assert caught.value.body["code"] == "request_too_large"
        completion = client.chat.completions.create(model="prior", messages=ASK, max_tokens=50, seed=1)
        assert completion.choices[0].finish_reason in ("stop", "length")
        port = url.rsplit(":", 1)[1]
    # The server's thread is gone with the block: nothing of it is left running.
    assert not [t for t in threading.enumerate() if t.name == f"gateway-{port}"]


# -- engines' wire formats (local peers) -------------------------------------------------------


@pytest.mark.parametrize("engine", ["vllm", "sglang", "llamacpp", "ollama"])
def test_engine_request_and_reading(engine: str) -> None:
    script = Script()
    with serving_app(peer_app(script)) as peer, serving(
        build_backend(engine, upstream=peer, model="gpt-oss-20b", timeout=10), GatewayConfig(model="gpt-oss-20b")
    ) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="x", timeout=30, max_retries=0)
        completion = client.chat.completions.create(
            model="gpt-oss-20b", messages=ASK, tools=TOOLS, seed=4, temperature=0.5, max_tokens=64
        )
        streamed = _whole_from_stream(
            list(client.chat.completions.create(model="gpt-oss-20b", messages=ASK, tools=TOOLS, stream=True))
        )
    message = completion.choices[0].message
    assert completion.choices[0].finish_reason == "tool_calls"
    assert message.tool_calls[0].function.arguments == '{"city":"Paris"}'
    assert (message.model_extra or {}).get("reasoning_content") == "Need the weather."
    assert streamed == _whole(completion)
    sent = script.requests[0]
    prompt = render(
        from_chat_completions({"messages": ASK, "tools": TOOLS}),
        next_turn="assistant",
        tokens=True,
        drop_rule=DropRule.EVERY_FINAL,
    )
    stop_ids = [200002, 200012]
    if engine == "vllm":
        assert sent["prompt"] == prompt and sent["return_token_ids"] is True
        assert sent["structured_outputs"]["grammar"].startswith("%llguidance")
        assert sent["stop_token_ids"] == stop_ids and sent["seed"] == 4 and sent["max_tokens"] == 64
        assert sent["model"] == "gpt-oss-20b" and sent["stream"] is True
    elif engine == "sglang":
        assert sent["input_ids"] == prompt and sent["stream"] is True
        params = sent["sampling_params"]
        assert params["ebnf"].startswith("%llguidance") and params["stop_token_ids"] == stop_ids
        assert params["max_new_tokens"] == 64 and params["skip_special_tokens"] is False
    elif engine == "llamacpp":
        assert sent["prompt"] == prompt and sent["return_tokens"] is True
        # GBNF with special tokens by id (stock builds have no llguidance), ending before
        # the stop token; the named special ids the turn never writes are banned.
        assert sent["grammar"].startswith("root ::= ") and "<[200005]>" in sent["grammar"]
        assert "<[200012]>" not in sent["grammar"] and sent["n_predict"] == 64
        banned = {i for i, allowed in sent["logit_bias"] if allowed is False}
        assert 199999 in banned and not banned & {200002, 200012, 200005, 200006, 200007, 200008}
        assert sent["top_k"] == 0 and sent["min_p"] == 0.0 and sent["top_p"] == 1.0
    else:
        from harmony_grammar.format.vocabulary import load_encoding

        assert sent["raw"] is True and sent["prompt"] == load_encoding().decode(prompt)
        assert sent["options"]["stop"] == ["<|call|>", "<|return|>"]
        assert sent["options"]["num_predict"] == 64 and sent["model"] == "gpt-oss-20b"
        assert completion.usage.completion_tokens == len(CALL_IDS)  # Ollama's eval_count


@pytest.mark.parametrize("engine", ["vllm", "ollama"])
def test_model_names_the_engines_model(engine: str) -> None:
    """--model is the engine's name for the model, sent whatever the client called it;
    /v1/models lists it and the gateway's alias (--served-model-name)."""
    script = Script()
    config = GatewayConfig(model="gpt-oss", engine_model="openai/gpt-oss-20b")
    with serving_app(peer_app(script)) as peer, serving(
        build_backend(engine, upstream=peer, model="openai/gpt-oss-20b", timeout=10), config
    ) as url:
        models = httpx2.get(url + "/v1/models", timeout=10).json()
        for name in ("gpt-oss", "openai/gpt-oss-20b"):
            answer = httpx2.post(url + "/v1/chat/completions", json={"model": name, "messages": ASK}, timeout=30)
            assert answer.status_code == 200
    assert [m["id"] for m in models["data"]] == ["openai/gpt-oss-20b", "gpt-oss"]
    assert [sent["model"] for sent in script.requests] == ["openai/gpt-oss-20b"] * 2


def test_sglang_and_vllm_structural_tag_form() -> None:
    script = Script()
    with serving_app(peer_app(script)) as peer:
        for engine in ("vllm", "sglang"):
            backend = build_backend(engine, upstream=peer, grammar="structural-tag", timeout=10)
            with serving(backend) as url:
                httpx2.post(url + "/v1/chat/completions", json={"messages": ASK, "tools": TOOLS}, timeout=30)
    vllm, sglang = script.requests
    tag = json.loads(vllm["structured_outputs"]["structural_tag"])
    assert tag["type"] == "structural_tag"
    assert json.loads(sglang["sampling_params"]["structural_tag"]) == tag


def test_llamacpp_real_server() -> None:
    """One forced call through a stock llama-server (scripts/engines/llama-server.sh); the
    whole suite against it is tests/gateway/test_engines_real.py."""
    from ..support.real_engines import llama_server

    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    tools = [{"type": "function", "function": {"name": "check", "parameters": schema}}]
    with llama_server() as engine, serving(
        build_backend("llamacpp", upstream=engine.url, model=engine.model, timeout=600),
        GatewayConfig(model=engine.model),
    ) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="x", timeout=600, max_retries=0)
        finishes = []
        for seed in range(8):
            completion = client.chat.completions.create(
                model=engine.model, messages=ASK, tools=tools, tool_choice="required", seed=seed, max_tokens=48
            )
            choice = completion.choices[0]
            finishes.append(choice.finish_reason)
            assert choice.finish_reason in ("tool_calls", "length")
            for call in choice.message.tool_calls or []:
                jsonschema.validate(json.loads(call.function.arguments), schema)
        assert "tool_calls" in finishes, finishes


# -- faults ------------------------------------------------------------------------------------


def _stream_raw(url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    with httpx2.stream("POST", url + "/v1/chat/completions", json={**body, "stream": True}, timeout=30) as answer:
        assert answer.status_code == 200
        lines = [line[6:] for line in answer.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


@pytest.mark.parametrize("mode", ["drop", "garbage", "nodone"])
def test_upstream_fault_mid_stream_ends_the_stream(mode: str) -> None:
    # A fault once output has begun is an error, never a short answer: Chat ends with an
    # error chunk (the SDK raises it), Responses with response.failed, a whole Chat answer
    # is a 502. "nodone": the engine closes the stream cleanly, before the turn's end,
    # without [DONE].
    script = Script(mode=mode, drop_after=6, ids=list(CALL_IDS[:12]) if mode == "nodone" else list(CALL_IDS))
    with serving_app(peer_app(script)) as peer, serving(build_backend("vllm", upstream=peer, timeout=10)) as url:
        chunks = _stream_raw(url, {"messages": ASK, "tools": TOOLS})
        assert chunks[-1]["error"]["code"] == "upstream_error"
        assert all(c["choices"][0]["finish_reason"] is None for c in chunks[:-1])  # never "length"
        assert not any(c["choices"][0]["delta"].get("tool_calls") for c in chunks[:-1])
        client = openai.OpenAI(base_url=url + "/v1", api_key="x", timeout=30, max_retries=0)
        with pytest.raises(openai.APIError):
            list(client.chat.completions.create(model="tiny", messages=ASK, stream=True))
        events = []
        with httpx2.stream(
            "POST", url + "/v1/responses", json={"input": "hi", "tools": RESPONSES_TOOLS, "stream": True}, timeout=30
        ) as answer:
            events = [json.loads(line[6:]) for line in answer.iter_lines() if line.startswith("data: ")]
        assert events[-1]["type"] == "response.failed"
        assert events[-1]["response"]["error"]["code"] == "server_error"
        output = events[-1]["response"]["output"]
        assert output  # the items streamed before the fault
        assert output[-1]["status"] == "incomplete"  # the one it was cut inside: never completed
        whole = httpx2.post(url + "/v1/chat/completions", json={"messages": ASK}, timeout=30)
        assert whole.status_code == 502 and whole.json()["error"]["code"] == "upstream_error"
        _settled(url)


def test_upstream_5xx_and_refused_are_502() -> None:
    script = Script(mode="500")
    with serving_app(peer_app(script)) as peer, serving(build_backend("vllm", upstream=peer, timeout=10)) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="x", timeout=30, max_retries=0)
        with pytest.raises(openai.APIStatusError) as caught:
            client.chat.completions.create(model="tiny", messages=ASK, stream=True)
        assert caught.value.status_code == 502 and "500" in caught.value.body["message"]
    with serving(build_backend("vllm", upstream="http://127.0.0.1:9", timeout=5)) as url:
        answer = httpx2.post(url + "/v1/responses", json={"input": "hi"}, timeout=30)
        assert answer.status_code == 502 and answer.json()["error"]["code"] == "upstream_error"
        assert httpx2.get(url + "/health", timeout=10).status_code == 503


def test_slow_upstream_times_out() -> None:
    script = Script(mode="slow")
    with serving_app(peer_app(script)) as peer, serving(build_backend("vllm", upstream=peer, timeout=1)) as url:
        started = time.monotonic()
        answer = httpx2.post(url + "/v1/chat/completions", json={"messages": ASK}, timeout=30)
        assert answer.status_code == 504 and answer.json()["error"]["code"] == "upstream_timeout"
        assert time.monotonic() - started < 10
    # Slow between pieces, once output has started: the stream ends with an error chunk.
    script = Script(mode="ok", delay=2.0)
    with serving_app(peer_app(script)) as peer, serving(build_backend("vllm", upstream=peer, timeout=1)) as url:
        chunks = _stream_raw(url, {"messages": ASK})
        assert chunks[-1]["error"]["code"] == "upstream_timeout"


def test_client_disconnect_cancels_the_upstream(embedded: tuple[str, EmbeddedBackend]) -> None:
    upstream, backend = embedded
    before = backend.cancelled
    with serving(build_backend("vllm", upstream=upstream, timeout=30)) as url:
        body = {"messages": ASK, "max_tokens": 8000, "stream": True, "response_format": LONG}
        with httpx2.stream("POST", url + "/v1/chat/completions", json=body, timeout=30) as answer:
            for line in answer.iter_lines():
                if line.startswith("data: "):
                    break
        _settled(url)
    assert _settled(upstream)["cancelled_generations"] >= before + 1


def test_upstream_process_killed_mid_stream(tmp_path: Any) -> None:
    """A real ``harmony-grammar serve`` process, killed with SIGKILL while it streams."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(
        [sys.executable, "-m", "harmony_grammar", "serve", "--model", "prior", "--port", str(port),
         "--log-level", "warning", "--max-tokens-limit", "32768", "--context-tokens", "40000"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    upstream = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx2.get(upstream + "/health", timeout=2).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.2)
        with serving(build_backend("vllm", upstream=upstream, model="prior", timeout=10)) as url:
            body = {"messages": ASK, "max_tokens": 30000, "stream": True, "response_format": LONG}
            chunks = []
            with httpx2.stream("POST", url + "/v1/chat/completions", json=body, timeout=30) as answer:
                for line in answer.iter_lines():
                    if line.startswith("data: ") and line != "data: [DONE]":
                        chunks.append(json.loads(line[6:]))
                        if len(chunks) == 5:
                            process.kill()
            assert chunks[-1]["error"]["code"] == "upstream_error"  # an error, never "length"
            assert all(c["choices"][0]["finish_reason"] is None for c in chunks[:-1])
            _settled(url)
    finally:
        process.kill()
        process.wait(timeout=10)


# -- the command line --------------------------------------------------------------------------


def test_serve_cli_refuses_bad_options(capsys: Any) -> None:
    from harmony_grammar.cli.main import main

    assert main(["serve", "--backend", "vllm"]) == 2
    assert "needs --upstream URL" in capsys.readouterr().err
    assert main(["serve", "--upstream", "http://127.0.0.1:1"]) == 2
    assert "embedded runs in-process" in capsys.readouterr().err
    os.environ.pop("HARMONY_TEST_UNSET_KEY", None)
    assert main(["serve", "--model", "prior", "--api-key-env", "HARMONY_TEST_UNSET_KEY"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unset or empty" in err
    assert main(["serve", "--model", "/no/such/dir"]) == 2
    assert "not tiny, prior or a local model directory" in capsys.readouterr().err


def test_client_leaving_a_whole_answer_cancels_the_upstream(embedded: tuple[str, EmbeddedBackend]) -> None:
    upstream, backend = embedded
    before = backend.cancelled
    with serving(build_backend("vllm", upstream=upstream, timeout=30)) as url:
        body = {"messages": ASK, "max_tokens": 8000, "response_format": LONG}
        with pytest.raises(httpx2.ReadTimeout):
            httpx2.post(url + "/v1/chat/completions", json=body, timeout=httpx2.Timeout(30, read=2))
        _settled(url)
    assert _settled(upstream)["cancelled_generations"] >= before + 1


def test_plan_keeps_the_tool_loops_chain_of_thought() -> None:
    """The current tool loop's analysis is rendered back; an earlier turn's is dropped."""
    from harmony_grammar.gateway.chat.protocol import plan_chat
    from harmony_grammar.gateway.plan import Limits

    loop = [
        {"role": "user", "content": "First question"},
        {"role": "assistant", "reasoning_content": "OLD THOUGHT", "content": "First answer"},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "reasoning_content": "LOOP THOUGHT",
            "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"sky":"clear"}'},
    ]
    plan = plan_chat({"messages": loop, "tools": TOOLS}, model="m", limits=Limits())
    assert "LOOP THOUGHT" in plan.prompt_text and "OLD THOUGHT" not in plan.prompt_text
    assert plan.prompt_text.endswith("<|start|>assistant")
    assert 'to=functions.get_weather' in plan.prompt_text  # the call, as openai-harmony renders it
    assert '{"city":"Paris"}<|call|>' in plan.prompt_text
