"""The OpenAI-compatible gateway behind ``harmony-grammar serve``.

Theory of operation
-------------------
A request is read and bounded first (:mod:`.intake`: the key, the body, the model;
:mod:`.bounds`: tool count and size, the prompt against the context), then planned once, in a
worker thread, by its API's ``protocol`` module (:mod:`.chat.protocol`,
:mod:`.responses.protocol`, :mod:`.completions.protocol`; Chat and Responses share
:mod:`.planning`'s steps: the bridges read the body into a conversation, the renderer makes
the prompt's token ids, the generation layer writes the turn's grammar; :mod:`.fields` reads
the sampling fields) into a :class:`~.plan.Plan` that holds only what was read. Every API
then goes through one lifecycle (:mod:`.service`'s steps over :mod:`.lifecycle`: admission,
the first piece, the payloads, the metrics), handed to a backend (:mod:`.backend`: the
in-process :mod:`.embedded` engine, an engine over HTTP, :mod:`.engines` on
:mod:`.http_engine`'s driver, or recorded completions, :mod:`.replay`), and the output is
read back by the API's ``serving`` module (:mod:`.chat.serving`, :mod:`.responses.serving`
over :mod:`.runs`'s shared part; :mod:`.completions.serving`), whole or streamed
(:mod:`.sse`). The Starlette app (:mod:`.app`, the router) registers each API's routes by
what the backend can do, and :mod:`.server` runs it on uvicorn; its outermost layer
(:mod:`.request_layer`) gives every response its request id, counts it (:mod:`.metrics`) and
answers a request that shutdown cuts. Errors are OpenAI error objects (:mod:`.errors`).
Responses reasoning is sealed for stateless round trips
(:mod:`.reasoning_seal`), and ``/render`` twins of both APIs show the prompt without
generating (:mod:`.render_endpoints`). :mod:`.vllm_plugin` serves the same app inside
``vllm serve``.

Imports: this package may use every layer up to :mod:`harmony_grammar.generation`
(rendering's bridges, the format's parser, the turn grammars and the sampler); only the CLI
stands on it. It needs the ``serve`` extra (starlette, uvicorn, httpx2, cryptography) and,
for the embedded engine, the ``generate`` extra.
"""

from __future__ import annotations

from .app import create_app
from .backend import Backend, Output
from .chat.protocol import plan_chat
from .config import GatewayConfig
from .embedded import EmbeddedBackend
from .engines import BACKENDS
from .errors import GatewayError, UpstreamError
from .http_engine import HttpBackend
from .plan import Limits, Plan
from .replay import ReplayBackend
from .responses.protocol import plan_responses
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
