"""Unknown request fields (issue 41): a misspelling is refused with the field it meant, a
message without its content is refused, anything else unknown is accepted and reported.

The one reader (``read_request``) decides, so every door agrees: ``render()`` raises,
the CLI exits 2 with one line (and prints a warning line for a field it ignored), and the
gateway answers 400 naming the field (or names the ignored ones in the
``x-harmony-grammar-ignored-fields`` header and its log).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from harmony_grammar import render
from harmony_grammar.gateway.chat.protocol import plan_chat
from harmony_grammar.gateway.errors import GatewayError
from harmony_grammar.gateway.plan import Limits
from harmony_grammar.gateway.render_endpoints import IGNORED_FIELDS_HEADER, report_headers
from harmony_grammar.gateway.responses.protocol import plan_responses
from harmony_grammar.rendering.chat import ChatCompletionError
from harmony_grammar.rendering.request_body import read_request
from harmony_grammar.rendering.request_fields import (
    CHAT_FIELDS,
    CHAT_MESSAGE_FIELDS,
    ENGINE_EXTENSIONS,
    RESPONSES_FIELDS,
    RESPONSES_ITEM_FIELDS,
    misspelling_of,
    named_fields,
)
from tests.support.cli_helpers import run_cli

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
RESPONSES = {"model": "m", "input": [{"type": "message", "role": "user", "content": "hi"}]}
LETTERS = "abcdefghijklmnopqrstuvwxyz_"


@st.composite
def one_edit(draw: st.DrawFn, word: str) -> str:
    """``word`` with one letter dropped, added or changed, or two neighbours swapped."""
    kind = draw(st.sampled_from(["drop", "add", "change", "swap"] if len(word) > 1 else ["add", "change"]))
    if kind == "add":
        at = draw(st.integers(0, len(word)))
        return word[:at] + draw(st.sampled_from(LETTERS)) + word[at:]
    at = draw(st.integers(0, len(word) - (2 if kind == "swap" else 1)))
    if kind == "drop":
        return word[:at] + word[at + 1 :]
    if kind == "change":
        return word[:at] + draw(st.sampled_from(LETTERS)) + word[at + 1 :]
    return word[:at] + word[at + 1] + word[at] + word[at + 2 :]


def _suggestible(fields: frozenset[str]) -> list[str]:
    return sorted(f for f in fields if len(f) >= 3)


#: A Responses body with a call, its output and reasoning before them.
HISTORY = {
    "model": "m",
    "input": [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "hm"}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
    ],
    "tools": [{"type": "function", "name": "f"}],
}
#: (body, the level's known fields, where a field is added: None for the top level). An
#: item's ``type`` says which level it is, so it is not misspelled here.
LEVELS = [
    (CHAT, CHAT_FIELDS, None),
    (RESPONSES, RESPONSES_FIELDS, None),
    (CHAT, CHAT_MESSAGE_FIELDS, ("messages", 0)),
    (HISTORY, RESPONSES_ITEM_FIELDS["message"] - {"type"}, ("input", 0)),
    (HISTORY, RESPONSES_ITEM_FIELDS["reasoning"] - {"type"}, ("input", 1)),
    (HISTORY, RESPONSES_ITEM_FIELDS["function_call"] - {"type"}, ("input", 2)),
    (HISTORY, RESPONSES_ITEM_FIELDS["function_call_output"] - {"type"}, ("input", 3)),
]


@st.composite
def misspelled(draw: st.DrawFn) -> tuple[Any, ...]:
    """A valid body with one known field of one level spelled one edit off: the body, the
    misspelling, its path, the level's known fields and the planner of the body's API."""
    source, known, where = draw(st.sampled_from(LEVELS))
    meant = draw(st.sampled_from(_suggestible(known)))
    wrong = draw(one_edit(meant))
    assume(wrong not in known | {"type"} and wrong not in ENGINE_EXTENSIONS)
    body = json.loads(json.dumps(source))
    holder = body if where is None else body[where[0]][where[1]]
    if meant in holder:  # the misspelling replaces it (``contnet`` for ``content``)
        holder[wrong] = holder.pop(meant)
    else:
        holder[wrong] = 1
    path = wrong if where is None else f"{where[0]}[{where[1]}].{wrong}"
    return body, wrong, path, known, plan_chat if "messages" in source else plan_responses


@given(case=misspelled())
def test_a_field_one_edit_from_a_known_one_is_refused_with_the_suggestion(
    case: tuple[Any, ...],
) -> None:
    body, wrong, path, known, planner = case
    with pytest.raises(ChatCompletionError) as raised:
        read_request(body)
    suggestion = misspelling_of(wrong, known)
    assert suggestion is not None and suggestion in known
    assert raised.value.path == path
    assert f"unknown field {wrong!r}: did you mean {suggestion!r}?" in str(raised.value)
    # The gateway's answer (on the endpoint of the body's API) is the same refusal, a 400.
    with pytest.raises(GatewayError) as answered:
        planner(body, model="m", limits=Limits())
    assert answered.value.status == 400
    assert answered.value.body()["error"]["param"] == path
    assert f"did you mean {suggestion!r}" in answered.value.body()["error"]["message"]


@pytest.mark.parametrize(
    ("field", "meant"),
    [("temprature", "temperature"), ("tool", "tools"), ("max_token", "max_tokens"), ("Stream", "stream")],
)
def test_the_issues_misspellings_are_refused(field: str, meant: str) -> None:
    with pytest.raises(ChatCompletionError, match=f"did you mean {meant!r}"):
        render({**CHAT, field: 1})


def test_contnet_instead_of_content_is_refused_not_rendered_empty() -> None:
    body = {"messages": [{"role": "user", "contnet": "hi"}]}
    with pytest.raises(ChatCompletionError) as raised:
        render(body)
    assert raised.value.path == "messages[0].contnet"
    assert "did you mean 'content'" in str(raised.value)


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"messages": [{"role": "user"}]}, "messages[0]"),
        ({"messages": [{"role": "user", "text": "hi"}]}, "messages[0]"),
        ({"messages": [{"role": "system"}, {"role": "user", "content": "x"}]}, "messages[0]"),
        ({"messages": [{"role": "user", "content": "x"}, {"role": "assistant"}]}, "messages[1]"),
        ({"input": [{"type": "message", "role": "user"}]}, "input[0]"),
        ({"input": [{"role": "user", "body": "x"}]}, "input[0]"),
    ],
)
def test_a_message_without_its_content_is_refused(body: dict[str, Any], path: str) -> None:
    with pytest.raises(ChatCompletionError, match="needs") as raised:
        read_request(body)
    assert raised.value.path == path


def test_other_unknown_fields_are_accepted_and_named() -> None:
    body = {
        **CHAT,
        "top_k": 5,  # vLLM's: one edit from top_p, but an engine extension, not a misspelling
        "my_trace": "x",
        "messages": [{"role": "user", "content": "hi", "cache_control": {"type": "ephemeral"}}],
    }
    reading = read_request(body)
    assert reading.ignored == ("top_k", "my_trace", "messages[0].cache_control")
    assert render(body) == render(CHAT)  # nothing read from them
    responses = read_request({**RESPONSES, "x_debug": True, "input": [{**RESPONSES["input"][0], "tag": 1}]})
    assert responses.ignored == ("x_debug", "input[0].tag")


def test_the_gateway_reports_ignored_fields_in_a_header_and_the_log(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="harmony_grammar.gateway"):
        plan = plan_chat({**CHAT, "top_k": 5, "my\nfield": 1}, model="m", limits=Limits())
    assert plan.ignored_fields == ("top_k", "my\nfield")
    # A field name is the client's text: escaped, never a line break in a header.
    assert report_headers(plan)[IGNORED_FIELDS_HEADER] == "top_k, my\\nfield"
    assert "ignored unknown request fields: top_k, my\\nfield" in caplog.text  # one log line
    assert IGNORED_FIELDS_HEADER not in report_headers(plan_chat(CHAT, model="m", limits=Limits()))


def test_the_cli_warns_of_ignored_fields_and_refuses_a_misspelling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "request.json"
    path.write_text(json.dumps({**CHAT, "top_k": 5}), encoding="utf-8")
    status, out, err = run_cli(capsys, "render", str(path))
    assert status == 0 and out == render(CHAT)
    assert err == f"harmony-grammar: warning: {path}: ignored unknown field: top_k\n"
    path.write_text(json.dumps({**CHAT, "temprature": 0}), encoding="utf-8")
    status, out, err = run_cli(capsys, "render", str(path))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "did you mean 'temperature'?" in err and "Traceback" not in err


def test_at_most_32_ignored_fields_are_named() -> None:
    body = {**CHAT, **{f"x{i}": i for i in range(40)}}
    plan = plan_chat(body, model="m", limits=Limits())
    assert len(plan.ignored_fields) == 40
    header = report_headers(plan)[IGNORED_FIELDS_HEADER]
    assert header == named_fields(plan.ignored_fields)
    assert header.split(", ")[-2:] == ["x31", "and 8 more"]
