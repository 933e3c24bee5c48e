"""Nothing a request can crash: each grammar shape that once killed the gateway, on every
backend and every route that reads a grammar (the render twins included).

A custom tool's Lark grammar chained deep, a ``%json`` block whose ``$ref`` s chain deep
(aliases, objects, cycles, wrappers), a ``/v1/completions`` grammar of each kind: llguidance
recursed through them on the event loop's 8 MiB stack (SIGSEGV, every route gone). Each
backend here is a real ``harmony-grammar serve`` process (embedded, replay, and the vLLM
backend in front of a replay server), so a crash is seen as what it is: a server that no
longer answers. What must hold: a 400 naming the gate's limit for every shape past it, never
a 5xx for any shape, and ``/health`` answering after each request.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from harmony_grammar.schema.grammar_gate import MAX_REF_CHAIN, ref_chain

from ..support.soak import load_soak

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

soak = load_soak()
ROUTES = soak.GRAMMAR_ROUTES
#: Room for the shapes: a deep grammar is long, and its text is in the prompt too; with the
#: default context a prompt this long is refused before its grammar is read, and the gate
#: would go untested.
BIG = ["--max-request-bytes", str(4 * 1024 * 1024), "--context-tokens", "4000000"]


@pytest.fixture(scope="module", params=["embedded", "replay", "vllm"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """(port, process, processes that must stay up) of one backend."""
    replay = tmp_path_factory.mktemp("replay") / "lines.jsonl"
    replay.write_text(json.dumps("<|channel|>final<|message|>ok<|return|>") + "\n")
    with ExitStack() as stack:
        if request.param == "embedded":
            port, process = stack.enter_context(soak.live_serve(1, BIG))
            yield port, [process]
            return
        back_port, back = stack.enter_context(
            soak.live_serve(1, ["--backend", "replay", "--replay", str(replay), *BIG])
        )
        if request.param == "replay":
            yield back_port, [back]
            return
        upstream = f"http://{soak.HOST}:{back_port}"
        port, front = stack.enter_context(
            soak.live_serve(
                1, ["--backend", "vllm", "--upstream", upstream, "--model", "prior", *BIG]
            )
        )
        yield port, [front, back]


def _custom(path: str, syntax: str, definition: str) -> dict[str, Any]:
    base = soak.BASES["/v1/chat/completions" if path.startswith("/v1/chat") else "/v1/responses"]
    return {**base, "tools": [soak._custom_tool(path, syntax, definition)]}


def _past_the_limit(kind: str) -> dict[str, Any]:
    """The shortest chain of ``kind`` past the gate's ``$ref`` limit (a few times what
    crashed an 8 MiB stack before the gate counted them; within the tools-size bound)."""
    levels = 100
    while ref_chain(soak.ref_schema(random.Random(0), levels, kind)) <= MAX_REF_CHAIN:
        levels += 100
    return soak.ref_schema(random.Random(0), levels, kind)


def _known_crashes() -> list[tuple[str, str, dict[str, Any]]]:
    """(name, route, body) of each shape that crashed before, each past the gate's limits."""
    rng = random.Random(40)
    cases = []
    for path in ROUTES[:4]:
        cases.append(("lark-chain", path, _custom(path, "lark", soak.lark_chain(rng, 5000))))
        for kind in soak.REF_SHAPES:
            schema = json.dumps(_past_the_limit(kind))
            definition = f"start: %json {schema}\n"
            cases.append((f"json-ref-{kind}", path, _custom(path, "lark", definition)))
    for grammar in (
        "%llguidance {}\n" + soak.lark_chain(rng, 5000),
        "%llguidance {}\nstart: %json " + json.dumps(soak.ref_schema(rng, 3000)) + "\n",
        json.dumps({"grammars": [{"json_schema": soak.ref_schema(rng, 3000)}]}),
    ):
        body = {**soak.BASES["/v1/completions"], "structured_outputs": {"grammar": grammar}}
        cases.append(("completions-grammar", "/v1/completions", body))
    return cases


def _post(port: int, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    status, data, _, _ = soak._request(
        port,
        "POST",
        path,
        soak.body_bytes(body),
        {"Content-Type": b"application/json"},
        timeout=300,
    )
    try:
        return status, json.loads(data)
    except ValueError:
        return status, data


def _alive(port: int, processes: list[Any]) -> None:
    for process in processes:
        assert process.poll() is None, f"a server exited with {process.returncode}"
    status, _, _, _ = soak._request(port, "GET", "/health", b"", {}, timeout=60)
    assert status == 200


def test_every_known_crashing_shape_is_a_400_and_the_server_lives(server: Any) -> None:
    port, processes = server
    for name, path, body in _known_crashes():
        status, answer = _post(port, path, body)
        if status == 404 and path == "/v1/completions":
            continue  # the vLLM backend draws no ids itself: it has no /v1/completions
        assert status == 400, (name, path, status, answer)
        assert "limit" in answer["error"]["message"], (name, path, answer)
        _alive(port, processes)


@pytest.mark.parametrize("seed", range(3))
def test_generated_variants_never_5xx(server: Any, seed: int) -> None:
    """Variants of every class (depths within the limits and past them, every shape and
    route): each answered below 500, the server up after each."""
    port, processes = server
    rng = random.Random(4000 + seed)
    for _ in range(8):
        path, data = soak.grammar_case(rng)
        status, answer = _post(port, path, json.loads(data))
        assert status < 500, (path, status, str(answer)[:300])
        _alive(port, processes)
