"""Building a gateway from ``serve``'s options, and running it on uvicorn.

:func:`build_backend` makes the backend ``--backend`` names; :func:`serve` runs the app in
the foreground (the CLI); :func:`serving` runs it on a background thread for as long as a
``with`` block lasts (tests and benchmarks: a real server on a real socket, port 0).
"""

from __future__ import annotations

import dataclasses
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import uvicorn

from .app import create_app
from .backend import Backend
from .config import GatewayConfig
from .embedded import EmbeddedBackend
from .engines import BACKENDS
from .replay import ReplayBackend

__all__ = [
    "BACKEND_NAMES",
    "backend_options_problem",
    "build_backend",
    "listening_socket",
    "serve",
    "serving",
    "serving_app",
]

BACKEND_NAMES = ("embedded", "replay", *BACKENDS)


def backend_options_problem(
    name: str, *, upstream: str | None = None, replay: str | None = None
) -> str | None:
    """What is wrong with this choice of backend options, in one line, or ``None``.

    Checked before anything is built (``serve`` asks before it binds its port), so a usage
    mistake costs no model build.
    """
    if name == "replay" or replay is not None:
        if name != "replay" or upstream is not None or replay is None:
            return "--backend replay takes --replay FILE (JSON Lines) and no --upstream"
        return None
    if name == "embedded":
        if upstream is not None:
            return "--upstream is for the engine backends; embedded runs in-process"
        return None
    if name not in BACKENDS:
        return f"--backend must be one of {', '.join(BACKEND_NAMES)}; not {name!r}"
    if not upstream:
        return f"--backend {name} needs --upstream URL (the engine's address)"
    return None


def build_backend(
    name: str,
    *,
    upstream: str | None = None,
    model: str = "tiny",
    grammar: str | None = None,
    timeout: float = 60.0,
    upstream_api_key: str | None = None,
    workers: int = 4,
    replay: str | None = None,
    engine_version: str | None = None,
) -> Backend:
    """The backend ``name`` (one of :data:`BACKEND_NAMES`); raises ``ValueError`` on bad options.

    ``replay`` is the JSON Lines file of ``--backend replay`` (:mod:`.replay`);
    ``engine_version`` the engine's release (``--engine-version``, vLLM: the grammar its
    pinned xgrammar reads).
    """
    problem = backend_options_problem(name, upstream=upstream, replay=replay)
    if problem:
        raise ValueError(problem)
    if engine_version is not None and name in ("replay", "embedded"):
        raise ValueError(f"--engine-version is for --backend vllm; {name} runs in-process")
    if name == "replay" and replay is not None:
        return ReplayBackend(replay)
    if name == "embedded":
        return EmbeddedBackend(model, workers=workers)
    assert upstream is not None  # backend_options_problem says so otherwise
    return BACKENDS[name](
        upstream,
        model="" if model == "tiny" else model,
        grammar=grammar,
        timeout=timeout,
        api_key=upstream_api_key,
        engine_version=engine_version,
    )


def _config(
    app: Any, host: str, port: int, log_level: str, drain_seconds: int = 5
) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        # The gateway's own limit answers 413 with an OpenAI error; uvicorn's defaults stay.
        # On SIGTERM uvicorn stops accepting, lets open requests finish for this long, then
        # closes what is left (each open stream's engine request is cancelled then).
        timeout_graceful_shutdown=drain_seconds,
        lifespan="on",
    )


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (port 0: a free one), for uvicorn to listen on.

    Binding first is how a taken port is found before anything slow is built, and how
    :func:`serving_app` gets a free port with no race for it. Raises ``OSError``
    (``EADDRINUSE``, ``EACCES``) as ``bind`` does.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    # As uvicorn sets it: a port left in TIME_WAIT is reusable, one with a listener is not.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


class _Server(uvicorn.Server):
    """uvicorn's server, calling ``on_ready`` once it accepts connections."""

    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None] | None) -> None:
        super().__init__(config)
        self._on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self._on_ready is not None:
            self._on_ready()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        # uvicorn raises each captured signal again once it has shut down, so a drained
        # SIGTERM would still end the process by that signal (143). SIGTERM is the orderly
        # stop a supervisor asks for: once the open requests are drained, serve returns and
        # the process exits 0. SIGINT keeps uvicorn's behaviour (an interrupt).
        captured = getattr(self, "_captured_signals", None)
        if sig == signal.SIGTERM and isinstance(captured, list) and sig in captured:
            captured.remove(sig)


def serve(
    backend: Backend,
    config: GatewayConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "info",
    sock: socket.socket | None = None,
    on_ready: Callable[[], None] | None = None,
    drain_seconds: int = 5,
) -> None:
    """Run the gateway in the foreground until interrupted: on ``sock`` when given (bound by
    :func:`listening_socket`), else on ``host:port``; ``on_ready`` runs once it listens.
    SIGINT / SIGTERM drain open requests for up to ``drain_seconds``."""
    config = dataclasses.replace(config, bound_host=host)  # the Host check's own address
    app = create_app(backend, config)
    server = _Server(_config(app, host, port, log_level, drain_seconds), on_ready)
    server.run(sockets=[sock] if sock is not None else None)


@contextmanager
def serving(
    backend: Backend,
    config: GatewayConfig | None = None,
    *,
    host: str = "127.0.0.1",
    startup_seconds: float = 30.0,
) -> Iterator[str]:
    """Run the gateway on a free port in a background thread; yields its base URL.

    The server is stopped (open streams closed, the backend released) when the block ends.
    """
    config = dataclasses.replace(config or GatewayConfig(), bound_host=host)
    app = create_app(backend, config)
    with serving_app(app, host=host, startup_seconds=startup_seconds) as url:
        yield url


@contextmanager
def serving_app(
    app: Any, *, host: str = "127.0.0.1", startup_seconds: float = 30.0
) -> Iterator[str]:
    """Run any ASGI app on a free port in a background thread; yields its base URL."""
    # Bound here and handed to uvicorn: port 0 picks a free port, with no race for it.
    sock = listening_socket(host, 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(_config(app, host, port, "warning"))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"gateway-{port}", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + startup_seconds
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"the gateway did not start on {host}:{port}")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()
