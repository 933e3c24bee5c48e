"""A call into a namespace is checked against its tool's schema, as a ``functions.*`` call is.

The turn grammar already holds the engine to the schema; the parser's check (HG180 / HG181,
tools/call_check.py) is what tells the client when an engine did not follow the grammar.
The replay backend cannot play such a call (it checks each line against the turn's grammar
and refuses it with a 502), so the engine here is the fake vLLM of tests/support/serve_peers.py,
which sends whatever ids it is given.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
httpx2 = pytest.importorskip("httpx2")

from harmony_grammar.format.harmony_ids import encode_harmony  # noqa: E402
from harmony_grammar.format.parser import parse  # noqa: E402
from harmony_grammar.gateway import build_backend, serving  # noqa: E402
from harmony_grammar.gateway.server import serving_app  # noqa: E402

from ..support.serve_peers import ASK, Script, deadline, peer_app  # noqa: E402

OBJECT = {
    "type": "object",
    "properties": {"cmd": {"type": "string"}},
    "required": ["cmd"],
    "additionalProperties": False,
}
NAMESPACE: dict[str, Any] = {
    "type": "namespace",
    "name": "agents",
    "description": "Sub-agents.",
    "tools": [{"type": "function", "name": "close", "parameters": OBJECT}],
}
#: The same tool as Chat declares it: a function named NAMESPACE.fn.
CHAT_TOOLS = [{"type": "function", "function": {"name": "agents.close", "parameters": OBJECT}}]
#: (recipient, arguments, the codes the parse must report)
CASES = [
    ("agents.close", '{"cmd":"x"}', []),
    ("agents.close", '{"cmd":7}', ["HG180"]),
    ("agents.close", '{"command":"x"}', ["HG180"]),
    ("agents.close", '{"cmd":"x"', ["HG180"]),
    ("agents.open", '{"cmd":"x"}', ["HG181"]),
]


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    with deadline(120):
        yield


def _call(recipient: str, arguments: str) -> str:
    return f"<|channel|>commentary to={recipient} <|constrain|>json<|message|>{arguments}<|call|>"


@pytest.mark.parametrize(("recipient", "arguments", "codes"), CASES)
def test_parse_checks_namespaced_calls(recipient: str, arguments: str, codes: list[str]) -> None:
    result = parse(_call(recipient, arguments), start="completion", lenient=True, tools=[NAMESPACE])
    assert [d.code for d in result.diagnostics] == codes
    # A function of the same name in the functions namespace is checked the same way.
    as_function = {"type": "function", "name": "close", "parameters": OBJECT}
    function_call = _call("functions." + recipient.split(".")[1], arguments)
    result = parse(function_call, start="completion", lenient=True, tools=[as_function])
    assert [d.code for d in result.diagnostics] == codes
    # A built-in tool's namespace is no declared namespace: nothing to check.
    builtin = _call("browser." + recipient.split(".")[1], arguments)
    assert not parse(builtin, start="completion", lenient=True, tools=[NAMESPACE]).diagnostics


def _codes(diagnostics: list[dict[str, Any]]) -> list[str]:
    return [d["code"] for d in diagnostics]


@pytest.mark.parametrize(("recipient", "arguments", "codes"), CASES)
def test_the_gateway_reports_off_schema_namespaced_calls(
    recipient: str, arguments: str, codes: list[str]
) -> None:
    text = _call(recipient, arguments)
    script = Script(ids=encode_harmony(text), text=text)
    with (
        serving_app(peer_app(script)) as peer,
        serving(build_backend("vllm", upstream=peer)) as url,
    ):
        chat = httpx2.post(
            url + "/v1/chat/completions",
            json={"messages": ASK, "tools": CHAT_TOOLS},
            timeout=60,
        ).json()
        response = httpx2.post(
            url + "/v1/responses", json={"input": "hi", "tools": [NAMESPACE]}, timeout=60
        ).json()
    assert _codes(chat.get("diagnostics", [])) == codes, json.dumps(chat)
    assert _codes(response["diagnostics"]) == codes
    assert response["status"] == ("failed" if codes else "completed")
    if codes:
        assert response["error"]["message"].startswith(codes[0])
