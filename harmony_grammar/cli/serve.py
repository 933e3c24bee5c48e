"""``harmony-grammar serve``: the OpenAI-compatible gateway (docs/serving.md)."""

from __future__ import annotations

import argparse
import errno
import os
import sys
from typing import Any

from .errors import CliError

__all__ = [
    "EMBEDDED_CONTEXT_TOKENS",
    "EMBEDDED_MAX_TOKENS",
    "ENGINE_CONTEXT_TOKENS",
    "ENGINE_MAX_TOKENS",
    "register",
]

#: ``--max-tokens-limit``'s defaults: the in-process engine runs on this machine's CPU, so a
#: request may hold a worker for at most this many tokens; an engine's own context bounds it.
EMBEDDED_MAX_TOKENS = 4096
ENGINE_MAX_TOKENS = 32768
#: ``--context-tokens``' defaults: the embedded model feeds a prompt of this many ids in
#: seconds and a bounded memory; an engine's is gpt-oss's context (131,072).
EMBEDDED_CONTEXT_TOKENS = 8192
ENGINE_CONTEXT_TOKENS = 131072


def register(subparsers: Any) -> None:
    """Add the ``serve`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve",
        help="serve /v1/chat/completions and /v1/responses, rendering, constraining and "
        "parsing Harmony in front of an engine",
        description="Run the OpenAI-compatible gateway on uvicorn. It renders each request "
        "as Harmony token ids, constrains the whole turn with the turn grammar, and parses "
        "the output with the streaming parser. --backend embedded (the default) generates "
        "in-process with a tiny random gpt-oss built offline; the others call an engine's "
        "raw completion endpoint at --upstream (docs/serving.md lists each engine's flags).",
    )
    parser.add_argument(
        "--backend",
        default="embedded",
        choices=("embedded", "replay", "vllm", "sglang", "llamacpp", "ollama"),
        help="default embedded; replay plays --replay FILE's completions (no model)",
    )
    parser.add_argument(
        "--replay",
        metavar="FILE",
        help="replay: a JSON Lines file, one completion a line (Harmony text after "
        '<|start|>assistant as a JSON string, or {"text": ...}); the n-th request plays '
        "the n-th line, cycling, checked against the request's turn grammar",
    )
    parser.add_argument("--upstream", metavar="URL", help="the engine's base URL")
    parser.add_argument(
        "--model",
        default="tiny",
        metavar="NAME_OR_PATH",
        help="embedded: tiny (default: a random gpt-oss), prior (no model: the sampler's "
        "prior) or a local model directory; engines: the model name the engine serves, "
        "sent with every request whatever name the client used",
    )
    parser.add_argument(
        "--served-model-name",
        metavar="ALIAS",
        help="engines: another name clients may send for the model (listed by /v1/models "
        "after the engine's own --model name)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="default 8000")
    parser.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="require 'Authorization: Bearer KEY', KEY read from this environment variable",
    )
    parser.add_argument(
        "--max-request-bytes",
        type=int,
        default=4 * 1024 * 1024,
        metavar="N",
        help="larger bodies get 413 (default 4 MiB)",
    )
    parser.add_argument(
        "--grammar",
        choices=("llguidance", "structural-tag", "gbnf"),
        help="vllm/sglang: send the llguidance grammar (exact; the engine's guidance "
        "backend; the default) or the xgrammar structural tag; llamacpp: GBNF with special "
        "tokens by id (any build; the default) or llguidance (a LLAMA_LLGUIDANCE build)",
    )
    parser.add_argument(
        "--engine-version",
        metavar="VERSION",
        help="vllm: the engine's release (its /version), so that the structural tag is "
        "written for the xgrammar it pins (0.34: xgrammar 0.2.8); default: today's libraries",
    )
    parser.add_argument(
        "--upstream-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="the longest wait for the engine's next output (default 60)",
    )
    parser.add_argument(
        "--upstream-api-key-env", metavar="VAR", help="send this variable's key to the engine"
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        metavar="N",
        help="default for max_tokens (1024, or --max-tokens-limit when that is lower)",
    )
    parser.add_argument(
        "--max-tokens-limit",
        type=int,
        metavar="N",
        help="the most tokens one request may ask for, on every route (400 above it; "
        f"default {EMBEDDED_MAX_TOKENS} for embedded, {ENGINE_MAX_TOKENS} for the engines)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests whose Host header is NAME (repeatable; * for any). By "
        "default only the bound address and localhost: DNS rebinding protection",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="serve browser requests from this web origin, with CORS (repeatable; * for "
        "any). By default a request with a foreign Origin header is refused",
    )
    parser.add_argument(
        "--context-tokens",
        type=int,
        metavar="N",
        help="reject prompts whose tokens plus max_tokens exceed N, before any grammar is "
        f"written (default: {EMBEDDED_CONTEXT_TOKENS} for the embedded backend, whose CPU "
        f"model this fits; {ENGINE_CONTEXT_TOKENS}, gpt-oss's context, for the others)",
    )
    parser.add_argument(
        "--recipient-position",
        type=_position,
        default="either",
        choices=("either", "role", "channel"),
        help="where the turn grammar lets a call's to= go: after the role (openai-harmony's "
        "rendering, what prepare's training data holds), after <|channel|>commentary (what "
        "gpt-oss writes), or either (the default; 'both' is accepted for it)",
    )
    parser.add_argument(
        "--workers", type=int, default=4, metavar="N", help="embedded: generations at once"
    )
    parser.add_argument(
        "--reasoning-key-env",
        metavar="VAR",
        help="seal Responses reasoning (include reasoning.encrypted_content) under the secret "
        "in this variable, so every replica opens it (default: a random key per process)",
    )
    parser.add_argument(
        "--max-queue",
        type=int,
        metavar="N",
        help="hold at most N generation requests at once (waiting for the engine or "
        "streaming); the next gets 429 with Retry-After (default: no bound)",
    )
    parser.add_argument(
        "--drain-seconds",
        type=int,
        default=5,
        metavar="SECONDS",
        help="on SIGTERM / SIGINT, let open requests finish for this long (default 5)",
    )
    parser.add_argument(
        "--log-level", default="info", choices=("critical", "error", "warning", "info", "debug")
    )
    parser.set_defaults(func=run)


def _key(variable: str | None) -> str | None:
    if variable is None:
        return None
    value = os.environ.get(variable)
    if not value:
        raise CliError(f"--api-key-env {variable}: the variable is unset or empty; export it")
    return value


def _position(text: str) -> str:
    # "both" reads as "either", the turn grammar's name for it (grammar --recipient-position).
    return "either" if text == "both" else text


def run(args: argparse.Namespace) -> int:
    """Check the port, build the backend and serve until interrupted."""
    # A missing dependency is main's one line naming the extra (cli/errors.needs_extra).
    from ..gateway.config import GatewayConfig
    from ..gateway.errors import GatewayError
    from ..gateway.plan import Limits
    from ..gateway.reasoning_seal import ReasoningSeal
    from ..gateway.server import (
        backend_options_problem,
        build_backend,
        listening_socket,
        serve,
    )
    limit = args.max_tokens_limit
    if limit is None:
        limit = EMBEDDED_MAX_TOKENS if args.backend == "embedded" else ENGINE_MAX_TOKENS
    default = min(1024, limit) if args.max_tokens is None else args.max_tokens
    context = args.context_tokens
    if context is None:
        context = EMBEDDED_CONTEXT_TOKENS if args.backend == "embedded" else ENGINE_CONTEXT_TOKENS
    if context < 1:
        raise CliError("--context-tokens must be positive")
    if args.max_request_bytes < 1 or default < 1 or limit < 1:
        raise CliError("--max-request-bytes, --max-tokens and --max-tokens-limit must be positive")
    if default > limit:
        raise CliError(f"--max-tokens {default} is above --max-tokens-limit {limit}; lower it")
    if (args.max_queue is not None and args.max_queue < 1) or args.drain_seconds < 0:
        raise CliError("--max-queue must be positive and --drain-seconds not negative")
    problem = backend_options_problem(args.backend, upstream=args.upstream, replay=args.replay)
    if problem:
        raise CliError(problem)
    api_key, upstream_key = _key(args.api_key_env), _key(args.upstream_api_key_env)
    try:
        seal = ReasoningSeal.from_env(args.reasoning_key_env)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    # The port before the model: a taken port is one line now, not uvicorn's error after
    # the build. The bound socket is what uvicorn then listens on, so nothing can take it.
    try:
        sock = listening_socket(args.host, args.port)
    except OSError as exc:
        raise CliError(_bind_problem(args.host, args.port, exc)) from None
    if args.backend == "embedded":
        # Only the embedded backend builds something that takes seconds (the model); the
        # others are ready at once, and their usage mistakes stay one line.
        _say(f"building the {args.backend} backend (model {args.model}) ...")
    try:
        backend = build_backend(
            args.backend,
            upstream=args.upstream,
            model=args.model,
            grammar=args.grammar,
            timeout=args.upstream_timeout,
            upstream_api_key=upstream_key,
            workers=args.workers,
            replay=args.replay,
            engine_version=args.engine_version,
        )
    except (ValueError, GatewayError) as exc:
        sock.close()
        raise CliError(str(exc)) from None
    engine = args.backend != "embedded"
    if args.served_model_name is not None and not engine:
        raise CliError("--served-model-name is for the engine backends; embedded serves --model")
    config = GatewayConfig(
        model=args.served_model_name or args.model
        if engine or args.model in ("tiny", "prior")
        else os.path.basename(os.path.normpath(args.model)),
        engine_model=args.model if engine and args.model != "tiny" else None,
        api_key=api_key,
        max_request_bytes=args.max_request_bytes,
        limits=Limits(
            default_max_tokens=default,
            max_tokens=limit,
            context_tokens=context,
            recipient_position=args.recipient_position,
        ),
        max_queue=args.max_queue,
        reasoning_seal=seal,
        bound_host=args.host,
        allow_hosts=tuple(args.allow_host),
        allow_origins=tuple(args.allow_origin),
    )
    address = f"http://{_url_host(args.host)}:{sock.getsockname()[1]}"
    ready = f"ready at {address}/v1 (backend {args.backend}, model {config.model})"
    serve(
        backend,
        config,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        sock=sock,
        on_ready=lambda: _say(ready),
        drain_seconds=args.drain_seconds,
    )
    return 0


def _say(line: str) -> None:
    """One line of serve's own on stderr, beside uvicorn's log, at once (not buffered)."""
    print(f"harmony-grammar serve: {line}", file=sys.stderr, flush=True)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _bind_problem(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return f"{host}:{port} is already in use: stop what listens there, or pick another --port"
    if exc.errno == errno.EACCES:
        return f"{host}:{port}: permission denied (ports below 1024 need root): pick another --port"
    return f"--host {host} --port {port}: cannot listen there ({exc.strerror or exc})"
