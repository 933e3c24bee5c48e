"""The turn grammar (completion_grammar) and its outlines export, checked with llguidance."""

from __future__ import annotations

import re

import pytest

from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.tokens import ControlToken
from harmony_grammar.generation.turn_grammar import (
    TurnGrammarError,
    completion_grammar,
    message_shape,
)

llguidance = pytest.importorskip("llguidance")

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}
LOCATION = {"name": "get_location", "parameters": {"type": "object", "properties": {}}}
TOOLS = [WEATHER, LOCATION]
CALL = '{"city":"Paris","unit":"celsius"}'


@pytest.fixture(scope="module")
def tokenizer():
    from harmony_grammar.generation.outlines_export import harmony_lltokenizer

    return harmony_lltokenizer()


def accepts(tokenizer, grammar, ids):
    matcher = llguidance.LLMatcher(tokenizer, grammar)
    assert not matcher.is_error(), matcher.get_error()
    consumed = matcher.try_consume_tokens(ids)
    return consumed == len(ids) and matcher.is_accepting()


def call_text(tool="get_weather", body=CALL, position="channel", content_type=" <|constrain|>json"):
    if position == "channel":
        return f"<|channel|>commentary to=functions.{tool}{content_type}<|message|>{body}<|call|>"
    return f" to=functions.{tool}<|channel|>commentary{content_type}<|message|>{body}<|call|>"


ANALYSIS = "<|channel|>analysis<|message|>The user wants the weather.<|end|><|start|>assistant"
PREAMBLE = "<|channel|>commentary<|message|>Checking the weather.<|end|><|start|>assistant"


def test_grammar_routes_to_llguidance_with_special_tokens():
    grammar = completion_grammar(TOOLS)
    assert grammar.splitlines()[0] == "%llguidance {}"
    assert any(re.match(r"^\s*start\s*:", line) for line in grammar.splitlines())
    assert '"<|' not in grammar  # a quoted spelling would be text, not the special token
    assert "<|call|>" in grammar and "<|return|>" in grammar


# Shared with tests/generation/test_xgrammar_tag.py: the xgrammar tag must agree on every one.
WELL_FORMED = [
    call_text(),
    ANALYSIS + call_text(),
    ANALYSIS + "<|channel|>commentary<|message|>Let me look.<|end|><|start|>assistant" + call_text(),
    PREAMBLE + PREAMBLE + call_text(tool="get_location", body="{}"),
    "<|channel|>final<|message|>Hello!<|return|>",
    ANALYSIS + "<|channel|>final<|message|>It is sunny.<|return|>",
]
MALFORMED = [
    call_text(body='{"town":"Paris"}'),  # not in the schema
    call_text(body='{"city":"Paris","unit":"kelvin"}'),
    call_text(tool="get_time"),  # not a tool
    call_text().replace("<|channel|>commentary", "<|channel|>analysis"),  # call on analysis
    call_text().replace("<|call|>", "<|end|>"),  # a call must end in <|call|>
    "<|channel|>final<|message|>Hello!<|end|>",  # a final answer ends in <|return|>
    ANALYSIS + ANALYSIS + "<|channel|>final<|message|>x<|return|>",  # one analysis only
    "<|channel|>final<|message|>Hi<|return|><|start|>assistant<|channel|>final<|message|>again<|return|>",
]


@pytest.mark.parametrize("text", WELL_FORMED)
def test_accepts_well_formed_turns(tokenizer, text):
    assert accepts(tokenizer, completion_grammar(TOOLS), encode_harmony(text))


@pytest.mark.parametrize("text", MALFORMED)
def test_rejects_malformed_turns(tokenizer, text):
    assert not accepts(tokenizer, completion_grammar(TOOLS), encode_harmony(text))


def test_spelled_control_tokens_are_not_tokens(tokenizer, encoding):
    ids = encode_harmony(call_text())
    spelled = ids[:-1] + encoding.encode_ordinary("<|call|>")
    assert accepts(tokenizer, completion_grammar(TOOLS), ids)
    assert not accepts(tokenizer, completion_grammar(TOOLS), spelled)


