"""The torch-free sampler: 1,000 random completions of the exported turn grammars, all valid.

The sampler draws random tokens that the grammar's mask allows; nothing else shapes the output.
Every sample must then pass checks that know nothing of the sampler: the strict parser over the
token ids, the validator with the tool schemas, jsonschema on each call's arguments, and a scan
that every control token arrived as its special id (never spelled in ordinary text).
``check_completion`` is shared with tests/generation/test_generation.py.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import jsonschema
import numpy as np
import pytest

from harmony_grammar import parse
from harmony_grammar.declarations.toolset import tool_schemas
from harmony_grammar.format import ControlToken, Terminator
from harmony_grammar.format.tokens import CONTROL_SPELLING_RE, FIRST_SPECIAL_ID
from harmony_grammar.format.vocabulary import load_encoding

pytest.importorskip("llguidance", reason="the generate extra is not installed")

from harmony_grammar.generation.sampling import (
    GrammarError,
    Sampler,
    llg_tokenizer,
    sample,
    token_prior,
)


def _function(name: str, description: str, parameters: dict[str, Any] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name, "description": description}
    if parameters is not None:
        spec["parameters"] = parameters
    return {"type": "function", "function": spec}


#: Tool sets in OpenAI's form, chosen to exercise what the schema compiler handles: required
#: and optional properties, enums, integer bounds, nested objects, arrays, booleans, a tool
#: with no parameters.
TOOL_SETS: dict[str, list[dict[str, Any]]] = {
    "weather": [
        _function(
            "get_weather",
            "Current weather for a place.",
            {
                "type": "object",
                "properties": {
                    "location": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                    "days": {"type": "integer", "minimum": 1, "maximum": 7},
                },
                "required": ["location"],
                "additionalProperties": False,
            },
        )
    ],
    "assistant": [
        _function(
            "search",
            "Web search.",
            {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "max_results": {"type": "integer", "minimum": 1, "maximum": 20},
                    "safe": {"type": "boolean"},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        ),
        _function("get_time", "The current time.", None),
        _function(
            "create_event",
            "Add a calendar event.",
            {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "attendees": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                    "place": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}, "room": {"type": "integer"}},
                        "required": ["city"],
                        "additionalProperties": False,
                    },
                },
                "required": ["title", "place"],
                "additionalProperties": False,
            },
        ),
    ],
}

#: A structured-output schema for the final message (``response_format``).
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
    },
    "required": ["answer", "score"],
    "additionalProperties": False,
}

_STOP_IDS = {ControlToken.CALL.id: Terminator.CALL, ControlToken.RETURN.id: Terminator.RETURN}
_CONTROL_IDS = {token.id for token in ControlToken}


def _function_name(tool_choice: Any) -> str | None:
    """The function a ``tool_choice`` names (``completion_grammar`` takes a tool's name)."""
    if tool_choice in ("auto", "required", "none"):
        return None
    return str(tool_choice)


def check_completion(
    ids: Sequence[int],
    tools: Sequence[Mapping[str, Any]],
    *,
    tool_choice: Any = "auto",
    response_format: Mapping[str, Any] | None = None,
) -> None:
    """Assert that ``ids`` is one valid assistant turn for these tools and options."""
    from harmony_grammar.validation.validator import validate

    encoding = load_encoding()
    ids = list(ids)
    assert ids, "empty completion"
    # Control tokens are special ids, and no run of ordinary tokens spells one.
    run: list[int] = []
    for token in [*ids, None]:
        if token is None or token >= FIRST_SPECIAL_ID:
            text = encoding.decode(run)
            assert not CONTROL_SPELLING_RE.search(text), f"control token spelled as text: {text!r}"
            run = []
            assert token is None or token in _CONTROL_IDS, f"non-Harmony special id {token}"
        else:
            run.append(token)
    assert ids[-1] in _STOP_IDS, f"does not end with a stop token: {encoding.decode(ids[-5:])!r}"

    result = parse(ids, start="completion", lenient=False, tools=tools)
    assert result.ok and not result.diagnostics, result.diagnostics
    report = validate(ids, tools=tools, start="completion", lenient=False)
    assert report.ok and not report.diagnostics, report.diagnostics
    messages = result.messages
    assert messages
    assert messages[-1].terminator is _STOP_IDS[ids[-1]]
    assert all(m.terminator is Terminator.END for m in messages[:-1])

    schemas = tool_schemas(tools)
    calls = [m for m in messages if m.recipient is not None]
    for call in calls:
        assert call.recipient is not None and call.recipient.startswith("functions.")
        name = call.recipient.removeprefix("functions.")
        assert name in schemas, call.recipient
        jsonschema.validate(json.loads(call.content), schemas[name])
        assert call.channel == "commentary"

    last = messages[-1]
    named = _function_name(tool_choice)
    if tool_choice == "none" or not tools:
        assert not calls
    if tool_choice == "required" or named:
        assert last.terminator is Terminator.CALL
    if named:
        assert {c.recipient for c in calls} == {f"functions.{named}"}
    if last.terminator is Terminator.CALL:
        assert last.recipient is not None
    else:
        assert last.channel == "final" and last.recipient is None
        if response_format is not None:
            jsonschema.validate(json.loads(last.content), response_format)


# -- the checker must be able to fail -------------------------------------------------------------

_CALL = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"Oslo"}<|call|>'
_WEATHER = TOOL_SETS["weather"]


