"""``--engine-version``: the structural tag the vLLM backend sends, written for the engine's
pinned xgrammar.

No real vLLM runs in CI, so the engine is the fake vLLM of tests/support/serve_peers.py, which
records each request body as it arrives over HTTP: the test reads what the backend sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
openai = pytest.importorskip("openai")

from harmony_grammar.cli.main import main  # noqa: E402
from harmony_grammar.gateway import build_backend, serving  # noqa: E402
from harmony_grammar.gateway.server import serving_app  # noqa: E402
from harmony_grammar.generation import completion_grammar  # noqa: E402

from ..support.serve_peers import ASK, TOOLS, Script, deadline, peer_app  # noqa: E402


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    with deadline(120):
        yield


def _sent_tag(engine_version: str | None) -> Any:
    script = Script()
    with serving_app(peer_app(script)) as peer:
        backend = build_backend(
            "vllm",
            upstream=peer,
            grammar="structural-tag",
            timeout=10,
            engine_version=engine_version,
        )
        with serving(backend) as url:
            client = openai.OpenAI(base_url=url + "/v1", api_key="x", timeout=30, max_retries=0)
            client.chat.completions.create(model="tiny", messages=ASK, tools=TOOLS)
    (body,) = script.requests
    return body["structured_outputs"]["structural_tag"]


def test_vllm_0_34_gets_the_tag_for_its_pinned_xgrammar() -> None:
    # The gateway's grammars take a call's recipient in either place (serve's default).
    today = completion_grammar(TOOLS, target="xgrammar", tool_choice="auto", recipient_position="either")
    pinned = completion_grammar(
        TOOLS, target="xgrammar", target_version="0.2.8", tool_choice="auto", recipient_position="either"
    )
    assert today != pinned  # the two xgrammars read different tags: the test can tell
    assert _sent_tag("0.34.1") == pinned
    assert _sent_tag(None) == today
    assert _sent_tag("0.35.0") == today  # a release with no older pin: today's libraries


def test_engine_version_is_refused_where_it_means_nothing(capsys: Any) -> None:
    for argv in (
        [
            "serve",
            "--backend",
            "sglang",
            "--upstream",
            "http://127.0.0.1:9",
            "--engine-version",
            "0.5",
        ],
        [
            "serve",
            "--backend",
            "vllm",
            "--upstream",
            "http://127.0.0.1:9",
            "--engine-version",
            "new",
        ],
    ):
        assert main([*argv, "--port", "0"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "version" in err
