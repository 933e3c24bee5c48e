"""``serve --backend replay``: recorded completions through the request's turn grammar.

The replay backend reads a JSON Lines file (each line Harmony text after
``<|start|>assistant``, or ``{"text": ...}``), plays the n-th line to the n-th generation
request (cycling), checks every token against the request's own turn grammar first (a line
the grammar refuses is a 502 naming the line and the position), and streams the rest through
the gateway's real path; a gateway with ``--backend vllm`` in front of it runs the engine
backends' code path on the same lines.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
openai = pytest.importorskip("openai")
httpx2 = pytest.importorskip("httpx2")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harmony_grammar.cli.main import main  # noqa: E402
from harmony_grammar.gateway import ReplayBackend, build_backend, serving  # noqa: E402
from harmony_grammar.gateway.replay import ReplayFileError, read_replay  # noqa: E402

from ..support.serve_peers import ASK, CALL_TEXT, TOOLS, WEATHER, deadline  # noqa: E402

ANSWER = "<|channel|>final<|message|>It is sunny.<|return|>"


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    with deadline(120):
        yield


def _file(tmp_path: Path, *lines: Any) -> Path:
    path = tmp_path / "replay.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def _client(url: str) -> Any:
    return openai.OpenAI(base_url=url + "/v1", api_key="x", timeout=30, max_retries=0)


def test_lines_play_in_order_and_cycle(tmp_path: Path) -> None:
    backend = build_backend("replay", replay=str(_file(tmp_path, CALL_TEXT, {"text": ANSWER})))
    with serving(backend) as url:
        client = _client(url)
        kinds = []
        for _ in range(5):
            answer = client.chat.completions.create(model="tiny", messages=ASK, tools=TOOLS)
            choice = answer.choices[0]
            kinds.append(choice.finish_reason)
            if choice.finish_reason == "tool_calls":
                call = choice.message.tool_calls[0].function
                assert (call.name, json.loads(call.arguments)) == ("get_weather", {"city": "Paris"})
            else:
                assert choice.message.content == "It is sunny."
        assert kinds == ["tool_calls", "stop", "tool_calls", "stop", "tool_calls"]
        # The same lines, streamed, through the Responses API.
        events = list(
            client.responses.create(
                model="tiny",
                input="hi",
                stream=True,
                tools=[{"type": "function", "name": "get_weather", "parameters": WEATHER}],
            )
        )
        assert events[-1].type == "response.completed"
        assert [item.type for item in events[-1].response.output] == ["message"]


def test_a_line_the_grammar_refuses_is_a_502_naming_the_position(tmp_path: Path) -> None:
    # No tools in the request: its grammar has no call, so the recorded call leaves it.
    path = _file(tmp_path, CALL_TEXT)
    with serving(ReplayBackend(path)) as url:
        for stream in (False, True):
            answer = httpx2.post(
                url + "/v1/chat/completions", json={"messages": ASK, "stream": stream}, timeout=30
            )
            assert answer.status_code == 502
            error = answer.json()["error"]
            assert error["code"] == "upstream_error"
            offset = CALL_TEXT.index(" to=")  # the header's recipient is what no grammar allows
            assert "line 1:" in error["message"] and f"character {offset}" in error["message"]


def test_the_vllm_backend_fronts_a_replay_server(tmp_path: Path) -> None:
    path = _file(tmp_path, CALL_TEXT, ANSWER)
    with (
        serving(ReplayBackend(path)) as upstream,
        serving(build_backend("vllm", upstream=upstream, timeout=30)) as url,
    ):
        client = _client(url)
        first = client.chat.completions.create(model="tiny", messages=ASK, tools=TOOLS)
        assert first.choices[0].message.tool_calls[0].function.arguments == '{"city":"Paris"}'
        second = client.chat.completions.create(model="tiny", messages=ASK, tools=TOOLS)
        assert second.choices[0].message.content == "It is sunny."
        refused = httpx2.post(url + "/v1/chat/completions", json={"messages": ASK}, timeout=30)
        assert refused.status_code == 502 and "refuses token" in refused.json()["error"]["message"]


#: A tool with three properties, declared in this order.
TRIP = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer", "minimum": 1},
        "unit": {"enum": ["c", "f"]},
    },
    "required": ["city", "days"],
}
TRIP_TOOLS = [{"type": "function", "function": {"name": "plan_trip", "parameters": TRIP}}]


def _call(arguments: str) -> str:
    return (
        "<|channel|>commentary to=functions.plan_trip <|constrain|>json"
        f"<|message|>{arguments}<|call|>"
    )


def test_recorded_arguments_in_another_key_order_are_played(tmp_path: Path) -> None:
    # The turn grammar writes keys in declared order; a recorded completion was not written
    # under it, so its arguments are checked by the JSON Schema validator: every order and
    # spacing of valid arguments plays, byte for byte; invalid ones are a 502 naming why.
    members = ['"city":"Oslo"', '"days":3', '"unit":"c"']
    valid = ["{" + ",".join(order) + "}" for order in itertools.permutations(members)] + [
        '{ "days" : 2 ,\n "city" : "Rome" }'
    ]
    invalid = {
        '{"days":3,"unit":"k","city":"Oslo"}': "/unit",
        '{"unit":"c","days":0,"city":"Oslo"}': "/days",
        '{"unit":"c","city":"Oslo"}': "'days' is a required property",
    }
    path = _file(tmp_path, *[_call(a) for a in valid], *[_call(a) for a in invalid])
    with serving(ReplayBackend(path)) as url:
        client = _client(url)
        for arguments in valid:
            answer = client.chat.completions.create(model="tiny", messages=ASK, tools=TRIP_TOOLS)
            call = answer.choices[0].message.tool_calls[0].function
            assert (call.name, call.arguments) == ("plan_trip", arguments)
        for why in invalid.values():
            body = {"messages": ASK, "tools": TRIP_TOOLS}
            refused = httpx2.post(url + "/v1/chat/completions", json=body, timeout=30)
            assert refused.status_code == 502
            message = refused.json()["error"]["message"]
            assert "arguments of functions.plan_trip are refused" in message and why in message


def test_a_refusal_outside_the_body_is_still_the_grammar_s(tmp_path: Path) -> None:
    # Valid arguments in another order do not excuse a call to a tool the request lacks.
    path = _file(tmp_path, _call('{"days":3,"city":"Oslo"}').replace("plan_trip", "fly"))
    with serving(ReplayBackend(path)) as url:
        body = {"messages": ASK, "tools": TRIP_TOOLS}
        refused = httpx2.post(url + "/v1/chat/completions", json=body, timeout=30)
        assert refused.status_code == 502 and "refuses token" in refused.json()["error"]["message"]


# Text without control-token spellings: any of it is a final answer the grammar allows.
_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="<"), min_size=1, max_size=60)


# A fifth of the profile's budget: each example starts a gateway over its own replay file.
@settings(max_examples=settings.default.max_examples // 5)
@given(texts=st.lists(_TEXT, min_size=1, max_size=3))
def test_every_character_of_a_line_reaches_the_client(
    tmp_path_factory: Any, texts: list[str]
) -> None:
    lines = [f"<|channel|>final<|message|>{text}<|return|>" for text in texts]
    path = _file(tmp_path_factory.mktemp("replay"), *lines)
    with serving(ReplayBackend(path)) as url:
        client = _client(url)
        for text in texts:
            chunks = list(client.chat.completions.create(model="tiny", messages=ASK, stream=True))
            assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == text
            assert chunks[-1].choices[0].finish_reason == "stop"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('"ok"\n{not json\n', "line 2: not JSON"),
        ('"ok"\n\n[1, 2]\n', "line 3: must be a JSON string"),
        ('{"text": "a", "extra": 1}\n', "line 1: must be a JSON string"),
        ("\n\n", "has no completion"),
    ],
)
def test_bad_replay_files_name_the_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ReplayFileError, match=message):
        read_replay(path)


def test_serve_cli_refuses_bad_replay_options(tmp_path: Path, capsys: Any) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    for argv in (
        ["serve", "--backend", "replay"],
        ["serve", "--backend", "replay", "--replay", str(bad)],
        ["serve", "--backend", "embedded", "--replay", str(bad)],
        ["serve", "--backend", "replay", "--replay", str(tmp_path / "missing.jsonl")],
    ):
        assert main(argv) == 2  # a usage problem: one line, exit 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err and "--replay" in err
