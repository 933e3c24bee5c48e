"""The gateway as agents meet it: Codex's request shape, sealed reasoning, render endpoints.

Everything runs against ``serve --backend replay`` (a real server on 127.0.0.1), so the
requests go the whole real path: planning, the turn grammar the replay is checked against,
the bridges, the app. Payloads are checked with the openai SDK's types.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("cryptography")
httpx2 = pytest.importorskip("httpx2")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harmony_grammar.cli.main import main  # noqa: E402
from harmony_grammar.gateway import GatewayConfig, ReplayBackend, serving  # noqa: E402
from harmony_grammar.gateway.reasoning_seal import ReasoningSeal, SealError  # noqa: E402
from harmony_grammar.rendering.chat import from_chat_completions  # noqa: E402
from harmony_grammar.rendering.renderer import DropRule, render  # noqa: E402
from harmony_grammar.rendering.responses import from_responses  # noqa: E402

from ..support.openai_sdk import check_chunk, check_event, check_response  # noqa: E402
from ..support.serve_peers import deadline  # noqa: E402

OBJECT = {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}
# Codex's request, in small (harmony-format.md §10): function, namespace, hosted tools and
# the fields a stateless client sends.
CODEX_BODY: dict[str, Any] = {
    "model": "tiny",
    "input": [
        {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "Be brief."}],
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Make a file."}],
        },
    ],
    "tools": [
        {
            "type": "function",
            "name": "exec_command",
            "description": "Run.",
            "strict": False,
            "parameters": OBJECT,
        },
        {
            "type": "namespace",
            "name": "multi_agent_v1",
            "description": "Sub-agents.",
            "tools": [
                {"type": "function", "name": "close_agent", "strict": False, "parameters": OBJECT}
            ],
        },
        {"type": "web_search", "external_web_access": False},
        {"type": "file_search", "vector_store_ids": ["vs_1"]},
        {"type": "web_search", "external_web_access": True},
    ],
    "tool_choice": "auto",
    "parallel_tool_calls": True,
    "reasoning": {"summary": "auto"},
    "store": False,
    "include": ["reasoning.encrypted_content"],
    "prompt_cache_key": "thread-1",
    "client_metadata": {"thread_id": "thread-1"},
}
THINK = "I should run a command."
CALL = (
    f"<|channel|>analysis<|message|>{THINK}<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.exec_command <|constrain|>json"
    '<|message|>{"cmd":"ls"}<|call|>'
)
NAMESPACED = (
    "<|channel|>commentary to=multi_agent_v1.close_agent <|constrain|>json"
    '<|message|>{"cmd":"x"}<|call|>'
)
ANSWER = "<|channel|>final<|message|>Done.<|return|>"


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    with deadline(120):
        yield


def _replay(tmp_path: Path, *lines: str) -> ReplayBackend:
    path = tmp_path / "replay.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return ReplayBackend(path)


def _post(url: str, route: str, body: dict[str, Any]) -> Any:
    return httpx2.post(url + route, json=body, timeout=60)


def _events(answer: Any) -> list[dict[str, Any]]:
    lines = answer.text.splitlines()
    return [json.loads(line[6:]) for line in lines if line.startswith("data: {")]


def test_codex_shaped_requests_are_answered_with_the_sdks_items(tmp_path: Path) -> None:
    with serving(_replay(tmp_path, CALL, NAMESPACED)) as url:
        whole = _post(url, "/v1/responses", CODEX_BODY)
        assert whole.status_code == 200, whole.text
        # Hosted tools are left out, and named once each in a header.
        assert whole.headers["x-hosted-tools-ignored"] == "web_search, file_search"
        response = whole.json()
        check_response(response)
        reasoning, call = response["output"]
        assert reasoning["content"][0]["text"] == THINK
        assert reasoning["encrypted_content"].startswith("hg1.")
        assert THINK not in reasoning["encrypted_content"]
        assert (call["type"], call["name"], call.get("namespace")) == (
            "function_call",
            "exec_command",
            None,
        )

        streamed = _post(url, "/v1/responses", {**CODEX_BODY, "stream": True})
        assert streamed.status_code == 200
        assert streamed.headers["x-hosted-tools-ignored"] == "web_search, file_search"
        events = _events(streamed)
        for event in events:
            check_event(event)
        (item,) = events[-1]["response"]["output"]
        assert (item["namespace"], item["name"]) == ("multi_agent_v1", "close_agent")
        assert events[-1]["type"] == "response.completed"


def test_no_header_without_hosted_tools_and_no_seal_without_include(tmp_path: Path) -> None:
    body = {**CODEX_BODY, "tools": CODEX_BODY["tools"][:2], "include": []}
    with serving(_replay(tmp_path, CALL)) as url:
        answer = _post(url, "/v1/responses", body)
        assert answer.status_code == 200
        assert "x-hosted-tools-ignored" not in answer.headers
        assert "encrypted_content" not in answer.json()["output"][0]


def _second_turn(first: dict[str, Any]) -> dict[str, Any]:
    """Codex's next request: the first turn's items sent back (reasoning as only its blob)."""
    reasoning, call = first["output"]
    sent_back = [
        {
            "type": "reasoning",
            "id": reasoning["id"],
            "summary": [],
            "encrypted_content": reasoning["encrypted_content"],
        },
        {k: call[k] for k in ("type", "call_id", "name", "arguments")},
        {"type": "function_call_output", "call_id": call["call_id"], "output": "a.txt"},
    ]
    return {**CODEX_BODY, "input": [*CODEX_BODY["input"], *sent_back]}


def test_sealed_reasoning_comes_back_into_the_prompt(tmp_path: Path) -> None:
    with serving(_replay(tmp_path, CALL, ANSWER)) as url:
        first = _post(url, "/v1/responses", CODEX_BODY).json()
        second = _second_turn(first)
        rendered = _post(url, "/v1/responses/render", second)
        assert rendered.status_code == 200, rendered.text
        prompt = rendered.json()["prompt"]
        assert f"<|start|>assistant<|channel|>analysis<|message|>{THINK}<|end|>" in prompt
        # The same as rendering the conversation with the analysis in clear, by the drop rule.
        clear = json.loads(json.dumps(second))
        clear["input"][2] = {
            "type": "reasoning",
            "summary": [],
            "content": [{"type": "reasoning_text", "text": THINK}],
        }
        expected = render(
            from_responses(clear), next_turn="assistant", drop_rule=DropRule.EVERY_FINAL
        )
        assert prompt == expected
        answer = _post(url, "/v1/responses", second)
        assert (
            answer.status_code == 200
            and answer.json()["output"][0]["content"][0]["text"] == "Done."
        )


def _flip(blob: str, index: int) -> str:
    raw = bytearray(base64.urlsafe_b64decode(blob[4:]))
    raw[index % len(raw)] ^= 1
    return "hg1." + base64.urlsafe_b64encode(bytes(raw)).decode()


def test_an_altered_or_foreign_blob_is_a_400_naming_the_item(tmp_path: Path) -> None:
    with serving(_replay(tmp_path, CALL)) as url:
        first = _post(url, "/v1/responses", CODEX_BODY).json()
        second = _second_turn(first)
        blob = second["input"][2]["encrypted_content"]
        foreign = ReasoningSeal().seal(THINK)  # another process's random key
        for bad in (_flip(blob, 20), foreign, blob[:-6], "not a blob", 17):
            second["input"][2]["encrypted_content"] = bad
            for route in ("/v1/responses", "/v1/responses/render"):
                answer = _post(url, route, second)
                assert answer.status_code == 400, (bad, answer.text)
                error = answer.json()["error"]
                assert error["param"] == "input[2].encrypted_content"
                assert "does not open" in error["message"]


# Half the profile's budget: each example derives a key and seals a text.
@settings(max_examples=settings.default.max_examples // 2)
@given(text=st.text(max_size=200), index=st.integers(min_value=0))
def test_a_seal_opens_what_it_sealed_and_nothing_altered(text: str, index: int) -> None:
    seal = ReasoningSeal.from_secret("deployment secret")
    blob = seal.seal(text)
    assert ReasoningSeal.from_secret("deployment secret").open(blob) == text  # any replica
    with pytest.raises(SealError):
        seal.open(_flip(blob, index))
    with pytest.raises(SealError):
        ReasoningSeal.from_secret("another secret").open(blob)


@pytest.mark.parametrize(
    ("extra", "param", "words"),
    [
        ({"background": True}, "background", "stateless"),
        (
            {"store": True, "previous_response_id": "resp_1"},
            "previous_response_id",
            "stores no responses",
        ),
    ],
)
def test_what_needs_state_is_a_400_that_says_so(
    tmp_path: Path, extra: dict[str, Any], param: str, words: str
) -> None:
    with serving(_replay(tmp_path, ANSWER)) as url:
        answer = _post(url, "/v1/responses", {**CODEX_BODY, **extra})
        assert answer.status_code == 400
        error = answer.json()["error"]
        assert error["param"] == param and words in error["message"]


def test_the_render_endpoints_show_the_prompt_without_generating(tmp_path: Path) -> None:
    backend = _replay(tmp_path, ANSWER)
    chat = {
        "model": "tiny",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "ns.run", "parameters": OBJECT}}],
    }
    with serving(backend) as url:
        for route, body, conversation in (
            ("/v1/chat/completions/render", chat, from_chat_completions(chat)),
            ("/v1/responses/render", CODEX_BODY, from_responses(CODEX_BODY)),
        ):
            answer = _post(url, route, body)
            assert answer.status_code == 200, answer.text
            shown = answer.json()
            assert set(shown) == {"prompt", "prompt_token_ids"}
            options = {"next_turn": "assistant", "drop_rule": DropRule.EVERY_FINAL}
            assert shown["prompt"] == render(conversation, **options)
            assert shown["prompt_token_ids"] == render(conversation, tokens=True, **options)
        assert (
            "## ns\n\nnamespace ns {"
            in _post(url, "/v1/chat/completions/render", chat).json()["prompt"]
        )
        assert backend.played == 0  # nothing was generated
        bad = _post(url, "/v1/responses/render", {**CODEX_BODY, "background": True})
        assert bad.status_code == 400


def test_chat_calls_a_namespaced_function_by_its_full_name(tmp_path: Path) -> None:
    body = {
        "model": "tiny",
        "messages": [{"role": "user", "content": "close it"}],
        "tools": [
            {
                "type": "function",
                "function": {"name": "multi_agent_v1.close_agent", "parameters": OBJECT},
            }
        ],
        "stream": True,
    }
    with serving(_replay(tmp_path, NAMESPACED), GatewayConfig(model="tiny")) as url:
        answer = _post(url, "/v1/chat/completions", body)
        assert answer.status_code == 200, answer.text
        chunks = _events(answer)
        for chunk in chunks:
            check_chunk(chunk)
        calls = [
            c for chunk in chunks for c in chunk["choices"][0]["delta"].get("tool_calls") or []
        ]
        assert [c["function"]["name"] for c in calls] == ["multi_agent_v1.close_agent"]
        assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_serve_takes_its_reasoning_key_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("HG_TEST_REASONING_KEY", raising=False)
    code = main(
        [
            "serve",
            "--backend",
            "replay",
            "--replay",
            "x.jsonl",
            "--reasoning-key-env",
            "HG_TEST_REASONING_KEY",
        ]
    )
    assert code != 0
    err = capsys.readouterr().err
    assert "HG_TEST_REASONING_KEY" in err and "Traceback" not in err


def test_the_engine_path_reads_namespace_calls_and_refuses_an_unsayable_tag(
    tmp_path: Path,
) -> None:
    from harmony_grammar.gateway import build_backend

    lark = {
        "type": "custom",
        "name": "apply_patch",
        "format": {"type": "grammar", "syntax": "lark", "definition": 'start: "x"'},
    }
    with serving(_replay(tmp_path, NAMESPACED)) as upstream:
        with serving(build_backend("vllm", upstream=upstream, timeout=30)) as url:
            answer = _post(url, "/v1/responses", CODEX_BODY)
            assert answer.status_code == 200, answer.text
            check_response(answer.json())
            (item,) = answer.json()["output"]
            assert (item["namespace"], item["name"]) == ("multi_agent_v1", "close_agent")
        tagged = build_backend("vllm", upstream=upstream, timeout=30, grammar="structural-tag")
        with serving(tagged) as url:
            body = {**CODEX_BODY, "tools": [*CODEX_BODY["tools"], lark]}
            refused = _post(url, "/v1/responses", body)
            assert refused.status_code == 400
            assert refused.json()["error"]["param"] == "tools"
            assert "llguidance" in refused.json()["error"]["message"]
