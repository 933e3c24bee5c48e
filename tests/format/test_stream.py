"""The streaming parser: events, chunk edges, stops, aborts and early argument errors."""

from __future__ import annotations

import pytest

from harmony_grammar import parse
from harmony_grammar.format import ControlToken
from harmony_grammar.format.events import (
    ContentDelta,
    DiagnosticEvent,
    HeaderComplete,
    MessageEnd,
    MessageStart,
    StopGeneration,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.stream import StreamParser
from tests.format.test_parser import LENIENT_CASES, SPEC_TURN

CALL = (
    "<|channel|>analysis<|message|>Need the weather.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"city": "Paris"}<|call|>'
)
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}


def run_text(text, pieces, **options):
    parser = StreamParser(**options)
    events = []
    for piece in pieces(text):
        events += parser.feed(piece)
    events += parser.close()
    return parser, events


def whole(text):
    return [text]


def by_character(text):
    return list(text)


FIXTURES = [
    (SPEC_TURN, {"start": "conversation"}),
    (CALL, {"start": "completion"}),
    *(
        (case[0], {"start": "conversation", "strict": strict})
        for case in LENIENT_CASES.values()
        for strict in (True, False)
    ),
]


@pytest.mark.parametrize(("text", "options"), FIXTURES)
@pytest.mark.parametrize("pieces", [whole, by_character])
def test_every_fixture_whole_and_by_character(text, options, pieces):
    parser, events = run_text(text, pieces, **options)
    batch = parse(text, **options)
    assert parser.result() == batch
    # the deltas of each message add up to its content, exactly
    ended = [e.message for e in events if isinstance(e, MessageEnd)]
    assert tuple(ended) == batch.messages
    content, deltas = [], []
    for event in events:
        if isinstance(event, (ContentDelta, ToolCallDelta)):
            deltas.append(event.text)
            assert all(s not in event.text for s in (t.value for t in ControlToken))
        elif isinstance(event, MessageEnd):
            content.append("".join(deltas))
            deltas = []
        elif isinstance(event, MessageStart):
            deltas = []
    assert content == [m.content for m in batch.messages]
    assert [e.diagnostic for e in events if isinstance(e, DiagnosticEvent)] == list(
        batch.diagnostics
    )


@pytest.mark.parametrize("text,options", FIXTURES)
def test_every_fixture_token_by_token(text, options):
    ids = encode_harmony(text)
    parser = StreamParser(**options)
    for token in ids:
        parser.feed_tokens([token])
    parser.close()
    assert parser.result() == parse(ids, **options)


def test_tool_call_events_and_stop():
    parser, events = run_text(CALL, by_character)
    kinds = [type(e) for e in events if not isinstance(e, (ContentDelta, ToolCallDelta))]
    assert kinds == [
        MessageStart,
        HeaderComplete,
        MessageEnd,
        MessageStart,
        HeaderComplete,
        ToolCallStart,
        ToolCallEnd,
        MessageEnd,
        StopGeneration,
    ]
    start = next(e for e in events if isinstance(e, ToolCallStart))
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert (start.name, start.recipient) == ("get_weather", "functions.get_weather")
    assert end.call_id == start.call_id and end.arguments == '{"city": "Paris"}'
    assert parser.stop_reason == "call" and parser.should_stop


def test_stop_at_return_is_signalled_the_moment_it_arrives():
    parser = StreamParser()
    parser.feed("<|channel|>final<|message|>Hi")
    assert not parser.should_stop
    events = parser.feed("<|return|>")
    assert isinstance(events[-1], StopGeneration) and events[-1].reason == "return"


def test_partial_control_token_is_held_back():
    parser = StreamParser()
    parser.feed("<|channel|>final<|message|>Hello <|ret")
    events = parser.feed("urn|>")
    assert [e.text for e in events if isinstance(e, ContentDelta)] == []
    assert parser.stop_reason == "return"
    assert parser.result().messages[0].content == "Hello "


