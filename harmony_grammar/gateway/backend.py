"""What the app asks of an engine: the :class:`Backend` protocol and its :class:`Output` pieces.

A backend turns a :class:`~.planning.Plan` into the engine's request and yields what the model
wrote as it arrives. Engines that return token ids (vLLM, SGLang, llama.cpp, the embedded
one) yield ``Output.ids``; Ollama returns text only and yields ``Output.text``, which the
parser reads leniently. A backend raises :class:`~.errors.UpstreamError` for every engine
fault, and stops its engine when the generator is closed early (the client went away, or the
turn ended at ``<|call|>`` / ``<|return|>``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from .planning import Plan

__all__ = ["Backend", "Output", "TokenSource"]


@dataclass(frozen=True, slots=True)
class Output:
    """A piece of the model's output: token ids, or text where the engine gives no ids.

    ``completion_tokens`` is the engine's own count when it reports one (the text engines).
    """

    ids: tuple[int, ...] = ()
    text: str = ""
    completion_tokens: int | None = None


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


class TokenSource(Protocol):
    """A backend that draws ids itself (embedded, replay): it can serve ``/v1/completions``."""

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
