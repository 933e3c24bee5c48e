"""Chat Completions custom tools take the Responses API's path: one rendering, one grammar,
one parse, read back with the openai SDK's Chat custom-tool types.

A Chat custom tool (``{"type": "custom", "custom": {...}}``) is the Responses custom tool
in another shape (declarations/custom.py ``chat_custom_entry``): the prompt the two APIs render for
the same tool and the same history is the same text, and a replayed custom call comes back
as ``{"type": "custom", "custom": {"name", "input"}}`` in Chat and as a ``custom_tool_call``
with the same input in Responses.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
openai = pytest.importorskip("openai")

from harmony_grammar.gateway import GatewayConfig, ReplayBackend, serving  # noqa: E402
from harmony_grammar.gateway.chat.protocol import plan_chat  # noqa: E402
from harmony_grammar.gateway.plan import Limits  # noqa: E402
from harmony_grammar.gateway.responses.protocol import plan_responses  # noqa: E402
from harmony_grammar.rendering.chat import from_chat_completions  # noqa: E402
from harmony_grammar.rendering.renderer import render  # noqa: E402
from harmony_grammar.rendering.responses import from_responses  # noqa: E402

from ..support.serve_peers import deadline  # noqa: E402

NUMBER = r"[0-9]{1,6}"
PATCH = 'start: "*** Begin Patch\\n" LINE* "*** End Patch"\nLINE: /[^*\\n][^\\n]*\\n/\n'
#: Each format as the Responses API writes it, and as Chat Completions does.
FORMATS = {
    "text": ({"type": "text"}, {"type": "text"}),
    "regex": (
        {"type": "grammar", "syntax": "regex", "definition": NUMBER},
        {"type": "grammar", "grammar": {"syntax": "regex", "definition": NUMBER}},
    ),
    "lark": (
        {"type": "grammar", "syntax": "lark", "definition": PATCH},
        {"type": "grammar", "grammar": {"syntax": "lark", "definition": PATCH}},
    ),
}


def _tools(fmt: str, name: str = "ticket") -> tuple[list[Any], list[Any]]:
    responses, chat = FORMATS[fmt]
    described = {"name": name, "description": "File it."}
    return (
        [{"type": "custom", **described, "format": responses}],
        [{"type": "custom", "custom": {**described, "format": chat}}],
    )


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    with deadline(120):
        yield


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("name", ["ticket", "desk.ticket"])
def test_chat_and_responses_render_and_constrain_a_custom_tool_alike(fmt: str, name: str) -> None:
    responses_tools, chat_tools = _tools(fmt, name)
    if "." in name:  # Responses says the namespace with a namespace entry
        ns, short = name.split(".")
        responses_tools = [
            {"type": "namespace", "name": ns, "tools": [{**responses_tools[0], "name": short}]}
        ]
    chat = {
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "type": "custom", "custom": {"name": name, "input": "12"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "filed"},
        ],
        "tools": chat_tools,
    }
    ns_short = name.split(".") if "." in name else (None, name)
    responses = {
        "input": [
            {"role": "user", "content": "go"},
            {"type": "custom_tool_call", "call_id": "c1", "name": ns_short[1], "input": "12"}
            | ({"namespace": ns_short[0]} if ns_short[0] else {}),
            {"type": "custom_tool_call_output", "call_id": "c1", "output": "filed"},
        ],
        "tools": responses_tools,
    }
    assert render(from_chat_completions(chat), next_turn="assistant") == render(
        from_responses(responses), next_turn="assistant"
    )
    chat_plan = plan_chat(chat, model="tiny", limits=Limits())
    responses_plan = plan_responses(responses, model="tiny", limits=Limits())
    assert chat_plan.grammar == responses_plan.grammar
    assert chat_plan.prompt_ids == responses_plan.prompt_ids


def _replay(tmp_path: Path, line: str) -> ReplayBackend:
    path = tmp_path / "replay.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return ReplayBackend(path)


@pytest.mark.parametrize(
    ("fmt", "given"),
    [
        ("regex", "4711"),
        ("text", "any text at all"),
        ("lark", "*** Begin Patch\nadd\n*** End Patch"),
    ],
)
def test_a_custom_call_comes_back_as_the_sdks_chat_custom_tool_call(
    tmp_path: Path, fmt: str, given: str
) -> None:
    line = f"<|channel|>commentary to=functions.ticket<|message|>{given}<|call|>"
    responses_tools, chat_tools = _tools(fmt)
    ask = [{"role": "user", "content": "File a ticket."}]
    with serving(_replay(tmp_path, line), GatewayConfig(model="tiny")) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="x", timeout=60, max_retries=0)
        whole = client.chat.completions.create(model="tiny", messages=ask, tools=chat_tools)
        stream = client.chat.completions.create(
            model="tiny", messages=ask, tools=chat_tools, stream=True
        )
        streamed = [
            call
            for chunk in stream
            if chunk.choices
            for call in chunk.choices[0].delta.tool_calls or []
        ]
        named = client.chat.completions.create(
            model="tiny",
            messages=ask,
            tools=chat_tools,
            tool_choice={"type": "custom", "custom": {"name": "ticket"}},
        )
        response = client.responses.create(model="tiny", input=ask, tools=responses_tools)
    for answer in (whole, named):
        choice = answer.choices[0]
        assert choice.finish_reason == "tool_calls"
        (call,) = choice.message.tool_calls
        assert call.type == "custom"
        assert (call.custom.name, call.custom.input) == ("ticket", given)
    (delta,) = streamed
    assert delta.model_extra and delta.model_extra["custom"] == {"name": "ticket", "input": given}
    (item,) = [item for item in response.output if item.type == "custom_tool_call"]
    assert (item.name, item.input) == ("ticket", given)


def test_a_malformed_chat_custom_tool_is_a_400_with_its_path(tmp_path: Path) -> None:
    line = "<|channel|>final<|message|>No.<|return|>"
    bad = [{"type": "custom", "custom": {"name": "t", "format": {"type": "grammar"}}}]
    with serving(_replay(tmp_path, line), GatewayConfig(model="tiny")) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="x", timeout=60, max_retries=0)
        with pytest.raises(openai.BadRequestError) as raised:
            client.chat.completions.create(
                model="tiny", messages=[{"role": "user", "content": "x"}], tools=bad
            )
    assert raised.value.body["param"] == "tools[0]"
