"""The batch parser on the spec's examples, every header form, and its diagnostics."""

from __future__ import annotations

from pathlib import Path

import pytest

from harmony_grammar import Message, Role, Severity, parse
from harmony_grammar.format import ControlToken, RecipientPosition, Terminator
from harmony_grammar.format.harmony_ids import encode_harmony

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# harmony-format.md §2, "Example turn", written out by hand.
SPEC_TURN = (
    "<|start|>user<|message|>What is the weather like in SF?<|end|>"
    "<|start|>assistant<|channel|>analysis<|message|>User wants the weather. Use"
    " get_current_weather.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_current_weather"
    ' <|constrain|>json<|message|>{"location":"San Francisco, CA"}<|call|>'
    "<|start|>functions.get_current_weather to=assistant<|channel|>commentary<|message|>"
    '{"sunny": true, "temperature": 20}<|end|>'
    "<|start|>assistant<|channel|>final<|message|>It's sunny and about 20°C in San"
    " Francisco.<|return|>"
)
SPEC_MESSAGES = (
    Message(Role.USER, "What is the weather like in SF?", terminator=Terminator.END),
    Message(
        Role.ASSISTANT,
        "User wants the weather. Use get_current_weather.",
        channel="analysis",
        terminator=Terminator.END,
    ),
    Message(
        Role.ASSISTANT,
        '{"location":"San Francisco, CA"}',
        recipient="functions.get_current_weather",
        channel="commentary",
        content_type="<|constrain|>json",
        terminator=Terminator.CALL,
        recipient_position=RecipientPosition.CHANNEL,
    ),
    Message(
        Role.TOOL,
        '{"sunny": true, "temperature": 20}',
        name="functions.get_current_weather",
        recipient="assistant",
        channel="commentary",
        terminator=Terminator.END,
        recipient_position=RecipientPosition.ROLE,
    ),
    Message(
        Role.ASSISTANT,
        "It's sunny and about 20°C in San Francisco.",
        channel="final",
        terminator=Terminator.RETURN,
    ),
)


def codes(result):
    return [d.code for d in result.diagnostics]


def test_spec_example_turn():
    result = parse(SPEC_TURN)
    assert result.ok and result.diagnostics == ()
    assert result.messages == SPEC_MESSAGES
    assert result.messages[3].role == "tool"  # Role compares equal to its string


def test_spec_example_spans_cover_the_input():
    result = parse(SPEC_TURN)
    spans = [m.span for m in result.messages]
    assert spans[0].start == 0 and spans[-1].end == len(SPEC_TURN)
    assert all(a.end == b.start for a, b in zip(spans, spans[1:]))
    assert SPEC_TURN[spans[2].start : spans[2].end].endswith("<|call|>")


def test_token_ids_give_the_same_messages(encoding):
    ids = encode_harmony(SPEC_TURN)
    assert ControlToken.CONSTRAIN.id in ids
    result = parse(ids)
    assert result.ok and result.messages == SPEC_MESSAGES
    # positions are token indexes
    assert result.messages[-1].span.end == len(ids)


def test_shipped_example_is_well_formed():
    result = parse((EXAMPLES / "weather.harmony").read_text(encoding="utf-8"))
    assert result.ok, result.diagnostics
    assert [m.role.value for m in result.messages] == [
        "system",
        "developer",
        "user",
        "assistant",
        "assistant",
        "tool",
        "assistant",
    ]


@pytest.mark.parametrize(
    ("header", "recipient", "position", "channel", "content_type"),
    [
        (
            "assistant to=functions.f<|channel|>commentary <|constrain|>json",
            "functions.f",
            RecipientPosition.ROLE,
            "commentary",
            "<|constrain|>json",
        ),
        (
            "assistant<|channel|>commentary to=functions.f <|constrain|>json",
            "functions.f",
            RecipientPosition.CHANNEL,
            "commentary",
            "<|constrain|>json",
        ),
        (
            "assistant<|channel|>commentary to=functions.f<|constrain|>json",
            "functions.f",
            RecipientPosition.CHANNEL,
            "commentary",
            "<|constrain|>json",
        ),
        (
            "assistant<|channel|>commentary to=functions.f json",
            "functions.f",
            RecipientPosition.CHANNEL,
            "commentary",
            "json",
        ),
        (
            "assistant<|channel|>analysis to=python code",
            "python",
            RecipientPosition.CHANNEL,
            "analysis",
            "code",
        ),
        (
            "assistant to=browser.search<|channel|>analysis",
            "browser.search",
            RecipientPosition.ROLE,
            "analysis",
            None,
        ),
        ("assistant<|channel|>final <|constrain|>json", None, None, "final", "<|constrain|>json"),
        ("assistant<|channel|>final", None, None, "final", None),
        ("assistant", None, None, None, None),
    ],
)
def test_header_forms(header, recipient, position, channel, content_type):
    text = f"<|start|>{header}<|message|>body<|end|>"
    for source in (text, encode_harmony(text)):
        result = parse(source)
        assert result.ok, result.diagnostics
        (message,) = result.messages
        assert (message.recipient, message.recipient_position) == (recipient, position)
        assert (message.channel, message.content_type) == (channel, content_type)


