"""One generation's lifecycle, the same for every API: admit → start → payloads → close.

Chat Completions, Responses and the vLLM-style ``/v1/completions`` each read their body into
a plan (their ``protocol`` modules) and a :class:`Run` that turns the engine's pieces into
the API's payloads (their ``serving`` modules: :class:`~.chat.serving.ChatRun`,
:class:`~.responses.serving.ResponsesRun`, :class:`~.completions.serving.CompletionRun`); all
three then go through :class:`Generations` (by :mod:`.service`'s steps):

* :meth:`~Generations.admit`: room in the queue (``--max-queue``; 429 with ``Retry-After``
  past it), before any planning;
* :meth:`~Generations.start`: the engine's generator and its first piece, awaited before
  answering, so an engine that refuses or fails up front is an HTTP error (400 for a grammar
  it rejects, 502 / 504 for a fault), not a stream that dies at once. The request is held
  from here;
* :meth:`~Generations.payloads`: every payload of the run; a fault of any kind ends the run
  properly (its last payloads say so) and is reported to the caller (a whole answer is then
  a 502); the engine is closed however it ends, the hold released, and the metrics
  (queue, open streams, tokens, time to first token, time per output token) counted.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Protocol

import anyio

from .errors import GatewayError, UpstreamError
from .metrics import Metrics

__all__ = ["Generations", "Run", "close_quietly", "engine_fault"]

_LOG = logging.getLogger("harmony_grammar.gateway")
#: How long closing an engine request may take once the client has gone.
_CLOSE_SECONDS = 5.0


class Run(Protocol):
    """An API's reading of one generation: pieces in, payloads out."""

    prompt_tokens: int

    @property
    def should_stop(self) -> bool:
        """Whether the turn has ended (the engine is closed then)."""
        ...

    @property
    def output_tokens(self) -> int:
        """How many tokens the engine has written so far."""
        ...

    def feed(self, output: Any) -> list[dict[str, Any]]:
        """The payloads one piece of output completes."""
        ...

    def close(self, fault: UpstreamError | None = None) -> list[dict[str, Any]]:
        """The last payloads: the end of the turn, or of a fault."""
        ...


def engine_fault(exc: BaseException) -> UpstreamError:
    """An unexpected exception while generating, as the 502 the client sees; logged whole."""
    if isinstance(exc, UpstreamError):
        return exc
    if isinstance(exc, GatewayError):
        return UpstreamError(exc.message)
    fault_id = f"req_{secrets.token_hex(8)}"
    _LOG.error("engine fault %s", fault_id, exc_info=exc)
    return UpstreamError(f"the generation failed ({type(exc).__name__}; logged as {fault_id})")


async def close_quietly(outputs: AsyncIterator[Any]) -> None:
    """Close an engine's generator, even from a task being cancelled (the client left):
    closing it is what cancels the engine request. An engine that fails while closing has
    nothing more to say."""
    aclose = getattr(outputs, "aclose", None)
    if aclose is None:
        return
    with (
        anyio.CancelScope(shield=True),
        anyio.move_on_after(_CLOSE_SECONDS),
        contextlib.suppress(Exception),
    ):
        await aclose()


class Generations:
    """The gateway's generations: the queue bound, what is held and open, the metrics."""

    def __init__(self, metrics: Metrics, max_queue: int | None) -> None:
        self.metrics = metrics
        self.max_queue = max_queue
        self.open_streams = 0  # generations sending output now (tests check it returns to 0)
        self.held = 0  # generation requests started and not yet finished (--max-queue)

    def admit(self) -> None:
        """429 with ``Retry-After`` when ``max_queue`` requests are held."""
        if self.max_queue is not None and self.held >= self.max_queue:
            error = GatewayError(
                429,
                f"the gateway holds {self.held} requests, its --max-queue: retry shortly",
                type="rate_limit_error",
                code="queue_full",
            )
            error.headers = {"Retry-After": "1"}
            raise error

    async def start(self, outputs: AsyncIterator[Any], *, grammar_param: str) -> Any | None:
        """The first piece of ``outputs`` (None when it wrote nothing); held from here until
        :meth:`payloads` ends, or until this fails (the generator is closed then). An
        engine's 400 that names no field names ``grammar_param`` (where the grammar came
        from)."""
        arrived = time.monotonic()
        self.held += 1
        self.metrics.queued.inc()
        try:
            first = await anext(outputs)
        except StopAsyncIteration:
            return None
        except GatewayError as exc:  # the engine's refusal (a grammar it rejects: a 400)
            self.held -= 1
            if exc.status == 400 and exc.param is None:
                exc.param = grammar_param
            if isinstance(exc, UpstreamError):
                self.metrics.upstream_errors.labels(exc.code or "upstream_error").inc()
            await close_quietly(outputs)
            raise
        except Exception as exc:  # any other engine fault: a 502, logged, never a 500
            self.held -= 1
            await close_quietly(outputs)
            fault = engine_fault(exc)
            self.metrics.upstream_errors.labels(fault.code or "upstream_error").inc()
            raise fault from exc
        except BaseException:
            self.held -= 1
            await close_quietly(outputs)
            raise
        finally:
            self.metrics.queued.dec()
        self.metrics.time_to_first_token.observe(time.monotonic() - arrived)
        return first

    async def payloads(
        self,
        run: Run,
        outputs: AsyncIterator[Any],
        first: Any | None,
        faults: list[UpstreamError] | None = None,
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Every payload of ``run``; the engine is closed at the turn's end or on a fault,
        which is appended to ``faults``."""
        self.open_streams += 1
        self.metrics.open_streams.inc()
        fault: UpstreamError | None = None
        began = time.monotonic()
        try:
            try:
                if first is not None:
                    for payload in run.feed(first):
                        yield payload
                while not run.should_stop:
                    try:
                        output = await anext(outputs)
                    except StopAsyncIteration:
                        break
                    for payload in run.feed(output):
                        yield payload
            except UpstreamError as exc:
                fault = exc
            except GatewayError as exc:  # a malformed engine answer the backend caught
                fault = UpstreamError(exc.message)
            except Exception as exc:  # any other fault of the engine or its reading
                fault = engine_fault(exc)
            if fault is not None:
                self.metrics.upstream_errors.labels(fault.code or "upstream_error").inc()
                if faults is not None:
                    faults.append(fault)
            for payload in run.close(fault):
                yield payload
        finally:
            await close_quietly(outputs)
            self.open_streams -= 1
            self.held -= 1
            self.metrics.open_streams.dec()
            self.metrics.prompt_tokens.inc(run.prompt_tokens)
            self.metrics.completion_tokens.inc(run.output_tokens)
            if run.output_tokens > 1:
                spent = time.monotonic() - began
                self.metrics.time_per_output_token.observe(spent / (run.output_tokens - 1))
