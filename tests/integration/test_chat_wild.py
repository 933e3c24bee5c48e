"""``to_chat_completion`` on deviating output: the lenient parser's recovery, nothing misplaced."""

from __future__ import annotations

import re

import pytest

from harmony_grammar import parse, to_chat_completion
from harmony_grammar.rendering.chat import ChatCompletionError

from ..support.wild_corpus import load_records

CALL_NO_STOP = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{}"


def _ids(n: int) -> str:
    return f"call_{n}"


def test_an_empty_recovered_message_adds_no_blank_line() -> None:
    text = "<|channel|>final<|end|><|start|>assistant<|channel|>final<|message|>x"
    response = to_chat_completion(text, lenient=True)
    assert response["message"]["content"] == "x"
    assert [d["code"] for d in response["diagnostics"]] == ["HG150"]
    with pytest.raises(ChatCompletionError, match="HG100"):
        to_chat_completion(text, lenient=False)  # strict: the deviation stays an error


def test_empty_messages_are_left_out_of_both_texts() -> None:
    text = (
        "<|channel|>analysis<|message|><|end|>"
        "<|start|>assistant<|channel|>analysis<|message|>think<|end|>"
        "<|start|>assistant<|channel|>final<|message|><|end|>"
        "<|start|>assistant<|channel|>final<|message|>done<|return|>"
    )
    response = to_chat_completion(text)
    assert response["message"]["content"] == "done"
    assert response["message"]["reasoning_content"] == "think"
    assert "diagnostics" not in response  # clean output: the plain Chat Completions shape


def test_only_empty_messages_give_null_texts() -> None:
    response = to_chat_completion("<|channel|>final<|message|><|return|>")
    assert response["message"]["content"] is None
    assert response["finish_reason"] == "stop"


@pytest.mark.parametrize("ending", ["", "<|end|>", "<|return|>"])
def test_a_call_whose_call_token_was_lost_is_still_a_tool_call(ending: str) -> None:
    response = to_chat_completion(CALL_NO_STOP + ending, lenient=True, id_factory=_ids)
    calls = response["message"]["tool_calls"]
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        ("call_0", "get_weather", "{}")
    ]
    assert response["finish_reason"] == "tool_calls"
    assert "HG153" in [d["code"] for d in response["diagnostics"]]


def test_the_recovery_is_the_lenient_parse() -> None:
    """Every message the lenient parser recovers lands in exactly one place of the response."""
    text = (
        "<|channel|>analysis<|message|>Plan.<|end|>"
        "<|channel|>commentary<|message|>Looking it up.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.f json<|message|>{}"
    )
    messages = parse(text, start="completion", lenient=True).messages
    response = to_chat_completion(text, lenient=True)
    message = response["message"]
    assert message["reasoning_content"] == messages[0].content
    assert message["content"] == messages[1].content
    assert [c["function"]["arguments"] for c in message["tool_calls"]] == [messages[2].content]


_CONTROL = re.compile(r"<\|[a-z]+\|>")


def _completions() -> list[dict]:
    return [r for r in load_records() if r["mode"] == "completion"]


@pytest.mark.parametrize("record", _completions(), ids=lambda r: r["id"])
def test_real_output_misplaces_nothing(record: dict) -> None:
    """On the real-output corpus: no analysis in content, no control-token text, no lost call.

    Output the lenient parser cannot recover raises (a named error, never a silent loss).
    """
    try:
        response = to_chat_completion(record["text"], lenient=True)
    except ChatCompletionError as exc:
        assert re.match(r"HG\d{3} at ", str(exc))
        return
    message = response["message"]
    content = message["content"] or ""
    visible = content + (message["reasoning_content"] or "")
    intended = record["intended"]
    for want in intended:
        if want["channel"] == "analysis" and want["content"] and len(want["content"]) >= 20:
            # Even where the model named the channel `commentary` itself, in a header with
            # no <|message|> (r23, r25): parsed as written, shown as reasoning.
            assert want["content"] not in content
    if not any(_CONTROL.search(want["content"] or "") for want in intended):
        assert not _CONTROL.search(visible)
    calls = [w for w in intended if (w["recipient"] or "").startswith("functions.")]
    assert len(message["tool_calls"]) >= len(calls)
    if message["tool_calls"]:
        assert response["finish_reason"] == "tool_calls"


def test_stripped_control_tokens_are_read_and_stop() -> None:
    """With every stop token stripped, a missing terminator is no sign of a cut."""
    text = "analysisThe user wants a word. Answer four.assistantfinalfour"
    response = to_chat_completion(text, lenient=True)
    assert response["message"]["content"] == "four"
    assert response["message"]["reasoning_content"] == "The user wants a word. Answer four."
    assert response["finish_reason"] == "stop"
    assert "HG160" in [d["code"] for d in response["diagnostics"]]


def test_prose_is_not_recovered_as_reasoning() -> None:
    text = "Analysis of the data shows growth."
    response = to_chat_completion(text, lenient=True)
    assert response["message"]["content"] == text
    assert response["message"]["reasoning_content"] is None
