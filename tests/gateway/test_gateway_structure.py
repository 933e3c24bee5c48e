"""The gateway's shape (issue 40): small modules, a protocol and a serving module per API, and a
plan that keeps what was read of a request, never the request itself."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("starlette")

from harmony_grammar.gateway.chat.protocol import plan_chat
from harmony_grammar.gateway.plan import ECHOED, Limits, Plan
from harmony_grammar.gateway.responses.protocol import plan_responses
from harmony_grammar.gateway.responses.serving import ResponsesRun


@pytest.mark.parametrize("api", ["chat", "responses", "completions"])
def test_each_api_has_its_protocol_and_its_serving_module(api: str) -> None:
    """``protocol``: the body read and planned; ``serving``: the run and the route."""
    protocol = importlib.import_module(f"harmony_grammar.gateway.{api}.protocol")
    serving = importlib.import_module(f"harmony_grammar.gateway.{api}.serving")
    assert any(name.startswith("plan_") for name in protocol.__all__)
    assert any(name.endswith("Serving") for name in serving.__all__)
    assert any(name.endswith("Run") for name in serving.__all__)


def _values(value: Any) -> Iterator[Any]:
    """``value`` and everything inside it (mappings, sequences, dataclasses)."""
    yield value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for item in dataclasses.fields(value):
            yield from _values(getattr(value, item.name))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _values(key)
            yield from _values(item)
    elif isinstance(value, (list, tuple, frozenset, set)):
        for item in value:
            yield from _values(item)


def _holds(plan: Plan, thing: object) -> bool:
    return any(value is thing for value in _values(plan))


TOOL = {"type": "function", "name": "lookup", "parameters": {"type": "object"}}
_ECHO_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "instructions": st.text(max_size=40),
    "tools": st.just([TOOL]),
    "tool_choice": st.sampled_from(["auto", "none", "required"]),
    "parallel_tool_calls": st.booleans(),
    "text": st.just({"format": {"type": "text"}}),
    "reasoning": st.sampled_from([{"effort": "low"}, {"effort": "high"}]),
}


@st.composite
def responses_bodies(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {
        "input": [{"role": "user", "content": draw(st.text(min_size=1, max_size=60))}],
        "metadata": {"note": draw(st.text(max_size=20))},
        "store": draw(st.booleans()),
    }
    for key in draw(st.lists(st.sampled_from(sorted(_ECHO_VALUES)), unique=True)):
        body[key] = draw(_ECHO_VALUES[key])
    if body.get("tool_choice") == "required" and "tools" not in body:
        body["tools"] = [TOOL]
    return body


@given(responses_bodies())
def test_a_responses_plan_keeps_what_its_answer_echoes_and_nothing_else(
    body: dict[str, Any],
) -> None:
    plan = plan_responses(body, model="m", limits=Limits())
    assert "request" not in {item.name for item in dataclasses.fields(Plan)}
    assert plan.echo == {key: body[key] for key in ECHOED if key in body}
    # Neither the body nor its conversation is held; the answer still echoes the fields.
    assert not _holds(plan, body) and not _holds(plan, body["input"])
    assert not _holds(plan, body["metadata"])
    response = ResponsesRun(plan).bridge.response()
    for key in ECHOED:
        if key in body and key != "parallel_tool_calls":
            assert response[key] == body[key]
    assert response["parallel_tool_calls"] is bool(body.get("parallel_tool_calls", False))


def test_a_chat_plan_keeps_no_echo_and_not_the_body() -> None:
    body = {"messages": [{"role": "user", "content": "hi"}], "instructions": "x", "user": "u"}
    plan = plan_chat(body, model="m", limits=Limits())
    assert plan.echo == {} and not _holds(plan, body) and not _holds(plan, body["messages"])
