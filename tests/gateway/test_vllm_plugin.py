"""The vLLM endpoint plugin without vLLM: its routes on a FastAPI app, its backend against a
stand-in engine client.

The stand-in is an engine, not a script: it samples each request's ids under the grammar
the request carries (the project's torch-free sampler over llguidance), stops at the stop
ids and the token limit as vLLM does, and yields objects shaped like vLLM's
``RequestOutput`` with ``output_kind=DELTA`` (``outputs[0].token_ids`` new since the last,
``finish_reason`` on the last, ``finished``). It records every abort. What only a real vLLM
can show (the route replacement inside ``vllm serve``, the ``SamplingParams`` it accepts)
is in tests/gateway/test_engines_real.py, run against vLLM for CPUs.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
from argparse import Namespace
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import tomllib

pytest.importorskip("fastapi")
httpx2 = pytest.importorskip("httpx2")

import jsonschema  # noqa: E402
import numpy as np  # noqa: E402
from fastapi import FastAPI  # noqa: E402
from fastapi.routing import APIRoute  # noqa: E402
from prometheus_client import REGISTRY, CollectorRegistry, make_asgi_app  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402
from starlette.routing import Mount  # noqa: E402

from harmony_grammar.gateway.chat.protocol import plan_chat  # noqa: E402
from harmony_grammar.gateway.engines import VllmBackend, vllm_sampling  # noqa: E402
from harmony_grammar.gateway.metrics import Metrics, metrics_in  # noqa: E402
from harmony_grammar.gateway.plan import Limits, Plan  # noqa: E402
from harmony_grammar.gateway.server import serving_app  # noqa: E402
from harmony_grammar.gateway.vllm_plugin import PATHS, HarmonyGrammarPlugin, plugin_config  # noqa: E402
from harmony_grammar.generation.sampling import Sampler  # noqa: E402

from ..support.openai_sdk import check_chunk, check_response  # noqa: E402
from ..support.serve_peers import ASK, TOOLS, WEATHER, deadline  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    with deadline(180):
        yield


# -- the stand-in engine client ----------------------------------------------------------------


@dataclass
class CompletionOutput:
    """vLLM's ``CompletionOutput``, the fields the backend may read."""

    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None = None
    logprobs: Any = None
    finish_reason: str | None = None
    stop_reason: int | str | None = None


@dataclass
class RequestOutput:
    """vLLM's ``RequestOutput``."""

    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    prompt_logprobs: Any
    outputs: list[CompletionOutput]
    finished: bool


@dataclass
class FakeEngineClient:
    """Samples under each request's grammar; ``fail`` injects an engine fault."""

    fail: str | None = None  # "refuse": ValueError up front; "midway": RuntimeError later
    abort_finish: bool = False  # end with finish_reason "abort" (vLLM's own abort)
    delay: float = 0.0
    requests: list[tuple[dict[str, Any], dict[str, Any], str]] = field(default_factory=list)
    aborted: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)
    produced: dict[str, int] = field(default_factory=dict)
    errored: bool = False

    async def generate(
        self, prompt: dict[str, Any], params: dict[str, Any], request_id: str
    ) -> AsyncIterator[RequestOutput]:
        self.requests.append((prompt, params, request_id))
        if self.fail == "refuse":
            raise ValueError("This model's maximum context length is 4096 tokens")
        grammar = params["structured_outputs"]["grammar"]
        sampler = Sampler(grammar, max_tokens=params["max_tokens"])
        draws = sampler.stream(np.random.default_rng(params.get("seed", 0)))
        stops = set(params["stop_token_ids"])
        self.produced[request_id] = 0
        ids = prompt["prompt_token_ids"]
        for produced, token in enumerate(draws, start=1):
            self.produced[request_id] = produced
            if self.fail == "midway" and produced == 5:
                raise RuntimeError("CUDA error: an illegal memory access was encountered")
            finish = None
            if token in stops:
                finish = "stop"
            elif produced >= params["max_tokens"]:
                finish = "length"
            if self.abort_finish and produced == 3:
                finish = "abort"
            piece = CompletionOutput(0, "", [token], finish_reason=finish)
            if finish is not None:
                self.finished.append(request_id)  # its last output: the request is done
            yield RequestOutput(request_id, None, ids, None, [piece], finish is not None)
            if finish is not None:
                return
            await asyncio.sleep(self.delay)

    async def abort(self, request_id: str) -> None:
        self.aborted.append(request_id)


