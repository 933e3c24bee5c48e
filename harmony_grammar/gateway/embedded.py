"""The embedded backend: generation in-process, llguidance masks over a local model's logits.

:class:`EmbeddedBackend` runs :class:`~harmony_grammar.generation.sampling.Sampler` (the
project's sampler: one llguidance matcher per request, the turn's grammar) in a worker
thread per request, scoring with a model:

* ``tiny`` (the default): a randomly initialised gpt-oss (transformers'
  ``GptOssForCausalLM``; the Llama stand-in of :func:`~harmony_grammar.generation.hf.tiny_model`
  where the installed transformers lacks it) over the real o200k_harmony vocabulary, built
  offline in a fraction of a second, plus the sampler's token prior so that a random model
  ends its strings and messages;
* ``prior``: no model at all, the sampler's torch-free prior alone (fast: benchmarks);
* a directory: ``AutoModelForCausalLM.from_pretrained(path, local_files_only=True)``, scored
  as is (no prior).

Each drawn id crosses to the event loop as it is drawn; closing the generator sets the
request's stop flag, which the thread reads before its next step, so a client that leaves
stops the work within one token.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import os
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..generation.sampling import (
    GrammarError,
    Sampler,
    TokenLogprobs,
    llg_tokenizer,
    token_prior,
)
from .backend import Output
from .errors import GatewayError, UpstreamError
from .plan import Plan

__all__ = ["EmbeddedBackend", "Scorer", "load_scorer"]

#: A function from (prompt ids, ids drawn so far) to a fresh logits function for one request.
Scorer = Callable[[Sequence[int]], Callable[[Sequence[int]], npt.NDArray[np.floating[Any]]]]
_DONE = object()


def _tiny_gpt_oss(seed: int = 0) -> Any:
    """A random gpt-oss, or the Llama stand-in where transformers has no gpt-oss."""
    from ..generation.hf import tiny_gpt_oss, tiny_model

    try:
        return tiny_gpt_oss(seed=seed)
    except ImportError:  # older transformers: the Llama stand-in
        return tiny_model(seed=seed)


#: The prompt is fed to the model this many ids at a time: attention's scores for a chunk
#: are ``chunk × context`` per head, never ``prompt × prompt``.
PREFILL_CHUNK = 256


class _ModelScores:
    """One request's logits function: the model with its own KV cache, fed incrementally.

    Memory per request is the KV cache (linear in the context, a few KiB per id for the tiny
    model) plus one chunk's activations: the model computes logits for the last position
    only (``logits_to_keep=1``; 0.8 MB per position over o200k's 201,088 ids otherwise) and
    the prompt goes in :data:`PREFILL_CHUNK` ids at a time.
    """

    def __init__(self, model: Any, prompt: Sequence[int], prior: npt.NDArray[Any] | None) -> None:
        self._model = model
        self._pending = list(prompt)
        self._fed = 0
        self._cache: Any = None
        self._prior = prior
        # Models of other families may not take the argument (they then keep every logit).
        self._keep = "logits_to_keep" in inspect.signature(model.forward).parameters

    def _step(self, ids: list[int]) -> Any:
        import torch

        kwargs: dict[str, Any] = {"cache": self._cache, "use_cache": True}
        if self._keep:
            kwargs["logits_to_keep"] = 1
        with torch.no_grad():
            out = self._model(input_ids=torch.tensor([ids], dtype=torch.long), **kwargs)
        self._cache = out.cache
        return out

    def __call__(self, drawn: Sequence[int]) -> npt.NDArray[np.floating[Any]]:
        new = self._pending + list(drawn[self._fed :])
        self._pending = []
        self._fed = len(drawn)
        for start in range(0, len(new) - PREFILL_CHUNK, PREFILL_CHUNK):
            self._step(new[start : start + PREFILL_CHUNK])  # the cache only: no logits kept
        tail = len(new) - (len(new) - 1) // PREFILL_CHUNK * PREFILL_CHUNK if new else 0
        out = self._step(new[len(new) - tail :])
        scores: npt.NDArray[np.floating[Any]] = out.logits[0, -1].float().numpy()
        if self._prior is not None:
            scores = scores[: len(self._prior)] + self._prior
        return scores


def load_scorer(model: str) -> Scorer | None:
    """The scorer for ``--model``: None for ``prior``; ``tiny``; or a local model directory."""
    if model == "prior":
        return None
    if model == "tiny":
        network = _tiny_gpt_oss()
        prior: npt.NDArray[Any] | None = token_prior()
    else:
        path = Path(model)
        if not path.is_dir():
            raise GatewayError(
                400,
                f"--model {model!r} is not tiny, prior or a local model directory",
                code="model_not_found",
            )
        from transformers import AutoModelForCausalLM

        network = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
        network.eval()  # type: ignore[no-untyped-call]
        prior = None
    return lambda prompt: _ModelScores(network, prompt, prior)


class EmbeddedBackend:
    """In-process generation (see the module docstring); ``workers`` requests at a time."""

    name = "embedded"

    def __init__(self, model: str = "tiny", *, workers: int = 4) -> None:
        self.model = model
        self._scorer = load_scorer(model)
        llg_tokenizer()  # built once, here, rather than inside the first request
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="harmony-embedded"
        )
        self.active = 0  # generations running now (tests check it returns to 0)
        self.cancelled = 0  # generations stopped before their end by a closed generator

    async def ready(self) -> bool:
        """Always ready once built (the model is in memory)."""
        return True

    async def aclose(self) -> None:
        """Stop the worker threads (running generations see their stop flags first)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def generate(self, plan: Plan) -> AsyncIterator[Output]:
        """The plan's turn under its grammar (see :meth:`draws`), with each id's log-probability
        where the plan asks for them."""
        return self._outputs(plan)

    async def _outputs(self, plan: Plan) -> AsyncIterator[Output]:
        async for token, logprobs in self.draws(
            plan.prompt_ids,
            plan.grammar,
            max_tokens=plan.max_tokens,
            temperature=plan.temperature,
            seed=plan.seed,
            logprobs=plan.logprobs,
        ):
            yield Output(ids=(token,), logprobs=() if logprobs is None else (logprobs,))

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
        """Ids after ``prompt`` under the llguidance ``grammar``, each as it is drawn (:meth:`draws`
        without log-probabilities)."""
        draws = self.draws(
            prompt,
            grammar,
            max_tokens=max_tokens,
            temperature=temperature,
            seed=seed,
            stop_ids=stop_ids,
        )
        try:
            async for token, _ in draws:
                yield token
        finally:
            await draws.aclose()

    async def draws(
        self,
        prompt: Sequence[int],
        grammar: str,
        *,
        max_tokens: int,
        temperature: float = 1.0,
        seed: int | None = None,
        stop_ids: frozenset[int] = frozenset(),
        logprobs: int | None = None,
    ) -> AsyncGenerator[tuple[int, TokenLogprobs | None], None]:
        """Ids after ``prompt`` under the llguidance ``grammar``, each as it is drawn, with its
        :class:`~harmony_grammar.generation.sampling.TokenLogprobs` when ``logprobs`` (the
        number of alternatives) is given. Asking for them never changes the draw.

        Ends when the grammar is complete, at ``max_tokens``, or after an id in ``stop_ids``.
        Raises :class:`GatewayError` (400) when llguidance rejects the grammar.
        """
        try:
            # Off the event loop: a large grammar takes seconds to build, and the other
            # requests go on meanwhile (the Sampler builds it on a stack of its own).
            sampler = await asyncio.to_thread(Sampler, grammar, max_tokens=max_tokens)
        except GrammarError as exc:
            if exc.limit is not None:
                raise GatewayError(
                    400,
                    f"the grammar is past the gateway's {exc.limit} limit: {exc}",
                    code=f"grammar_{exc.limit}_exceeded",
                ) from None
            raise GatewayError(400, f"llguidance rejects the grammar: {exc}") from None
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        stop = threading.Event()
        scores = None if self._scorer is None else self._scorer(prompt)
        # A seed names one output; without one, a fresh draw (OpenAI's behaviour).
        # numpy takes seeds from 0 up: a negative one (OpenAI allows any int64) is mapped to
        # its two's complement, still one output per seed.
        rng = np.random.default_rng(
            seed % 2**64 if seed is not None else int.from_bytes(os.urandom(8), "little")
        )

        def put(item: Any) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop has closed: nobody is waiting any more
                stop.set()

        def run() -> None:
            try:
                steps = sampler.stream(
                    rng, logits=scores, temperature=temperature, logprobs=logprobs
                )
                for token in steps:
                    if stop.is_set():
                        return
                    put((token, sampler.last_logprobs if logprobs is not None else None))
                    if token in stop_ids:
                        break
                put(_DONE)
            except Exception as exc:  # handed to the event loop, raised there
                if not stop.is_set():
                    put(exc)

        self.active += 1
        finished = False
        drawn = 0
        try:
            self._pool.submit(run)
            while True:
                item = await queue.get()
                if item is _DONE:
                    finished = True
                    return
                if isinstance(item, BaseException):
                    finished = True
                    if isinstance(item, GrammarError) and not drawn:
                        # The client's grammar cannot run (a limit llguidance meets at
                        # run time), found before any output: the request's fault.
                        raise GatewayError(
                            400, f"llguidance cannot run the grammar: {item}"
                        ) from item
                    raise UpstreamError(f"generation failed: {item}") from item
                drawn += 1
                yield item
        finally:
            stop.set()
            self.active -= 1
            if not finished:
                self.cancelled += 1
