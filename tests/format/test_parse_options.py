"""ParseOptions (format/options.py): ``parse``, ``StreamParser`` and the bridges read the same
given the options as keywords, as one object, or as an object with keywords over it, on
random mixes of Harmony's alphabet; and each field reaches the engine."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.bridges.chat import ChatCompletionStream, to_chat_completion
from harmony_grammar.bridges.responses import ResponsesStream, to_responses
from harmony_grammar.format.events import ToolCallStart
from harmony_grammar.format.options import ParseOptions
from harmony_grammar.format.parser import parse
from harmony_grammar.format.stream import StreamParser

from ..support.harmony_alphabet import ALPHABET, KINDS, as_ids, as_text

PIECES = st.lists(
    st.sampled_from(KINDS).flatmap(lambda k: st.tuples(st.just(k), st.sampled_from(ALPHABET[k]))),
    min_size=1,
    max_size=24,
)
TOOLS = [
    {"name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
    {"name": "get_weather", "parameters": {"type": "object", "required": ["city"]}},
]
#: Parse keywords a caller may give (``call_id`` aside: a function, compared separately).
KEYWORDS = st.fixed_dictionaries(
    {},
    optional={
        "strict": st.booleans(),
        "role": st.sampled_from(["assistant", "user", "tool"]),
        "tools": st.sampled_from([None, TOOLS, {}]),
        "max_header_length": st.sampled_from([4, 16, 1024]),
        "stripped_dialect": st.sampled_from([None, True, False]),
    },
)
STARTS = st.sampled_from(["conversation", "completion", "prompt"])


def _split(keywords: dict[str, Any], data: st.DataObject) -> tuple[dict[str, Any], dict[str, Any]]:
    """The keywords in two parts: one for the object, the other given beside it."""
    names = sorted(keywords)
    inside = set(data.draw(st.lists(st.sampled_from(names), unique=True))) if names else set()
    return (
        {k: v for k, v in keywords.items() if k in inside},
        {k: v for k, v in keywords.items() if k not in inside},
    )


def _stream(source: str | list[int], parser: StreamParser) -> tuple[list[Any], Any]:
    """Everything a stream parser reports for ``source`` fed whole, then its result."""
    feed = parser.feed if isinstance(source, str) else parser.feed_tokens
    events = feed(source) + parser.close()  # type: ignore[arg-type]
    return events, parser.result()


@given(pieces=PIECES, start=STARTS, keywords=KEYWORDS, ids=st.booleans(), data=st.data())
def test_parse_and_stream_read_the_same_from_keywords_or_an_options_object(
    pieces, start, keywords, ids, data
):
    source = as_ids(pieces) if ids else as_text(pieces)
    keywords = {"start": start, **keywords}
    inside, beside = _split(keywords, data)
    by_keywords = parse(source, **keywords)
    assert parse(source, ParseOptions(**keywords)) == by_keywords
    assert parse(source, ParseOptions(**inside), **beside) == by_keywords
    streamed = _stream(source, StreamParser(**keywords))
    assert _stream(source, StreamParser(ParseOptions(**keywords))) == streamed
    assert _stream(source, StreamParser(ParseOptions(**inside), **beside)) == streamed
    assert streamed[1] == by_keywords  # the stream parser is parse, whichever way it was told


@given(pieces=PIECES, keywords=KEYWORDS, ids=st.booleans(), data=st.data())
def test_the_bridges_read_the_same_from_keywords_or_an_options_object(pieces, keywords, ids, data):
    source = as_ids(pieces) if ids else as_text(pieces)
    keywords = {"strict": False, **keywords}  # the bridges' default, stated for the object
    inside, beside = _split(keywords, data)
    given_as = [
        keywords,
        {"options": ParseOptions(start="completion", **keywords)},
        {"options": ParseOptions(start="completion", **inside), **beside},
    ]

    def chat(given: dict[str, Any]) -> Any:
        try:
            return to_chat_completion(source, id_factory=str, **given)
        except Exception as exc:  # strict: the first error raises; the same, every way
            return repr(exc)

    def responses(given: dict[str, Any]) -> Any:
        return to_responses(source, ids=lambda prefix: prefix, created_at=0.0, **given)

    def chat_chunks(given: dict[str, Any]) -> Any:
        stream = ChatCompletionStream(completion_id="c", created=0, id_factory=str, **given)
        feed = stream.feed if isinstance(source, str) else stream.feed_tokens
        return feed(source) + stream.close()  # type: ignore[arg-type]

    def responses_events(given: dict[str, Any]) -> Any:
        stream = ResponsesStream(ids=lambda prefix: prefix, created_at=0.0, **given)
        feed = stream.feed if isinstance(source, str) else stream.feed_tokens
        return feed(source) + stream.close()  # type: ignore[arg-type]

    for run in (chat, responses, chat_chunks, responses_events):
        first, *others = (run(given) for given in given_as)
        assert all(other == first for other in others), run.__name__


def test_a_bridge_refuses_options_that_read_anything_but_a_completion():
    for start in ("conversation", "prompt"):
        with pytest.raises(ValueError, match="a bridge reads a completion"):
            to_chat_completion("hi", ParseOptions(start=start))
        with pytest.raises(ValueError, match="a bridge reads a completion"):
            ResponsesStream(start=start)


def test_the_responses_bridge_takes_the_requests_tools_unless_the_options_hold_some():
    call = "<|channel|>commentary to=functions.nope <|constrain|>json<|message|>{}<|call|>"
    request = {"tools": [{"type": "function", **TOOLS[0]}]}
    codes = {d["code"] for d in to_responses(call, request=request)["diagnostics"]}
    given = to_responses(call, ParseOptions(start="completion", tools=TOOLS), request=request)
    assert codes == {d["code"] for d in given["diagnostics"]} != set()  # nope is undeclared
    bare = to_responses(call, ParseOptions(start="completion", tools=[]), request=request)
    assert codes == {d["code"] for d in bare["diagnostics"]}  # an empty list is tools too


# Each field changes what is read on some input: none is lost on the way to the engine.
# (field, base options, one value, another, input)
FIELD_CASES: list[tuple[str, dict[str, Any], Any, Any, str | list[int]]] = [
    ("start", {}, "conversation", "completion", "<|channel|>final<|message|>hi<|return|>"),
    ("role", {"start": "completion"}, "assistant", "user", "<|message|>hi<|end|>"),
    ("strict", {}, True, False, "<|start|>assistant<|channel|>final<|message|>hi"),
    (
        "tools",
        {},
        None,
        TOOLS,
        "<|start|>assistant<|channel|>commentary to=functions.nope <|constrain|>json"
        "<|message|>{}<|call|>",
    ),
    (
        "max_header_length",
        {"strict": False},
        1024,
        8,
        "<|start|>assistant<|channel|>commentary to=functions.lookup<|message|>{}<|call|>",
    ),
    (
        "stripped_dialect",
        {"strict": False},
        None,
        True,
        as_ids([("role", "assistant"), ("channel", "final"), ("literal", "<|message|>")])
        + as_ids([("prose", "done")]),
    ),
]


@pytest.mark.parametrize(
    ("name", "base", "one", "other", "source"), FIELD_CASES, ids=[c[0] for c in FIELD_CASES]
)
def test_each_field_reaches_the_engine(name, base, one, other, source):
    first = parse(source, ParseOptions(**base), **{name: one})
    second = parse(source, ParseOptions(**base), **{name: other})
    assert first != second
    streamed = StreamParser(ParseOptions(**base, **{name: other}))
    assert _stream(source, streamed)[1] == second


def test_call_id_reaches_the_stream_events():
    text = "<|channel|>commentary to=functions.lookup <|constrain|>json<|message|>{}<|call|>"
    events = StreamParser(ParseOptions(start="completion", call_id=lambda: "mine")).feed(text)
    assert [e.call_id for e in events if isinstance(e, ToolCallStart)] == ["mine"]
