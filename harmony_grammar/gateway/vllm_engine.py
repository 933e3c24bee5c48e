"""The vLLM engine in the same process: the backend of the vLLM endpoint plugin.

Inside ``vllm serve`` (:mod:`.vllm_plugin`) the gateway needs no HTTP hop: it hands the
engine client the request the ``vllm`` HTTP backend sends to ``/v1/completions``, as
objects. ``engine_client.generate(TokensPrompt(prompt_token_ids=...), SamplingParams(...,
structured_outputs=StructuredOutputsParams(grammar=...)), request_id)`` yields
``RequestOutput``s; each carries, with ``output_kind=DELTA``, the ids written since the
last, and the last one a ``finish_reason``. The sampling fields are the HTTP backend's
(:func:`~.engines.vllm_sampling`), so the two routes into vLLM cannot drift apart.

Closing the generator early (the client left, or the turn ended at ``<|call|>`` /
``<|return|>``) aborts the engine request: vLLM's own generator aborts when it is closed,
and :meth:`VllmEngineBackend.generate` also calls ``engine_client.abort`` itself, so a
request never outlives its reader whichever way the close arrives.

vLLM is imported only when a request is built (:func:`vllm_request`): this module, and the
tests that drive the backend against a stand-in engine client, load without vLLM.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from .backend import Output
from .engines import vllm_sampling
from .errors import GatewayError, UpstreamError
from .plan import Plan

__all__ = ["EngineClient", "RequestFactory", "VllmEngineBackend", "vllm_request"]


class EngineClient(Protocol):
    """What the backend uses of vLLM's ``EngineClient`` (``vllm.engine.protocol``)."""

    def generate(self, prompt: Any, sampling_params: Any, request_id: str) -> AsyncIterator[Any]:
        """``RequestOutput``s for one request, as the engine writes them."""
        ...

    async def abort(self, request_id: str) -> None:
        """Stop the request ``request_id`` (no-op when it has ended)."""
        ...


#: ``plan -> (prompt, sampling_params)``, the two objects ``engine_client.generate`` takes.
RequestFactory = Callable[[Plan], tuple[Any, Any]]


def vllm_request(plan: Plan) -> tuple[Any, Any]:
    """vLLM's ``TokensPrompt`` and ``SamplingParams`` for ``plan``: the prompt's ids, the
    turn's llguidance grammar as structured outputs, and only the new ids in each output."""
    from vllm.inputs import TokensPrompt
    from vllm.sampling_params import RequestOutputKind, SamplingParams, StructuredOutputsParams

    fields = vllm_sampling(plan)
    grammar = fields.pop("structured_outputs")
    params = SamplingParams(
        **fields,
        structured_outputs=StructuredOutputsParams(**grammar),
        output_kind=RequestOutputKind.DELTA,
        # The gateway reads ids; the engine's detokenizer would be work for no reader.
        detokenize=False,
    )
    return TokensPrompt(prompt_token_ids=list(plan.prompt_ids)), params


class VllmEngineBackend:
    """The gateway's :class:`~.backend.Backend` over vLLM's in-process engine client.

    Named ``vllm``: it honours what the ``vllm`` HTTP backend honours (the penalties and
    ``logit_bias``), since it sends the same sampling fields.
    """

    name = "vllm"

    def __init__(self, engine: EngineClient, *, request: RequestFactory = vllm_request) -> None:
        self.engine = engine
        self._request = request

    async def ready(self) -> bool:
        """Whether the engine is alive (vLLM's ``errored`` flag; ``/health`` is vLLM's own)."""
        return not bool(getattr(self.engine, "errored", False))

    async def aclose(self) -> None:
        """Nothing to release: the engine belongs to vLLM."""

    async def generate(self, plan: Plan) -> AsyncIterator[Output]:
        """The engine's output for ``plan``; faults raise :class:`~.errors.UpstreamError`."""
        prompt, params = self._request(plan)
        request_id = f"harmony-grammar-{secrets.token_hex(8)}"
        finished = False
        outputs = self.engine.generate(prompt, params, request_id)
        try:
            async for result in outputs:
                output, finished = _read(result)
                if output is not None:
                    yield output
            if not finished:
                raise UpstreamError("the vLLM engine ended the request without finishing it")
        except GatewayError:
            raise
        except ValueError as exc:
            # vLLM refuses a request it cannot run (too long for the context, a grammar its
            # backend rejects) with a ValueError before any output: the engine's word, a 502.
            raise UpstreamError(f"the vLLM engine refused the request: {exc}") from None
        finally:
            if not finished:
                # Shielding is the caller's (the app closes generators in a shielded scope).
                aclose = getattr(outputs, "aclose", None)
                if aclose is not None:
                    await aclose()
                await self.engine.abort(request_id)


def _read(result: Any) -> tuple[Output | None, bool]:
    """One ``RequestOutput`` (DELTA): its new ids, its finish, and whether it is the last."""
    completions = getattr(result, "outputs", None)
    if not completions:
        return None, bool(getattr(result, "finished", False))
    completion = completions[0]
    if getattr(completion, "finish_reason", None) == "abort":
        raise UpstreamError("the vLLM engine aborted the request")
    ids = tuple(int(i) for i in completion.token_ids)
    finish = _finish(getattr(completion, "finish_reason", None))
    finished = bool(getattr(result, "finished", False)) or finish is not None
    return (Output(ids=ids, finish_reason=finish) if ids or finish else None), finished


def _finish(value: Any) -> str | None:
    # vLLM's finish reasons: ``length``, ``stop`` (a stop id or string), ``abort``; the
    # gateway reads the first two, as the HTTP backend does (engines._finish).
    return value if value in ("length", "stop") else None
