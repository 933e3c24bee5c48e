"""The one fold of Chat Completions chunks (issue 34, item 5): :func:`bridges.chat.accumulate`,
which the gateway's whole answer (:func:`gateway.chat.serving.chat_completion`) is built on.

The oracle is the openai SDK's own accumulator (``ChatCompletionStreamState``, what
``client.chat.completions.stream`` folds chunks with): for any completion the fuzzer makes,
cut into random chunks, the bridge's fold and the gateway's whole answer equal what the SDK
makes of the same chunks, and the gateway's answer does not depend on where its reads end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar import ChatCompletionStream
from harmony_grammar.bridges.chat import accumulate
from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.gateway.backend import Output
from harmony_grammar.gateway.chat.protocol import plan_chat
from harmony_grammar.gateway.chat.serving import ChatRun, chat_completion
from harmony_grammar.gateway.plan import Limits

from ..format.test_field_conservation import PIECES, PROPERTY
from ..support.harmony_alphabet import as_ids, as_text
from ..support.openai_sdk import sdk_fold
from .test_bridge_chunking import CASES, CUTS, TOOLS, _chunks


def _streamed(chunks: Sequence[Any], tools: Any) -> list[dict[str, Any]]:
    stream = ChatCompletionStream(tools=tools, created=0, completion_id="c")
    out: list[dict[str, Any]] = []
    for chunk in chunks:
        out += stream.feed(chunk) if isinstance(chunk, str) else stream.feed_tokens(chunk)
    return out + stream.close()


def _served(reads: Sequence[Any], stream: bool) -> list[dict[str, Any]]:
    """The gateway's chunks for engine ``reads`` (its loop: read until the run says stop); a
    streamed request without ``stream_options`` gets no usage chunk."""
    body: dict[str, Any] = {"messages": [{"role": "user", "content": "Tides?"}], "tools": TOOLS}
    if stream:
        body["stream"] = True
    run = ChatRun(plan_chat(body, model="m", limits=Limits()))
    out: list[dict[str, Any]] = []
    for read in reads:
        out += run.feed(Output(text=read) if isinstance(read, str) else Output(ids=tuple(read)))
        if run.should_stop:
            break
    return out + run.close()


def _split(text: str, cuts: Sequence[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in zip(points, points[1:])] or [""]


def _resplit(chunks: Sequence[dict[str, Any]], cuts: Sequence[int]) -> list[dict[str, Any]]:
    """``chunks`` with each text and each call's arguments sent in pieces, as OpenAI streams
    them (a call's later pieces carry only its index and more arguments)."""
    out: list[dict[str, Any]] = []
    for chunk in chunks:
        choices = chunk.get("choices") or [{}]
        delta = choices[0].get("delta", {})
        field = next((f for f in ("content", "reasoning_content") if f in delta), None)
        calls = delta.get("tool_calls")
        if field is None and not calls:
            out.append(chunk)
            continue
        rest = {k: v for k, v in delta.items() if k not in (field, "tool_calls")}
        pieces: list[dict[str, Any]] = []
        if field is not None:
            pieces += [{**rest, field: piece} for piece in _split(delta[field], cuts)]
        for call in calls or ():
            if "function" not in call:  # a custom call is sent whole
                pieces.append({"tool_calls": [call]})
                continue
            first, *more = _split(call["function"]["arguments"], cuts)
            pieces.append(
                {"tool_calls": [{**call, "function": {**call["function"], "arguments": first}}]}
            )
            pieces += [
                {"tool_calls": [{"index": call["index"], "function": {"arguments": piece}}]}
                for piece in more
            ]
        for piece in pieces:
            out.append({**chunk, "choices": [{**choices[0], "delta": piece}]})
    return out


def _comparable(answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` without what is fresh for each run (the ids, the time) and its usage (the
    reasoning tokens are counted per read: a known gap, not the fold's)."""
    answer = {**answer, "id": None, "created": None, "usage": None}
    for call in answer["choices"][0]["message"]["tool_calls"] or ():
        call["id"] = None
    return answer


#: The fuzzer's completions, and the fixed cases (calls among them) with random cuts.
SOURCES = st.one_of(
    PIECES.flatmap(lambda pieces: st.sampled_from([as_text(pieces), as_ids(pieces)])),
    st.sampled_from(CASES).flatmap(lambda text: st.sampled_from([text, encode_harmony(text)])),
)


@PROPERTY
@given(SOURCES, CUTS, st.booleans())
def test_the_fold_is_what_the_openai_sdk_accumulates(source, cuts, tools):
    chunks = _streamed(_chunks(source, cuts), TOOLS if tools else None)
    assert accumulate(chunks) == sdk_fold(chunks), (source, cuts)
    resent = _resplit(chunks, cuts)
    assert accumulate(resent) == accumulate(chunks) == sdk_fold(resent), (source, cuts)


@PROPERTY
@given(SOURCES, CUTS, st.booleans())
def test_the_gateways_whole_answer_is_the_one_fold(source, cuts, stream):
    chunks = _served(_chunks(source, cuts), stream)
    whole = chat_completion(chunks)
    message = whole["choices"][0]["message"]
    want = sdk_fold(chunks)
    assert whole["choices"][0]["finish_reason"] == want["finish_reason"]
    assert message["reasoning"] == message["reasoning_content"]
    assert {k: v for k, v in message.items() if k != "reasoning"} == {
        **want["message"],
        "tool_calls": want["message"]["tool_calls"] or None,
    }
    assert (whole["usage"] is None) == stream
    # ... and the same whatever the reads were.
    once = chat_completion(_served([source], stream))
    assert _comparable(once) == _comparable(whole), (source, cuts)


def test_a_custom_call_is_folded_whole_beside_a_function_call() -> None:
    # A custom call is sent in one chunk ({"type": "custom", "custom": {name, input}}): the
    # fold keeps it as it came, and a function call after it still adds up its arguments.
    text = (
        "<|channel|>commentary to=functions.shell<|message|>ls -la<|call|>"
        "<|start|>assistant<|channel|>commentary to=functions.search <|constrain|>json"
        '<|message|>{"q": "tides"}<|call|>'
    )
    tools = [
        {"type": "custom", "name": "shell"},
        {"type": "function", "name": "search", "parameters": {"type": "object"}},
    ]
    stream = ChatCompletionStream(tools=tools, custom={"functions.shell"}, created=0)
    chunks = stream.feed(text) + stream.close()
    folded = accumulate(_resplit(chunks, [3, 9]))
    shell, search = folded["message"]["tool_calls"]
    assert {k: shell[k] for k in ("type", "custom")} == {
        "type": "custom",
        "custom": {"name": "shell", "input": "ls -la"},
    }
    assert search["function"] == {"name": "search", "arguments": '{"q": "tides"}'}
    assert folded["finish_reason"] == "tool_calls"
    whole = chat_completion([{**c, "id": "c", "model": "m"} for c in chunks])
    assert whole["choices"][0]["message"]["tool_calls"] == [shell, search]
