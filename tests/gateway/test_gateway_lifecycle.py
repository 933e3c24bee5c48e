"""One lifecycle for every route, cheap bounds first, heavy work off the event loop.

* ``/v1/completions`` is admitted as Chat and Responses are: the model check (404), the
  shared ``--max-queue`` (429), and the metrics; the route exists where the backend is a
  :class:`~harmony_grammar.gateway.backend.TokenSource`, and nowhere else;
* the bounds on a request's shape (tool count, the tools' size, the prompt's tokens against
  the context) are answered in milliseconds, before any grammar is written;
* planning runs in a worker thread: while the largest request the bounds admit is planned
  (seconds), ``/health`` keeps answering within a stated latency;
* the embedded backend's memory does not grow with prompt length × vocabulary: a long prompt
  costs a bounded amount (a subprocess's peak RSS, stated below).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Sequence
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
httpx2 = pytest.importorskip("httpx2")

from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from harmony_grammar.gateway import (  # noqa: E402
    GatewayConfig,
    Output,
    planning,
    serving,
)
from harmony_grammar.gateway.backend import TokenSource  # noqa: E402
from harmony_grammar.gateway.bounds import MAX_TOOLS, MAX_TOOLS_BYTES  # noqa: E402
from harmony_grammar.gateway.chat.protocol import plan_chat  # noqa: E402
from harmony_grammar.gateway.errors import GatewayError  # noqa: E402
from harmony_grammar.gateway.plan import Limits, Plan  # noqa: E402

from ..support.serve_peers import deadline  # noqa: E402

ASK = [{"role": "user", "content": "hi"}]
#: "Hello" as a final answer, then the end of the turn.
FINAL = [200005, 17196, 200008, 13225, 200002]


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    with deadline(300):
        yield


class _Slow:
    """A backend that draws ids itself, one every ``pause`` seconds (a slow engine)."""

    name = "slow"

    def __init__(self, pause: float = 0.05) -> None:
        self.pause = pause

    async def ready(self) -> bool:
        return True

    async def aclose(self) -> None:
        return None

    async def generate(self, plan: Plan) -> AsyncIterator[Output]:
        async for token in self._ids(len(FINAL)):
            yield Output(ids=(FINAL[token],))

    async def tokens(
        self,
        prompt: Sequence[int],
        grammar: str,
        *,
        max_tokens: int,
        temperature: float = 1.0,
        seed: int | None = None,
        stop_ids: frozenset[int] = frozenset(),
    ) -> AsyncGenerator[int, None]:
        async for i in self._ids(max_tokens):
            yield 13225 + i % 3

    async def _ids(self, count: int) -> AsyncGenerator[int, None]:
        import anyio

        for i in range(count):
            await anyio.sleep(self.pause)
            yield i


class _ChatOnly(_Slow):
    """The same engine without ``tokens``: it cannot serve ``/v1/completions``."""

    tokens = None  # type: ignore[assignment]


def _metrics(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx2.get(url + "/metrics", timeout=10).text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_completions_is_admitted_as_chat_is() -> None:
    config = GatewayConfig(model="m", max_queue=1)
    with serving(_Slow(), config) as url:
        body = {"model": "m", "prompt": [200006, 1428], "max_tokens": 40}
        wrong = httpx2.post(url + "/v1/completions", json={**body, "model": "other"}, timeout=30)
        assert wrong.status_code == 404 and wrong.json()["error"]["code"] == "model_not_found"
        before = _metrics(url)
        with httpx2.stream(
            "POST", url + "/v1/completions", json={**body, "stream": True}, timeout=30
        ) as held:
            assert held.status_code == 200
            # The queue is one for every route: a completion holds it against Chat too.
            for path, other in (
                ("/v1/completions", body),
                ("/v1/chat/completions", {"messages": ASK}),
            ):
                refused = httpx2.post(url + path, json=other, timeout=30)
                assert refused.status_code == 429, (path, refused.text)
                assert refused.headers["retry-after"] == "1"
            lines = [line for line in held.iter_lines() if line.startswith("data: ")]
        assert lines[-1] == "data: [DONE]"
        whole = httpx2.post(url + "/v1/completions", json={**body, "max_tokens": 3}, timeout=30)
        assert whole.status_code == 200, whole.text
        after = _metrics(url)

    def grew(name: str) -> float:
        return after.get((name, ()), 0.0) - before.get((name, ()), 0.0)

    assert grew("harmony_gateway_completion_tokens_total") == 40 + 3
    assert grew("harmony_gateway_prompt_tokens_total") == 2 * 2
    assert grew("harmony_gateway_time_to_first_token_seconds_count") == 2
    assert after[("harmony_gateway_open_streams", ())] == 0


def test_completions_is_routed_by_capability() -> None:
    assert isinstance(_Slow(), TokenSource) and not isinstance(_ChatOnly(), TokenSource)
    with serving(_ChatOnly(), GatewayConfig(model="m")) as url:
        answer = httpx2.post(url + "/v1/completions", json={"prompt": [1]}, timeout=30)
        assert answer.status_code == 404
        assert (
            httpx2.post(
                url + "/v1/chat/completions", json={"messages": ASK}, timeout=30
            ).status_code
            == 200
        )


def _tool(i: int, fields: int) -> dict[str, Any]:
    properties = {
        f"p{j}": [
            {"type": "string", "maxLength": 20},
            {"type": "integer", "minimum": 0, "maximum": 99999},
            {"type": "array", "items": {"type": "string"}},
        ][j % 3]
        for j in range(fields)
    }
    parameters = {"type": "object", "properties": properties, "required": list(properties)[::2]}
    return {"type": "function", "function": {"name": f"tool_{i}", "parameters": parameters}}


def _largest_admitted() -> list[dict[str, Any]]:
    """As many tools, each as large, as the bounds admit."""
    fields = 1
    while len(json.dumps([_tool(i, fields + 1) for i in range(MAX_TOOLS)])) <= MAX_TOOLS_BYTES:
        fields += 1
    return [_tool(i, fields) for i in range(MAX_TOOLS)]


def test_the_cheap_bounds_answer_before_any_grammar_is_written(monkeypatch) -> None:
    limits = Limits(context_tokens=4096)
    tools = _largest_admitted()
    with serving(_Slow(), GatewayConfig(model="m", limits=limits)) as url:
        cases = {
            "too_many_tools": {"messages": ASK, "tools": tools + [_tool(999, 1)]},
            "tools_too_large": {"messages": ASK, "tools": [_tool(i, 500) for i in range(20)]},
            # The largest tools admitted, and a prompt past the context: refused before the
            # grammar of those tools (seconds) is written.
            "context_length_exceeded": {
                "messages": [{"role": "user", "content": "word " * 5000}],
                "tools": tools,
            },
        }
        for code, body in cases.items():
            answer = httpx2.post(url + "/v1/chat/completions", json=body, timeout=60)
            assert answer.status_code == 400 and answer.json()["error"]["code"] == code, answer.text

    # The same refusals come before the grammar is written (not a time budget: the planner is
    # asked in-process with the grammar's writer replaced by one that fails the test).
    def no_grammar(*_: Any, **__: Any) -> Any:
        raise AssertionError("a grammar was written for a request its bounds refuse")

    monkeypatch.setattr(planning, "completion_grammar", no_grammar)
    for code, body in cases.items():
        with pytest.raises(GatewayError) as refused:
            plan_chat(body, model="m", limits=limits)
        assert refused.value.code == code


def test_health_answers_while_the_largest_request_is_planned() -> None:
    """/health keeps answering while a plan of the largest request the bounds admit runs:
    each answer takes a small part of the plan's time."""
    tools = _largest_admitted()
    with serving(_Slow(), GatewayConfig(model="m")) as url:
        httpx2.get(url + "/health", timeout=10)  # a warm connection path
        result: dict[str, Any] = {}

        def plan() -> None:
            began = time.monotonic()
            answer = httpx2.post(
                url + "/v1/chat/completions/render",
                json={"messages": ASK, "tools": tools},
                timeout=300,
            )
            result["status"] = answer.status_code
            result["seconds"] = time.monotonic() - began

        worker = threading.Thread(target=plan)
        worker.start()
        latencies = []
        while worker.is_alive():
            began = time.monotonic()
            assert httpx2.get(url + "/health", timeout=30).status_code == 200
            latencies.append(time.monotonic() - began)
            time.sleep(0.05)
        worker.join()
    assert result["status"] == 200
    # Relative, not a timing budget: had the plan run on the event loop, /health could not
    # have answered before it ended, so one answer would take about the plan's whole time.
    # Answered from another thread, /health answers many times while the plan runs, each in
    # a small part of it, however fast or loaded the machine is.
    # The median, not the maximum: on a loaded machine one answer may wait behind the
    # planning thread for the GIL now and then; on the event loop, every answer would wait.
    assert len(latencies) >= 3, (latencies, result)
    assert statistics.median(latencies) < result["seconds"] / 4, (latencies, result)


_MEMORY = textwrap.dedent(
    """
    import asyncio, resource, sys
    from harmony_grammar.gateway.completions.protocol import UNCONSTRAINED
    from harmony_grammar.gateway.embedded import EmbeddedBackend

    backend = EmbeddedBackend("tiny", workers=1)

    async def draw(prompt):
        return [t async for t, _ in backend.draws(prompt, UNCONSTRAINED, max_tokens=2, seed=1)]

    asyncio.run(draw([200006, 1428, 200008, 13]))  # warm: the model and the matcher built
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    asyncio.run(draw([200006, 1428, 200008] + [13] * int(sys.argv[1])))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print((after - before) / 1024)
    """
)


def test_the_embedded_backends_memory_does_not_follow_the_prompt() -> None:
    """4,000 prompt ids cost the embedded backend under 192 MiB of peak memory (full logits
    for every position would be 4,000 × 201,088 floats: 3.2 GB)."""
    pytest.importorskip("torch")
    run = subprocess.run(
        [sys.executable, "-c", _MEMORY, "4000"], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-2000:]
    grown = float(run.stdout.strip().splitlines()[-1])
    assert grown < 192, grown