@pytest.mark.parametrize(
    ("author", "role", "name"),
    [
        ("system", Role.SYSTEM, None),
        ("developer", Role.DEVELOPER, None),
        ("user:alice", Role.USER, "alice"),
        ("functions.get_weather", Role.TOOL, "functions.get_weather"),
        ("browser.search", Role.TOOL, "browser.search"),
        ("python", Role.TOOL, "python"),
    ],
)
def test_authors(author, role, name):
    (message,) = parse(f"<|start|>{author}<|message|>x<|end|>").messages
    assert (message.role, message.name, message.author) == (role, name, author)


def test_completion_start_and_stripped_stop_token():
    text = (
        "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>hi"
    )
    result = parse(text, start="completion")
    assert result.ok
    first, last = result.messages
    assert (first.role, first.channel, first.terminator) == (
        Role.ASSISTANT,
        "analysis",
        Terminator.END,
    )
    assert (last.content, last.terminator) == ("hi", None)


def test_completion_with_role_section_recipient():
    text = ' to=functions.f<|channel|>commentary <|constrain|>json<|message|>{"a": 1}<|call|>'
    (message,) = parse(text, start="completion").messages
    assert message.recipient_position is RecipientPosition.ROLE
    assert message.terminator is Terminator.CALL


def test_conversation_must_end_its_last_message():
    result = parse("<|start|>user<|message|>hi")
    assert not result.ok
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "HG102"
    assert (diagnostic.start, diagnostic.line, diagnostic.column) == (26, 1, 27)
    assert set(diagnostic.expected) == {"<|end|>", "<|call|>", "<|return|>"}


def test_strict_error_has_position_and_expectation_and_resynchronises():
    text = "<|start|>assistant<|channel|>final<|end|>\n<|start|>user<|message|>ok<|end|>"
    result = parse(text)
    assert codes(result) == ["HG100"]
    diagnostic = result.diagnostics[0]
    assert diagnostic.severity is Severity.ERROR
    assert text[diagnostic.start : diagnostic.end] == "<|end|>"
    assert "<|message|>" in diagnostic.expected
    assert [m.content for m in result.messages] == ["ok"]


def test_lines_and_columns_count_newlines():
    text = "<|start|>user<|message|>a\nb<|end|>\n<|start|>assistant<|channel|>fin?al<|message|>x<|end|>"
    (diagnostic,) = parse(text).diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.column) == ("HG101", 3, 33)


def test_whitespace_between_messages_is_tolerated():
    result = parse("\n<|start|>user<|message|>a<|end|>\n\n<|start|>user<|message|>b<|end|>\n")
    assert result.ok and [m.content for m in result.messages] == ["a", "b"]


