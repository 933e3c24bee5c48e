"""SIGTERM drains: ``serve`` as its own process finishes an open stream, then exits 0.

The gateway runs as ``python -m harmony_grammar serve`` (the command a deployment runs) in
front of the fake vLLM of tests/support/serve_peers.py, which sends its pieces with a delay,
so the stream is still open when the signal arrives. Nothing here is timed: the test waits
for lines and for the exit, under the file's deadline.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
httpx2 = pytest.importorskip("httpx2")

from harmony_grammar.gateway.server import serving_app  # noqa: E402

from ..support.openai_sdk import check_event  # noqa: E402
from ..support.serve_peers import ASK, Script, deadline, peer_app  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    with deadline(120):
        yield


@contextmanager
def _started(upstream: str, drain: int = 60) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``serve`` in front of ``upstream`` and its address once ready; killed if still running
    when the block ends."""
    process, url = _start(upstream, drain)
    try:
        yield process, url
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _start(upstream: str, drain: int) -> tuple[subprocess.Popen[str], str]:
    """``serve`` in front of ``upstream``, and its address once it says it is ready."""
    command = [sys.executable, "-m", "harmony_grammar", "serve", "--backend", "vllm"]
    command += ["--upstream", upstream, "--port", "0", "--drain-seconds", str(drain)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    assert process.stderr is not None
    for line in process.stderr:
        ready = re.search(r"ready at (http://\S+)/v1", line)
        if ready:
            return process, ready.group(1)
    raise AssertionError(f"serve exited ({process.wait()}) before it was ready")


def test_sigterm_lets_an_open_stream_finish_and_exits_0() -> None:
    script = Script(delay=0.2)  # each piece after the first waits: the stream stays open
    with serving_app(peer_app(script)) as peer, _started(peer) as (process, url):
        body = {"model": "tiny", "messages": ASK, "stream": True}
        with httpx2.stream(
            "POST", url + "/v1/chat/completions", json=body, timeout=60
        ) as answer:
            assert answer.status_code == 200
            lines = answer.iter_lines()
            first = next(line for line in lines if line.startswith("data: "))
            assert json.loads(first[6:])["choices"][0]["delta"] == {"role": "assistant"}
            process.send_signal(signal.SIGTERM)  # mid-stream: most pieces are still to come
            rest = [line for line in lines if line.startswith("data: ")]
        assert rest[-1] == "data: [DONE]"
        chunks = [json.loads(line[6:]) for line in rest[:-1]]
        assert not any("error" in chunk for chunk in chunks)
        finish = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
        assert finish[-1] == "tool_calls"  # the whole call arrived, not a cut
        assert process.wait() == 0
        assert len(script.requests) == 1


def test_a_whole_answer_cut_by_the_drain_is_a_json_error_with_its_request_id() -> None:
    """Past ``--drain-seconds`` uvicorn cancels what is open; an answer not yet sent was its
    plain-text 500 without the request id, and is now a 503 error object naming the id."""
    script = Script(delay=1.0)  # a whole answer of many pieces: far longer than the drain
    with serving_app(peer_app(script)) as peer, _started(peer, drain=1) as (process, url):
        body = {"model": "tiny", "messages": ASK}
        with httpx2.Client(timeout=60) as client:
            sent = client.build_request("POST", url + "/v1/chat/completions", json=body)
            reply: list[Any] = []
            thread = threading.Thread(target=lambda: reply.append(client.send(sent)))
            thread.start()
            while not script.requests:  # the engine has the request: the answer is open
                time.sleep(0.05)
            process.send_signal(signal.SIGTERM)
            thread.join(timeout=30)
        answer = reply[0]
        assert answer.status_code == 503, answer.text
        error = answer.json()["error"]
        assert error["code"] == "server_shutting_down"
        request_id = answer.headers["x-request-id"]
        assert request_id in error["message"]
        assert process.wait() == 0


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
def test_a_stream_cut_by_the_drain_ends_with_an_error_event_naming_its_request_id(path: str) -> None:
    """A stream still open when ``--drain-seconds`` run out was cut with no word (the client
    saw its connection close); now its last event is an error naming the request id, and
    the stream ends properly (``[DONE]`` for Chat). The engine's pieces are a minute apart,
    so the drain of 1 s always comes first."""
    script = Script(delay=60.0)
    with serving_app(peer_app(script)) as peer, _started(peer, drain=1) as (process, url):
        ask = {"messages": ASK} if path == "/v1/chat/completions" else {"input": "hi"}
        body = {"model": "tiny", "stream": True, **ask}
        with httpx2.stream("POST", url + path, json=body, timeout=60) as answer:
            assert answer.status_code == 200
            request_id = answer.headers["x-request-id"]
            lines = answer.iter_lines()
            next(line for line in lines if line.startswith("data: "))  # the stream is open
            process.send_signal(signal.SIGTERM)
            rest = [line for line in lines if line.startswith("data: ")]
        if path == "/v1/chat/completions":
            assert rest[-1] == "data: [DONE]"
            error = json.loads(rest[-2][6:])["error"]
        else:
            error = json.loads(rest[-1][6:])
            assert check_event(error).type == "error"  # the SDK's error event
        assert error["code"] == "server_shutting_down"
        assert request_id in error["message"]
        assert process.wait() == 0