def _request(plan: Plan) -> tuple[dict[str, Any], dict[str, Any]]:
    """The stand-in's request: the fields vLLM's objects are built from."""
    return {"prompt_token_ids": list(plan.prompt_ids)}, vllm_sampling(plan)


@pytest.fixture
def engine() -> FakeEngineClient:
    return FakeEngineClient()


def _vllm_like_app() -> FastAPI:
    """A FastAPI app with routes of vLLM's that the plugin leaves alone: a completions route,
    and ``/metrics`` mounted as vLLM mounts it (``prometheus_client.make_asgi_app`` over the
    default registry: vllm/entrypoints/serve/instrumentator/metrics.py, one API server)."""
    app = FastAPI()

    @app.post("/v1/completions")
    async def completions() -> dict[str, str]:
        return {"served_by": "vllm"}

    app.routes.append(Mount("/metrics", make_asgi_app(registry=REGISTRY)))
    return app


@contextmanager
def _plugged(
    engine: FakeEngineClient | None, args: Namespace | None = None, *, init: bool = True
) -> Iterator[str]:
    """The plugin attached to a FastAPI app and its state set up, served on a free port."""
    app = _vllm_like_app()
    plugin = HarmonyGrammarPlugin(request=_request)
    plugin.attach_router(app)
    if init:
        args = args or Namespace(served_model_name=["tiny-gpt-oss"], host="127.0.0.1")
        asyncio.run(plugin.init_state(engine, app.state, args))
    with serving_app(app) as url:
        yield url


def _chat(url: str, **body: Any) -> httpx2.Response:
    return httpx2.post(url + "/v1/chat/completions", json={"messages": ASK, **body}, timeout=60)


