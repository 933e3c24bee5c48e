"""Field-level conservation, proven on the alphabet fuzzer (``tests/support/harmony_alphabet.py``,
independent of the mangler) and on the header shapes of issue 30 (``tests/support/mangler.py``'s
:data:`SHAPES`), in text and in token ids, with the independent field check.

* (a) conservation: the parser's ledger passes ``conservation_problems`` (strict mode
  too), and a second check that never reads the ledger (``tests/support/field_check.py``) finds
  every input character in a message field, and none read twice or made up;
* (c) stream equals batch for every chunking, the messages after a stop token included;
* (d) ``repair`` is idempotent, writes back all the content it read, and (on the shapes,
  which leave one reading of each header) its output parses strictly.

CI runs the profile's budget (tests/conftest.py; ``HYPOTHESIS_PROFILE=bench`` for a long
hunt); the benchmark
``benchmarks/bench_lossless.py`` runs the same generators over a million inputs.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harmony_grammar import parse
from harmony_grammar.cli.repair import repaired_text
from harmony_grammar.format.accounting import conservation_problems
from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.stream import StreamParser

from ..support.field_check import field_check
from ..support.harmony_alphabet import ALPHABET, KINDS, Piece, as_ids, as_text
from ..support.mangler import ISSUE_EXAMPLES, SHAPES, comparable, expected, mangled, recovered

#: The profile's settings (tests/conftest.py), named for the tests that share these inputs.
PROPERTY = settings()
PIECES = st.lists(
    st.sampled_from(KINDS).flatmap(lambda k: st.tuples(st.just(k), st.sampled_from(ALPHABET[k]))),
    min_size=1,
    max_size=24,
)
STARTS = st.sampled_from(["completion", "conversation"])
CUTS = st.lists(st.integers(0, 10**6), max_size=8)


def _examples(**extra):  # type: ignore[no-untyped-def]
    """The issue's own inputs as explicit examples of a ``(pieces, start, **extra)`` test."""

    def decorate(test):  # type: ignore[no-untyped-def]
        for text, start in ISSUE_EXAMPLES:
            test = example(pieces=[("raw", text)], start=start, **extra)(test)
        return test

    return decorate


def _sources(pieces: list[Piece]) -> list[str | list[int]]:
    return [as_text(pieces), as_ids(pieces)]


def _check_conservation(source: str | list[int], start: str) -> None:
    lenient = parse(source, start=start, lenient=True)
    assert conservation_problems(source, lenient) == [], source
    check = field_check(source, lenient)
    assert check.ok, (source, check.problems(), [m.to_dict() for m in lenient.messages])
    strict = parse(source, start=start)
    assert conservation_problems(source, strict, lenient=False) == [], source


# ---------------------------------------------------------------------------- (a)
@PROPERTY
@given(pieces=PIECES, start=STARTS)
@_examples()
def test_fuzz_conservation(pieces, start):
    for source in _sources(pieces):
        _check_conservation(source, start)


def _shaped(seed: int, kind: str, conversation: bool):  # type: ignore[no-untyped-def]
    return mangled(seed, kind, conversation=conversation)


@PROPERTY
@given(st.integers(0, 2**32), st.sampled_from(SHAPES), st.booleans())
def test_shape_conservation(seed, kind, conversation):
    mangled = _shaped(seed, kind, conversation)
    for source in (mangled.text, encode_harmony(mangled.text)):
        _check_conservation(source, mangled.sample.start)


# ---------------------------------------------------------------------------- (c)
def _chunks(sequence, cuts):  # type: ignore[no-untyped-def]
    points = sorted({c % (len(sequence) + 1) for c in cuts} | {0, len(sequence)})
    return [sequence[a:b] for a, b in zip(points, points[1:])]


def _streamed(source, start, chunks):  # type: ignore[no-untyped-def]
    parser = StreamParser(start=start, lenient=True)
    for chunk in chunks:
        if isinstance(source, str):
            parser.feed(chunk)
        else:
            parser.feed_tokens(chunk)
    parser.close()
    return parser


def _assert_stream_equals_batch(source, start, chunks) -> None:  # type: ignore[no-untyped-def]
    batch = parse(source, start=start, lenient=True)
    stream = _streamed(source, start, chunks)
    assert stream.result() == batch, (source, chunks)
    assert stream.result().accounting == batch.accounting, (source, chunks)


@PROPERTY
@given(pieces=PIECES, start=STARTS, cuts=CUTS)
@_examples(cuts=[1, 5, 11, 12, 40])
def test_fuzz_stream_equals_batch(pieces, start, cuts):
    for source in _sources(pieces):
        _assert_stream_equals_batch(source, start, _chunks(source, cuts))


@PROPERTY
@given(st.integers(0, 2**32), st.sampled_from(SHAPES), st.booleans(), CUTS)
def test_shape_stream_equals_batch(seed, kind, conversation, cuts):
    mangled = _shaped(seed, kind, conversation)
    for source in (mangled.text, encode_harmony(mangled.text)):
        _assert_stream_equals_batch(source, mangled.sample.start, _chunks(source, cuts))


