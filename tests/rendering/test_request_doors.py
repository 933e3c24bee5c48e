"""One request, one prompt, through every door (issue 41).

A Chat Completions or Responses body is read by one function (``read_request``) wherever
it is given. Generated bodies (tools, namespaces, custom tools, response formats, history
with calls) go through each door a user has, and every door must give the same token ids:

* ``harmony_grammar.render(body, ...)``;
* ``harmony-grammar render BODY.json --tokens`` (the CLI's ``main``, in-process);
* ``POST /v1/chat/completions/render`` / ``/v1/responses/render`` (the gateway's ASGI app,
  in-process, over httpx2's ASGI transport);
* the gateway's planner (``plan_chat`` / ``plan_responses``), whose prompt the engine gets.

The renderer's options are the gateway's (a prompt for the next assistant turn, vLLM's
rule for dropping chain of thought), given to ``render`` and the CLI as their options.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from harmony_grammar import render
from harmony_grammar.cli.main import main
from harmony_grammar.gateway.chat.protocol import plan_chat
from harmony_grammar.gateway.plan import Limits
from harmony_grammar.gateway.responses.protocol import plan_responses
from harmony_grammar.rendering.conversation import DeveloperContent
from harmony_grammar.rendering.request_body import read_request
from tests.support.request_bodies import request_bodies

pytest.importorskip("starlette")
httpx2 = pytest.importorskip("httpx2")

#: The gateway's rendering, as the options of the other doors.
GATEWAY_OPTIONS = {"next_turn": "assistant", "drop_rule": "every-final"}


def _is_chat(body: dict[str, Any]) -> bool:
    return "messages" in body


def _cli_ids(body: dict[str, Any], folder: Path) -> list[int]:
    path = folder / "request.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(
            ["render", str(path), "--tokens", "--next-turn", "assistant", "--drop-rule", "every-final"]
        )
    assert status == 0, err.getvalue()
    assert err.getvalue() == ""  # a body of known fields only: no warning line
    ids: list[int] = json.loads(out.getvalue())
    return ids


def _app(folder: Path) -> Any:
    from harmony_grammar.gateway import ReplayBackend
    from harmony_grammar.gateway.app import create_app

    replay = folder / "replay.jsonl"
    replay.write_text(json.dumps("<|channel|>final<|message|>ok<|return|>") + "\n", encoding="utf-8")
    return create_app(ReplayBackend(replay))


async def _endpoint(app: Any, body: dict[str, Any]) -> dict[str, Any]:
    path = "/v1/chat/completions/render" if _is_chat(body) else "/v1/responses/render"
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        answer = await client.post(path, json=body)
    assert answer.status_code == 200, answer.text
    assert "x-harmony-grammar-ignored-fields" not in answer.headers
    result: dict[str, Any] = answer.json()
    return result


@pytest.fixture(scope="module")
def folder() -> Any:
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


@pytest.fixture(scope="module")
def app(folder: Path) -> Any:
    return _app(folder)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
@given(body=request_bodies())
def test_every_door_renders_a_request_to_the_same_ids(body: dict[str, Any], app: Any, folder: Path) -> None:
    by_function = render(body, tokens=True, **GATEWAY_OPTIONS)
    by_cli = _cli_ids(body, folder)
    by_endpoint = asyncio.run(_endpoint(app, body))
    planner = plan_chat if _is_chat(body) else plan_responses
    plan = planner(body, model="tiny", limits=Limits())
    assert by_cli == by_function
    assert by_endpoint["prompt_token_ids"] == by_function
    assert list(plan.prompt_ids) == by_function
    assert by_endpoint["prompt"] == plan.prompt_text
    # The format the prompt declares is the one the grammar holds the answer to.
    reading = read_request(body)
    developer = [m for m in reading.conversation.messages if isinstance(m, DeveloperContent)]
    declared = developer[0].response_formats if developer else ()
    assert [f.schema for f in declared] == ([] if reading.response_schema is None else [reading.response_schema])
    assert plan.response_format == (None if reading.response_schema is None else {"schema": reading.response_schema})
    assert ("# Response Formats" in plan.prompt_text) == (reading.response_schema is not None)
    # The planner's tools are the reader's set, read once.
    assert plan.toolset == reading.toolset


def test_render_writes_a_chat_response_format_as_the_gateway_does() -> None:
    """The case the issue found: render() and the CLI ignored response_format."""
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    body = {
        "messages": [{"role": "user", "content": "Where?"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "place", "schema": schema}},
    }
    text = render(body, next_turn="assistant")
    assert "# Response Formats\n\n## place\n\n" in text
    assert render(body, tokens=True, **GATEWAY_OPTIONS) == list(
        plan_chat(body, model="tiny", limits=Limits()).prompt_ids
    )
    json_object = render({**body, "response_format": {"type": "json_object"}})
    assert "## json_object" in json_object