# Lenient recoveries: (input, strict error codes, lenient warning codes, lenient messages)
LENIENT_CASES = {
    "missing-message": (
        "<|start|>assistant<|channel|>final<|end|>",
        ["HG100"],
        ["HG150"],
        [("final", "", "end")],
    ),
    "missing-start": (
        "<|start|>assistant<|channel|>analysis<|message|>a<|end|><|channel|>final<|message|>b<|return|>",
        ["HG100"],
        ["HG151"],
        [("analysis", "a", "end"), ("final", "b", "return")],
    ),
    "text-between-messages": (
        "<|start|>user<|message|>a<|end|>junk<|start|>user<|message|>b<|end|>",
        ["HG101"],
        ["HG152"],
        [(None, "a", "end"), ("analysis", "junk", None), (None, "b", "end")],
    ),
    "garbage-channel": (
        "<|start|>assistant<|channel|>commentary?<|message|>x<|end|>",
        ["HG101"],
        ["HG156"],
        [("commentary", "x", "end")],
    ),
    "garbage-before-channel": (
        "<|start|>assistant<|channel|>––commentary<|message|>x<|end|>",
        ["HG101"],
        ["HG156"],
        [("commentary", "x", "end")],
    ),
    "duplicate-channel": (
        "<|start|>assistant<|channel|>commentary<|channel|>final<|message|>x<|end|>",
        ["HG100"],
        ["HG157"],
        # a header written over before any content is one message; the earlier channel
        # word is kept in Message.superseded
        [("final", "x", "end")],
    ),
    "missing-terminator": (
        "<|start|>assistant<|channel|>final<|message|>a<|start|>user<|message|>b<|end|>",
        ["HG100"],
        ["HG159"],
        [("final", "a", None), (None, "b", "end")],
    ),
    "eof-in-body": (
        "<|start|>user<|message|>hi",
        ["HG102"],
        ["HG159"],
        [(None, "hi", None)],
    ),
}


@pytest.mark.parametrize("case", sorted(LENIENT_CASES))
def test_lenient_recoveries_and_strict_errors(case):
    text, strict_codes, lenient_codes, expected = LENIENT_CASES[case]
    strict = parse(text)
    assert not strict.ok and codes(strict) == strict_codes
    lenient = parse(text, lenient=True)
    assert lenient.ok and codes(lenient) == lenient_codes
    assert all(d.severity is Severity.WARNING for d in lenient.diagnostics)
    got = [(m.channel, m.content, m.terminator and m.terminator.value) for m in lenient.messages]
    assert got == expected
    assert parse(encode_harmony(text), lenient=True).messages == lenient.messages


def test_duplicate_recipient():
    text = (
        "<|start|>assistant to=functions.f<|channel|>commentary to=functions.g"
        " <|constrain|>json<|message|>{}<|call|>"
    )
    assert codes(parse(text)) == ["HG101"]
    lenient = parse(text, lenient=True)
    assert codes(lenient) == ["HG158"]  # a second, different recipient: content, not hidden
    (message,) = lenient.messages
    assert (message.recipient, message.content_type) == ("functions.f", "<|constrain|>json")
    assert message.content == "to=functions.g{}"


def test_duplicate_recipient_in_the_role_section():
    text = (
        "<|start|>assistant to=functions.a to=functions.b<|channel|>commentary<|message|>{}<|call|>"
    )
    assert codes(parse(text)) == ["HG101"]
    lenient = parse(text, lenient=True)
    assert codes(lenient) == ["HG158"] and lenient.messages[0].recipient == "functions.a"
    assert lenient.messages[0].content == "to=functions.b{}"


def test_glued_and_upper_case_content_types():
    glued = '<|channel|>commentary to=functions.shelljson<|message|>{"cmd": "ls"}<|call|>'
    strict = parse(glued, start="completion")
    assert strict.ok and strict.messages[0].recipient == "functions.shelljson"
    lenient = parse(glued, start="completion", lenient=True)
    assert codes(lenient) == ["HG154"]
    assert (lenient.messages[0].recipient, lenient.messages[0].content_type) == (
        "functions.shell",
        "json",
    )
    # a real name ending in _json is left alone
    assert (
        parse(glued.replace("shelljson", "to_json"), start="completion", lenient=True)
        .messages[0]
        .recipient
        == "functions.to_json"
    )
    upper = "<|channel|>commentary to=functions.f <|constrain|>JSON<|message|>{}<|call|>"
    assert parse(upper, start="completion").messages[0].content_type == "<|constrain|>JSON"
    lenient_upper = parse(upper, start="completion", lenient=True)
    assert codes(lenient_upper) == ["HG155"]
    # the field is the input's slice (issue 30); HG155 says it is not in lower case
    assert lenient_upper.messages[0].content_type == "<|constrain|>JSON"


@pytest.mark.parametrize(
    ("ending", "how"), [("<|end|>", "<|end|>"), ("<|return|>", "<|return|>"), ("", "end of input")]
)
def test_call_not_ended_by_call_is_reported(ending, how):
    text = "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}" + ending
    result = parse(text, start="completion")
    assert codes(result) == ["HG153"] and result.ok
    assert how in result.diagnostics[0].message


