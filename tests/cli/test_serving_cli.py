"""The serving commands: render a Responses request, to-responses [--stream],
to-chat --stream and grammar --target xgrammar."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harmony_grammar.cli.main import main
from harmony_grammar.generation.turn_grammar import completion_grammar
from harmony_grammar.rendering.renderer import render
from harmony_grammar.rendering.responses import from_responses

from ..support.openai_sdk import check_chunk, check_event, check_response

TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
REQUEST = {"model": "gpt-oss-20b", "instructions": "Be terse.", "input": "Weather?", "tools": TOOLS}
COMPLETION = (
    "<|channel|>analysis<|message|>Need it.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"city":"Oslo"}<|call|>'
)
FINAL = "<|channel|>final<|message|>Hello, wörld<|return|>"


def _write(tmp_path: Path, name: str, content: Any) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def test_render_takes_a_responses_request(tmp_path: Path, capsys: Any) -> None:
    request = _write(tmp_path, "request.json", REQUEST)
    assert main(["render", request, "--next-turn", "assistant"]) == 0
    assert capsys.readouterr().out == render(from_responses(REQUEST), next_turn="assistant")


def test_to_responses_prints_a_response(tmp_path: Path, capsys: Any) -> None:
    completion = _write(tmp_path, "out.harmony", COMPLETION)
    request = _write(tmp_path, "request.json", REQUEST)
    assert main(["to-responses", completion, "--request", request]) == 0
    response = json.loads(capsys.readouterr().out)
    check_response(response)
    assert response["model"] == "gpt-oss-20b"
    assert [item["type"] for item in response["output"]] == ["reasoning", "function_call"]


def test_to_responses_stream_prints_events(tmp_path: Path, capsys: Any) -> None:
    completion = _write(tmp_path, "out.harmony", COMPLETION)
    assert main(["to-responses", completion, "--stream"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    for event in events:
        check_event(event)
    assert events[-1]["type"] == "response.completed"
    deltas = "".join(
        e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"
    )
    assert deltas == '{"city":"Oslo"}'
    assert (
        len(deltas) > 1 and sum(e["type"].endswith(".delta") for e in events) > 2
    )  # one id per feed


def test_to_responses_exit_status(tmp_path: Path, capsys: Any) -> None:
    # A call written in text that no reading can make a call (HG162) fails the response:
    # every envelope deviation is repaired, this is not.
    broken = _write(tmp_path, "broken.harmony", 'Sure. to=functions.f json{"a":1}')
    assert main(["to-responses", broken]) == 1
    assert capsys.readouterr().err.startswith("harmony-grammar: error:")
    assert main(["to-responses", broken, "--request", str(tmp_path / "missing.json")]) == 2


def test_to_chat_stream_prints_chunks(tmp_path: Path, capsys: Any) -> None:
    final = _write(tmp_path, "final.harmony", FINAL)
    assert main(["to-chat", final, "--stream"]) == 0
    chunks = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    for chunk in chunks:
        check_chunk(chunk)
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert content == "Hello, wörld"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_grammar_prints_the_xgrammar_tag(tmp_path: Path, capsys: Any) -> None:
    pytest.importorskip("xgrammar")
    tools = _write(tmp_path, "tools.json", TOOLS)
    assert main(["grammar", "--tools", tools, "--target", "xgrammar"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == json.loads(completion_grammar(TOOLS, target="xgrammar"))