@pytest.mark.parametrize(
    ("position", "accepted", "rejected"),
    [("channel", ["channel"], ["role"]), ("role", ["role"], ["channel"]), ("either", ["channel", "role"], [])],
)
def test_recipient_position(tokenizer, position, accepted, rejected):
    grammar = completion_grammar(TOOLS, recipient_position=position)
    for where in accepted:
        assert accepts(tokenizer, grammar, encode_harmony(call_text(position=where)))
    for where in rejected:
        assert not accepts(tokenizer, grammar, encode_harmony(call_text(position=where)))


def test_content_type_spelling(tokenizer):
    bare = completion_grammar(TOOLS, content_type="json")
    assert accepts(tokenizer, bare, encode_harmony(call_text(content_type=" json")))
    assert not accepts(tokenizer, bare, encode_harmony(call_text()))
    assert not accepts(tokenizer, completion_grammar(TOOLS), encode_harmony(call_text(content_type=" json")))


def test_tool_choice(tokenizer):
    final = encode_harmony("<|channel|>final<|message|>Hi<|return|>")
    call = encode_harmony(call_text())
    other = encode_harmony(call_text(tool="get_location", body="{}"))
    assert accepts(tokenizer, completion_grammar(TOOLS, tool_choice="none"), final)
    assert not accepts(tokenizer, completion_grammar(TOOLS, tool_choice="none"), call)
    assert not accepts(tokenizer, completion_grammar(TOOLS, tool_choice="required"), final)
    assert accepts(tokenizer, completion_grammar(TOOLS, tool_choice="required"), call)
    named = completion_grammar(TOOLS, tool_choice="get_weather")
    assert accepts(tokenizer, named, call) and not accepts(tokenizer, named, other)
    with pytest.raises(TurnGrammarError):
        completion_grammar(TOOLS, tool_choice="get_time")


def test_no_analysis_no_preamble(tokenizer):
    grammar = completion_grammar(TOOLS, allow_analysis=False, allow_preamble=False)
    assert accepts(tokenizer, grammar, encode_harmony(call_text()))
    assert not accepts(tokenizer, grammar, encode_harmony(ANALYSIS + call_text()))
    assert not accepts(tokenizer, grammar, encode_harmony(PREAMBLE + call_text()))


def test_response_format_binds_the_final_answer(tokenizer):
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": {
            "type": "object", "properties": {"temp": {"type": "integer"}},
            "required": ["temp"], "additionalProperties": False,
        }},
    }
    grammar = completion_grammar(TOOLS, tool_choice="none", response_format=response_format)
    good = '<|channel|>final <|constrain|>json<|message|>{"temp":20}<|return|>'
    assert accepts(tokenizer, grammar, encode_harmony(good))
    assert not accepts(tokenizer, grammar, encode_harmony(good.replace("20", '"warm"')))
    assert not accepts(tokenizer, grammar, encode_harmony("<|channel|>final<|message|>20 degrees<|return|>"))


def test_shapes_come_from_the_grammar():
    shape = message_shape(first=False, terminator=ControlToken.CALL,
                          header={"CHANNEL", "CHANNEL_NAME", "CHANNEL_RECIPIENT", "SPACE", "CONSTRAIN", "CONTENT_TYPE"})
    assert shape[:3] == ("START", "AUTHOR", "CHANNEL") and shape[-3:] == ("MESSAGE", "CONTENT", "CALL")
    with pytest.raises(TurnGrammarError):  # the grammar has no header with two recipients
        message_shape(first=True, terminator=ControlToken.CALL,
                      header={"ROLE_RECIPIENT", "CHANNEL", "CHANNEL_NAME", "CHANNEL_RECIPIENT"})


def test_to_outlines_returns_a_validated_cfg(monkeypatch):
    outlines = pytest.importorskip("outlines")
    from harmony_grammar.generation import outlines_export

    cfg = outlines_export.to_outlines(TOOLS)
    assert isinstance(cfg, outlines.types.CFG)
    assert cfg.definition == completion_grammar(TOOLS)
    monkeypatch.setattr(outlines_export, "completion_grammar", lambda tools, options=None, **o: "%llguidance {}\nstart: nope\n")
    with pytest.raises(TurnGrammarError, match="llguidance rejected"):
        outlines_export.to_outlines(TOOLS)


