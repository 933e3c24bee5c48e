"""The gateway as operations meet it: request ids, /metrics, the queue bound, names as
clients read them, and fields the backend cannot honour refused by name.

Served by the replay backend (no model: every answer is known) and, for a stream that stays
open, the vLLM peer of tests/serve_peers.py with a delay between pieces.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("prometheus_client")
openai = pytest.importorskip("openai")
httpx2 = pytest.importorskip("httpx2")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from harmony_grammar.cli.main import main  # noqa: E402
from harmony_grammar.gateway import GatewayConfig, ReplayBackend, build_backend, serving  # noqa: E402
from harmony_grammar.gateway.server import serving_app  # noqa: E402

from ..support.serve_peers import CALL_TEXT, Script, deadline, peer_app  # noqa: E402

ASK = [{"role": "user", "content": "What is the weather in Paris?"}]
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    with deadline(120):
        yield


@pytest.fixture(scope="module")
def url(tmp_path_factory: Any) -> Iterator[str]:
    path = tmp_path_factory.mktemp("replay") / "lines.jsonl"
    path.write_text(json.dumps(CALL_TEXT) + "\n", encoding="utf-8")
    with serving(ReplayBackend(path), GatewayConfig(model="tiny")) as base:
        yield base


def _metrics(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx2.get(url + "/metrics", timeout=10).text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


# A third of the profile's budget: each example is a request to a served gateway.
@settings(max_examples=settings.default.max_examples // 3)
@given(
    given_id=st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=60)
)
def test_every_response_carries_the_clients_request_id(url: str, given_id: str) -> None:
    for method, path, body in (
        ("POST", "/v1/chat/completions", {"messages": ASK, "tools": TOOLS}),
        ("POST", "/v1/chat/completions", {"messages": "not a list"}),  # 400
        ("GET", "/no/such/route", None),  # 404
        ("GET", "/health", None),
    ):
        answer = httpx2.request(
            method, url + path, json=body, headers={"x-request-id": given_id}, timeout=30
        )
        assert answer.headers["x-request-id"] == given_id, (path, answer.status_code)


def test_a_request_id_is_made_when_none_or_an_unusable_one_is_sent(url: str) -> None:
    seen = set()
    for headers in ({}, {"x-request-id": "has space"}, {"x-request-id": "x" * 500}):
        answer = httpx2.get(url + "/v1/models", headers=headers, timeout=10)
        made = answer.headers["x-request-id"]
        assert made.startswith("req_") and made not in seen
        seen.add(made)


def test_metrics_count_requests_tokens_and_faults(url: str) -> None:
    before = _metrics(url)
    whole = httpx2.post(
        url + "/v1/chat/completions", json={"messages": ASK, "tools": TOOLS}, timeout=30
    ).json()
    refused = httpx2.post(
        url + "/v1/chat/completions", json={"messages": ASK}, timeout=30
    )  # no tools: 502
    assert refused.status_code == 502
    after = _metrics(url)

    def grew(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert grew("harmony_gateway_requests_total", route="/v1/chat/completions", status="200") == 1
    assert grew("harmony_gateway_requests_total", route="/v1/chat/completions", status="502") == 1
    assert grew("harmony_gateway_completion_tokens_total") == whole["usage"]["completion_tokens"]
    assert grew("harmony_gateway_prompt_tokens_total") == whole["usage"]["prompt_tokens"]
    assert grew("harmony_gateway_time_to_first_token_seconds_count") == 1
    assert grew("harmony_gateway_time_per_output_token_seconds_count") == 1
    assert grew("harmony_gateway_upstream_errors_total", code="upstream_error") == 1
    assert after[("harmony_gateway_open_streams", ())] == 0
    assert after[("harmony_gateway_queue_depth", ())] == 0


def test_a_full_queue_is_a_429_with_retry_after() -> None:
    script = Script(delay=0.2)
    with (
        serving_app(peer_app(script)) as peer,
        serving(
            build_backend("vllm", upstream=peer, timeout=30), GatewayConfig(max_queue=1)
        ) as url,
        httpx2.stream(
            "POST", url + "/v1/chat/completions", json={"messages": ASK, "stream": True}, timeout=30
        ) as first,
    ):
        assert first.status_code == 200  # held until its stream ends
        second = httpx2.post(url + "/v1/chat/completions", json={"messages": ASK}, timeout=30)
        assert second.status_code == 429 and second.headers["retry-after"] == "1"
        assert second.json()["error"]["code"] == "queue_full"
        list(first.iter_lines())
        third = httpx2.post(url + "/v1/chat/completions", json={"messages": ASK}, timeout=30)
        assert third.status_code == 200


def test_fields_the_backend_cannot_honour_are_refused_by_name(url: str) -> None:
    answer = httpx2.post(
        url + "/v1/chat/completions",
        json={"messages": ASK, "logprobs": True, "presence_penalty": 0.5, "logit_bias": {"1": 2}},
        timeout=30,
    )
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["param"] == "logprobs"
    assert all(name in error["message"] for name in ("logprobs", "presence_penalty", "logit_bias"))
    assert "replay" in error["message"]
    neutral = {
        "messages": ASK,
        "tools": TOOLS,
        "logprobs": False,
        "presence_penalty": 0,
        "logit_bias": {},
    }
    assert httpx2.post(url + "/v1/chat/completions", json=neutral, timeout=30).status_code == 200
    answer = httpx2.post(url + "/v1/responses", json={"input": "hi", "top_logprobs": 3}, timeout=30)
    assert answer.status_code == 400 and answer.json()["error"]["param"] == "top_logprobs"


def test_reasoning_under_both_names_and_the_model_checked(url: str) -> None:
    client = openai.OpenAI(base_url=url + "/v1", api_key="x", timeout=30, max_retries=0)
    whole = client.chat.completions.create(model="tiny", messages=ASK, tools=TOOLS)
    extra = whole.choices[0].message.model_extra or {}
    assert extra["reasoning"] == extra["reasoning_content"] == "Need the weather."
    chunks = list(
        client.chat.completions.create(model="tiny", messages=ASK, tools=TOOLS, stream=True)
    )
    deltas = [(c.choices[0].delta.model_extra or {}) for c in chunks if c.choices]
    assert "".join(d.get("reasoning") or "" for d in deltas) == "Need the weather."
    assert all(d.get("reasoning") == d.get("reasoning_content") for d in deltas)
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="gpt-4o", messages=ASK)
    assert caught.value.body["code"] == "model_not_found"
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model="gpt-4o", input="hi")
    assert client.models.retrieve("tiny").id == "tiny"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("other")


def test_serve_cli_refuses_bad_queue_and_drain_options(tmp_path: Path, capsys: Any) -> None:
    lines = tmp_path / "l.jsonl"
    lines.write_text(json.dumps(CALL_TEXT) + "\n", encoding="utf-8")
    for extra in (["--max-queue", "0"], ["--drain-seconds", "-1"]):
        assert main(["serve", "--backend", "replay", "--replay", str(lines), *extra]) == 2
        assert "--max-queue" in capsys.readouterr().err