def _ids(text: str) -> list[int]:
    from harmony_grammar.format.harmony_ids import encode_harmony

    return encode_harmony(text)


def test_check_completion_accepts_good_turns():
    check_completion(_ids(_CALL), _WEATHER)
    check_completion(_ids(_CALL), _WEATHER, tool_choice="required")
    answer = '<|channel|>final<|message|>{"answer":"yes","score":3}<|return|>'
    check_completion(_ids(answer), _WEATHER, tool_choice="none", response_format=ANSWER_SCHEMA)


@pytest.mark.parametrize(
    ("ids", "options"),
    [
        # the control tokens spelled as ordinary text
        (load_encoding().encode_ordinary(_CALL), {}),
        # a non-Harmony special id inside the content
        (_ids(_CALL)[:-3] + [FIRST_SPECIAL_ID + 2] + _ids(_CALL)[-3:], {}),
        (_ids(_CALL.replace('"Oslo"', "7")), {}),  # arguments off schema
        (_ids(_CALL.replace("get_weather", "get_time")), {}),  # unknown tool
        (_ids(_CALL.removesuffix("<|call|>")), {}),  # no stop token
        (_ids(_CALL.replace("<|call|>", "<|end|>")), {}),
        (_ids(_CALL.replace("commentary", "analysis")), {}),  # a call on analysis
        (_ids(_CALL), {"tool_choice": "none"}),
        (_ids("<|channel|>final<|message|>hi<|return|>"), {"tool_choice": "required"}),
        (
            _ids('<|channel|>final<|message|>{"answer":1}<|return|>'),
            {"response_format": ANSWER_SCHEMA},
        ),
    ],
    ids=[
        "spelled",
        "reserved-id",
        "off-schema",
        "unknown-tool",
        "no-stop",
        "end-not-call",
        "analysis-call",
        "call-under-none",
        "answer-under-required",
        "off-response-format",
    ],
)
def test_check_completion_rejects_bad_turns(ids, options):
    with pytest.raises((AssertionError, jsonschema.ValidationError)):
        check_completion(ids, _WEATHER, **options)


# -- the sampler itself, on grammars that need no turn grammar ----------------------------------


def test_prior_favours_short_tokens_closers_and_control_tokens():
    prior = token_prior()
    encoding = load_encoding()
    quote = encoding.encode_single_token(b'"')
    letter = encoding.encode_single_token(b"a")
    word = encoding.encode_ordinary(" information")[0]
    assert prior[quote] > prior[letter] > prior[word]
    assert prior[ControlToken.END.id] == prior[quote]
    assert prior[ControlToken.END.id] > prior[FIRST_SPECIAL_ID + 2]  # a reserved id
    assert not prior.flags.writeable


def test_invalid_grammar_raises():
    with pytest.raises(GrammarError):
        Sampler("%llguidance {}\nstart: undefined_rule")


def test_samples_follow_a_json_schema_grammar_and_are_reproducible():
    import llguidance

    grammar = llguidance.LLMatcher.grammar_from_json_schema(ANSWER_SCHEMA)
    first = sample(grammar, n=20, seed=11)
    again = sample(grammar, n=20, seed=11)
    assert [s.ids for s in first] == [s.ids for s in again]
    assert [s.ids for s in first] != [s.ids for s in sample(grammar, n=20, seed=12)]
    tokenizer = llg_tokenizer()
    for drawn in first:
        assert drawn.complete
        jsonschema.validate(json.loads(tokenizer.decode_str(list(drawn.ids))), ANSWER_SCHEMA)


