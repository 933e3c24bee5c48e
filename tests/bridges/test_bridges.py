"""The whole bridges are the stream bridges fed everything and closed (issue 25, item 4).

Each disagreement the two used to have is pinned here, then a property test checks the rule
on random completions, well-formed and mangled, in random chunks of text and of token ids:
the whole Chat Completions message is what the chunks add up to, and the whole Responses
object is what the last event carries, its items rebuilt by the deltas.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harmony_grammar.bridges.chat import ChatCompletionStream, accumulate, to_chat_completion
from harmony_grammar.bridges.responses import ResponsesStream, to_responses
from harmony_grammar.cli.main import main
from harmony_grammar.cli.streams import text_pieces
from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.tokens import ControlToken
from harmony_grammar.rendering.chat import ChatCompletionError

from ..support.openai_sdk import check_chunk, check_event, check_response

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
STRIPPED_CALL = 'assistantcommentary to=functions.get_weather json{"city":"Paris"}'
ANALYSIS = "<|channel|>analysis<|message|>Need the weather.<|end|>"
CALL_HEAD = "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
OTHER_CALL = "<|start|>assistant<|channel|>commentary to=functions.other json<|message|>{}<|call|>"


def _ids() -> Any:
    counter = itertools.count()
    return lambda prefix: f"{prefix}_{next(counter)}"


def _call_ids(index: int) -> str:
    return f"call_{index}"


def _chat_stream(pieces: list[Any], *, truncated: bool = False, **kw: Any) -> dict[str, Any]:
    stream = ChatCompletionStream(completion_id="chatcmpl-1", created=1, id_factory=_call_ids, **kw)
    chunks = []
    for piece in pieces:
        chunks += stream.feed(piece) if isinstance(piece, str) else stream.feed_tokens(piece)
    chunks += stream.close(truncated=truncated)
    for chunk in chunks:
        check_chunk(chunk)
    collected = accumulate(chunks)
    if stream.diagnostics:
        collected["diagnostics"] = stream.diagnostics
    return collected


def _responses_stream(
    pieces: list[Any], *, truncated: bool = False, **kw: Any
) -> list[dict[str, Any]]:
    stream = ResponsesStream(ids=_ids(), created_at=1.0, **kw)
    events = []
    for piece in pieces:
        events += stream.feed(piece) if isinstance(piece, str) else stream.feed_tokens(piece)
    return events + stream.close(truncated=truncated)


def _whole_responses(source: Any, *, truncated: bool = False, **kw: Any) -> dict[str, Any]:
    return to_responses(source, ids=_ids(), created_at=1.0, truncated=truncated, **kw)


# -- the four disagreements ------------------------------------------------------------------


def test_lenient_whole_chat_reads_what_the_stream_reads() -> None:
    # An error the lenient parse cannot repair (a call to a function the request does not
    # declare): the stream reads on past it, and so does the whole bridge (it used to
    # raise); strict still refuses it.
    text = ANALYSIS + OTHER_CALL
    whole = to_chat_completion(text, tools=[WEATHER], id_factory=_call_ids)
    assert whole == _chat_stream([text], tools=[WEATHER])
    assert [c["function"]["name"] for c in whole["message"]["tool_calls"]] == ["other"]
    assert whole["finish_reason"] == "tool_calls"
    assert ("HG181", "error") in [(d["code"], d["severity"]) for d in whole["diagnostics"]]
    with pytest.raises(ChatCompletionError, match="HG181 at line 1"):
        to_chat_completion(text, tools=[WEATHER], lenient=False)


def test_streamed_diagnostics_carry_the_text_positions(tmp_path: Path, capsys: Any) -> None:
    # `to-responses --stream` on a text file used to feed ids: every diagnostic then carried
    # a token span (0-20) and no line or column. Fed as text, it matches the whole response.
    path = tmp_path / "completion.txt"
    path.write_text(
        "analysis I need the weather.assistantcommentary to=functions.get_weather "
        'json{"city":"Paris"}\n second line <|end|>',
        encoding="utf-8",
    )
    status = main(["to-responses", str(path)])
    whole = json.loads(capsys.readouterr().out)
    assert main(["to-responses", str(path), "--stream"]) == status
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last["response"]["diagnostics"] == whole["diagnostics"]
    assert whole["diagnostics"] and all(d["line"] for d in whole["diagnostics"])
    assert len({(d["start"], d["end"]) for d in whole["diagnostics"]}) > 1
    assert "".join(text_pieces(path.read_text(encoding="utf-8"))) == path.read_text(
        encoding="utf-8"
    )


def test_a_stripped_call_is_a_call_in_both_bridges(tmp_path: Path, capsys: Any) -> None:
    chat = to_chat_completion(STRIPPED_CALL, id_factory=_call_ids)
    responses = _whole_responses(STRIPPED_CALL)
    assert chat["finish_reason"] == "tool_calls"
    assert responses["status"] == "completed"  # it used to be incomplete
    assert [(i["type"], i["status"]) for i in responses["output"]] == [
        ("function_call", "completed")
    ]
    assert chat["message"]["tool_calls"][0]["function"]["arguments"] == '{"city":"Paris"}'
    path = tmp_path / "stripped.txt"
    path.write_text(STRIPPED_CALL, encoding="utf-8")
    assert main(["to-chat", str(path), "--lenient"]) == 0
    assert json.loads(capsys.readouterr().out)["finish_reason"] == "tool_calls"
    assert main(["to-responses", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "completed"


def test_a_failed_response_keeps_the_items_the_stream_carried() -> None:
    text = ANALYSIS + OTHER_CALL
    events = _responses_stream([text], tools=[WEATHER])
    whole = _whole_responses(text, tools=[WEATHER])
    assert whole["status"] == "failed" and events[-1]["type"] == "response.failed"
    assert whole == events[-1]["response"]
    assert [item["type"] for item in whole["output"]] == ["reasoning", "function_call"]
    added = [e["item"]["id"] for e in events if e["type"] == "response.output_item.added"]
    assert [item["id"] for item in whole["output"]] == added
    # The input the issue found: a header the parse cannot finish. The stream had sent its
    # item; the whole response used to say output: [].
    mangled = "<|message|><|constrain|>"
    whole = _whole_responses(mangled)
    assert whole == _responses_stream([mangled])[-1]["response"]
    assert len(whole["output"]) == 1


# -- how the turn ended ----------------------------------------------------------------------


def test_a_call_cut_at_the_token_limit_is_never_sent() -> None:
    text = ANALYSIS + CALL_HEAD + '<|message|>{"city": "Par'
    ids = encode_harmony(text)
    # Unknown cause: the server dropped the <|call|>; the host must run the call.
    assert to_chat_completion(ids)["finish_reason"] == "tool_calls"
    # At the token limit: no tool call at all, in the stream or the whole.
    cut = to_chat_completion(ids, truncated=True, id_factory=_call_ids)
    assert cut["message"]["tool_calls"] == [] and cut["finish_reason"] == "length"
    assert cut["message"]["reasoning_content"] == "Need the weather."
    assert _chat_stream([[i] for i in ids], truncated=True) == cut
    responses = _whole_responses(ids, truncated=True)
    assert responses["status"] == "incomplete"
    assert [(i["type"], i["status"]) for i in responses["output"]] == [
        ("reasoning", "completed"),
        ("function_call", "incomplete"),
    ]
    assert _responses_stream([ids], truncated=True)[-1]["response"] == responses


def test_a_call_is_one_chunk_once_its_message_ends() -> None:
    text = ANALYSIS + CALL_HEAD + '<|message|>{"city": "Paris"}<|call|>'
    stream = ChatCompletionStream(id_factory=_call_ids)
    sent = [chunk for token in encode_harmony(text) for chunk in stream.feed_tokens([token])]
    calls = [
        c["choices"][0]["delta"]["tool_calls"]
        for c in sent
        if "tool_calls" in c["choices"][0]["delta"]
    ]
    assert calls == [
        [
            {
                "index": 0,
                "id": "call_0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ]
    ]
    assert stream.should_stop
    assert stream.close()[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert stream.close() == []  # closing twice adds nothing


def test_stripped_text_is_not_a_cut_unless_truncated() -> None:
    text = "analysisThe user wants a word.assistantfinalfour"
    assert to_chat_completion(text)["finish_reason"] == "stop"
    assert _whole_responses(text)["status"] == "completed"
    assert to_chat_completion(text, truncated=True)["finish_reason"] == "length"
    responses = _whole_responses(text, truncated=True)
    assert responses["status"] == "incomplete"
    assert responses["output"][-1]["status"] == "incomplete"


# -- the property: whole == streamed, for any completion and any chunking ---------------------

_WORDS = st.sampled_from(
    ["Hi", " there", "\n", "é", "👋", "{", "}", '"x"', "<", "|", "to=", " json", "assistant"]
)
_TEXT = st.lists(_WORDS, max_size=6).map("".join)
_ARGS = st.dictionaries(st.sampled_from(["city", "n", "ü"]), st.integers() | _TEXT, max_size=2)


@st.composite
def _message(draw: Any, last: bool) -> str:
    kind = draw(st.sampled_from(["analysis", "final", "preamble", "call", "builtin"]))
    if kind in ("call", "builtin"):
        recipient = "functions.get_weather" if kind == "call" else "python"
        ctype = draw(st.sampled_from([" <|constrain|>json", " json", "<|constrain|>json", ""]))
        channel = "commentary" if kind == "call" else "analysis"
        if draw(st.booleans()):  # the recipient in the role section, as openai-harmony writes
            head = f" to={recipient}<|channel|>{channel}{ctype}"
        else:
            head = f"<|channel|>{channel} to={recipient}{ctype}"
        body, end = json.dumps(draw(_ARGS), ensure_ascii=False), "<|call|>"
    else:
        channel = {"analysis": "analysis", "final": "final", "preamble": "commentary"}[kind]
        head, body = f"<|channel|>{channel}", draw(_TEXT)
        end = "<|return|>" if kind == "final" and last else "<|end|>"
    if last:
        end = draw(st.sampled_from([end, ""]))  # the server may drop the stop token
    return f"{head}<|message|>{body}{end}"


@st.composite
def completions(draw: Any) -> str:
    """A completion (after ``<|start|>assistant``), then maybe mangled the ways real output is."""
    count = draw(st.integers(1, 4))
    messages = [draw(_message(last=i == count - 1)) for i in range(count)]
    text = "<|start|>assistant".join(messages)
    mangle = draw(st.sampled_from(["none", "strip", "drop", "junk", "cut", "forge"]))
    if mangle == "strip":  # a detokenizer with skip_special_tokens
        for token in ControlToken:
            text = text.replace(token.value, "")
    elif mangle == "drop":
        spellings = [t.value for t in ControlToken if t.value in text]
        if spellings:
            spelling = draw(st.sampled_from(spellings))
            nth = draw(st.integers(0, text.count(spelling) - 1))
            at = [i for i in range(len(text)) if text.startswith(spelling, i)][nth]
            text = text[:at] + text[at + len(spelling) :]
    elif mangle == "junk":
        at = draw(st.integers(0, len(text)))
        text = (
            text[:at]
            + draw(st.sampled_from(["??", " to=functions.f ", "<|end|>", "x"]))
            + text[at:]
        )
    elif mangle == "cut":
        text = text[: draw(st.integers(0, len(text)))]
    elif mangle == "forge":  # the model writes the tool's result itself
        text += (
            "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{}<|end|>"
        )
    return text


def _split(units: Any, cuts: list[int]) -> list[Any]:
    edges = sorted({0, len(units), *(c % (len(units) + 1) for c in cuts)})
    # An empty completion is still fed once, so the stream knows text from ids.
    return [units[a:b] for a, b in itertools.pairwise(edges)] or [units]


def _check_whole_equals_streamed(
    source: Any, pieces: list[Any], truncated: bool, tools: Any
) -> None:
    whole = to_chat_completion(source, id_factory=_call_ids, truncated=truncated, tools=tools)
    assert _chat_stream(pieces, truncated=truncated, tools=tools) == whole
    events = _responses_stream(pieces, truncated=truncated, tools=tools)
    response = _whole_responses(source, truncated=truncated, tools=tools)
    assert events[-1]["response"] == response
    check_response(response)
    texts: dict[str, str] = {}
    for event in events:
        check_event(event)
        if event["type"].endswith(".delta"):
            texts[event["item_id"]] = texts.get(event["item_id"], "") + event["delta"]
    for item in response["output"]:
        text = item["arguments"] if item["type"] == "function_call" else item["content"][0]["text"]
        assert texts.get(item["id"], "") == text
    # One mapping of messages to kinds and one end rule, for both APIs.
    calls = [
        i for i in response["output"] if i["type"] == "function_call" and i["status"] == "completed"
    ]
    assert [c["name"] for c in calls] == [
        c["function"]["name"] for c in whole["message"]["tool_calls"]
    ]
    assert [c["arguments"] for c in calls] == [
        c["function"]["arguments"] for c in whole["message"]["tool_calls"]
    ]
    ended = {"length": "incomplete", "tool_calls": "completed", "stop": "completed"}
    assert response["status"] in ("failed", ended[whole["finish_reason"]])


# Half the profile's budget: each example runs both bridges whole and streamed.
@settings(max_examples=settings.default.max_examples // 2)
@given(
    text=completions(),
    cuts=st.lists(st.integers(0, 10_000), max_size=10),
    truncated=st.booleans(),
    tools=st.sampled_from([None, [WEATHER]]),
)
def test_whole_equals_streamed_text(
    text: str, cuts: list[int], truncated: bool, tools: Any
) -> None:
    _check_whole_equals_streamed(text, _split(text, cuts), truncated, tools)


# Half the profile's budget: each example runs both bridges whole and streamed.
@settings(max_examples=settings.default.max_examples // 2)
@given(
    text=completions(),
    cuts=st.lists(st.integers(0, 10_000), max_size=10),
    truncated=st.booleans(),
    tools=st.sampled_from([None, [WEATHER]]),
)
def test_whole_equals_streamed_token_ids(
    text: str, cuts: list[int], truncated: bool, tools: Any
) -> None:
    ids = encode_harmony(text)
    _check_whole_equals_streamed(ids, _split(ids, cuts), truncated, tools)


def test_the_cli_reads_a_truncated_output_and_fails_on_an_error(
    tmp_path: Path, capsys: Any
) -> None:
    cut = tmp_path / "cut.txt"
    cut.write_text(ANALYSIS + CALL_HEAD + '<|message|>{"city": "Par', encoding="utf-8")
    assert main(["to-chat", str(cut), "--truncated"]) == 0
    response = json.loads(capsys.readouterr().out)
    assert response["finish_reason"] == "length" and response["message"]["tool_calls"] == []
    assert main(["to-chat", str(cut), "--stream", "--truncated"]) == 0
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last["choices"][0]["finish_reason"] == "length"
    assert main(["to-responses", str(cut), "--stream", "--truncated"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["type"] == "response.incomplete"
    # Lenient to-chat prints what it read, and an error it could not repair fails it (exit 1,
    # one line), as --stream and to-responses do.
    other = tmp_path / "other.txt"
    other.write_text(ANALYSIS + OTHER_CALL, encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([WEATHER]), encoding="utf-8")
    for stream in ([], ["--stream"]):
        assert main(["to-chat", str(other), "--lenient", "--tools", str(tools), *stream]) == 1
        out, err = capsys.readouterr()
        assert out and "HG181" in err and err.count("\n") == 1


_BROKEN_COMMENTARY = st.sampled_from(["", "...", "?", ":", " 2?", "\n"])
#: Reasoning as models write it: a capitalised sentence (never a role, channel, content type
#: or ``to=``, which a header would read as its field), with digits, accents and punctuation.
_REASONING_TEXT = st.from_regex(r"[A-ZÉ][a-zé]{1,8}( [a-zé0-9?.,:;'()-]{1,8}){0,6}", fullmatch=True)


@given(glue=_BROKEN_COMMENTARY, text=_REASONING_TEXT, ids=st.booleans())
def test_commentary_begun_in_a_broken_header_is_reasoning(glue: str, text: str, ids: bool) -> None:
    """Text a ``commentary`` header with no ``<|message|>`` ran into (r23, r25 in the wild
    corpus) is shown as reasoning, never as the answer's content; a preamble after a whole
    ``<|channel|>commentary<|message|>`` header stays content."""
    broken = f"<|channel|>commentary{glue} {text}<|end|><|start|>assistant<|channel|>final<|message|>No"
    whole = f"<|channel|>commentary<|message|>{text}<|end|><|start|>assistant<|channel|>final<|message|>No"
    for source, in_content in ((broken, False), (whole, True)):
        given_source = encode_harmony(source) if ids else source
        chat = to_chat_completion(given_source)["message"]
        kinds = [item["type"] for item in to_responses(given_source)["output"]]
        where = chat["content"] if in_content else chat["reasoning_content"]
        assert "".join(text.split()) in "".join((where or "").split()), (source, chat)
        assert (chat["content"] == "No") is not in_content, (source, chat)
        assert kinds == (["message", "message"] if in_content else ["reasoning", "message"])
