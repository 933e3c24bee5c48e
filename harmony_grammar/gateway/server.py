"""Building a gateway from ``serve``'s options, and running it on uvicorn.

:func:`build_backend` makes the backend ``--backend`` names; :func:`serve` runs the app in
the foreground (the CLI); :func:`serving` runs it on a background thread for as long as a
``with`` block lasts (tests and benchmarks: a real server on a real socket, port 0).
"""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from .app import GatewayConfig, create_app
from .backend import Backend
from .embedded import EmbeddedBackend
from .engines import BACKENDS

__all__ = ["BACKEND_NAMES", "build_backend", "serve", "serving", "serving_app"]

BACKEND_NAMES = ("embedded", *BACKENDS)


def build_backend(
    name: str,
    *,
    upstream: str | None = None,
    model: str = "tiny",
    grammar: str = "llguidance",
    timeout: float = 60.0,
    upstream_api_key: str | None = None,
    workers: int = 4,
) -> Backend:
    """The backend ``name`` (one of :data:`BACKEND_NAMES`); raises ``ValueError`` on bad options."""
    if name == "embedded":
        if upstream is not None:
            raise ValueError("--upstream is for the engine backends; embedded runs in-process")
        return EmbeddedBackend(model, workers=workers)
    if name not in BACKENDS:
        raise ValueError(f"--backend must be one of {', '.join(BACKEND_NAMES)}; not {name!r}")
    if not upstream:
        raise ValueError(f"--backend {name} needs --upstream URL (the engine's address)")
    return BACKENDS[name](
        upstream,
        model="" if model == "tiny" else model,
        grammar=grammar,
        timeout=timeout,
        api_key=upstream_api_key,
    )


def _config(app: Any, host: str, port: int, log_level: str) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        # The gateway's own limit answers 413 with an OpenAI error; uvicorn's defaults stay.
        timeout_graceful_shutdown=5,
        lifespan="on",
    )


def serve(
    backend: Backend,
    config: GatewayConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "info",
) -> None:
    """Run the gateway in the foreground until interrupted."""
    config = dataclasses.replace(config, bound_host=host)  # the Host check's own address
    uvicorn.Server(_config(create_app(backend, config), host, port, log_level)).run()


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
    sock = socket.socket()
    sock.bind((host, 0))
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
