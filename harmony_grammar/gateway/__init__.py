"""The OpenAI-compatible gateway behind ``harmony-grammar serve``.

Theory of operation
-------------------
A request is read and bounded first (:mod:`.intake`: the key, the body, the model;
:mod:`.bounds`: tool count and size, the prompt against the context), then planned once, in a
worker thread (:mod:`.planning` makes a :class:`~.plan.Plan`: the bridges read the body into a
conversation, the renderer makes the prompt's token ids, the generation layer writes the
turn's grammar; :mod:`.fields` reads the sampling fields), then goes through one lifecycle
for every API (:mod:`.lifecycle`: admission, the first piece, the payloads, the metrics),
handed to a backend (:mod:`.backend`: the in-process :mod:`.embedded` engine, an engine over
HTTP, :mod:`.engines`, or recorded completions, :mod:`.replay`), and the output is read back
through the stream bridges (:mod:`.runs`), whole or streamed (:mod:`.sse`), by the
Starlette app (:mod:`.app`) that :mod:`.server` runs on uvicorn. The embedded and replay
servers also answer a vLLM-style ``/v1/completions`` (:mod:`.completions`). Errors are OpenAI error
objects (:mod:`.errors`). Responses reasoning is sealed for stateless round trips
(:mod:`.reasoning_seal`), and ``/render`` twins of both APIs show the prompt without
generating (:mod:`.render_endpoints`).

Imports: this package may use every layer up to :mod:`harmony_grammar.generation`
(rendering's bridges, the format's parser, the turn grammars and the sampler); only the CLI
stands on it. It needs the ``serve`` extra (starlette, uvicorn, httpx2, cryptography) and,
for the embedded engine, the ``generate`` extra.
"""

from __future__ import annotations

from .app import GatewayConfig, create_app
from .backend import Backend, Output
from .embedded import EmbeddedBackend
from .engines import BACKENDS, HttpBackend
from .errors import GatewayError, UpstreamError
from .planning import Limits, Plan, plan_chat, plan_responses
from .replay import ReplayBackend
from .server import BACKEND_NAMES, build_backend, serve, serving

__all__ = [
    "BACKENDS",
    "BACKEND_NAMES",
    "Backend",
    "EmbeddedBackend",
    "GatewayConfig",
    "GatewayError",
    "HttpBackend",
    "Limits",
    "Output",
    "Plan",
    "ReplayBackend",
    "UpstreamError",
    "build_backend",
    "create_app",
    "plan_chat",
    "plan_responses",
    "serve",
    "serving",
]
