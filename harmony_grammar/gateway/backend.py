"""What the app asks of an engine: the :class:`Backend` protocol and its :class:`Output` pieces.

A backend turns a :class:`~.plan.Plan` into the engine's request and yields what the model
wrote as it arrives. Engines that return token ids (vLLM, SGLang, llama.cpp, the embedded
one) yield ``Output.ids``; Ollama returns text only and yields ``Output.text``, which the
parser reads leniently. The last piece may carry the engine's own ``finish_reason``. A
backend raises :class:`~.errors.UpstreamError` for every engine fault (a stream that ends
without its end marker included), and stops its engine when the generator is closed early
(the client went away, or the turn ended at ``<|call|>`` / ``<|return|>``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..generation.sampling import TokenLogprobs
from .plan import Plan

__all__ = ["Backend", "Output", "ScoredTokenSource", "TokenSource"]


@dataclass(frozen=True, slots=True)
class Output:
    """A piece of the model's output: token ids, or text where the engine gives no ids.

    ``completion_tokens`` is the engine's own count when it reports one (the text engines).
    ``finish_reason`` is the engine's own word on why it stopped, where it says: ``length``
    (its token limit) or ``stop`` (a stop token or string, which it may have dropped).
    ``logprobs`` holds one entry per id of ``ids`` where the plan asked for them
    (:attr:`~.plan.Plan.logprobs`) and the backend can give them (the embedded one).
    """

    ids: tuple[int, ...] = ()
    text: str = ""
    completion_tokens: int | None = None
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprobs, ...] = ()


class Backend(Protocol):
    """An engine behind the gateway."""

    @property
    def name(self) -> str:
        """``embedded``, ``vllm``, ``sglang``, ``llamacpp`` or ``ollama``."""
        ...

    def generate(self, plan: Plan) -> AsyncIterator[Output]:
        """The model's output for ``plan``, piece by piece; closing it cancels the engine."""
        ...

    async def ready(self) -> bool:
        """Whether the engine answers (``/health`` is 200 only then)."""
        ...

    async def aclose(self) -> None:
        """Release the backend's connections and threads."""
        ...


@runtime_checkable
class TokenSource(Protocol):
    """A backend that draws ids itself (embedded, replay): it can serve ``/v1/completions``
    (the app registers that route where ``isinstance(backend, TokenSource)``)."""

    @property
    def name(self) -> str:
        """The backend's name."""
        ...

    def tokens(
        self,
        prompt: Sequence[int],
        grammar: str,
        *,
        max_tokens: int,
        temperature: float = 1.0,
        seed: int | None = None,
        stop_ids: frozenset[int] = frozenset(),
    ) -> AsyncGenerator[int, None]:
        """Ids after ``prompt`` under the llguidance ``grammar``, each as it comes."""
        ...


@runtime_checkable
class ScoredTokenSource(TokenSource, Protocol):
    """A token source that also scores each id: ``/v1/completions`` gives ``logprobs``."""

    def draws(
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
        """Ids after ``prompt`` under ``grammar``, each with its log-probabilities where
        ``logprobs`` (the number of alternatives) is given."""
        ...
