"""Log-probabilities through the gateway's embedded backend, read back with the openai SDK.

The embedded backend draws every id itself, so it can say how likely each was: the tiny
random gpt-oss's distribution over the ids the grammar allowed (docs/serving.md,
"Log-probabilities"). The checks hold for any draw: the SDK parses every answer; the entries'
bytes spell the answer's text exactly; a greedy draw is the top alternative at every step;
streamed and whole answers agree; and asking for them never changes the answer.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("torch")
openai = pytest.importorskip("openai")

from harmony_grammar.gateway import GatewayConfig, serving  # noqa: E402

from ..support.serve_peers import deadline, tiny_client  # noqa: E402

ASK = [{"role": "user", "content": "Say something."}]
#: An answer bound to a format has no preamble: its content is one message's text.
FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "answer",
        "schema": {
            "type": "object",
            "properties": {"mood": {"enum": ["calm", "busy"]}},
            "required": ["mood"],
            "additionalProperties": False,
        },
    },
}
SEEDS = range(3)


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    with deadline(300):
        yield


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with tiny_client() as tiny:
        yield tiny


def _spelled(entries: Any) -> bytes:
    return b"".join(bytes(entry.bytes) for entry in entries)


def _well_formed(entries: Any, top: int) -> None:
    for entry in entries:
        assert entry.logprob <= 0.0
        values = [alt.logprob for alt in entry.top_logprobs]
        assert len(values) <= top and values == sorted(values, reverse=True)
        assert math.fsum(math.exp(v) for v in values) <= 1.0 + 1e-9
        for alt in entry.top_logprobs:  # the drawn id among them: the same value
            if alt.token == entry.token and alt.bytes == entry.bytes:
                assert math.isclose(alt.logprob, entry.logprob)


@pytest.mark.parametrize("seed", SEEDS)
def test_chat_logprobs_spell_the_content_and_greedy_takes_the_top(client: Any, seed: int) -> None:
    answer = client.chat.completions.create(
        model="tiny",
        messages=ASK,
        response_format=FORMAT,
        logprobs=True,
        top_logprobs=3,
        temperature=0,
        seed=seed,
        max_tokens=80,
    )
    choice = answer.choices[0]
    assert choice.finish_reason == "stop"
    entries = choice.logprobs.content
    assert entries and _spelled(entries) == choice.message.content.encode()
    _well_formed(entries, 3)
    for entry in entries:  # temperature 0 takes the allowed id with the highest score
        best = entry.top_logprobs[0]
        assert (best.bytes, best.logprob) == (entry.bytes, entry.logprob)


@pytest.mark.parametrize("seed", SEEDS)
def test_chat_logprobs_streamed_equal_whole_and_leave_the_draw_alone(
    client: Any, seed: int
) -> None:
    request = {"model": "tiny", "messages": ASK, "seed": seed, "max_tokens": 60}
    whole = client.chat.completions.create(**request, logprobs=True, top_logprobs=2)
    plain = client.chat.completions.create(**request)
    assert plain.choices[0].logprobs is None
    assert plain.choices[0].message == whole.choices[0].message  # asking changes nothing
    streamed: list[Any] = []
    for chunk in client.chat.completions.create(
        **request, logprobs=True, top_logprobs=2, stream=True
    ):
        if chunk.choices and chunk.choices[0].logprobs is not None:
            streamed += chunk.choices[0].logprobs.content or []
    assert streamed == whole.choices[0].logprobs.content
    _well_formed(streamed, 2)


@pytest.mark.parametrize("seed", SEEDS)
def test_responses_logprobs_on_each_output_text(client: Any, seed: int) -> None:
    request = {
        "model": "tiny",
        "input": "Say something.",
        "include": ["message.output_text.logprobs"],
        "top_logprobs": 2,
        "temperature": 1.0,
        "max_output_tokens": 80,
    }
    events = list(client.responses.create(**request, stream=True, extra_body={"seed": seed}))
    final = events[-1].response
    whole = client.responses.create(**request, extra_body={"seed": seed})
    assert _without_ids(whole.output) == _without_ids(final.output)
    texts = [part for item in final.output if item.type == "message" for part in item.content]
    assert texts
    for part in texts:
        assert _spelled(part.logprobs) == part.text.encode()
        _well_formed(part.logprobs, 2)
    deltas: dict[str, list[Any]] = {}
    for event in events:
        if event.type == "response.output_text.delta":
            deltas.setdefault(event.item_id, []).extend(_dumped(event.logprobs))
        if event.type == "response.output_text.done":
            assert _dumped(event.logprobs) == deltas.setdefault(event.item_id, [])
    by_item = {
        item.id: _dumped(item.content[0].logprobs)
        for item in final.output
        if item.type == "message"
    }
    assert deltas == by_item


def _dumped(entries: Any) -> list[dict[str, Any]]:
    # The SDK has a Logprob class per event type: compared as data.
    return [entry.model_dump() for entry in entries]


def _without_ids(items: Any) -> list[dict[str, Any]]:
    return [item.model_dump(exclude={"id"}) for item in items]


def test_top_logprobs_without_logprobs_is_a_400(client: Any) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="tiny", messages=ASK, top_logprobs=2)
    assert raised.value.body["param"] == "top_logprobs"


def test_completions_logprobs_in_the_legacy_shape(client: Any) -> None:
    request = {"model": "tiny", "prompt": "Once upon a", "max_tokens": 12, "temperature": 0}
    whole = client.completions.create(**request, logprobs=3)
    choice = whole.choices[0]
    scores = choice.logprobs
    assert "".join(scores.tokens) == choice.text  # one entry per id, each id's own text
    assert len(scores.tokens) == len(scores.token_logprobs) == whole.usage.completion_tokens
    offsets = [sum(len(t) for t in scores.tokens[:i]) for i in range(len(scores.tokens))]
    assert scores.text_offset == offsets
    for own, top in zip(scores.token_logprobs, scores.top_logprobs, strict=True):
        assert len(top) <= 3 and own <= 0.0
        assert math.isclose(own, max(top.values()))  # greedy: the top alternative
    streamed = [
        chunk.choices[0].logprobs
        for chunk in client.completions.create(**request, logprobs=3, stream=True)
        if chunk.choices and chunk.choices[0].logprobs and chunk.choices[0].logprobs.tokens
    ]
    assert [t for part in streamed for t in part.token_logprobs] == scores.token_logprobs
    assert client.completions.create(**request).choices[0].logprobs is None


def test_the_replay_backend_refuses_logprobs(tmp_path: Any) -> None:
    from harmony_grammar.gateway import ReplayBackend

    path = tmp_path / "lines.jsonl"
    path.write_text('"<|channel|>final<|message|>Hi.<|return|>"\n', encoding="utf-8")
    with serving(ReplayBackend(path), GatewayConfig(model="tiny")) as url:
        replay = openai.OpenAI(base_url=url + "/v1", api_key="x", timeout=60, max_retries=0)
        with pytest.raises(openai.BadRequestError) as raised:
            replay.completions.create(model="tiny", prompt="x", max_tokens=3, logprobs=1)
        assert "replay" in raised.value.message and raised.value.body["param"] == "logprobs"
        with pytest.raises(openai.BadRequestError) as raised:
            replay.chat.completions.create(model="tiny", messages=ASK, logprobs=True)
        assert "replay" in raised.value.message


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("where", [0.3, 0.7])
def test_with_stop_strings_each_chunk_carries_exactly_its_delta(
    client: Any, seed: int, where: float
) -> None:
    """A ``stop`` string cuts the content; the entries cover the content returned only,
    chunk by chunk: each streamed chunk's entries spell its delta, and where the stop
    string begins inside an id, that chunk's entries spell a prefix of it (the id that
    also wrote the stop string is not reported). The stop is a piece of the unstopped
    answer (drawn greedily, so the stopped one writes the same ids up to it): the format's
    JSON, which every draw writes."""
    request: dict[str, Any] = {
        "model": "tiny", "messages": ASK, "temperature": 0, "seed": seed,
        "response_format": FORMAT, "max_tokens": 80,
    }  # fmt: skip
    content = client.chat.completions.create(**request).choices[0].message.content or ""
    at = int(len(content) * where)
    stop = content[at : at + 2]
    assert len(stop) == 2, content  # the format's JSON: at least {"mood":"calm"}
    request["stop"] = [stop]
    returned = content[: content.index(stop)]
    chunks = list(
        client.chat.completions.create(**request, logprobs=True, top_logprobs=1, stream=True)
    )
    deltas = [(c.choices[0].delta.content, c.choices[0].logprobs) for c in chunks if c.choices]
    texts = [(text, scores) for text, scores in deltas if text]
    assert "".join(text for text, _ in texts) == returned
    for index, (text, scores) in enumerate(texts):
        spelled = _spelled(scores.content if scores else [])
        if index < len(texts) - 1:
            assert spelled == text.encode(), (index, text, spelled)
        else:  # the last may end inside an id that also wrote the stop string
            assert text.encode().startswith(spelled), (text, spelled)
    whole = client.chat.completions.create(**request, logprobs=True, top_logprobs=1)
    assert whole.choices[0].message.content == returned
    streamed = [e for _, s in texts for e in (s.content if s else [])]
    assert whole.choices[0].logprobs.content == streamed
