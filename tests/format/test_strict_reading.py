"""The strict fast path reads exactly as the engine's strict reading, and the stream parser's
body paths exactly as its lexers' way.

:class:`~harmony_grammar.format.strict.StrictEngine` is what ``parse()`` and
``StreamParser`` use when not lenient; the reference here is the engine it replaced
(:class:`~harmony_grammar.format.engine.Engine` with ``lenient=False``, the empty repair
table), driven by the same lexers. They must agree on every input: messages, spans,
diagnostics, the ledger and every stream event, for text and for token ids, whole or in
chunks, on well-formed Harmony, on the mangler's breakages of it and on the alphabet
fuzzer's mixes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar import parse
from harmony_grammar.format.engine import Engine
from harmony_grammar.format.events import Event
from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.lexer import TextLexer, TokenLexer
from harmony_grammar.format.model import Message, ParseResult
from harmony_grammar.format.options import ParseOptions
from harmony_grammar.format.stream import StreamParser
from harmony_grammar.format.strict import StrictEngine
from harmony_grammar.format.vocabulary import load_encoding, token_bytes_table, token_text_table

from ..support.harmony_alphabet import ALPHABET, KINDS, as_ids, as_text
from ..support.mangler import (
    MANGLINGS,
    TOOLS,
    WORDS,
    mangle,
    random_completion,
    random_conversation,
)

STARTS = st.sampled_from(["conversation", "completion", "prompt"])
CUTS = st.lists(st.integers(0, 10**6), max_size=8)
PIECES = st.lists(
    st.sampled_from(KINDS).flatmap(lambda k: st.tuples(st.just(k), st.sampled_from(ALPHABET[k]))),
    min_size=1,
    max_size=30,
)
#: The mangler's tools, declared (call arguments are then checked as they are read).
DECLARED = [
    {"name": name, "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
    for name in TOOLS
]


def _chunks(source: Sequence[Any], cuts: list[int]) -> list[Sequence[Any]]:
    points = sorted({cut % (len(source) + 1) for cut in cuts} | {0, len(source)})
    return [source[a:b] for a, b in zip(points, points[1:], strict=False)] or [source]


def _read(
    reader: type[Engine], source: str | list[int], chunks: list[Any], **options: Any
) -> tuple[ParseResult, list[Event]]:
    """What ``reader`` reads of ``source`` fed in ``chunks``, with its stream events."""
    opts = ParseOptions(**options)
    events: list[Event] = []
    engine = reader(opts, token_units=not isinstance(source, str), events=events)
    lexer: TextLexer | TokenLexer
    if isinstance(source, str):
        lexer = TextLexer(engine)
    else:
        encoding = load_encoding()
        lexer = TokenLexer(
            token_bytes_table(encoding),
            engine,
            token_text_table(encoding),
            per_token=opts.tools is not None,
        )
    for chunk in chunks:
        lexer.feed(chunk)
    end = lexer.close()
    engine.eof(end)
    diagnostics = engine.overflow.cap(engine.diagnostics, end)
    return ParseResult(
        tuple(engine.messages), diagnostics, engine.next_turn, engine.book.ledger(end)
    ), events


def _same(fast: ParseResult, reference: ParseResult) -> None:
    assert fast == reference
    for message in fast.messages:
        # Messages are made without the frozen __init__'s checks (actions.finish_message):
        # the checked constructor takes the same values and makes an equal message.
        checked = Message(**{f.name: getattr(message, f.name) for f in fields(Message)})
        assert (checked, checked.span, hash(checked)) == (message, message.span, hash(message))
    assert [m.span for m in fast.messages] == [m.span for m in reference.messages]
    assert [m.to_dict() for m in fast.messages] == [m.to_dict() for m in reference.messages]
    assert fast.accounting == reference.accounting


def _agree(source: str | list[int], cuts: list[int], **options: Any) -> None:
    """The fast path and the reference agree on ``source``, whole and chunked, and
    ``parse()`` is the fast path's reading."""
    whole = [source]
    fast, fast_events = _read(StrictEngine, source, whole, **options)
    reference, reference_events = _read(Engine, source, whole, **options)
    _same(fast, reference)
    assert fast_events == reference_events
    _same(parse(source, **options), reference)
    chunked, chunked_events = _read(StrictEngine, source, _chunks(source, cuts), **options)
    reference, reference_events = _read(Engine, source, _chunks(source, cuts), **options)
    _same(chunked, reference)
    assert chunked_events == reference_events