@pytest.mark.parametrize(("text", "start"), ISSUE_EXAMPLES)
def test_issue_examples_read_alike_at_every_split(text, start):
    """Every two-chunk split and one unit at a time, text and ids."""
    for source in (text, encode_harmony(text)):
        for at in range(len(source) + 1):
            _assert_stream_equals_batch(source, start, [source[:at], source[at:]])
        _assert_stream_equals_batch(source, start, [source[i : i + 1] for i in range(len(source))])


# ---------------------------------------------------------------------------- (d)
def _contents(text: str, start: str) -> str:
    return "".join(m.content for m in parse(text, start=start, lenient=True).messages)


def _check_repair(text: str, start: str, *, one_reading: bool) -> None:
    completion = start == "completion"
    once = repaired_text(parse(text, start=start, lenient=True).messages, completion=completion)
    twice = repaired_text(parse(once, start=start, lenient=True).messages, completion=completion)
    assert twice == once, (text, once, twice)
    assert _contents(once, start) == _contents(text, start), (text, once)
    if one_reading:  # elsewhere what was read may itself be no valid turn (a user message
        # first in a completion): repair writes it as read, never drops it to look valid
        assert not once or parse(once, start=start).ok, (text, once)


@PROPERTY
@given(pieces=PIECES, start=STARTS)
@_examples()
def test_fuzz_repair_is_idempotent_and_keeps_content(pieces, start):
    _check_repair(as_text(pieces), start, one_reading=False)


@PROPERTY
@given(st.integers(0, 2**32), st.sampled_from(SHAPES), st.booleans())
def test_shape_repair_is_idempotent_and_keeps_content(seed, kind, conversation):
    mangled = _shaped(seed, kind, conversation)
    _check_repair(mangled.text, mangled.sample.start, one_reading=True)


# ---------------------------------------------------------------------------- the shapes
@PROPERTY
@given(st.integers(0, 2**32), st.sampled_from(SHAPES), st.booleans())
def test_shapes_read_back_where_one_reading_is_left(seed, kind, conversation):
    """(b) on the shapes: every field the shape leaves one reading of is read back."""
    mangled = _shaped(seed, kind, conversation)
    result = parse(mangled.text, start=mangled.sample.start, lenient=True)
    got = [comparable(m) for m in result.messages]
    assert recovered(mangled, result.messages), (mangled.text, got, expected(mangled))


def test_the_independent_check_finds_a_sink():
    """The check itself can fail: a header's garbage held by no field is reported."""
    from harmony_grammar.format.model import Message, ParseResult, Role

    text = "<|channel|>final 42 apples<|return|>"
    sunk = ParseResult((Message(Role.ASSISTANT, "apples", channel="final"),), ())
    assert field_check(text, sunk).missing == {"4": 1, "2": 1}
    doubled = ParseResult((Message(Role.ASSISTANT, "42 apples 42", channel="final"),), ())
    assert field_check(text, doubled).extra == {"4": 1, "2": 1}
    swapped = ParseResult(
        (
            Message(Role.ASSISTANT, "apples", channel="final"),
            Message(Role.ASSISTANT, "42", channel="final"),
        ),
        (),
    )
    assert field_check(text, swapped).out_of_order


def test_repair_writes_an_unwritable_channel_on_one_it_accepts():
    """One message with a channel the renderer refuses no longer empties the output."""
    text = (
        "<|start|>user<|message|>Hi<|end|><|start|>assistant<|channel|>ünïcode<|message|>x<|end|>"
    )
    notes: list[str] = []
    out = repaired_text(parse(text, lenient=True).messages, completion=False, notes=notes)
    assert [(m.channel, m.content) for m in parse(out).messages] == [
        (None, "Hi"),
        ("analysis", "x"),
    ]
    assert len(notes) == 1 and "'ünïcode'" in notes[0] and "'analysis'" in notes[0]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("<|start|>assistant:bobto=", "bobto"),  # a completion's first author with a name
        ("<|start|>assistant:bob to=functions.lookup<|channel|>analysis<|call|>", "bob"),
        ("commentary to=functions.👍🏽0=<|call|?I think", None),  # the name stops at the emoji
    ],
)
def test_repair_is_idempotent_where_the_fuzzer_found_it_was_not(text: str, name: str | None) -> None:
    """Found by bench_lossless's 1,000,000 inputs: repair wrote what it then read otherwise.
    A name the completion cannot hold is not dropped silently: the note quotes it."""
    _check_repair(text, "completion", one_reading=False)
    notes: list[str] = []
    messages = parse(text, start="completion", lenient=True).messages
    repaired_text(messages, completion=True, notes=notes)
    assert notes == ([] if name is None else [_NAME_NOTE.format(name=name)])


_NAME_NOTE = (
    "message 0: the author's name {name!r} cannot be written in a completion's first header;"
    " written without it"
)
