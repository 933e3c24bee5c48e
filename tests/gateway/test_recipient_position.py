"""Training and serving agree on where a call's recipient goes (issue 41).

``prepare`` (``render_training``) writes a call's ``to=`` after the role, as openai-harmony
renders it; gpt-oss writes it after ``<|channel|>commentary``. The gateway's turn grammar
accepts both by default (``serve --recipient-position either``), so a model fine-tuned on
``prepare``'s output is not pushed off what it learned, and the parser reads both into the
same call. The property test takes generated conversations that end in a call, renders them
as ``prepare`` does, and walks the exact trained ids of the call through the grammar the
gateway plans for the same request (an llguidance matcher, token by token).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harmony_grammar.bridges.chat import to_chat_completion
from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.gateway.chat.protocol import plan_chat
from harmony_grammar.gateway.plan import Limits
from harmony_grammar.training.batch import PrepareOptions
from harmony_grammar.training.importers import import_record
from harmony_grammar.training.render import render_training
from tests.support.request_bodies import chat_bodies

llguidance = pytest.importorskip("llguidance")

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
ASK = {"model": "m", "messages": [{"role": "user", "content": "Weather in Oslo?"}], "tools": TOOLS}
ARGUMENTS = '{"city":"Oslo"}'
#: One call, as openai-harmony renders it (role) and as gpt-oss writes it (channel).
CALLS = {
    "role": f" to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{ARGUMENTS}<|call|>",
    "channel": f"<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{ARGUMENTS}<|call|>",
}


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    from harmony_grammar.generation.outlines_export import harmony_lltokenizer

    return harmony_lltokenizer()


def accepts(tokenizer: Any, grammar: str, ids: list[int]) -> bool:
    matcher = llguidance.LLMatcher(tokenizer, grammar)
    assert not matcher.is_error(), matcher.get_error()
    return matcher.try_consume_tokens(ids) == len(ids) and matcher.is_accepting()


@pytest.mark.parametrize(
    ("position", "accepted"),
    [("either", {"role", "channel"}), ("role", {"role"}), ("channel", {"channel"})],
)
def test_the_gateways_grammar_takes_the_positions_it_is_set_to(
    tokenizer: Any, position: str, accepted: set[str]
) -> None:
    limits = Limits() if position == "either" else Limits(recipient_position=position)  # type: ignore[arg-type]
    for choice in ("auto", "required"):
        plan = plan_chat({**ASK, "tool_choice": choice}, model="m", limits=limits)
        verdicts = {name for name, text in CALLS.items() if accepts(tokenizer, plan.grammar, encode_harmony(text))}
        assert verdicts == accepted, (position, choice)


def test_the_default_is_either() -> None:
    assert Limits().recipient_position == "either"
    assert plan_chat(ASK, model="m", limits=Limits()).recipient_position == "either"


def test_the_parser_reads_both_positions_into_the_same_call() -> None:
    plan = plan_chat(ASK, model="m", limits=Limits())
    answers = {
        name: to_chat_completion(encode_harmony(text), strict=True, tools=plan.toolset, id_factory=lambda i: f"c{i}")
        for name, text in CALLS.items()
    }
    assert answers["role"] == answers["channel"]
    (call,) = answers["role"]["message"]["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": ARGUMENTS}
    assert answers["role"]["finish_reason"] == "tool_calls"


def test_serve_takes_recipient_position() -> None:
    from harmony_grammar.cli.main import build_parser

    parser = build_parser()
    for given_, read in (("both", "either"), ("either", "either"), ("role", "role"), ("channel", "channel")):
        assert parser.parse_args(["serve", "--recipient-position", given_]).recipient_position == read
    assert parser.parse_args(["serve"]).recipient_position == "either"


def _without_reasoning(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != "reasoning_content"}


@st.composite
def trained_calls(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A conversation whose last assistant turn is a call (a record for ``prepare``), and
    the request for that turn (the same conversation up to it). The call's arguments are
    compact JSON, as gpt-oss writes them and the gateway's grammar (``whitespace="compact"``)
    takes them."""
    body = draw(chat_bodies().filter(lambda b: b.get("tools")))
    body.pop("tool_choice", None)
    body.pop("response_format", None)
    messages = [_without_reasoning(m) for m in body["messages"]]
    tools = body["tools"]
    tool = draw(st.sampled_from(tools))
    if tool["type"] == "custom":
        call = {"id": "last", "type": "custom", "custom": {"name": tool["custom"]["name"], "input": "abc"}}
    else:
        schema = tool["function"]["parameters"]
        values = {"string": "x", "integer": 1, "boolean": True, "number": 1.5}
        arguments = {k: values[v["type"]] for k, v in schema["properties"].items()}
        call = {"id": "last", "type": "function", "function": {"name": tool["function"]["name"], "arguments": json.dumps(arguments, separators=(",", ":"))}}
    turn: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
    if draw(st.booleans()):
        turn["reasoning_content"] = "Let me call the tool."
    if draw(st.booleans()):
        turn["content"] = "Checking."  # a preamble before the call
    record = {"messages": [*messages, turn], "tools": tools}
    return record, {"model": "m", "messages": messages, "tools": tools}


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture], deadline=None)
@given(case=trained_calls())
def test_prepares_trained_call_is_accepted_by_the_gateways_default_grammar(
    tokenizer: Any, case: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    record, request = case
    imported = import_record(record)
    assert imported.conversation is not None, imported.diagnostics
    options = PrepareOptions()
    example = render_training(
        imported.conversation, options.render, train_on=options.train_on, drop_scope=options.drop_scope
    )
    plan = plan_chat(request, model="m", limits=Limits())
    prompt = list(plan.prompt_ids)
    # The gateway's prompt for the turn is exactly what prepare trained the model to follow,
    # and what follows it, the trained turn, ends in the call.
    assert example.input_ids[: len(prompt)] == prompt
    completion = example.input_ids[len(prompt) :]
    assert "<|start|>assistant to=" in example.text  # prepare's placement: after the role
    assert accepts(tokenizer, plan.grammar, completion), example.text[-300:]
    # Under a grammar that allows only gpt-oss's placement, the same ids are refused.
    channel_only = plan_chat(request, model="m", limits=Limits(recipient_position="channel"))
    assert not accepts(tokenizer, channel_only.grammar, completion)
