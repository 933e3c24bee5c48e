"""Chat's ``presence_penalty``, ``frequency_penalty`` and ``logit_bias`` reach the engines that
apply them (vLLM, llama-server), and stay a 400 naming the backend everywhere else.

The engines are the fake ones of tests/support/serve_peers.py, which record each request body
as it arrives over HTTP (no real vLLM in CI; the real llama-server tests do not vary these):
the tests read what the backend sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
httpx2 = pytest.importorskip("httpx2")

from harmony_grammar.gateway import build_backend, serving  # noqa: E402
from harmony_grammar.gateway.server import serving_app  # noqa: E402

from ..support.serve_peers import ASK, TOOLS, Script, deadline, peer_app  # noqa: E402

PENALTIES = {"presence_penalty": 0.5, "frequency_penalty": -0.25, "logit_bias": {"1234": 5}}


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    with deadline(120):
        yield


def _sent(engine: str, *bodies: dict[str, Any]) -> tuple[list[dict[str, Any]], list[Any]]:
    script = Script()
    with (
        serving_app(peer_app(script)) as peer,
        serving(build_backend(engine, upstream=peer, timeout=10)) as url,
    ):
        answers = [
            httpx2.post(url + "/v1/chat/completions", json=body, timeout=30) for body in bodies
        ]
    return script.requests, answers


def test_vllm_gets_the_penalties_and_biases_as_openai_names_them() -> None:
    (sent,), (answer,) = _sent("vllm", {"messages": ASK, "tools": TOOLS, **PENALTIES})
    assert answer.status_code == 200
    assert (sent["presence_penalty"], sent["frequency_penalty"]) == (0.5, -0.25)
    assert sent["logit_bias"] == {"1234": 5.0}
    (plain,), _ = _sent("vllm", {"messages": ASK, "tools": TOOLS})
    assert not {"presence_penalty", "frequency_penalty", "logit_bias"} & set(plain)


def test_llama_server_gets_them_and_its_bans_still_win() -> None:
    (plain,), _ = _sent("llamacpp", {"messages": ASK, "tools": TOOLS})
    banned = [i for i, allowed in plain["logit_bias"] if allowed is False]
    assert banned  # the GBNF turn bans the special ids it never writes
    bias = {**PENALTIES, "logit_bias": {"1234": 5, str(banned[0]): 100}}
    (sent,), (answer,) = _sent("llamacpp", {"messages": ASK, "tools": TOOLS, **bias})
    assert answer.status_code == 200
    assert (sent["presence_penalty"], sent["frequency_penalty"]) == (0.5, -0.25)
    assert [1234, 5.0] in sent["logit_bias"]
    assert [entry for entry in sent["logit_bias"] if entry[0] == banned[0]] == [[banned[0], False]]
    assert sorted(i for i, b in sent["logit_bias"] if b is False) == sorted(banned)


@pytest.mark.parametrize("engine", ["sglang", "ollama"])
def test_engines_without_them_refuse_by_name(engine: str) -> None:
    sent, (answer,) = _sent(engine, {"messages": ASK, **PENALTIES})
    assert answer.status_code == 400 and not sent
    error = answer.json()["error"]
    assert engine in error["message"] and error["param"] == "logit_bias"
    assert all(name in error["message"] for name in PENALTIES)


@pytest.mark.parametrize(
    "bias", [{"x": 1}, {"-1": 1}, {"999999": 1}, {"5": 101}, {"5": True}, [[5, 1]]]
)
def test_a_malformed_logit_bias_is_a_400(bias: Any) -> None:
    sent, (answer,) = _sent("vllm", {"messages": ASK, "logit_bias": bias})
    assert answer.status_code == 400 and not sent
    assert answer.json()["error"]["param"] == "logit_bias"
