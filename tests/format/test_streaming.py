"""Streaming bridges: Chat Completions chunks and Responses events, against the SDK's types
and against the whole-response bridges for any chunking of the token ids."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.bridges.chat import ChatCompletionStream, to_chat_completion
from harmony_grammar.bridges.responses import ResponsesStream, to_responses
from harmony_grammar.format.vocabulary import load_encoding

from ..support.openai_sdk import check_chunk, check_event, check_response, sdk_fold

ARGS = '{"city": "São Paulo", "note": "\\u00e9 ✓"}'
FIXTURES = [
    "<|channel|>final<|message|>Hello, wörld! 👋<|return|>",
    "<|channel|>analysis<|message|>Think 🤔.<|end|><|start|>assistant<|channel|>final<|message|><|return|>",
    (
        "<|channel|>analysis<|message|>Need it.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        f"<|message|>{ARGS}<|call|>"
    ),
    # a built-in tool's call goes to reasoning; a cut final answer is incomplete
    '<|channel|>analysis to=browser.search code<|message|>{"query": "x"}<|call|>',
    "<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>final<|message|>cut he",
    # the model writing the tool's result itself: the turn ends before it
    (
        "<|channel|>commentary to=functions.f json<|message|>{}<|call|>"
        "<|start|>functions.f to=assistant<|channel|>commentary<|message|>forged<|end|>"
    ),
    # a deviation the lenient parse repairs (no <|start|>assistant before the next header)
    "<|channel|>analysis<|message|>x<|end|><|channel|>final<|message|>y<|return|>",
]
WILD = Path(__file__).parents[1] / "fixtures" / "wild" / "collected.jsonl"


def _wild() -> list[str]:
    rows = [json.loads(line) for line in WILD.read_text().splitlines() if line.strip()]
    return [row["text"] for row in rows if row["mode"] == "completion"]


ALL = FIXTURES + _wild()


def _tokens(text: str) -> list[int]:
    return load_encoding().encode(text, allowed_special="all")


def _ids() -> Any:
    counter = itertools.count()
    return lambda prefix: f"{prefix}_{next(counter)}"


def _call_ids(index: int) -> str:
    return f"call_{index}"


def _chunks(ids: list[int], cuts: list[int]) -> list[list[int]]:
    edges = sorted({0, len(ids), *(c % (len(ids) + 1) for c in cuts)})
    return [ids[a:b] for a, b in itertools.pairwise(edges)]


def _chat_stream(pieces: list[list[int]]) -> list[dict[str, Any]]:
    stream = ChatCompletionStream(completion_id="chatcmpl-1", created=1, id_factory=_call_ids)
    chunks = [chunk for piece in pieces for chunk in stream.feed_tokens(piece)]
    return chunks + stream.close()


def _responses_stream(pieces: list[list[int]], truncated: bool = False) -> list[dict[str, Any]]:
    stream = ResponsesStream(ids=_ids(), created_at=1.0)
    events = [event for piece in pieces for event in stream.feed_tokens(piece)]
    return events + stream.close(truncated=truncated)


def _collect_responses(events: list[dict[str, Any]]) -> dict[str, str]:
    """Each item's text from its delta events alone."""
    texts: dict[str, str] = {}
    for event in events:
        if event["type"].endswith(".delta"):
            texts[event["item_id"]] = texts.get(event["item_id"], "") + event["delta"]
    return texts


def _item_text(item: dict[str, Any]) -> str:
    return item["arguments"] if item["type"] == "function_call" else item["content"][0]["text"]


def test_every_payload_is_one_the_sdk_accepts() -> None:
    for text in ALL:
        pieces = [[token] for token in _tokens(text)]
        for chunk in _chat_stream(pieces):
            check_chunk(chunk)
        events = _responses_stream(pieces)
        for event in events:
            check_event(event)
        assert [e["sequence_number"] for e in events] == list(range(len(events)))
        check_response(events[-1]["response"])


def test_responses_event_order() -> None:
    events = _responses_stream([_tokens(FIXTURES[2])])
    assert [e["type"] for e in events] == [
        "response.created",
        "response.in_progress",
        *[
            "response.output_item.added",
            "response.content_part.added",
            "response.reasoning_text.delta",
            "response.reasoning_text.done",
            "response.content_part.done",
            "response.output_item.done",
        ],
        *[
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
        ],
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    # An output that ends inside a message is cut only when the caller says so (the limit).
    ended = _responses_stream([_tokens(FIXTURES[4])])
    assert ended[-1]["type"] == "response.completed"
    cut = _responses_stream([_tokens(FIXTURES[4])], truncated=True)
    assert cut[-1]["type"] == "response.incomplete"


@given(
    text=st.sampled_from(ALL),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
)
def test_streaming_equals_whole_for_any_chunking(text: str, cuts: list[int]) -> None:
    ids = _tokens(text)
    pieces = _chunks(ids, cuts)
    # Responses: the last event carries the whole bridge's object; deltas rebuild each item.
    events = _responses_stream(pieces)
    whole = to_responses(ids, ids=_ids(), created_at=1.0)
    assert events[-1]["response"] == whole
    texts = _collect_responses(events)
    assert {item["id"]: _item_text(item) for item in whole["output"] if _item_text(item)} == texts
    # Chat Completions: the accumulated chunks equal the whole message, where there is one.
    collected = sdk_fold(_chat_stream(pieces))
    expected = to_chat_completion(ids, id_factory=_call_ids)
    assert collected["finish_reason"] == expected["finish_reason"]
    assert collected["message"] == {k: expected["message"][k] for k in collected["message"]}


def test_the_serving_loop_of_docs_serving_md_stops_at_the_call() -> None:
    ids = _tokens(FIXTURES[2]) + _tokens("<|start|>assistant<|channel|>final<|message|>never")
    stream = ResponsesStream(ids=_ids(), created_at=1.0)
    events, fed = [], 0
    for token_id in ids:
        events += stream.feed_tokens([token_id])
        fed += 1
        if stream.should_stop:
            break
    events += stream.close()
    assert fed == len(_tokens(FIXTURES[2]))  # stopped right after <|call|>
    assert events[-1]["type"] == "response.completed"
    assert events[-1]["response"] == to_responses(ids[:fed], ids=_ids(), created_at=1.0)


@pytest.mark.parametrize(
    "text",
    [
        "<|channel|>final<|message|><|return|>",
        "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>analysis<|message|>"
        "<|end|><|start|>assistant<|channel|>analysis<|message|>y<|end|>"
        "<|start|>assistant<|channel|>final<|message|>z<|return|>",
    ],
)
def test_empty_messages_add_nothing_to_the_stream(text: str) -> None:
    # The whole bridge joins only non-empty texts (an empty answer is null, no blank line);
    # the chunks must accumulate to the same message.
    ids = _tokens(text)
    collected = sdk_fold(_chat_stream([[i] for i in ids]))
    expected = to_chat_completion(ids, lenient=True, id_factory=_call_ids)
    assert collected["message"] == {k: expected["message"][k] for k in collected["message"]}
