"""A torch-free constrained sampling loop: llguidance's matcher, tiktoken's vocabulary, numpy.

Theory of operation. Each step asks the matcher for the mask of allowed token ids, draws one
allowed id, and feeds it back; the loop ends when the matcher stops (the grammar is complete:
a Harmony turn ends at ``<|call|>`` or ``<|return|>``), when it only allows end-of-sequence,
or at ``max_tokens``. The ids come back exactly as sampled, so a control token is its special
id by construction, and what they spell is decided by the grammar alone.

The "model" is random logits: a fixed prior (:func:`token_prior`) plus fresh Gumbel noise at
every step. By the Gumbel-max trick the arg-max over the allowed ids is a draw from
``softmax(prior)`` restricted to the mask, so that is what :class:`Sampler` draws directly, by
rejection against the mask (cheap while most of the prior's mass is allowed) with an exact
fallback over the mask's ids. Pass ``logits=`` to use any other scorer (a real model).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..base.errors import HarmonyGrammarError
from ..declarations.toolset import ToolsArgument
from ..format.tokens import FIRST_SPECIAL_ID, TERMINATORS, ControlToken
from ..format.vocabulary import load_encoding
from ..schema.grammar_gate import COMPILE_STACK_BYTES, GrammarLimitError, build_matcher
from .options import TurnOptions
from .outlines_export import harmony_lltokenizer as llg_tokenizer
from .turn_grammar import completion_grammar

__all__ = [
    "COMPILE_STACK_BYTES",
    "GrammarError",
    "Sample",
    "Sampler",
    "TokenLogprobs",
    "llg_tokenizer",
    "sample",
    "token_prior",
]

#: How much a token loses per byte beyond its first: short tokens make short strings.
LENGTH_PENALTY = 3.0
#: What message terminators and closing tokens (``"``, ``}``, ``]``, ``"}``) gain, so a random
#: string, object or message ends after tens of tokens instead of thousands. The other control
#: tokens (``<|start|>``, ``<|channel|>``, ``<|message|>``, ``<|constrain|>``) only continue a
#: structure; they weigh as much as a one-byte token, so that where the grammar offers a
#: choice between them and text (another preamble, or a call's `` to=``), neither wins.
CLOSING_BONUS = 4.0
#: Special ids that are not Harmony control tokens (``<|reserved_200100|>``...): a thousand of
#: them would otherwise take most of the prior's mass. Unlikely, never impossible, so a grammar
#: that wrongly allowed one would still be caught.
OTHER_SPECIAL_PRIOR = -12.0
_CLOSERS = frozenset(b'"}]')
#: Rejection draws per step before falling back to the exact draw over the mask.
_REJECTION_TRIES = 32

LogitsFunction = Callable[[Sequence[int]], npt.NDArray[np.floating[Any]]]


class GrammarError(HarmonyGrammarError, ValueError):
    """llguidance rejected the grammar (the message is llguidance's), or the grammar is past
    one of the gate's limits: then ``limit`` names it (``size``, ``rule_count``,
    ``rule_depth``, ``nesting``)."""

    def __init__(self, message: str, *, limit: str | None = None) -> None:
        super().__init__(message)
        self.limit = limit


@functools.lru_cache(maxsize=1)
def token_prior() -> npt.NDArray[np.float32]:
    """Prior logits over o200k_harmony: short tokens, closers and control tokens favoured.

    ``-LENGTH_PENALTY * (bytes - 1)`` for each ordinary token, ``+CLOSING_BONUS`` for tokens
    made only of ``"``, ``}`` and ``]`` and for the message terminators (``<|end|>``,
    ``<|call|>``, ``<|return|>``), 0 for the other Harmony control tokens and
    ``OTHER_SPECIAL_PRIOR`` for the remaining special ids. Read-only.
    """
    encoding = load_encoding()
    prior = np.zeros(encoding.n_vocab, dtype=np.float32)
    ranks: dict[bytes, int] = encoding._mergeable_ranks
    for token, rank in ranks.items():
        prior[rank] = -LENGTH_PENALTY * (len(token) - 1)
        if _CLOSERS.issuperset(token):
            prior[rank] += CLOSING_BONUS
    prior[FIRST_SPECIAL_ID:] = OTHER_SPECIAL_PRIOR
    prior[[token.id for token in ControlToken]] = 0.0
    prior[[token.id for token in TERMINATORS]] = CLOSING_BONUS
    prior.setflags(write=False)
    return prior


@dataclass(frozen=True, slots=True)
class Sample:
    """One sampled completion.

    ``ids`` are the sampled token ids (a stop token included, end-of-sequence not).
    ``complete`` is true when the grammar was satisfied (not cut off at ``max_tokens``).
    ``mask_seconds`` is the time spent computing masks.
    """

    ids: tuple[int, ...]
    complete: bool
    mask_seconds: float


@dataclass(frozen=True, slots=True)
class TokenLogprobs:
    """One drawn id's log-probability, and the ``top`` alternatives at its step.

    Taken from the distribution the id was drawn from before temperature: the scores (the
    model's logits, or the prior) restricted to the ids the grammar allowed at that step and
    renormalised over them. An id the grammar forced has log-probability 0; ``top`` lists
    allowed ids only, most likely first, as ``(id, logprob)`` pairs.
    """

    id: int
    logprob: float
    top: tuple[tuple[int, float], ...] = ()


class Sampler:
    """Samples completions of one grammar; build once, call :meth:`sample` many times.

    ``grammar`` is an llguidance grammar (Lark syntax starting with ``%llguidance {}``, or
    llguidance's JSON form). Raises :class:`GrammarError` when it is past one of the gate's
    limits (checked first, on the text) or llguidance rejects it. llguidance builds it on a
    thread with a stack of its own (:data:`COMPILE_STACK_BYTES`), so the caller's stack
    never decides whether it builds.
    """

    def __init__(self, grammar: str, *, max_tokens: int = 512) -> None:
        import llguidance

        tokenizer = llg_tokenizer()
        try:
            # Each run starts from a copy of the fresh matcher: llguidance cannot roll back
            # (reset) a matcher whose grammar bounds a lexeme with max_tokens.
            self._fresh: llguidance.LLMatcher = build_matcher(grammar, tokenizer)
        except GrammarLimitError as exc:
            raise GrammarError(str(exc), limit=exc.limit) from None
        except ValueError as exc:  # llguidance's own refusal
            raise GrammarError(str(exc)) from None
        self._matcher = self._fresh
        self._eos = int(tokenizer.eos_token)
        self._vocab = int(tokenizer.vocab_size)
        self.max_tokens = max_tokens
        # The prior as probabilities over the tokenizer's ids (llguidance counts one id past
        # the model's vocabulary; it gets no mass).
        weights = np.zeros(self._vocab, dtype=np.float64)
        prior = token_prior()
        weights[: len(prior)] = np.exp(prior.astype(np.float64))
        self._weights = weights
        self._cdf = np.cumsum(weights)
        self._cdf /= self._cdf[-1]
        self._prior = prior
        self._so_far: list[int] = []  # the ids drawn in the current run, for ``logits``
        self.mask_seconds = 0.0
        #: The last drawn id's :class:`TokenLogprobs`, when :meth:`stream` was asked for them.
        self.last_logprobs: TokenLogprobs | None = None

    @classmethod
    def for_turn(
        cls,
        tools: ToolsArgument,
        options: TurnOptions | None = None,
        *,
        max_tokens: int = 512,
        **changes: Any,
    ) -> Sampler:
        """A sampler of an assistant turn: :func:`~.turn_grammar.completion_grammar` of
        ``tools`` under ``options`` (a :class:`~.options.TurnOptions`, the keywords applied
        over it), the same object the grammar and the structural tag take."""
        return cls(completion_grammar(tools, options, **changes), max_tokens=max_tokens)

    def sample(self, rng: np.random.Generator, *, logits: LogitsFunction | None = None) -> Sample:
        """Draw one completion with ``rng``; ``logits(ids_so_far)`` replaces the prior."""
        steps = self.stream(rng, logits=logits)
        ids: list[int] = []
        while True:
            try:
                ids.append(next(steps))
            except StopIteration as stop:
                return Sample(tuple(ids), bool(stop.value), self.mask_seconds)

    def stream(
        self,
        rng: np.random.Generator,
        *,
        logits: LogitsFunction | None = None,
        temperature: float = 1.0,
        max_tokens: int | None = None,
        logprobs: int | None = None,
    ) -> Generator[int, None, bool]:
        """Yield one completion's ids as they are drawn; returns whether the grammar completed.

        The same loop as :meth:`sample`, one id at a time, so a server can send each id as it
        is drawn and stop early by closing the generator. ``temperature`` divides the scores
        (``logits`` or the prior); 0 takes the allowed id with the highest score, which is
        deterministic. ``max_tokens`` overrides the sampler's. :attr:`mask_seconds` is the
        time spent computing masks in this run. One run at a time per sampler (it owns one
        matcher). With ``logprobs`` (how many alternatives to list, 0 for none),
        :attr:`last_logprobs` holds each id's :class:`TokenLogprobs` as the id is yielded.
        """
        matcher = self._matcher = self._fresh.deep_copy()
        self.mask_seconds = 0.0
        self._so_far = []
        limit = self.max_tokens if max_tokens is None else max_tokens
        produced = 0
        complete = False
        while produced < limit:
            if matcher.is_stopped():
                complete = True
                break
            started = time.perf_counter()
            mask = matcher.compute_bitmask()
            self.mask_seconds += time.perf_counter() - started
            scores = None
            if temperature != 1.0 or logits is not None or logprobs is not None:
                scores = self._prior if logits is None else logits(self._so_far)
            if scores is not None and temperature == 0:
                token = self._best(mask, scores)
            elif scores is None or (logits is None and temperature == 1.0):
                token = self._draw_from_prior(mask, rng)
            else:
                token = self._draw_from_logits(mask, scores / temperature, rng)
            if logprobs is not None and scores is not None:
                self.last_logprobs = self._logprobs(mask, scores, token, logprobs)
            if token == self._eos:
                complete = True
                break
            if not matcher.consume_token(token):
                # The grammar hit one of llguidance's run-time limits (an Earley row of more
                # than 2,000 items, say): the grammar's fault, not the draw's.
                raise GrammarError(
                    f"llguidance refused its own allowed token: {matcher.get_error()}"
                )
            self._so_far.append(token)
            produced += 1
            yield token
        else:
            complete = matcher.is_stopped()
        if matcher.is_error():
            raise GrammarError(f"llguidance matcher error: {matcher.get_error()}")
        return complete

    def _logprobs(
        self, mask: bytes, scores: npt.NDArray[np.floating[Any]], token: int, top: int
    ) -> TokenLogprobs:
        # log softmax over the allowed ids the scores cover (see TokenLogprobs).
        allowed = self._allowed(mask)
        allowed = allowed[allowed < len(scores)]
        values = scores[allowed].astype(np.float64)
        peak = float(values.max())
        norm = peak + float(np.log(np.exp(values - peak).sum()))
        best: list[tuple[int, float]] = []
        if top > 0:
            count = min(top, allowed.size)
            picked = np.argpartition(-values, count - 1)[:count]
            picked = picked[np.lexsort((allowed[picked], -values[picked]))]
            best = [(int(allowed[i]), float(values[i]) - norm) for i in picked]
        # (-9999.0: OpenAI's word for "very unlikely", never reached: every draw is scored)
        own = float(scores[token]) - norm if token < len(scores) else -9999.0
        return TokenLogprobs(token, own, tuple(best))

    def _allowed(self, mask: bytes) -> npt.NDArray[np.intp]:
        # Unpack only the non-zero 32-bit words: where the grammar forces a token, a handful.
        words = np.frombuffer(mask, dtype="<u4")
        live = np.flatnonzero(words)
        bits = np.unpackbits(words[live].view(np.uint8), bitorder="little").reshape(-1, 32)
        rows, columns = np.nonzero(bits)
        allowed: npt.NDArray[np.intp] = live[rows] * 32 + columns
        allowed = allowed[allowed < self._vocab]
        if allowed.size == 0:
            raise RuntimeError("the grammar allows no token here (empty mask)")
        return allowed

    def _best(self, mask: bytes, scores: npt.NDArray[np.floating[Any]]) -> int:
        # Greedy: the allowed id with the highest score (ties to the lowest id). One pass
        # over the unpacked mask, with no index arrays: free text allows ~200,000 ids.
        allowed = np.unpackbits(np.frombuffer(mask, dtype=np.uint8), bitorder="little")
        size = min(len(scores), self._vocab)
        masked = np.where(allowed[:size].astype(bool), scores[:size], -np.inf)
        best = int(np.argmax(masked))
        if masked[best] == -np.inf:
            raise RuntimeError("the grammar allows no token the scores cover")
        return best

    def _draw_from_prior(self, mask: bytes, rng: np.random.Generator) -> int:
        # Rejection: a prior draw that the mask allows is a draw from the restricted prior.
        candidates = np.searchsorted(self._cdf, rng.random(_REJECTION_TRIES), side="right")
        for candidate in candidates.tolist():
            if mask[candidate >> 3] >> (candidate & 7) & 1:
                return int(candidate)
        allowed = self._allowed(mask)
        weights = self._weights[allowed]
        cdf = np.cumsum(weights)
        return int(allowed[np.searchsorted(cdf, rng.random() * cdf[-1], side="right")])

    def _draw_from_logits(
        self, mask: bytes, scores: npt.NDArray[np.floating[Any]], rng: np.random.Generator
    ) -> int:
        allowed = self._allowed(mask)
        allowed = allowed[allowed < len(scores)]
        if allowed.size == 0:
            raise RuntimeError("the grammar allows no token the logits cover")
        # Gumbel-max over the allowed ids: a draw from softmax(scores) restricted to the mask.
        noisy = scores[allowed] + rng.gumbel(size=allowed.size)
        return int(allowed[int(np.argmax(noisy))])


def sample(
    grammar: str,
    *,
    n: int = 1,
    seed: int = 0,
    max_tokens: int = 512,
    logits: LogitsFunction | None = None,
) -> list[Sample]:
    """``n`` completions of ``grammar``, reproducible from ``seed``."""
    sampler = Sampler(grammar, max_tokens=max_tokens)
    rng = np.random.default_rng(seed)
    return [sampler.sample(rng, logits=logits) for _ in range(n)]