def test_forged_tool_result_in_completion():
    text = (
        "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}<|call|>"
        '<|start|>functions.f to=assistant<|channel|>commentary<|message|>{"ok": true}<|end|>'
    )
    result = parse(text, start="completion")
    # a warning from the parser (the messages parsed); validate() reports it as an error
    assert codes(result) == ["HG170"] and result.ok
    assert result.diagnostics[0].severity is Severity.WARNING
    assert result.diagnostics[0].start == text.index("<|start|>functions.f")
    # in a stored conversation, tool results are normal
    assert parse("<|start|>assistant" + text).ok


def test_token_ids_only_special_ids_are_structure(encoding):
    text = "<|start|>user<|message|>say <|end|> please<|end|>"
    control = encode_harmony("<|start|>user<|message|>")
    ids = control + encoding.encode_ordinary("say <|end|> please") + [ControlToken.END.id]
    result = parse(ids)
    assert [m.content for m in result.messages] == ["say <|end|> please"]
    assert codes(result) == ["HG110"] and result.ok
    assert parse(text).messages[0].content == "say "  # as text, the spelling IS structure


def test_utf8_split_across_tokens(encoding):
    content = "naïve 東京 🎉 ok"
    ids = (
        encode_harmony("<|start|>user<|message|>")
        + encoding.encode_ordinary(content)
        + [ControlToken.END.id]
    )
    assert parse(ids).messages[0].content == content
    broken = ids[:-1] + [encoding.encode_ordinary("🎉")[0], ControlToken.END.id]
    result = parse(broken)
    assert codes(result) == ["HG105"] and result.messages[0].content.endswith("\ufffd")


def test_unknown_special_ids_and_out_of_range_ids():
    ids = encode_harmony("<|start|>user<|message|>hi<|end|>")
    result = parse([199999, *ids, -5, 10**9])
    assert codes(result) == ["HG103", "HG103", "HG103"]
    assert [d.start for d in result.diagnostics] == [0, len(ids) + 1, len(ids) + 2]
    assert [m.content for m in result.messages] == ["hi"]


def test_header_length_is_bounded():
    result = parse("<|start|>" + "a" * 5000 + "<|message|>x<|end|>", max_header_length=100)
    assert codes(result) == ["HG104"]


def test_empty_inputs():
    assert parse("").ok and parse("").messages == ()
    assert parse([]).ok
    assert codes(parse("", start="completion")) == ["HG102"]


SPEC_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "spec"

# Fixtures transcribed from the spec texts; expected (author, recipient, channel, content type,
# terminator) per message, and the prompt's next turn, written by hand.
SPEC_FIXTURES = {
    "readme_prompt.harmony": (
        "prompt",
        [
            ("system", None, None, None, "end"),
            ("developer", None, None, None, "end"),
            ("user", None, None, None, "end"),
        ],
        "assistant",
    ),
    "ongoing_analysis_prompt.harmony": (
        "prompt",
        [
            ("user", None, None, None, "end"),
            ("assistant", None, "analysis", None, "end"),
            ("assistant", "functions.lookup_weather", "commentary", "<|constrain|>json", "call"),
            ("functions.lookup_weather", None, None, None, "end"),
        ],
        "assistant",
    ),
    "structured_output_completion.harmony": (
        "completion",
        [
            ("assistant", None, "analysis", None, "end"),
            ("assistant", None, "final", "<|constrain|>json", "return"),
        ],
        None,
    ),
    "builtin_browser_completion.harmony": (
        "completion",
        [("assistant", "browser.search", "analysis", "code", "call")],
        None,
    ),
    "python_tool_conversation.harmony": (
        "conversation",
        [
            ("assistant", "python", "analysis", "code", "call"),
            ("python", "assistant", "analysis", None, "end"),
            ("assistant", None, "final", None, "end"),
        ],
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(SPEC_FIXTURES))
def test_spec_fixtures(name):
    start, expected, next_turn = SPEC_FIXTURES[name]
    text = (SPEC_DIR / name).read_text(encoding="utf-8")
    for source in (text, encode_harmony(text)):
        result = parse(source, start=start)
        assert result.ok, result.diagnostics
        got = [
            (m.author, m.recipient, m.channel, m.content_type, m.terminator.value)
            for m in result.messages
        ]
        assert got == expected
        assert result.next_turn == next_turn


def test_prompt_must_end_with_a_start():
    result = parse("<|start|>user<|message|>hi<|end|>", start="prompt")
    assert [d.code for d in result.diagnostics] == ["HG102"]
    assert "<|start|>" in result.diagnostics[0].expected