@given(
    seed=st.integers(0, 10**9),
    kind=st.sampled_from([None, *sorted(MANGLINGS)]),
    conversation=st.booleans(),
    start=STARTS,
    ids=st.booleans(),
    tools=st.booleans(),
    cuts=CUTS,
)
def test_strict_reading_of_generated_and_mangled_harmony_is_the_engines(
    seed, kind, conversation, start, ids, tools, cuts
):
    rng = random.Random(seed)
    sample = random_conversation(rng) if conversation else random_completion(rng)
    text = sample.text if kind is None else mangle(sample, kind, rng).text
    source: str | list[int] = encode_harmony(text) if ids else text
    _agree(source, cuts, start=start, tools=DECLARED if tools else None)


@given(pieces=PIECES, start=STARTS, ids=st.booleans(), tools=st.booleans(), cuts=CUTS)
def test_strict_reading_of_the_alphabet_is_the_engines(pieces, start, ids, tools, cuts):
    source = as_ids(pieces) if ids else as_text(pieces)
    _agree(source, cuts, start=start, tools=DECLARED if tools else None)


@given(max_header_length=st.integers(1, 40), pieces=PIECES, cuts=CUTS)
def test_strict_reading_past_the_header_limit_is_the_engines(max_header_length, pieces, cuts):
    _agree(as_text(pieces), cuts, start="completion", max_header_length=max_header_length)


class _Plain(str):
    """Text that is not exactly ``str``: the stream parser's body path leaves it to the
    lexer (the reference way)."""

    __slots__ = ()


#: Bodies whose tokens recur (the body paths take a token whose delta is already shared),
#: long enough for long runs on the paths: words, repeated.
BODIES = st.tuples(
    st.lists(st.sampled_from([*WORDS[:6], "\n", "<", "|", " 東京", "é"]), max_size=20),
    st.integers(1, 12),
).map(lambda words_times: " ".join(words_times[0]) * words_times[1])


@given(
    seed=st.integers(0, 10**9),
    kind=st.sampled_from([None, *sorted(MANGLINGS)]),
    body=BODIES,
    lenient=st.booleans(),
    tools=st.booleans(),
)
def test_one_piece_at_a_time_reads_as_the_lexers_way(seed, kind, body, lenient, tools):
    """A serving loop's calls (one id in a list, one token's text) take the stream parser's
    body paths; ids in a tuple and text of a ``str`` subclass go the lexers' way. Events,
    result and ledger agree, and equal ``parse()``."""
    rng = random.Random(seed)
    sample = random_completion(rng)
    mangled = sample.text if kind is None else mangle(sample, kind, rng).text
    text = f"<|channel|>analysis<|message|>{body}<|end|><|start|>assistant{mangled}"
    ids = encode_harmony(text)
    encoding = load_encoding()
    options: dict[str, Any] = {"lenient": lenient, "tools": DECLARED if tools else None}
    for feed_fast, feed_reference, pieces in (
        (
            lambda parser, piece: parser.feed_tokens([piece]),
            lambda parser, piece: parser.feed_tokens((piece,)),
            ids,
        ),
        (
            lambda parser, piece: parser.feed(piece),
            lambda parser, piece: parser.feed(_Plain(piece)),
            [encoding.decode([token]) for token in ids],
        ),
    ):
        fast, reference = StreamParser(**options), StreamParser(**options)
        fast_events = [event for piece in pieces for event in feed_fast(fast, piece)]
        reference_events = [event for piece in pieces for event in feed_reference(reference, piece)]
        fast_events += fast.close()
        reference_events += reference.close()
        assert fast_events == reference_events
        _same(fast.result(), reference.result())
        source: str | list[int] = ids if pieces is ids else "".join(pieces)
        _same(fast.result(), parse(source, start="completion", **options))


def test_the_body_path_is_taken_and_left_where_the_body_ends():
    """Checks that the property above covers the body path: it is open inside a body and
    closed by the token that ends it (and by a call's arguments checked as they stream)."""
    encoding = load_encoding()
    parser = StreamParser()
    for token in encode_harmony("<|channel|>final<|message|>It is sunny in Paris"):
        parser.feed_tokens([token])
    assert parser._id_body is not None  # the body path is open
    parser.feed_tokens([encoding.encode("<|end|>", allowed_special="all")[0]])
    assert parser._id_body is None
    checked = StreamParser(tools=DECLARED)
    call = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city"'
    for token in encode_harmony(call):
        checked.feed_tokens([token])
    assert checked._id_body is None  # arguments checked as they stream: the lexer's way