def _streamed(url: str, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    with httpx2.stream("POST", url + path, json={**body, "stream": True}, timeout=60) as answer:
        assert answer.status_code == 200, answer.read()
        lines = [line[6:] for line in answer.iter_lines() if line.startswith("data: ")]
    return [json.loads(line) for line in lines if line != "[DONE]"]


# -- the tests -----------------------------------------------------------------------------


def test_the_entry_point_is_declared_and_satisfies_vllms_protocol() -> None:
    """pyproject names the factory under ``vllm.endpoint_plugins``; vLLM calls it with no
    arguments and needs ``name``, ``required_tasks``, ``attach_router`` and an async
    ``init_state`` (vllm/plugins/endpoint_plugins/interface.py)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    target = project["project"]["entry-points"]["vllm.endpoint_plugins"]["harmony_grammar"]
    module, _, name = target.partition(":")
    plugin = getattr(importlib.import_module(module), name)()
    assert plugin.name == "harmony_grammar"  # what VLLM_PLUGINS lists
    assert plugin.required_tasks == ("generate",)
    assert inspect.iscoroutinefunction(plugin.init_state)
    app = _vllm_like_app()
    plugin.attach_router(app)
    added = [r for r in app.routes if isinstance(r, APIRoute) and r.path in PATHS]
    # APIRoutes (vLLM replaces its own only by an APIRoute of the same path and method).
    assert sorted((r.path, tuple(r.methods)) for r in added) == sorted(
        (path, ("POST",)) for path in PATHS
    )


def test_vllm_extra_does_not_pull_the_torch_pin() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    seen, todo = set(), ["vllm"]
    while todo:  # the extra and the extras it names, transitively
        extra = todo.pop()
        seen.add(extra)
        for requirement in extras[extra]:
            if requirement.startswith("harmony-grammar["):
                todo += [e for e in requirement[16:-1].split(",") if e not in seen]
            else:
                assert not requirement.startswith("torch"), (extra, requirement)
    assert "generate" not in seen and "serve" not in seen


def test_forced_call_whole_and_streamed_through_the_plugin(engine: FakeEngineClient) -> None:
    body = {"tools": TOOLS, "tool_choice": "required", "max_tokens": 200, "seed": 3}
    with _plugged(engine) as url:
        answer = _chat(url, **body)
        assert answer.status_code == 200, answer.text
        assert answer.headers["x-request-id"]  # the gateway's own middleware answered
        whole = answer.json()["choices"][0]
        chunks = [check_chunk(c) for c in _streamed(url, "/v1/chat/completions", {"messages": ASK, **body})]
    assert whole["finish_reason"] == "tool_calls"
    (call,) = whole["message"]["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    jsonschema.validate(json.loads(call["function"]["arguments"]), WEATHER)
    streamed_arguments = "".join(
        c.function.arguments or ""
        for chunk in chunks
        for choice in chunk.choices
        for c in choice.delta.tool_calls or []
        if c.function is not None
    )
    assert streamed_arguments == call["function"]["arguments"]  # the same seed, the same turn
    # The engine got the prompt the render twin shows, the turn grammar, the stop ids.
    prompt, params, _ = engine.requests[0]
    plan = plan_chat({"messages": ASK, **body}, model="tiny-gpt-oss", limits=Limits())
    assert prompt["prompt_token_ids"] == list(plan.prompt_ids)
    assert params == vllm_sampling(plan)
    # The turn ended at <|call|>: the engine finished it; nothing left to abort.
    assert engine.finished == [rid for _, _, rid in engine.requests]
    assert not engine.aborted


def test_the_sampling_fields_are_the_http_backends() -> None:
    """One description of vLLM's request: the HTTP body is the plugin's fields plus the wire."""
    body = {"messages": ASK, "tools": TOOLS, "seed": 1, "top_p": 0.5, "presence_penalty": 0.5}
    plan = plan_chat({**body, "logit_bias": {"17": 3}}, model="m", limits=Limits())
    http = VllmBackend("http://127.0.0.1:1", model="m").body(plan)
    fields = vllm_sampling(plan)
    assert fields["logit_bias"] == {17: 3.0}
    assert {**fields, "logit_bias": {"17": 3.0}} == {
        k: v for k, v in http.items() if k not in ("model", "prompt", "stream", "return_token_ids")
    }


def test_responses_whole_and_render_twins(engine: FakeEngineClient) -> None:
    body = {"input": "What is the weather in Paris?", "max_output_tokens": 60, "seed": 2}
    with _plugged(engine) as url:
        answer = httpx2.post(url + "/v1/responses", json=body, timeout=60)
        rendered = httpx2.post(url + "/v1/responses/render", json=body, timeout=60).json()
        chat_rendered = httpx2.post(
            url + "/v1/chat/completions/render", json={"messages": ASK}, timeout=60
        ).json()
        untouched = httpx2.post(url + "/v1/completions", json={}, timeout=60).json()
    assert answer.status_code == 200, answer.text
    response = check_response(answer.json())
    assert response.status in ("completed", "incomplete")
    assert engine.requests[0][0]["prompt_token_ids"] == rendered["prompt_token_ids"]
    assert len(engine.requests) == 1  # the render twins generate nothing
    assert chat_rendered["prompt"].startswith("<|start|>system<|message|>")
    assert untouched == {"served_by": "vllm"}  # vLLM's other routes stay vLLM's


def test_a_client_that_leaves_aborts_the_engine_request() -> None:
    engine = FakeEngineClient(delay=0.05)
    body = {"messages": ASK, "max_tokens": 400, "seed": 0, "stream": True}
    with _plugged(engine) as url:
        with httpx2.stream("POST", url + "/v1/chat/completions", json=body, timeout=60) as answer:
            for line in answer.iter_lines():
                if line.startswith("data: "):
                    break  # the first piece arrived; leave
        for _ in range(100):
            if engine.aborted:
                break
            asyncio.run(asyncio.sleep(0.05))
    (_, _, request_id), = engine.requests
    assert engine.aborted == [request_id]
    assert engine.produced[request_id] < 400, "the engine generated the whole answer for no one"


def test_engine_faults_are_openai_errors() -> None:
    refusing = FakeEngineClient(fail="refuse")
    with _plugged(refusing) as url:
        answer = _chat(url, max_tokens=20)
    assert answer.status_code == 502
    error = answer.json()["error"]
    assert error["code"] == "upstream_error" and "maximum context length" in error["message"]
    failing = FakeEngineClient(fail="midway")
    with _plugged(failing) as url:
        whole = _chat(url, max_tokens=50, seed=4)
        streamed = _streamed(url, "/v1/chat/completions", {"messages": ASK, "max_tokens": 50, "seed": 4})
    assert whole.status_code == 502, whole.text
    assert "RuntimeError" in whole.json()["error"]["message"]
    assert "CUDA" not in whole.json()["error"]["message"]  # the engine's text is logged only
    assert streamed[-1]["error"]["code"] == "upstream_error"  # the stream ended properly
    aborting = FakeEngineClient(abort_finish=True)
    with _plugged(aborting) as url:
        answer = _chat(url, max_tokens=50)
    assert answer.status_code == 502 and "aborted" in answer.json()["error"]["message"]


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _samples(url: str) -> tuple[set[str], Samples]:
    """The metric families of the ``/metrics`` text at ``url``, and every sample by name and
    labels."""
    text = httpx2.get(url + "/metrics/", timeout=30).text
    families = list(text_string_to_metric_families(text))
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in families
        for sample in family.samples
    }
    return {family.name for family in families}, samples


def test_vllms_metrics_show_the_gateways_counters(engine: FakeEngineClient) -> None:
    """vLLM's own ``/metrics`` (the default registry) shows the gateway's families, under the
    names ``serve``'s ``/metrics`` has, counting what the plugin's routes served: requests
    by route and status, prompt and completion tokens, time to first token."""
    # What serve's /metrics shows, read the same way: the families of a gateway's own metrics.
    serve_text = Metrics().exposition()[0].decode()
    # (``_created`` timestamps come and go with a labelled counter's children: left out.)
    serve_names = {
        family.name
        for family in text_string_to_metric_families(serve_text)
        if not family.name.endswith("_created")
    }
    body = {"messages": ASK, "max_tokens": 40, "seed": 5}
    with _plugged(engine) as url:
        _, before = _samples(url)
        whole = _chat(url, **body).json()
        _streamed(url, "/v1/chat/completions", body)
        refused = _chat(url, tool_choice="required")  # the planner's 400: counted too
        families, after = _samples(url)
    assert refused.status_code == 400
    shown = {n for n in families if n.startswith("harmony_gateway_") and not n.endswith("_created")}
    assert shown == serve_names

    def grew(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    route = "/v1/chat/completions"
    assert grew("harmony_gateway_requests_total", route=route, status="200") == 2
    assert grew("harmony_gateway_requests_total", route=route, status="400") == 1
    usage = whole["usage"]
    assert grew("harmony_gateway_prompt_tokens_total") == 2 * usage["prompt_tokens"]
    # The same seed, the same turn, whole and streamed.
    assert grew("harmony_gateway_completion_tokens_total") == 2 * usage["completion_tokens"]
    assert grew("harmony_gateway_time_to_first_token_seconds_count") == 2
    assert after[("harmony_gateway_open_streams", ())] == 0


def test_one_registry_holds_one_set_of_gateway_metrics() -> None:
    """However many plugins start in one process, the default registry holds each gateway
    metric once (a second registration would raise): they count into the same objects."""
    first = metrics_in(REGISTRY)
    with _plugged(FakeEngineClient()), _plugged(FakeEngineClient()):
        pass
    assert metrics_in(REGISTRY) is first
    names = [name for name in REGISTRY._names_to_collectors if name.startswith("harmony_gateway_")]
    assert len(names) == len(set(names))
    # A registry of its own (``serve``'s default) gets its own objects, never the shared ones.
    own = CollectorRegistry()
    assert metrics_in(own) is not first and metrics_in(own) is metrics_in(own)


def test_before_init_state_the_routes_answer_503() -> None:
    with _plugged(None, init=False) as url:
        answer = _chat(url)
    assert answer.status_code == 503
    assert answer.json()["error"]["code"] == "engine_unavailable"


def test_vllms_arguments_set_the_model_context_and_host_checks(engine: FakeEngineClient) -> None:
    local = Namespace(served_model_name=["gpt-oss"], max_model_len=300, host="127.0.0.1")
    with _plugged(engine, local) as url:
        foreign = _chat(url, model="gpt-oss", max_tokens=5)
        other = _chat(url, model="llama", max_tokens=5)
        too_long = _chat(url, model="gpt-oss", max_tokens=290)
        rebound = httpx2.post(
            url + "/v1/chat/completions",
            json={"messages": ASK},
            headers={"Host": "evil.example"},
            timeout=30,
        )
    assert foreign.status_code == 200, foreign.text
    assert other.status_code == 404 and other.json()["error"]["code"] == "model_not_found"
    assert too_long.status_code == 400, too_long.text
    assert rebound.status_code == 403  # a loopback vLLM refuses rebound names
    public = Namespace(model="/models/gpt-oss", host=None, allowed_origins=["*"])
    config = plugin_config(public)
    assert config.model == "/models/gpt-oss" and config.allow_hosts == ("*",)
    with _plugged(engine, public) as url:
        named = httpx2.post(
            url + "/v1/chat/completions",
            json={"messages": ASK, "max_tokens": 5},
            headers={"Host": "gpu-box.internal:8000", "Origin": "https://app.example"},
            timeout=30,
        )
    assert named.status_code == 200, named.text  # vLLM on every address serves any name
