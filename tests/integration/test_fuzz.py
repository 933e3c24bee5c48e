"""Hypothesis fuzzing: no input makes the parsers raise, and chunking never changes a result."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from harmony_grammar import parse
from harmony_grammar.format import ControlToken
from harmony_grammar.format.stream import StreamParser

SPELLINGS = [token.value for token in ControlToken]
FRAGMENTS = st.one_of(
    st.sampled_from(SPELLINGS),
    st.sampled_from(
        [
            "assistant",
            "user",
            "functions.f",
            " to=functions.f",
            " to=",
            "analysis",
            "commentary",
            "final",
            " json",
            "json",
            "JSON",
            " ",
            ":",
            "=",
            "?",
            "\n",
            "<|",
            "|>",
            "<|sta",
            "rt|>",
            "<|endoftext|>",
            "–",
            '{"a": 1}',
            "{",
            "é",
            "🎉",
        ]
    ),
    st.text(max_size=8),
)
TEXTS = st.lists(FRAGMENTS, max_size=30).map("".join)
IDS = st.lists(
    st.one_of(
        st.sampled_from([token.id for token in ControlToken]),
        st.integers(min_value=0, max_value=199997),
        st.integers(min_value=199998, max_value=201100),
        st.integers(min_value=-3, max_value=-1),
    ),
    max_size=40,
)
OPTIONS = st.fixed_dictionaries(
    {"start": st.sampled_from(["conversation", "completion"]), "strict": st.booleans()}
)
# Five times the profile's budget (tests/conftest.py: 300 examples per test under "ci";
# HYPOTHESIS_PROFILE=bench for a longer run).
FUZZ = settings(max_examples=5 * settings.default.max_examples)


def chunked(sequence, cuts):
    points = sorted({c % (len(sequence) + 1) for c in cuts} | {0, len(sequence)})
    return [sequence[a:b] for a, b in zip(points, points[1:])] or [sequence]


@FUZZ
@given(TEXTS, OPTIONS, st.lists(st.integers(min_value=0), max_size=8))
def test_text_never_raises_and_streaming_equals_batch(text, options, cuts):
    result = parse(text, **options)
    for message in result.messages:
        assert message.span is not None and 0 <= message.span.start <= message.span.end <= len(text)
    for diagnostic in result.diagnostics:
        assert 0 <= diagnostic.start <= diagnostic.end <= len(text)
        assert diagnostic.line is not None and diagnostic.column is not None
    stream = StreamParser(**options)
    for chunk in chunked(text, cuts):
        stream.feed(chunk)
    stream.close()
    assert stream.result() == result


@FUZZ
@given(IDS, OPTIONS, st.lists(st.integers(min_value=0), max_size=8))
def test_token_ids_never_raise_and_streaming_equals_batch(ids, options, cuts):
    result = parse(ids, **options)
    for diagnostic in result.diagnostics:
        assert 0 <= diagnostic.start <= diagnostic.end <= len(ids)
    stream = StreamParser(**options)
    for chunk in chunked(ids, cuts):
        stream.feed_tokens(chunk)
    stream.close()
    assert stream.result() == result


@FUZZ
@given(TEXTS, OPTIONS)
def test_one_character_at_a_time(text, options):
    stream = StreamParser(**options)
    for character in text:
        stream.feed(character)
    stream.close()
    assert stream.result() == parse(text, **options)