def test_grammar_cli(capsys, tmp_path):
    import json

    from harmony_grammar.cli.main import main

    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"tools": TOOLS}))
    assert main(["grammar", "--tools", str(tools), "--tool-choice", "required"]) == 0
    assert capsys.readouterr().out == completion_grammar(TOOLS, tool_choice="required")
    assert main(["grammar", "--tools", str(tools), "--tool-choice", "get_time"]) == 2
    assert "not among the tools" in capsys.readouterr().err


def test_declared_property_order_is_kept(tokenizer):
    tool = {"name": "add", "parameters": {"type": "object", "properties": {
        "sku": {"type": "string"}, "quantity": {"type": "integer"}}, "required": ["sku", "quantity"]}}
    grammar = completion_grammar([tool], tool_choice="required")
    body = '{"sku":"A-1","quantity":2}'
    assert accepts(tokenizer, grammar, encode_harmony(call_text(tool="add", body=body)))


def test_undeclared_properties_only_on_request(tokenizer):
    tool = {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}
    extra = encode_harmony(call_text(tool="f", body='{"a":1,"b":2}'))
    assert not accepts(tokenizer, completion_grammar([tool]), extra)
    assert accepts(tokenizer, completion_grammar([tool], undeclared_properties=True), extra)


# ------------------------------------------------------------------ one options object


def test_one_frozen_options_object_for_every_entry_point():
    import dataclasses
    import json as json_module

    from harmony_grammar.generation import TurnOptions, xgrammar_structural_tag

    options = TurnOptions(tool_choice="required", allow_preamble=False, whitespace="flexible")
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.tool_choice = "none"  # type: ignore[misc]
    keywords = {"tool_choice": "required", "allow_preamble": False, "whitespace": "flexible"}
    assert completion_grammar(TOOLS, options) == completion_grammar(TOOLS, **keywords)
    assert completion_grammar(TOOLS, options) != completion_grammar(TOOLS)
    tag = xgrammar_structural_tag(TOOLS, options)
    assert tag == xgrammar_structural_tag(TOOLS, **keywords)
    # the two xgrammar spellings are one function: the dict, and its JSON text
    assert completion_grammar(TOOLS, options, target="xgrammar") == json_module.dumps(
        tag, ensure_ascii=False
    )
    # keywords apply over a given object
    assert completion_grammar(TOOLS, options, tool_choice="auto") == completion_grammar(
        TOOLS, allow_preamble=False, whitespace="flexible"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"recipient_position": "middle"}, "recipient_position"),
        ({"content_type": "xml"}, "content_type"),
        ({"whitespace": "lots"}, "whitespace"),
        ({"tool_choice": 3}, "tool_choice"),
        ({"toolchoice": "auto"}, "unknown TurnOptions option 'toolchoice'"),
    ],
)
def test_bad_options_are_refused_when_the_options_are_made(change, message):
    from harmony_grammar.generation import TurnOptions, xgrammar_structural_tag

    for build in (completion_grammar, xgrammar_structural_tag):
        with pytest.raises(TurnGrammarError, match=message):
            build(TOOLS, **change)
    if not change.keys() & {"toolchoice"}:
        with pytest.raises(TurnGrammarError, match=message):
            TurnOptions(**change)


def test_the_sampler_takes_the_same_options():
    pytest.importorskip("llguidance")
    import numpy as np

    from harmony_grammar.generation import TurnOptions
    from harmony_grammar.generation.sampling import Sampler

    options = TurnOptions(tool_choice="none", allow_analysis=False, allow_preamble=False)
    sampler = Sampler.for_turn(TOOLS, options, max_tokens=40)
    from harmony_grammar.format.vocabulary import load_encoding

    ids = sampler.sample(np.random.default_rng(0)).ids
    text = load_encoding().decode(list(ids))
    assert text.startswith("<|channel|>final<|message|>"), text
