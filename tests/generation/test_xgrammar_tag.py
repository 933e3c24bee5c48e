"""The xgrammar structural tag: token by token with xgrammar's GrammarMatcher over
o200k_harmony, against the llguidance turn grammar's accept/reject suite, the cases
xgrammar's built-in Harmony tag gets wrong, and the one limit xgrammar imposes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.generation.turn_grammar import TurnGrammarError, completion_grammar
from harmony_grammar.generation.xgrammar_tag import harmony_tokenizer_info, xgrammar_structural_tag

from .test_turn_grammar import (
    ANALYSIS,
    MALFORMED,
    PREAMBLE,
    TOOLS,
    WELL_FORMED,
    call_text,
)
from .test_turn_grammar import accepts as llg_accepts

xgrammar = pytest.importorskip("xgrammar")
llguidance = pytest.importorskip("llguidance")

ANSWER = {
    "type": "object",
    "properties": {"temp": {"type": "integer"}},
    "required": ["temp"],
    "additionalProperties": False,
}
RESPONSE_FORMAT = {"type": "json_schema", "json_schema": {"name": "answer", "schema": ANSWER}}


@pytest.fixture(scope="module")
def compiler() -> Any:
    return xgrammar.GrammarCompiler(harmony_tokenizer_info())


@pytest.fixture(scope="module")
def lltokenizer() -> Any:
    from harmony_grammar.generation.outlines_export import harmony_lltokenizer

    return harmony_lltokenizer()


def xg_accepts(compiler: Any, tag: Any, ids: list[int]) -> bool:
    """Every id accepted in turn, and the turn complete (the stop token ends it)."""
    compiled = compiler.compile_structural_tag(tag if isinstance(tag, str) else json.dumps(tag))
    matcher = xgrammar.GrammarMatcher(compiled)
    return all(matcher.accept_token(i) for i in ids) and matcher.is_terminated()


def test_completion_grammar_dispatches_to_the_tag() -> None:
    text = completion_grammar(TOOLS, target="xgrammar")
    assert json.loads(text) == xgrammar_structural_tag(TOOLS)
    tag = json.loads(text)
    assert tag["type"] == "structural_tag"
    assert "json_schema" not in text  # bodies are our grammars, not xgrammar's converter
    with pytest.raises(TurnGrammarError):
        completion_grammar(TOOLS, target="ebnf")


@pytest.mark.parametrize("text", WELL_FORMED)
def test_accepts_what_the_llguidance_grammar_accepts(compiler: Any, text: str) -> None:
    assert xg_accepts(compiler, completion_grammar(TOOLS, target="xgrammar"), encode_harmony(text))


@pytest.mark.parametrize("text", MALFORMED)
def test_rejects_what_the_llguidance_grammar_rejects(compiler: Any, text: str) -> None:
    assert not xg_accepts(
        compiler, completion_grammar(TOOLS, target="xgrammar"), encode_harmony(text)
    )


FINAL = "<|channel|>final<|message|>Hi<|return|>"
JSON_FINAL = '<|channel|>final <|constrain|>json<|message|>{"temp":20}<|return|>'
OPEN_TOOL = {
    "name": "f",
    "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
}
# (options, text, accepted): every option of completion_grammar, each case checked on both
# targets, so the tag and the llguidance grammar are held to one table.
OPTION_CASES: list[tuple[dict[str, Any], str, bool]] = [
    ({"recipient_position": "channel"}, call_text(position="role"), False),
    ({"recipient_position": "role"}, call_text(position="role"), True),
    ({"recipient_position": "role"}, call_text(), False),
    ({"recipient_position": "either"}, call_text(position="role"), True),
    ({"recipient_position": "either"}, call_text(), True),
    ({"content_type": "json"}, call_text(content_type=" json"), True),
    ({"content_type": "json"}, call_text(), False),
    ({}, call_text(content_type=" json"), False),
    ({"content_type": None}, call_text(content_type=""), True),
    ({"tool_choice": "none"}, FINAL, True),
    ({"tool_choice": "none"}, call_text(), False),
    ({"tool_choice": "required"}, FINAL, False),
    ({"tool_choice": "required"}, call_text(), True),
    ({"tool_choice": "get_weather"}, call_text(tool="get_location", body="{}"), False),
    ({"tool_choice": "get_weather"}, ANALYSIS + call_text(), True),
    ({"allow_analysis": False}, ANALYSIS + call_text(), False),
    ({"allow_preamble": False}, PREAMBLE + call_text(), False),
    ({"allow_analysis": False, "allow_preamble": False}, call_text(), True),
    ({"tool_choice": "none", "response_format": RESPONSE_FORMAT}, JSON_FINAL, True),
    (
        {"tool_choice": "none", "response_format": RESPONSE_FORMAT},
        JSON_FINAL.replace("20", '"warm"'),
        False,
    ),
    ({"tool_choice": "none", "response_format": RESPONSE_FORMAT}, FINAL, False),
    ({"tools": [OPEN_TOOL]}, call_text(tool="f", body='{"a":1,"b":2}'), False),
    (
        {"tools": [OPEN_TOOL], "undeclared_properties": True},
        call_text(tool="f", body='{"a":1,"b":2}'),
        True,
    ),
    ({"whitespace": "flexible"}, call_text(body='{ "city" : "Paris" }'), True),
    ({}, call_text(body='{ "city" : "Paris" }'), False),
    ({}, call_text(body='{"city":"S\\u00e3o Paulo ✓ é"}'), True),
]


@pytest.mark.parametrize(("options", "text", "accepted"), OPTION_CASES)
def test_options_agree_with_llguidance(
    compiler: Any, lltokenizer: Any, options: dict[str, Any], text: str, accepted: bool
) -> None:
    options = dict(options)
    tools = options.pop("tools", TOOLS)
    ids = encode_harmony(text)
    assert llg_accepts(lltokenizer, completion_grammar(tools, **options), ids) is accepted
    tag = completion_grammar(tools, target="xgrammar", **options)
    assert xg_accepts(compiler, tag, ids) is accepted


def test_control_tokens_spelled_as_text_are_not_tokens(compiler: Any, encoding: Any) -> None:
    tag = completion_grammar(TOOLS, target="xgrammar")
    ids = encode_harmony(call_text())
    assert xg_accepts(compiler, tag, ids)
    assert not xg_accepts(compiler, tag, ids[:-1] + encoding.encode_ordinary("<|call|>"))
    assert not xg_accepts(compiler, tag, encoding.encode_ordinary("<|channel|>") + ids[1:])
    # In free text a spelling is only text (as in the llguidance grammar); a special id is not.
    final = "<|channel|>final<|message|>{}<|return|>"
    spelled = (
        encode_harmony(final.format(""))[:3]
        + encoding.encode_ordinary("see <|end|>")
        + encode_harmony("<|return|>")
    )
    assert xg_accepts(compiler, tag, spelled)
    assert not xg_accepts(compiler, tag, encode_harmony(final.format("see <|end|>")))


# xgrammar 0.2.9's own get_model_structural_tag("harmony", ...), token by token: the valid
# turns it rejects and the invalid ones it accepts (issue 16), each right in our tag.
SPELLED = object()  # marker: the turn with control tokens written as ordinary text tokens
BUILTIN_REJECTS_VALID = [
    call_text(),  # channel-section call with " <|constrain|>json" (the guide's spelling)
    call_text(content_type=" json"),  # " json" in the channel section
    PREAMBLE + call_text(),  # a commentary preamble before a call
]
BUILTIN_ACCEPTS_INVALID: list[Any] = [
    "<|channel|>analysis<|message|>x<|return|>",  # analysis ended by <|return|>
    # a final answer followed by analysis
    "<|channel|>final<|message|>a<|end|><|start|>assistant<|channel|>analysis<|message|>b<|end|>",
    "<|channel|>final<|message|>a<|end|><|start|>assistant<|channel|>final<|message|>b<|return|>",
    "<|channel|>final<|message|>a<|end|>",  # the turn ends in <|end|>
    SPELLED,
]


def _builtin_tag() -> str:
    tools = [{"type": "function", "function": WEATHER_FUNCTION}]
    return xgrammar.get_model_structural_tag("harmony", tools=tools).model_dump_json()


WEATHER_FUNCTION = TOOLS[0]["function"]


def _ids(case: Any, encoding: Any) -> list[int]:
    if case is SPELLED:
        # every control token written as ordinary text tokens
        return encoding.encode_ordinary("<|channel|>final<|message|>Hi<|return|>")
    return encode_harmony(case)


def test_the_builtin_tag_gets_these_wrong_and_ours_does_not(compiler: Any, encoding: Any) -> None:
    builtin, ours = _builtin_tag(), completion_grammar(TOOLS, target="xgrammar")
    # Ours is asked for the content type each valid case spells (the default, or " json").
    builtin_wrong = 0
    for case in BUILTIN_REJECTS_VALID:
        ids = _ids(case, encoding)
        tag = (
            completion_grammar(TOOLS, target="xgrammar", content_type="json")
            if " json<|message|>" in case
            else ours
        )
        assert xg_accepts(compiler, tag, ids), case
        builtin_wrong += not xg_accepts(compiler, builtin, ids)
    for case in BUILTIN_ACCEPTS_INVALID:
        ids = _ids(case, encoding)
        assert not xg_accepts(compiler, ours, ids), case
        builtin_wrong += _prefix_ok(compiler, builtin, ids)
    print(
        f"xgrammar's built-in harmony tag: {builtin_wrong} of {len(BUILTIN_REJECTS_VALID) + len(BUILTIN_ACCEPTS_INVALID)} cases wrong"
    )
    assert builtin_wrong == len(BUILTIN_REJECTS_VALID) + len(BUILTIN_ACCEPTS_INVALID)


def _prefix_ok(compiler: Any, tag: str, ids: list[int]) -> bool:
    """Every id accepted: a serving engine would have let the model write this turn (its
    last id is a stop token, or the builtin tag lets a stop token follow)."""
    compiled = compiler.compile_structural_tag(tag)
    matcher = xgrammar.GrammarMatcher(compiled)
    return all(matcher.accept_token(i) for i in ids)


def test_the_limit_a_special_id_inside_json_counts_as_its_spelling(
    compiler: Any, lltokenizer: Any
) -> None:
    # xgrammar matches a grammar body's tokens by their bytes, and the tokenizer info of a
    # serving engine spells each special id as its text: so inside a JSON string the special
    # <|end|> passes as the text "<|end|>". llguidance tells them apart. Documented in
    # docs/serving.md; this test notices if xgrammar changes.
    ids = encode_harmony(call_text(body='{"city":"<|end|>"}'))
    assert not llg_accepts(lltokenizer, completion_grammar(TOOLS), ids)
    assert xg_accepts(compiler, completion_grammar(TOOLS, target="xgrammar"), ids)
    # Everywhere else (headers, terminators, free text) the special id is told apart.
    text_ids = encode_harmony("<|channel|>final<|message|>a<|end|>b<|return|>")
    assert not xg_accepts(compiler, completion_grammar(TOOLS, target="xgrammar"), text_ids)


# emit_xgrammar reshapes the GBNF for xgrammar's speed; the language must stay the same.
RESHAPE_SCHEMAS = [
    {"type": "string"},
    {"type": "string", "minLength": 2, "maxLength": 4},
    {"type": "array", "items": {"type": "integer", "minimum": -3}, "maxItems": 3},
    {"type": "array", "items": {"enum": ["a", "b\u00e9"]}, "minItems": 1},
    {"type": "number"},
    {"type": "object", "properties": {"k": {"type": "boolean"}, "n": {"type": "null"}}},
]
RESHAPE_TEXTS = [
    '""',
    '"a"',
    '"ab"',
    '"abcd"',
    '"abcde"',
    '"\\u00e9x"',
    '"\\ud83d\\ude00"',
    '"\\ud83d"',
    '"\\ude00"',
    '"\\q"',
    '"a\\"b"',
    "[]",
    "[1]",
    "[-3,0,12]",
    "[-4]",
    "[1,2,3,4]",
    '["a"]',
    '["b\\u00e9","a"]',
    '["bé"]',
    "0",
    "-0.5e+3",
    "01",
    "1.",
    '{"k":true}',
    '{"n":null,"k":false}',
    '{"k":true,"n":null}',
    "{}",
    '{"x":1}',
]


@pytest.mark.parametrize("schema", RESHAPE_SCHEMAS, ids=lambda s: json.dumps(s)[:40])
def test_the_xgrammar_emitter_keeps_the_language(schema: Any) -> None:
    from harmony_grammar.schema import compile_schema
    from harmony_grammar.schema.emit_gbnf import emit_gbnf
    from harmony_grammar.schema.emit_xgrammar import emit_xgrammar

    grammar = compile_schema(schema, whitespace="compact", closed_objects=True)
    plain = xgrammar.Grammar.from_ebnf(emit_gbnf(grammar))
    reshaped = xgrammar.Grammar.from_ebnf(emit_xgrammar(grammar))
    verdicts = []
    for text in RESHAPE_TEXTS:
        ours = xgrammar.testing._is_grammar_accept_string(reshaped, text)
        assert ours == xgrammar.testing._is_grammar_accept_string(plain, text), text
        verdicts.append(ours)
    assert any(verdicts)  # each schema accepts some of the texts: the check is not vacuous
