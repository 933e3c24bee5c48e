"""One answer for every chunking (issue 30, item 4): what the bridges and the gateway's runs
show, and every diagnostic's position, never depend on where chunks or network reads end.

The inputs are the alphabet fuzzer's (``tests/support/harmony_alphabet.py``), the mangler's
completions, every mangling and header shape of ``tests/support/mangler.py``, and the cases
that used to move: text after a stop token, a partial ``<|call|`` held back at a chunk's end,
and a call checked against ``tools=`` (HG180 with token ids). Each is fed whole, in random
chunks and, for the short fixed cases, split at every point, as text and as token ids, with
and without ``tools=``; the streamed bridges are also checked against the whole ones
(``to_chat_completion``, ``to_responses``), and the gateway's runs against one read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from harmony_grammar import ChatCompletionStream, ResponsesStream
from harmony_grammar.bridges.chat import accumulate
from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.gateway.backend import Output
from harmony_grammar.gateway.chat.protocol import plan_chat
from harmony_grammar.gateway.chat.serving import ChatRun, chat_completion
from harmony_grammar.gateway.plan import Limits
from harmony_grammar.gateway.responses.protocol import plan_responses
from harmony_grammar.gateway.responses.serving import ResponsesRun

from ..format.test_field_conservation import PIECES, PROPERTY
from ..support.harmony_alphabet import as_ids, as_text
from ..support.mangler import ISSUE_EXAMPLES, MANGLINGS, mangled
from .test_bridges import _check_whole_equals_streamed

CUTS = st.lists(st.integers(0, 10**6), max_size=6)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "parameters": {
                "type": "object",
                "properties": {"q": {"type": "string"}},
                "required": ["q"],
                "additionalProperties": False,
            },
        },
    }
]
CALL = "<|channel|>commentary to=functions.lookup <|constrain|>json<|message|>"
CASES = [
    "<|channel|>final<|message|>Hi<|return|>tail after the stop",
    "<|channel|>final<|message|>Hi<|return|><|start|>assistant<|channel|>final<|message|>again",
    CALL + '{"q":"tides"}<|call|>commentary<|channel|>final<|message|>more',
    CALL + '{"q":"tides"}<|call|',
    CALL + '{"q":"tides"}<|call',
    "<|channel|>final<|message|>Hi<|call|",
    "<|channel|>final<|message|>a <|call|x b<|return|>",
    CALL + '{"q": 3, "extra": true}<|call|>',
    CALL + '{"q": "a"}} trailing<|call|>',
    CALL + "[1, 2]<|call|>",
    "<|channel|>commentary to=functions.nope json<|message|>{}<|call|>",
    *(text for text, start in ISSUE_EXAMPLES if start == "completion"),
]


def _chunks(source: Sequence[Any], cuts: Sequence[int]) -> list[Sequence[Any]]:
    """``source`` cut at ``cuts``. An empty source is one empty chunk: a stream fed nothing at
    all cannot know whether its input was text or token ids (diagnostics on ids have no line),
    so the whole reading (one ``feed_tokens([])``) is compared with the same single feed."""
    if not source:
        return [source]
    points = sorted({c % (len(source) + 1) for c in cuts} | {0, len(source)})
    return [source[a:b] for a, b in zip(points, points[1:])]


def _counter(prefix: str = "id") -> Any:
    count = iter(range(10**9))
    return lambda *_: f"{prefix}_{next(count)}"


def _chat(chunks: Sequence[Sequence[Any]], tools: Any) -> dict[str, Any]:
    stream = ChatCompletionStream(tools=tools, created=0, completion_id="c", id_factory=_counter())
    out: list[dict[str, Any]] = []
    for chunk in chunks:
        out += stream.feed(chunk) if isinstance(chunk, str) else stream.feed_tokens(chunk)
    out += stream.close()
    return {**accumulate(out), "diagnostics": stream.diagnostics}


def _responses(chunks: Sequence[Sequence[Any]], tools: Any) -> dict[str, Any]:
    stream = ResponsesStream(tools=tools, created_at=0, ids=_counter())
    events: list[dict[str, Any]] = []
    for chunk in chunks:
        events += stream.feed(chunk) if isinstance(chunk, str) else stream.feed_tokens(chunk)
    events += stream.close()
    assert events[-1]["response"] == stream.response()
    return stream.response()


def _assert_bridges_agree(source: str | list[int], chunkings: list[list[Any]], tools: Any) -> None:
    whole_chat = _chat([source], tools)
    whole_responses = _responses([source], tools)
    for chunks in chunkings:
        assert _chat(chunks, tools) == whole_chat, (source, chunks)
        assert _responses(chunks, tools) == whole_responses, (source, chunks)


@PROPERTY
@given(PIECES, CUTS, st.booleans())
def test_bridges_give_one_answer_for_every_chunking_of_fuzz(pieces, cuts, tools):
    for source in (as_text(pieces), as_ids(pieces)):
        _assert_bridges_agree(source, [_chunks(source, cuts)], TOOLS if tools else None)


def _mangled_completion(seed: int, kind: str) -> str:
    return mangled(seed, kind).text


MANGLED = st.builds(_mangled_completion, st.integers(0, 2**32), st.sampled_from(sorted(MANGLINGS)))


@PROPERTY
@given(MANGLED, CUTS, st.booleans())
def test_bridges_give_one_answer_for_every_chunking_of_manglings(text, cuts, tools):
    for source in (text, encode_harmony(text)):
        _assert_bridges_agree(source, [_chunks(source, cuts)], TOOLS if tools else None)


@PROPERTY
@given(st.one_of(PIECES.map(as_text), MANGLED), CUTS, st.booleans(), st.booleans(), st.booleans())
def test_streamed_bridges_equal_the_whole_ones(text, cuts, ids, truncated, tools):
    """``to_chat_completion`` and ``to_responses`` on the whole output are what the streams
    add up to in any chunks: content, calls, finish, and every diagnostic with its position."""
    source = encode_harmony(text) if ids else text
    _check_whole_equals_streamed(source, _chunks(source, cuts), truncated, TOOLS if tools else None)


@pytest.mark.parametrize("tools", [None, TOOLS])
@pytest.mark.parametrize("text", CASES)
def test_bridges_give_one_answer_at_every_split(text, tools):
    for source in (text, encode_harmony(text)):
        splits = [[source[:at], source[at:]] for at in range(len(source) + 1)]
        ones = [source[i : i + 1] for i in range(len(source))]
        _assert_bridges_agree(source, [*splits, ones], tools)


# ---------------------------------------------------------------------------- the gateway
def _served(run: ChatRun | ResponsesRun, reads: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    """What the gateway sends for engine ``reads``: its loop (``gateway/app.py``) reads on
    until the run says the turn is over, then closes the run."""
    out: list[dict[str, Any]] = []
    for read in reads:
        output = Output(text=read) if isinstance(read, str) else Output(ids=tuple(read))
        out += run.feed(output)
        if run.should_stop:
            break
    return out + run.close()


def _gateway_answers(
    reads: Sequence[Sequence[Any]], *, tools: bool = True
) -> tuple[dict[str, Any], dict[str, Any]]:
    messages = [{"role": "user", "content": "Tides?"}]
    request: dict[str, Any] = {"messages": messages, **({"tools": TOOLS} if tools else {})}
    chat = ChatRun(plan_chat(request, model="m", limits=Limits()))
    whole = chat_completion(_served(chat, reads))
    whole.pop("id"), whole.pop("created"), whole.pop("usage")
    for call in whole["choices"][0]["message"]["tool_calls"] or ():
        call.pop("id")
    flat = [{"type": "function", **TOOLS[0]["function"]}]
    asked: dict[str, Any] = {"input": "Tides?", **({"tools": flat} if tools else {})}
    responses = ResponsesRun(plan_responses(asked, model="m", limits=Limits()))
    _served(responses, reads)
    response = responses.response()
    for key in ("id", "created_at", "usage"):
        response.pop(key)
    for item in response["output"]:
        item.pop("id"), item.pop("call_id", None)
    return whole, response


@pytest.mark.parametrize("text", CASES)
def test_the_gateway_gives_one_answer_wherever_a_read_ends(text):
    """The gateway reads up to the stop token however the engine's reads fall: the messages,
    calls, items, finish and every diagnostic (with its position) are the same for every
    split of the output into two reads, and for one read of a unit each."""
    for source in (text, encode_harmony(text)):
        want = _gateway_answers([source])
        for at in range(len(source) + 1):
            assert _gateway_answers([source[:at], source[at:]]) == want, (source, at)
        assert _gateway_answers([source[i : i + 1] for i in range(len(source))]) == want


@PROPERTY
@given(st.one_of(PIECES.map(as_text), MANGLED), CUTS, st.booleans(), st.booleans())
# A forged tool result (HG170) ends the turn mid-read: the rest of that read is not read.
@example(text="<|start|>42<|start|><|start|>", cuts=[20], ids=False, tools=False)
@example(text="<|start|>42<|start|><|start|>", cuts=[3], ids=True, tools=True)
def test_the_gateway_gives_one_answer_for_every_chunking(text, cuts, ids, tools):
    """The same on the fuzzer's and the mangler's outputs, read in random pieces."""
    source = encode_harmony(text) if ids else text
    want = _gateway_answers([source], tools=tools)
    assert _gateway_answers(_chunks(source, cuts), tools=tools) == want, (source, cuts)


def test_the_gateway_reads_nothing_past_the_stop():
    chat, response = _gateway_answers(["<|channel|>final<|message|>Hi<|return|>tail"])
    assert chat["choices"][0]["message"]["content"] == "Hi"
    assert chat["choices"][0]["finish_reason"] == "stop"
    assert "diagnostics" not in chat
    assert [item["content"][0]["text"] for item in response["output"]] == ["Hi"]
    assert response["status"] == "completed"


@pytest.mark.parametrize("tail", ["<|call|", "<|call", "<|ca", "<|return|", "<|ret", "<|end|"])
@pytest.mark.parametrize("body", ['{"q":"tides"}', "Hello"])
def test_a_partial_stop_token_at_the_end_never_reaches_content(body, tail):
    """An output cut inside a control token's spelling (a text engine that stopped mid-token)
    shows the spelling nowhere: it was held back at every chunk's end, and at the end it is
    debris, not content or arguments."""
    head = CALL if body.startswith("{") else "<|channel|>final<|message|>"
    text = head + body + tail
    for chunks in ([text], [text[:-2], text[-2:]], list(text)):
        answer = _chat(chunks, None)
        message = answer["message"]
        shown = [
            message["content"] or "",
            *(c["function"]["arguments"] for c in message["tool_calls"]),
        ]
        assert all("<|" not in value for value in shown), (chunks, shown)
        assert body in shown
