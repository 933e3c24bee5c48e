"""Lenient reading loses nothing: conservation, exact recovery and stream = batch, proven on
engine manglings of generated completions and conversations, and the header shapes of
issue 30 (tests/support/mangler.py).

Properties, each over every mangling kind, text and token ids:

* (a) conservation: every character (token) of the input is in a message or in a discarded
  range a diagnostic names, and lenient mode discards only control-token debris;
* (b) where a mangling leaves one reading, the lenient parse gives the original messages;
* (c) streaming equals batch under any chunking;
* ``repair`` is the lossless reading rendered canonically: idempotent, its output validates
  without errors, and it writes back all the content it read.

The hypothesis budget here keeps CI fast; ``benchmarks/bench_lossless.py`` runs the same
generator over 100,000 inputs.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar import parse, validate
from harmony_grammar.cli.repair import repaired_text
from harmony_grammar.format.accounting import conservation_problems
from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.stream import StreamParser
from harmony_grammar.format.vocabulary import load_encoding, token_bytes_table

from ..support.field_check import field_check
from ..support.mangler import MANGLINGS, comparable, expected, mangled, one_reading, recovered

KINDS = sorted(MANGLINGS)


def _mangled(seed: int, kind: str, conversation: bool):
    return mangled(seed, kind, conversation=conversation)


@given(st.integers(0, 2**32), st.sampled_from(KINDS), st.booleans(), st.booleans())
def test_conservation(seed, kind, conversation, strict):
    mangled = _mangled(seed, kind, conversation)
    start = mangled.sample.start
    for source in (mangled.text, encode_harmony(mangled.text)):
        result = parse(source, start=start, lenient=not strict)
        assert conservation_problems(source, result, lenient=not strict) == [], mangled.text
        if not strict:  # a second check, independent of the ledger: no character goes missing
            assert not field_check(source, result).missing, mangled.text


@given(st.integers(0, 2**32), st.sampled_from(KINDS), st.booleans())
def test_exact_recovery_where_one_reading(seed, kind, conversation):
    mangled = _mangled(seed, kind, conversation)
    result = parse(mangled.text, start=mangled.sample.start, lenient=True)
    got = [comparable(m) for m in result.messages]
    assert recovered(mangled, result.messages) is not False, (
        mangled.text,
        got,
        expected(mangled),
        [d.format() for d in result.diagnostics],
    )


@given(
    st.integers(0, 2**32),
    st.sampled_from(KINDS),
    st.booleans(),
    st.lists(st.integers(0, 10**6), max_size=8),
)
def test_stream_equals_batch(seed, kind, conversation, cuts):
    mangled = _mangled(seed, kind, conversation)
    text, start = mangled.text, mangled.sample.start
    points = sorted({c % (len(text) + 1) for c in cuts})
    parser = StreamParser(start=start, lenient=True)
    for a, b in zip([0, *points], [*points, len(text)], strict=True):
        parser.feed(text[a:b])
    parser.close()
    batch = parse(text, start=start, lenient=True)
    assert parser.result() == batch
    assert parser.result().accounting == batch.accounting
    ids = encode_harmony(text)
    stream = StreamParser(start=start, lenient=True)
    points = sorted({c % (len(ids) + 1) for c in cuts})
    for a, b in zip([0, *points], [*points, len(ids)], strict=True):
        stream.feed_tokens(ids[a:b])
    stream.close()
    batch = parse(ids, start=start, lenient=True)
    assert stream.result() == batch
    assert stream.result().accounting == batch.accounting


def _contents(text: str, start: str) -> str:
    return "".join(m.content for m in parse(text, start=start, lenient=True).messages)


@given(st.integers(0, 2**32), st.sampled_from(KINDS), st.booleans())
def test_repair_is_lossless_idempotent_and_valid(seed, kind, conversation):
    mangled = _mangled(seed, kind, conversation)
    start = mangled.sample.start
    completion = start == "completion"
    once = repaired_text(
        parse(mangled.text, start=start, lenient=True).messages, completion=completion
    )
    twice = repaired_text(parse(once, start=start, lenient=True).messages, completion=completion)
    assert twice == once
    assert _contents(once, start) == _contents(mangled.text, start)
    # The output is well-formed Harmony: it parses strictly with no error at all.
    assert parse(once, start=start).ok or not once, (mangled.text, once)
    # Where the mangling leaves one reading, the output is also valid: the rules find
    # nothing. (Elsewhere what was read may itself break a rule, and repair never invents
    # content to hide that: text after a call stays after it, HG206; a cut call's arguments
    # stay cut, HG180. docs/parser.md lists these.)
    after_stop = kind in ("prose_before", "prose_gap") and mangled.detail["slot"] == len(
        mangled.sample.messages
    )
    if one_reading(mangled) and not after_stop:
        report = validate(once, start=start)
        errors = [d.format() for d in report.diagnostics if d.severity.value == "error"]
        assert not errors, (mangled.text, once, errors)


#: Header pieces a stripped or glued header may hold after its author word (issue: a call
#: header glued to the reply header after it, ``assistantcommentary to=f json{…}f
#: to=assistant<|channel|>commentary``).
_HEADER_TAIL = st.lists(
    st.sampled_from(
        [
            " to=functions.get_weather",
            " json",
            '{"query": true}',
            "functions.get_weather",
            " to=assistant",
            "<|channel|>commentary",
            "<|channel|>final",
            "<|constrain|>json",
            " The",
        ]
    ),
    max_size=6,
).map("".join)


@given(
    st.sampled_from(["assistant", "user", "system", "developer"]),
    st.sampled_from(["analysis", "commentary", "final", "The", "OK?"]),
    _HEADER_TAIL,
    st.sampled_from(["<|message|>", ""]),
    st.booleans(),
)
def test_a_role_glued_to_a_word_is_never_a_tools_name(role, glued, tail, opened, completion):
    """A role glued to a channel word or to text (``assistantcommentary``,
    ``assistantThe``) is that role, whatever the rest of the header costs: the lenient
    reading never takes the glued word as a tool's name (which repair would write back as
    a header read otherwise), and repair of such a header is idempotent."""
    completion = completion and role == "assistant"  # a completion is the assistant's
    start = "completion" if completion else "conversation"
    source = f"{'' if completion else '<|start|>'}{role}{glued}{tail}{opened}x<|end|>"
    messages = parse(source, start=start, lenient=True).messages
    assert not any(m.name and m.name.startswith(role + glued) for m in messages), source
    once = repaired_text(messages, completion=completion)
    twice = repaired_text(parse(once, start=start, lenient=True).messages, completion=completion)
    assert twice == once, (source, once)
    assert parse(once, start=start).ok, once


# ---------------------------------------------------------------------------- UTF-8
def _byte_ids() -> dict[int, int]:
    """A single-byte token for every byte value."""
    table = token_bytes_table(load_encoding())
    return {t[0]: i for i, t in enumerate(table) if len(t) == 1}


BYTE_IDS = _byte_ids()


@given(st.binary(max_size=40), st.lists(st.integers(1, 8), max_size=10))
def test_invalid_utf8_is_replaced_by_maximal_subparts(body, sizes):
    """Token ids whose bytes are not UTF-8: one U+FFFD per maximal subpart, exactly as
    ``bytes.decode("utf-8", errors="replace")``, in batch and fed in any chunks."""
    head = encode_harmony("<|channel|>final<|message|>")
    ids = head + [BYTE_IDS[b] for b in body] + encode_harmony("<|return|>")
    want = body.decode("utf-8", errors="replace")
    result = parse(ids, start="completion")
    assert [m.content for m in result.messages] == [want]
    parser = StreamParser()
    position = 0
    for size in sizes or [1]:
        parser.feed_tokens(ids[position : position + size])
        position += size
    parser.feed_tokens(ids[position:])
    parser.close()
    assert parser.result().messages == result.messages


def test_split_utf8_in_a_real_completion_keeps_every_other_byte():
    text = "<|channel|>final<|message|>Zürich 東京<|return|>"
    data = "Zürich 東京".encode()
    broken = data[:2] + data[3:9] + data[10:]  # a byte lost from ü and from 東
    ids = encode_harmony("<|channel|>final<|message|>") + [BYTE_IDS[b] for b in broken]
    ids += encode_harmony("<|return|>")
    result = parse(ids, start="completion", lenient=True)
    assert result.messages[0].content == broken.decode("utf-8", errors="replace")
    assert conservation_problems(ids, result) == []
    assert parse(text, start="completion").messages[0].content == "Zürich 東京"


# ---------------------------------------------------------------------------- the shapes
def _read(text: str, **options):
    result = parse(text, start="completion", lenient=True, **options)
    assert conservation_problems(text, result) == [], text
    return [(m.channel, m.recipient, m.content_type, m.content) for m in result.messages]


@pytest.mark.parametrize(
    "prose", ["Sure.", "Sure, I'll check that for you.", "Okay:", "Réponse.", "東京の天気", "42"]
)
@pytest.mark.parametrize("header", ["<|channel|>", "<|start|>assistant<|channel|>"])
def test_prose_before_a_header_is_a_message_of_its_own(prose, header):
    text = f'{prose}{header}commentary to=functions.x <|constrain|>json<|message|>{{"a":1}}<|call|>'
    got = _read(text)
    assert got[0] == ("analysis", None, None, prose)
    assert got[1] == ("commentary", "functions.x", "<|constrain|>json", '{"a":1}')


@pytest.mark.parametrize("words", ["I will check the weather", "Let me see. Then", "ok so"])
def test_words_before_the_first_channel_keep_every_message(words):
    text = f"{words}<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Done."
    assert _read(text) == [
        ("analysis", None, None, words),
        ("analysis", None, None, "Think."),
        ("final", None, None, "Done."),
    ]


def test_words_before_the_first_channel_in_the_chat_bridge():
    from harmony_grammar import to_chat_completion

    response = to_chat_completion(
        "I will check<|channel|>final<|message|>Done.<|return|>", lenient=True
    )
    assert response["message"]["content"] == "Done."
    assert response["message"]["reasoning_content"] == "I will check"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("<|channel|>commentary Hello<|end|>", [("analysis", None, None, "Hello")]),
        ("<|channel|>final Hello there.<|return|>", [("final", None, None, "Hello there.")]),
        ('<|channel|>final {"answer": "hi"}', [("final", None, None, '{"answer": "hi"}')]),
        ("<|channel|>final [1, 2]<|return|>", [("final", None, None, "[1, 2]")]),
        ('<|channel|>final "quoted" reply<|return|>', [("final", None, None, '"quoted" reply')]),
        ("<|channel|>analysis 42<|end|>", [("analysis", None, None, "42")]),
        ("<|channel|>finalHello world<|return|>", [("final", None, None, "Hello world")]),
    ],
)
def test_a_header_with_no_message_token_keeps_its_text(text, want):
    assert _read(text) == want


@pytest.mark.parametrize("ctype", [" json", " <|constrain|>json", "<|constrain|>json", ""])
@pytest.mark.parametrize("space", ["", " "])
def test_a_completion_that_begins_with_its_recipient_keeps_the_call(ctype, space):
    text = (
        f'to=functions.get_weather<|channel|>commentary{ctype}<|message|>{{"city":"Paris"}}<|call|>'
    )
    got = _read(space + text if space else text)
    assert [(c, r, m) for c, r, _, m in got] == [
        ("commentary", "functions.get_weather", '{"city":"Paris"}')
    ]


@pytest.mark.parametrize(
    "lead", ["The weather is nice.", "It is 20°C in Zürich!", "東京です。", "Done)"]
)
def test_stripped_header_glued_to_prose_mid_text(lead):
    text = f'{lead}assistantcommentary to=functions.get_weather json{{"city":"Paris"}}'
    assert _read(text) == [
        ("analysis", None, None, lead),
        ("commentary", "functions.get_weather", "json", '{"city":"Paris"}'),
    ]


def test_a_spaced_marker_in_prose_stays_prose():
    text = "The log shows assistantfinal twice."
    assert _read(text) == [("final", None, None, text)]


def test_a_doubled_leading_channel_keeps_both_messages():
    text = (
        "<|channel|><|channel|>analysis<|message|>Think.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Answer.<|return|>"
    )
    assert _read(text) == [("analysis", None, None, "Think."), ("final", None, None, "Answer.")]


def test_repair_of_nothing_is_nothing():
    assert (
        repaired_text(parse("", start="completion", lenient=True).messages, completion=True) == ""
    )


@pytest.mark.parametrize("mode", ["conversation", "completion"])
def test_text_outside_messages_is_kept(mode):
    text = "<|start|>user<|message|>a<|end|>junk<|start|>user<|message|>b<|end|>tail"
    if mode == "completion":
        text = "<|channel|>analysis<|message|>a<|end|>junk<|start|>assistant<|channel|>final<|message|>b<|return|>tail"
    result = parse(text, start=mode, lenient=True)
    assert [m.content for m in result.messages] == ["a", "junk", "b", "tail"]
    assert conservation_problems(text, result) == []


def test_strict_mode_accounts_for_what_it_skips():
    text = "<|start|>user<|message|>a<|end|>junk<|start|>user<|message|>b<|end|>"
    result = parse(text)
    assert not result.ok
    assert conservation_problems(text, result, lenient=False) == []
    assert [(s.start, s.end) for s in result.accounting.discarded] == [(32, 36)]


def test_bridges_never_make_a_call_of_ordinary_ids():
    """The issue's shape through every bridge: ordinary ids spelling a stripped call are
    content; the caller may opt in for ids that went through a detokenizer and back."""
    from harmony_grammar import ChatCompletionStream, to_chat_completion, to_responses

    ids = encode_harmony('analysisOk.assistantcommentary to=functions.delete_all json{"all":true}')
    assert to_chat_completion(ids)["message"]["tool_calls"] == []
    assert not [i for i in to_responses(ids)["output"] if i["type"] == "function_call"]
    stream = ChatCompletionStream()
    chunks = [c for token in ids for c in stream.feed_tokens([token])] + stream.close()
    assert not any(choice["delta"].get("tool_calls") for c in chunks for choice in c["choices"])
    opted = to_chat_completion(ids, stripped_dialect=True)["message"]["tool_calls"]
    assert [call["function"]["name"] for call in opted] == ["delete_all"]


@pytest.mark.parametrize("ids", [False, True])
@pytest.mark.parametrize(
    ("text", "want"),
    [
        (  # <|channel|> stripped before a channel word: a header position, ids read it too
            "analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Hi",
            [("analysis", None, None, "Think."), ("final", None, None, "Hi")],
        ),
        (
            "commentary to=functions.f json<|message|>{}<|call|>",
            [("commentary", "functions.f", "json", "{}")],
        ),
        (  # <|start|> lost before the author between messages
            "<|channel|>analysis<|message|>x<|end|>assistant<|channel|>final<|message|>Hi",
            [("analysis", None, None, "x"), ("final", None, None, "Hi")],
        ),
        (  # ...but a word that is no author is text of its own
            "<|channel|>analysis<|message|>x<|end|>Sure<|channel|>final<|message|>Hi",
            [("analysis", None, None, "x"), ("analysis", None, None, "Sure"), ("final", None, None, "Hi")],
        ),
    ],
)
def test_lost_header_tokens_in_a_header_position(text, want, ids):
    source = encode_harmony(text) if ids else text
    result = parse(source, start="completion", lenient=True)
    assert conservation_problems(source, result) == []
    assert [(m.channel, m.recipient, m.content_type, m.content) for m in result.messages] == want


def test_stripped_headers_separated_by_line_breaks():
    text = "analysis\nWe think.\nassistantfinal\nAnswer."
    assert _read(text) == [("analysis", None, None, "We think.\n"), ("final", None, None, "Answer.")]
    assert _read("analysis\nof the data follows.") == [
        ("final", None, None, "analysis\nof the data follows.")
    ]


@pytest.mark.parametrize("role", ["assistant", "user", "tool", "system"])
@pytest.mark.parametrize("channel", [None, "analysis", "final", "commentary"])
def test_header_complete_rows_need_a_recipient_or_a_content_type(role, channel):
    """The engine asks the HEADER_COMPLETE rows only about headers with a recipient or a
    content type (engine._on_message): each row must do nothing to any other header."""
    from harmony_grammar.format.draft import Draft
    from harmony_grammar.format.engine import Engine
    from harmony_grammar.format.model import Role
    from harmony_grammar.format.repairs import LENIENT

    engine = Engine(start="conversation", lenient=True)
    for repair in LENIENT.header_complete:
        draft = Draft(start=0, role=Role(role), channel=channel, name="functions.f" if role == "tool" else None)
        before = repr(draft)
        repair(engine, draft, 0)
        assert repr(draft) == before and not engine.diagnostics, repair.__name__


# ---------------------------------------------------------------------------- issue 30
def _both(text: str, **options):
    """The lenient parse of ``text`` and of its token ids, each conserved field by field."""
    results = []
    for source in (text, encode_harmony(text)):
        result = parse(source, start=options.pop("start", "completion"), lenient=True, **options)
        assert conservation_problems(source, result) == [], text
        results.append(result)
    assert results[0].messages == results[1].messages
    return results[0]


def _fields(result):
    return [(m.role.value, m.channel, m.recipient, m.content_type, m.content) for m in result.messages]


@pytest.mark.parametrize("gap", ["\n", " ", "\n\n", "\t"])
def test_prose_then_whitespace_before_the_first_header_keeps_the_call(gap):
    from harmony_grammar import to_chat_completion

    text = (
        f"Let me check.{gap}<|channel|>commentary to=functions.lookup <|constrain|>json"
        '<|message|>{"q":"tides"}<|call|>'
    )
    assert _fields(_both(text)) == [
        ("assistant", "analysis", None, None, "Let me check."),
        ("assistant", "commentary", "functions.lookup", "<|constrain|>json", '{"q":"tides"}'),
    ]
    message = to_chat_completion(text, lenient=True)["message"]
    assert [c["function"]["arguments"] for c in message["tool_calls"]] == ['{"q":"tides"}']
    assert '{"q":"tides"}' not in (message["content"] or "")


@pytest.mark.parametrize("body", ["42 apples", "🙂 apples", "« apples", "$3 apples", "( apples",
                                  "analysis-free apples", "7", "!!"])
def test_a_header_that_lost_its_message_token_keeps_a_body_opening_with_anything(body):
    assert _fields(_both(f"<|channel|>final {body}<|return|>")) == [
        ("assistant", "final", None, None, body)
    ]


def test_harmony_words_glued_to_text_are_read_as_those_words():
    result = _both("<|start|>assistantThe answer is 42<|return|>")
    assert _fields(result) == [("assistant", "final", None, None, "The answer is 42")]
    assert "HG170" not in [d.code for d in result.diagnostics]  # no forged tool result
    assert _fields(_both("<|channel|>analysisOK so<|end|>")) == [
        ("assistant", "analysis", None, None, "OK so")
    ]
    result = _both("<|start|>assistant<|channel|>commentary?<|message|>x<|end|>", start="conversation")
    assert _fields(result) == [("assistant", "commentary", None, None, "x")]
    assert result.messages[0].unread == "?"


def test_a_control_token_the_header_can_still_use_is_never_debris():
    text = "<|start|>assistant to=functions.x abc<|channel|>analysis<|message|>{}<|call|>"
    result = _both(text, start="conversation")
    (message,) = result.messages
    assert (message.channel, message.recipient) == ("analysis", "functions.x")
    assert result.accounting.discarded == ()


def test_prose_in_a_broken_commentary_header_is_reasoning():
    """``<|channel|>commentary Hello<|end|>``: prose in a commentary header with no
    recipient that never reached ``<|message|>`` is the model's reasoning (openai-harmony
    reads it on ``commentary``); the written word is kept in ``superseded``. A call's
    header keeps its channel."""
    result = _both("<|channel|>commentary Hello<|end|>")
    assert _fields(result) == [("assistant", "analysis", None, None, "Hello")]
    assert result.messages[0].superseded == "commentary"
    call = _both('<|channel|>commentary to=functions.f {"a":1}<|call|>')
    assert [(m.channel, m.recipient) for m in call.messages] == [("commentary", "functions.f")]


def test_a_header_holding_json_then_text_skips_no_message():
    text = (
        '<|start|>assistant<|channel|>final {"a":1} and more<|message|>x<|end|>'
        "<|start|>user<|message|>next<|end|>"
    )
    result = _both(text, start="conversation")
    assert "HG100" not in [d.code for d in result.diagnostics]
    assert [m.content for m in result.messages] == ['{"a":1} and morex', "next"]


def test_a_bare_channel_word_after_a_stop_is_no_message_of_its_own():
    text = (
        "<|channel|>commentary to=functions.f<|message|>{}<|call|>"
        "commentary<|channel|>final<|message|>hi<|return|>"
    )
    result = _both(text)
    assert "commentary" not in [m.content for m in result.messages]
    assert [(m.channel, m.content) for m in result.messages][-1] == ("final", "hi")


def test_a_second_recipient_is_content_never_a_discarded_range():
    text = "<|channel|>commentary to=functions.a to=functions.b<|message|>{}<|call|>"
    result = _both(text)
    assert result.accounting.discarded == ()
    assert result.messages[0].content == "to=functions.b{}"


def test_token_ids_read_in_the_stripped_dialect_are_conserved():
    text = 'analysisOk.assistantcommentary to=functions.f json{"a":1}'
    ids = encode_harmony(text)
    result = parse(ids, start="completion", lenient=True, stripped_dialect=True)
    assert [m.recipient for m in result.messages] == [None, "functions.f"]
    assert conservation_problems(ids, result) == []
    assert all(s.end > s.start for spans in result.accounting.content for s in spans)


def test_every_field_of_a_well_formed_parse_is_its_slice_of_the_input():
    text = (
        "<|start|>user:alice<|message|>hi<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}<|call|>"
    )
    result = parse(text)
    fields = result.accounting.fields
    shown = [[(name, text[s.start : s.end]) for name, s in message] for message in fields]
    assert shown == [
        [("author", "user"), ("name", "alice")],
        [("author", "assistant"), ("channel", "commentary"), ("recipient", "functions.f"),
         ("content_type", "json")],
    ]
    assert conservation_problems(text, result, lenient=False) == []
    assert result.messages[0].to_dict()["unread"] == ""