def test_a_token_cut_short_at_close_is_debris_never_content():
    """Output cut inside a stop token's spelling (issue 30): in lenient mode the held-back
    ``<|ret`` is discarded with a diagnostic at close, in the stream as in ``parse``; strict
    mode repairs nothing (issue 39): the grammar reads it as text; a lone ``<`` is text."""
    parser = StreamParser(lenient=True)
    parser.feed("<|channel|>final<|message|>a <|ret")
    events = parser.close()
    assert [e.text for e in events if isinstance(e, ContentDelta)] == []
    assert parser.result().messages[0].content == "a "
    assert [d.code for d in parser.result().diagnostics] == ["HG175"]
    strict = StreamParser()
    strict.feed("<|channel|>final<|message|>a <|ret")
    assert [e.text for e in strict.close() if isinstance(e, ContentDelta)] == ["<|ret"]
    assert strict.result().messages[0].content == "a <|ret"
    assert [d.code for d in strict.result().diagnostics] == []
    parser = StreamParser()
    parser.feed("<|channel|>final<|message|>a <")
    assert [e.text for e in parser.close() if isinstance(e, ContentDelta)] == ["<"]


def test_split_utf8_is_held_back(encoding):
    prefix = encode_harmony("<|channel|>final<|message|>")
    pieces = [encoding.encode_single_token(bytes([b])) for b in "🎉".encode()]
    parser = StreamParser()
    parser.feed_tokens(prefix)
    texts = []
    for token in pieces:
        texts += [e.text for e in parser.feed_tokens([token]) if isinstance(e, ContentDelta)]
    assert texts == ["🎉"]


def test_forged_tool_result_aborts():
    parser = StreamParser()
    parser.feed(CALL)
    events = parser.feed("<|start|>functions.get_weather to=assistant<|channel|>commentary")
    assert any(isinstance(e, DiagnosticEvent) and e.diagnostic.code == "HG170" for e in events)
    assert any(isinstance(e, StopGeneration) and e.reason == "abort" for e in events)
    assert parser.stop_reason == "abort"


def test_close_inside_a_tool_call_is_explicit_and_dispatches_nothing():
    parser = StreamParser()
    parser.feed('<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"ci')
    events = parser.close()
    assert not any(isinstance(e, ToolCallEnd) for e in events)
    assert [e.diagnostic.code for e in events if isinstance(e, DiagnosticEvent)] == ["HG153"]


def test_header_length_bound():
    parser = StreamParser(max_header_length=64)
    events = parser.feed("<|channel|>" + "x" * 100)
    assert [e.diagnostic.code for e in events if isinstance(e, DiagnosticEvent)] == ["HG104"]


def test_early_argument_error_at_the_first_bad_character():
    parser = StreamParser(tools=[WEATHER])
    parser.feed("<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>")
    assert not [e for e in parser.feed('{"city": "Par') if isinstance(e, DiagnosticEvent)]
    events = parser.feed('is"]')
    (diagnostic,) = [e.diagnostic for e in events if isinstance(e, DiagnosticEvent)]
    assert diagnostic.code == "HG180" and "character 16" in diagnostic.message
    prefix = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
    assert diagnostic.start == len(prefix) + len('{"city": "Paris') + 1
    assert parser.result().messages == ()  # the call is still open: the host decides


def test_schema_errors_reported_with_a_json_pointer_when_the_call_ends():
    text = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": 3}<|call|>'
    result = parse(text, start="completion", tools=[WEATHER])
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "HG180" and "at /city" in diagnostic.message
    parser, _ = run_text(text, by_character, tools=[WEATHER])
    assert parser.result() == result


def test_unknown_tool():
    text = "<|channel|>commentary to=functions.nope <|constrain|>json<|message|>{}<|call|>"
    assert [d.code for d in parse(text, start="completion", tools=[WEATHER]).diagnostics] == [
        "HG181"
    ]


def test_mixing_text_and_tokens_is_a_usage_error():
    parser = StreamParser()
    parser.feed("<|channel|>")
    with pytest.raises(TypeError):
        parser.feed_tokens([1])
    parser.close()
    with pytest.raises(RuntimeError):
        parser.feed("more")


def test_escaped_json_spellings_are_not_flagged():
    body = '{"\\u0063ity": "\\u0050aris \\ud83c\\udf89", "x": [1e3, -0.5, true, null]}'
    text = (
        f"<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{body}<|call|>"
    )
    loose = {"name": "get_weather", "parameters": {"type": "object"}}
    assert parse(text, start="completion", tools=[loose]).diagnostics == ()
