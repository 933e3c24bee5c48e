"""The Responses API bridge, both ways, checked against the openai SDK's types."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from harmony_grammar.bridges.responses import to_responses
from harmony_grammar.format.model import Message, Role
from harmony_grammar.format.vocabulary import load_encoding
from harmony_grammar.rendering.conversation import DeveloperContent, ReasoningEffort, SystemContent
from harmony_grammar.rendering.renderer import render
from harmony_grammar.rendering.responses import ResponsesError, from_responses

from ..support.openai_sdk import check_response, check_responses_request

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "Weather now.",
        "parameters": WEATHER,
        "strict": True,
    },
    {"type": "function", "name": "get_time", "parameters": None, "strict": False},
]
ARGS = '{ "city":"São Paulo" ,"x":"\\u00e9"}'
ANSWER = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
WILD = Path(__file__).parents[1] / "fixtures" / "wild" / "collected.jsonl"


def _request(**extra: Any) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": "gpt-oss-120b",
        "instructions": "Be terse.",
        "input": [
            {"role": "user", "content": "Weather in SP?"},
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": "One call."}],
            },
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "phase": "commentary",
                "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
            },
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": ARGS,
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "31 C"},
            {"type": "message", "role": "assistant", "content": "It is 31 C."},
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "Use Celsius."}],
            },
            {"role": "user", "content": [{"type": "input_text", "text": "Thanks"}]},
        ],
        "tools": TOOLS,
        "reasoning": {"effort": "high"},
        "text": {
            "format": {"type": "json_schema", "name": "answer", "schema": ANSWER, "strict": True}
        },
    }
    request.update(extra)
    return request


def _ids() -> Any:
    counter = itertools.count()
    return lambda prefix: f"{prefix}_{next(counter)}"


def test_the_request_is_one_the_sdk_accepts() -> None:
    check_responses_request(_request())


def test_from_responses_maps_every_item() -> None:
    conversation = from_responses(_request())
    system, developer, *body = conversation.messages
    assert isinstance(system, SystemContent) and system.reasoning_effort is ReasoningEffort.HIGH
    assert isinstance(developer, DeveloperContent)
    assert developer.instructions == "Be terse.\n\nUse Celsius."
    assert [t.name for t in developer.tools] == ["get_weather", "get_time"]
    assert developer.response_formats[0].name == "answer"
    assert developer.response_formats[0].schema == ANSWER
    assert [(m.role, m.channel, m.recipient, m.name, m.content) for m in body] == [
        (Role.USER, None, None, None, "Weather in SP?"),
        (Role.ASSISTANT, "analysis", None, None, "One call."),
        (Role.ASSISTANT, "commentary", None, None, "Checking."),
        (Role.ASSISTANT, "commentary", "functions.get_weather", None, ARGS),
        (Role.TOOL, "commentary", "assistant", "functions.get_weather", "31 C"),
        (Role.ASSISTANT, "final", None, None, "It is 31 C."),
        (Role.USER, None, None, None, "Thanks"),
    ]
    text = render(conversation)
    assert "# Response Formats" in text and f"<|message|>{ARGS}<|call|>" in text


def test_string_input_and_tool_choice() -> None:
    conversation = from_responses(
        {"input": "Hi", "tools": TOOLS, "tool_choice": {"type": "function", "name": "get_time"}}
    )
    developer = conversation.messages[1]
    assert isinstance(developer, DeveloperContent)
    assert [t.name for t in developer.tools] == ["get_time"]
    assert conversation.messages[-1] == Message(Role.USER, "Hi")
    none = from_responses({"input": "Hi", "tools": TOOLS, "tool_choice": "none"})
    assert len(none.messages) == 2  # system and user: no developer message left


@pytest.mark.parametrize(
    ("request_body", "path"),
    [
        ({"input": 3}, "input"),
        (
            {"input": [{"type": "function_call_output", "call_id": "nope", "output": "x"}]},
            "input[0]",
        ),
        ({"input": [{"type": "image_generation_call", "id": "x"}]}, "input[0]"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]},
            "input[0].content[0]",
        ),
        ({"input": "x", "tools": [{"type": 5}]}, "tools[0]"),
        ({"input": "x", "tools": [{"type": "namespace", "name": "n", "tools": []}]}, "tools[0].tools"),
        (
            {"input": "x", "tools": [{"type": "custom", "name": "c", "format": {"type": "grammar", "syntax": "ebnf", "definition": "x"}}]},
            "tools[0].format",
        ),
        ({"input": "x", "tool_choice": {"type": "function", "name": "missing"}}, "tool_choice"),
        ({"input": "x", "reasoning": {"effort": "minimal"}}, "reasoning.effort"),
        ({"input": "x", "text": {"format": {"type": "json_object"}}}, "text.format"),
    ],
)
def test_bad_requests_raise_with_a_path(request_body: dict[str, Any], path: str) -> None:
    with pytest.raises(ResponsesError) as caught:
        from_responses(request_body)
    assert caught.value.path == path


def test_to_responses_items_and_status() -> None:
    completion = (
        "<|channel|>analysis<|message|>Think.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>"
        f"<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{ARGS}<|call|>"
    )
    request = _request()
    response = to_responses(completion, request=request, ids=_ids(), created_at=1.0)
    check_response(response)
    assert response["status"] == "completed" and response["incomplete_details"] is None
    assert [item["type"] for item in response["output"]] == [
        "reasoning",
        "message",
        "function_call",
    ]
    reasoning, preamble, call = response["output"]
    assert reasoning["content"] == [{"type": "reasoning_text", "text": "Think."}]
    assert preamble["phase"] == "commentary"
    assert preamble["content"][0]["text"] == "Checking."
    assert (call["name"], call["arguments"], call["call_id"]) == ("get_weather", ARGS, "call_4")
    assert response["model"] == "gpt-oss-120b" and response["tools"] == TOOLS
    assert response["diagnostics"] == []


def test_a_cut_turn_is_incomplete() -> None:
    response = to_responses(
        "<|channel|>final<|message|>It is 3", ids=_ids(), created_at=1.0, truncated=True
    )
    check_response(response)
    assert response["status"] == "incomplete"
    assert response["incomplete_details"] == {"reason": "max_output_tokens"}
    assert response["output"][-1]["status"] == "incomplete"
    assert response["output"][-1]["content"][0]["text"] == "It is 3"
    assert response["diagnostics"] == []  # a completion may end without its stop token


def test_a_turn_that_ends_without_its_stop_token_is_complete_unless_cut() -> None:
    # The engine stopped at end-of-sequence or a stop string it stripped, or the server
    # dropped <|return|>: nothing was cut, so nothing is max_output_tokens.
    for text in ("<|channel|>final<|message|>It is 3", ""):
        response = to_responses(text, ids=_ids(), created_at=1.0)
        check_response(response)
        assert response["status"] == "completed"
        assert response["incomplete_details"] is None
        assert all(item["status"] == "completed" for item in response["output"])


def test_token_ids_give_the_same_response() -> None:
    text = "<|channel|>final<|message|>Done.<|return|>"
    ids = load_encoding().encode(text, allowed_special="all")
    assert to_responses(ids, ids=_ids(), created_at=1.0) == to_responses(
        text, ids=_ids(), created_at=1.0
    )


def test_an_error_the_parse_cannot_repair_fails_the_response() -> None:
    # Lenient reading repairs every envelope; a call written in text it cannot read stays
    # an error (HG162), and the response fails.
    response = to_responses('Sure. to=functions.f json{"a":1}', ids=_ids(), created_at=1.0)
    check_response(response)
    assert response["status"] == "failed"
    assert response["error"]["message"].startswith("HG")


def test_arguments_are_checked_against_the_request_tools() -> None:
    completion = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"town":1}<|call|>'
    response = to_responses(completion, request=_request(), ids=_ids(), created_at=1.0)
    check_response(response)
    assert any(d["severity"] == "error" for d in response["diagnostics"])


def _wild_completions() -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in WILD.read_text().splitlines() if line.strip()]
    return [row for row in rows if row["mode"] == "completion"]


def test_every_wild_output_gives_a_valid_response() -> None:
    # The real-world deviations (tests/fixtures/wild) go through the lenient parse; whatever it
    # makes of them, the payload is one the SDK accepts.
    statuses = set()
    for row in _wild_completions():
        response = to_responses(row["text"], ids=_ids(), created_at=1.0)
        check_response(response)
        statuses.add(response["status"])
    assert "completed" in statuses


def test_non_function_tools_in_the_request_are_not_checked() -> None:
    request = _request(tools=[*TOOLS, {"type": "web_search"}])
    response = to_responses("<|channel|>final<|message|>ok<|return|>", request=request, ids=_ids())
    assert response["status"] == "completed"


def test_encrypted_reasoning_alone_renders_nothing() -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"}
    check_responses_request({"input": [item]})
    conversation = from_responses({"input": [item, {"role": "user", "content": "Hi"}]})
    assert conversation.messages[-1] == Message(Role.USER, "Hi")
    assert len(conversation.messages) == 2
