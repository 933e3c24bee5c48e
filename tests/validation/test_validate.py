"""``validate()``: the report, the parser's diagnostics inside it, text and token ids."""

from __future__ import annotations

import json

import pytest

from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.model import Severity
from harmony_grammar.format.parser import parse
from harmony_grammar.validation.validator import ValidationReport, validate

CONVERSATION = (
    "<|start|>user<|message|>Weather in Oslo?<|end|>"
    "<|start|>assistant<|channel|>analysis<|message|>Use get_weather.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"city": "Oslo"}<|call|>'
    '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{"c": 3}<|end|>'
    "<|start|>assistant<|channel|>final<|message|>3 °C.<|return|>"
)


def test_a_valid_conversation():
    report = validate(CONVERSATION)
    assert isinstance(report, ValidationReport)
    assert report.ok and report.diagnostics == ()
    assert report.messages == parse(CONVERSATION).messages


def test_the_report_includes_the_parsers_diagnostics():
    text = "<|start|>user<|message|>hi<|start|>assistant<|channel|>final<|message|>x<|end|>"
    parsed = parse(text)
    assert [d.code for d in parsed.diagnostics] == ["HG100"]
    report = validate(text)
    assert [d.code for d in report.diagnostics][:1] == ["HG100"]
    assert not report.ok


def test_lenient_repairs_are_warnings_and_rules_still_run():
    text = "<|start|>assistant<|channel|>bogus<|message|>x<|end|>junk"
    strict = validate(text)
    lenient = validate(text, lenient=True)
    assert "HG201" in [d.code for d in strict.diagnostics]
    assert [d.code for d in lenient.diagnostics] == ["HG201", "HG152"]
    assert lenient.diagnostics[1].severity is Severity.WARNING


def test_diagnostics_are_sorted_by_position():
    text = (
        "<|start|>assistant<|message|>a<|end|>"
        "<|start|>assistant<|channel|>analysis to=functions.f json<|message|>{}<|end|>"
    )
    report = validate(text)
    starts = [d.start for d in report.diagnostics]
    assert starts == sorted(starts)
    # The call on analysis is itself analysis kept in history: no HG212.
    assert [d.code for d in report.diagnostics] == ["HG200", "HG153", "HG202"]


def test_token_ids_give_the_same_codes_with_token_positions():
    text = CONVERSATION.replace('{"city": "Oslo"}', '{"city": 5}')
    tools = [{"name": "get_weather", "parameters": {"properties": {"city": {"type": "string"}}}}]
    from_text = validate(text, tools=tools)
    ids = encode_harmony(text)
    from_ids = validate(ids, tools=tools)
    assert [d.code for d in from_text.diagnostics] == ["HG180"]
    assert [d.code for d in from_ids.diagnostics] == ["HG180"]
    diagnostic = from_ids.diagnostics[0]
    assert diagnostic.line is None
    assert ids[diagnostic.start] == 200006 and ids[diagnostic.end - 1] == 200012  # start..call


def test_completion_start_and_role():
    completion = "<|channel|>final<|message|>Hi<|return|>"
    assert validate(completion, start="completion").ok
    assert not validate(completion).ok  # as a conversation it lacks <|start|>
    user = validate("<|message|>hello<|end|>", start="completion", role="user")
    assert user.ok and user.messages[0].role.value == "user"


def test_report_to_dict_is_json_ready():
    report = validate("<|start|>assistant<|message|>x<|end|>")
    data = json.loads(json.dumps(report.to_dict()))
    assert data["ok"] is False
    assert data["diagnostics"][0]["code"] == "HG200"
    assert data["diagnostics"][0]["severity"] == "error"
    assert report.counts() == {"HG200": 1}


def test_a_malformed_tools_list_raises():
    with pytest.raises(ValueError, match="without a name"):
        validate("<|start|>user<|message|>x<|end|>", tools=[{"parameters": {}}])
