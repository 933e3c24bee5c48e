"""Truncation told truly, on every backend's code path.

An answer cut before its stop token is ``finish_reason: "length"`` (Responses: ``incomplete``,
``incomplete_details.reason`` ``max_output_tokens``); a cut call is never a tool call nor a
``completed`` item (its partial text goes under ``cut_tool_call`` in Chat, an ``incomplete``
item in Responses); the gateway counts tokens itself and takes none past the limit whatever
the engine sends, and reads the engine's own length signal. Recorded lines are played by the
replay backend (the in-process path, and a ``--backend vllm`` gateway in front of it); the
SGLang, llama.cpp and Ollama paths, and an engine that ignores its limit, use the local peers
of tests/serve_peers.py, since no real engine misbehaves on demand.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
httpx2 = pytest.importorskip("httpx2")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harmony_grammar.format.harmony_ids import encode_harmony  # noqa: E402
from harmony_grammar.gateway import EmbeddedBackend, ReplayBackend, build_backend, serving  # noqa: E402
from harmony_grammar.gateway.server import serving_app  # noqa: E402
from harmony_grammar.gateway.text_count import TextCount  # noqa: E402

from ..support.serve_peers import (  # noqa: E402
    ASK,
    CALL_IDS,
    CALL_TEXT,
    TOOLS,
    WEATHER,
    Script,
    deadline,
    peer_app,
)

RESPONSES_TOOLS = [{"type": "function", "name": "get_weather", "parameters": WEATHER}]
LINES = {
    "call": CALL_TEXT,
    "preamble": (
        "<|channel|>commentary<|message|>Let me think about Paris.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>It is sunny in Paris today.<|return|>"
    ),
    "final": "<|channel|>analysis<|message|>Easy one.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>Sunny, 21 degrees.<|return|>",
}


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    with deadline(300):
        yield


@pytest.fixture(scope="module")
def gateways(tmp_path_factory: Any) -> Iterator[dict[tuple[str, str], str]]:
    """For each line, a replay gateway (the in-process path) and a vLLM gateway in front."""
    urls: dict[tuple[str, str], str] = {}
    stack = []
    try:
        for kind, line in LINES.items():
            path = tmp_path_factory.mktemp("replay") / f"{kind}.jsonl"
            path.write_text(json.dumps(line) + "\n", encoding="utf-8")
            direct = serving(ReplayBackend(path))
            stack.append(direct)
            urls[kind, "replay"] = direct.__enter__()
            front = serving(build_backend("vllm", upstream=urls[kind, "replay"], timeout=30))
            stack.append(front)
            urls[kind, "vllm"] = front.__enter__()
        yield urls
    finally:
        for server in reversed(stack):
            server.__exit__(None, None, None)


def _chat(url: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = httpx2.post(url + "/v1/chat/completions", json=body, timeout=30)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def _chat_stream(url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    with httpx2.stream(
        "POST", url + "/v1/chat/completions", json={**body, "stream": True}, timeout=30
    ) as answer:
        assert answer.status_code == 200
        lines = [line[6:] for line in answer.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def _responses(url: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = httpx2.post(url + "/v1/responses", json=body, timeout=30)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def _check_cut_chat(whole: dict[str, Any], limit: int) -> None:
    choice = whole["choices"][0]
    assert choice["finish_reason"] == "length"
    assert not choice["message"]["tool_calls"]
    assert whole["usage"]["completion_tokens"] == limit
    cut = whole.get("cut_tool_call")
    if cut is not None:  # nothing the model wrote is hidden: the partial call, as written
        assert "get_weather".startswith(cut["name"])
        assert '{"city":"Paris"}'.startswith(cut["arguments"])


# A third of the profile's budget: each example is a request to a served gateway.
@settings(max_examples=settings.default.max_examples // 3)
@given(
    kind=st.sampled_from(sorted(LINES)), path=st.sampled_from(["replay", "vllm"]), data=st.data()
)
def test_a_turn_cut_by_max_tokens_is_length_everywhere(
    gateways: dict[tuple[str, str], str], kind: str, path: str, data: Any
) -> None:
    url = gateways[kind, path]
    size = len(encode_harmony(LINES[kind]))
    limit = data.draw(st.integers(1, size + 3), label="max_tokens")
    body = {"messages": ASK, "tools": TOOLS, "max_tokens": limit, "temperature": 0}
    whole = _chat(url, body)
    chunks = _chat_stream(url, body)
    finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    streamed_calls = [
        d for c in chunks if c["choices"] for d in c["choices"][0]["delta"].get("tool_calls", [])
    ]
    response = _responses(
        url,
        {
            "input": "weather?",
            "tools": RESPONSES_TOOLS,
            "max_output_tokens": limit,
            "temperature": 0,
        },
    )
    calls = [item for item in response["output"] if item["type"] == "function_call"]
    if limit < size:  # cut before the stop token, wherever that falls
        _check_cut_chat(whole, limit)
        assert finishes[-1] == "length" and not streamed_calls
        assert response["status"] == "incomplete"
        assert response["incomplete_details"] == {"reason": "max_output_tokens"}
        assert all(item["status"] == "incomplete" for item in calls)
        assert response["usage"]["output_tokens"] == limit
    else:
        expected = "tool_calls" if kind == "call" else "stop"
        assert whole["choices"][0]["finish_reason"] == finishes[-1] == expected
        assert response["status"] == "completed"
        assert "cut_tool_call" not in whole


def test_a_turn_cut_right_after_its_preamble_is_length(
    gateways: dict[tuple[str, str], str],
) -> None:
    # The preamble ends with <|end|>: the turn goes on to its final answer, so a limit there
    # cuts the turn, and the client must not read it as a finished answer.
    preamble = LINES["preamble"][: LINES["preamble"].index("<|end|>") + len("<|end|>")]
    limit = len(encode_harmony(preamble))
    for path in ("replay", "vllm"):
        whole = _chat(gateways["preamble", path], {"messages": ASK, "max_tokens": limit})
        assert whole["choices"][0]["message"]["content"] == "Let me think about Paris."
        assert whole["choices"][0]["finish_reason"] == "length"


def test_a_line_that_ends_before_its_stop_token_is_length(tmp_path: Path) -> None:
    path = tmp_path / "short.jsonl"
    path.write_text(json.dumps(CALL_TEXT.removesuffix("<|call|>")) + "\n", encoding="utf-8")
    with serving(ReplayBackend(path)) as url, serving(build_backend("vllm", upstream=url)) as front:
        for base in (url, front):
            whole = _chat(base, {"messages": ASK, "tools": TOOLS})
            assert whole["choices"][0]["finish_reason"] == "length"
            assert not whole["choices"][0]["message"]["tool_calls"]
            assert whole["cut_tool_call"] == {
                "name": "get_weather",
                "arguments": '{"city":"Paris"}',
            }


#: A final answer far longer than any limit the tests set (SGLang resends all ids in each record).
LONG_TEXT = "<|channel|>final<|message|>" + "word " * 1000 + "<|return|>"


@pytest.mark.parametrize("engine", ["vllm", "sglang", "llamacpp", "ollama"])
def test_an_engine_that_ignores_max_tokens_is_cut_by_the_gateway(engine: str) -> None:
    script = Script(ids=encode_harmony(LONG_TEXT), text=LONG_TEXT, finish=None)
    with (
        serving_app(peer_app(script)) as peer,
        serving(build_backend(engine, upstream=peer, timeout=30)) as url,
    ):
        whole = _chat(url, {"messages": ASK, "max_tokens": 5})
        chunks = _chat_stream(url, {"messages": ASK, "max_tokens": 5})
        response = _responses(url, {"input": "hi", "max_output_tokens": 5})
    assert whole["choices"][0]["finish_reason"] == "length"
    assert whole["usage"]["completion_tokens"] == 5
    # <|channel|> final <|message|> and two ids of text at most.
    content = whole["choices"][0]["message"]["content"]
    assert content and "word word".startswith(content) and len(encode_harmony(content)) <= 2
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert content == whole["choices"][0]["message"]["content"]
    assert response["status"] == "incomplete" and response["usage"]["output_tokens"] == 5


@pytest.mark.parametrize("engine", ["vllm", "sglang", "llamacpp", "ollama"])
def test_the_engines_own_length_signal_is_read(engine: str) -> None:
    # A call without its <|call|>: an engine that says "stop" dropped the stop token (a call
    # the host must run); one that says "length" stopped at its limit (a cut call).
    cut = list(CALL_IDS[:-1])
    for finish, expected in (("stop", "tool_calls"), ("length", "length")):
        script = Script(ids=cut, text=CALL_TEXT, finish=finish)
        with (
            serving_app(peer_app(script)) as peer,
            serving(build_backend(engine, upstream=peer)) as url,
        ):
            whole = _chat(url, {"messages": ASK, "tools": TOOLS, "max_tokens": 500})
            response = _responses(
                url, {"input": "hi", "tools": RESPONSES_TOOLS, "max_output_tokens": 500}
            )
        assert whole["choices"][0]["finish_reason"] == expected, (engine, finish)
        assert bool(whole["choices"][0]["message"]["tool_calls"]) == (expected == "tool_calls")
        assert response["status"] == ("completed" if expected == "tool_calls" else "incomplete")


@pytest.mark.parametrize("engine", ["vllm", "sglang", "llamacpp", "ollama"])
def test_an_answer_that_ends_without_its_stop_token_is_cut_only_at_the_limit(engine: str) -> None:
    # An answer without its <|return|>: an engine that says "stop" ended it (end of sequence,
    # a stop string it stripped): a whole answer; one that says "length" cut it.
    text = "<|channel|>final<|message|>It is sunny."
    for finish, chat, status in (("stop", "stop", "completed"), ("length", "length", "incomplete")):
        script = Script(ids=encode_harmony(text), text=text, finish=finish)
        with (
            serving_app(peer_app(script)) as peer,
            serving(build_backend(engine, upstream=peer)) as url,
        ):
            whole = _chat(url, {"messages": ASK, "max_tokens": 500})
            response = _responses(url, {"input": "hi", "max_output_tokens": 500})
        assert whole["choices"][0]["finish_reason"] == chat, (engine, finish)
        assert whole["choices"][0]["message"]["content"] == "It is sunny."
        assert response["status"] == status, (engine, finish)
        reason = {"reason": "max_output_tokens"} if status == "incomplete" else None
        assert response["incomplete_details"] == reason
        assert response["output"][-1]["status"] == status


def test_the_embedded_engine_is_cut_at_max_tokens() -> None:
    long = {
        "type": "json_schema",
        "json_schema": {"name": "long", "schema": {"type": "string", "minLength": 100000}},
    }
    with serving(EmbeddedBackend("prior", workers=1)) as url:
        whole = _chat(url, {"messages": ASK, "max_tokens": 7, "response_format": long})
        response = _responses(
            url,
            {
                "input": "hi",
                "max_output_tokens": 7,
                "text": {
                    "format": {
                        "type": "json_schema",
                        "name": "long",
                        "schema": long["json_schema"]["schema"],
                    }
                },
            },
        )
    assert (
        whole["choices"][0]["finish_reason"] == "length"
        and whole["usage"]["completion_tokens"] == 7
    )
    assert response["status"] == "incomplete" and response["usage"]["output_tokens"] == 7


_PIECES = st.sampled_from(
    [
        "hello",
        " world",
        "<|end|>",
        "<|start|>assistant",
        "<|channel|>final",
        "<|message|>",
        "\n",
        "  ",
        "123",
        "é",
        "😀",
        '{"a":',
        "<|",
        "end|>",
        "x" * 40,
    ]
)


@given(pieces=st.lists(_PIECES, max_size=60), limit=st.integers(1, 200), data=st.data())
def test_text_engine_output_is_counted_as_the_models_ids(
    pieces: list[str], limit: int, data: Any
) -> None:
    text = "".join(pieces)
    counter = TextCount(limit)
    out, pos = "", 0
    while pos < len(text):
        step = data.draw(st.integers(1, 12))
        out += counter.take(text[pos : pos + step])
        pos += step
    out += counter.end()
    ids = encode_harmony(text)
    assert counter.count == min(len(ids), limit)
    assert counter.full == (len(ids) > limit)
    if len(ids) <= limit:
        assert out == text
    else:
        assert text.startswith(out) and len(encode_harmony(out)) <= limit