def test_max_tokens_cuts_a_sample_short():
    grammar = "%llguidance {}\nstart: /[a-z]+/ <|end|>"
    drawn = sample(grammar, n=30, seed=1, max_tokens=2)
    assert all(len(s.ids) <= 2 for s in drawn)
    assert any(not s.complete for s in drawn)
    assert all(s.ids[-1] == ControlToken.END.id for s in drawn if s.complete)


def test_logits_function_replaces_the_prior():
    # A scorer that loves one letter: every sample is that letter repeated, then <|end|>.
    encoding = load_encoding()
    favourite = encoding.encode_single_token(b"q")
    scores = np.full(encoding.n_vocab, -30.0)
    scores[favourite] = 0.0
    scores[ControlToken.END.id] = -1.0
    grammar = "%llguidance {}\nstart: /[a-z]+/ <|end|>"
    for drawn in sample(grammar, n=5, seed=0, logits=lambda ids: scores):
        assert set(drawn.ids[:-1]) == {favourite}
        assert drawn.ids[-1] == ControlToken.END.id


# -- 1,000 samples of the exported turn grammars -------------------------------------------------

#: (tool set, tool_choice, response_format) and how many samples each; 1,000 in all.
CONFIGURATIONS = [
    ("weather", "auto", None, 200),
    ("weather", "required", None, 150),
    ("assistant", "auto", None, 200),
    ("assistant", "required", None, 150),
    ("assistant", "create_event", None, 100),
    ("assistant", "none", ANSWER_SCHEMA, 100),
    ("weather", "auto", ANSWER_SCHEMA, 100),
]


def test_configurations_total_one_thousand():
    assert sum(count for *_, count in CONFIGURATIONS) == 1000


@pytest.mark.parametrize(
    ("tool_set", "tool_choice", "response_format", "count"),
    CONFIGURATIONS,
    ids=[
        f"{c[0]}-{_function_name(c[1]) or c[1]}-{'rf' if c[2] else 'text'}" for c in CONFIGURATIONS
    ],
)
def test_sampled_turns_are_valid(tool_set, tool_choice, response_format, count):
    turn_grammar = pytest.importorskip(
        "harmony_grammar.generation.turn_grammar",
        reason="harmony_grammar/generation/turn_grammar.py is not importable",
    )
    tools = TOOL_SETS[tool_set]
    options: dict[str, Any] = {"tool_choice": tool_choice}
    if response_format is not None:
        options["response_format"] = response_format
    grammar = turn_grammar.completion_grammar(tools, target="llguidance", **options)
    sampler = Sampler(grammar, max_tokens=400)
    rng = np.random.default_rng(len(tool_set) * 1000 + count)
    endings: Counter[str] = Counter()
    for _ in range(count):
        drawn = sampler.sample(rng)
        assert drawn.complete, f"cut off at max_tokens: {load_encoding().decode(list(drawn.ids))!r}"
        check_completion(drawn.ids, tools, tool_choice=tool_choice, response_format=response_format)
        endings[_STOP_IDS[drawn.ids[-1]].value] += 1
    # The grammar, not luck, decides the endings; where both are allowed both must occur.
    if tool_choice == "auto":
        assert endings["call"] and endings["return"], endings


def test_stream_is_the_sample_loop_and_greedy_is_deterministic() -> None:
    """``Sampler.stream`` yields what ``sample`` returns; temperature 0 takes the best id."""
    import numpy as np

    from harmony_grammar.format.tokens import ControlToken
    from harmony_grammar.format.vocabulary import load_encoding
    from harmony_grammar.generation.sampling import Sampler, token_prior

    grammar = '%llguidance {}\nstart: "a" ("b" | "c" | "dd")* <|end|>\n'
    sampler = Sampler(grammar, max_tokens=40)
    whole = sampler.sample(np.random.default_rng(3))
    steps = sampler.stream(np.random.default_rng(3))
    assert tuple(steps) == whole.ids
    greedy = [list(sampler.stream(np.random.default_rng(seed), temperature=0)) for seed in (1, 2)]
    assert greedy[0] == greedy[1]  # no randomness left
    # Greedy over the prior: "b" and "c" (one byte each) tie above "dd"; the lower id wins.
    first = Sampler('%llguidance {}\nstart: ("b" | "c" | "dd") <|end|>\n').stream(
        np.random.default_rng(0), temperature=0
    )
    b, c = (load_encoding().encode_single_token(x) for x in (b"b", b"c"))
    assert token_prior()[b] == token_prior()[c] and b < c
    assert list(first) == [b, ControlToken.END.id]
