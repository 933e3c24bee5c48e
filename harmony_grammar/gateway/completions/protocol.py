"""The vLLM-style ``POST /v1/completions`` in: a body checked and planned (ids in, ids out).

The subset of vLLM's request that the gateway's vLLM backend sends (``engines.VllmBackend``):
``prompt`` as a list of ids (or a string, whose control-token spellings become their ids, as a
raw completion's prompt is raw), ``max_tokens``, ``temperature``, ``seed``, ``stream``,
``stop_token_ids``, ``structured_outputs.grammar`` (an llguidance grammar) and
``return_token_ids``. Each choice carries ``text`` (special tokens spelled) and
``token_ids``, as vLLM's does with ``return_token_ids: true``; the first streamed chunk also
carries ``prompt_token_ids``. An xgrammar ``structural_tag`` is refused (400): the embedded
engine masks with llguidance only. ``logprobs`` (0 to 20 alternatives) gives each id's
log-probability in the legacy shape (``tokens``, ``token_logprobs``, ``top_logprobs``,
``text_offset``) on the embedded backend (:mod:`..logprobs`); the replay backend refuses it.

The request is read once, here (:func:`plan_completion`), with the planner's field readers
and limits: ``max_tokens`` is capped by ``--max-tokens-limit``, and the client's grammar
passes the grammar gate (:mod:`~harmony_grammar.schema.grammar_gate`: depth, size and rule
count) before llguidance sees it. The route is :class:`~.serving.CompletionsServing`'s: the
same lifecycle as Chat Completions (:mod:`..lifecycle`: the model check, ``--max-queue``,
the metrics, the engine closed when the client leaves) and the same SSE writer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...format.bounded_encode import EncodeLimitError, encode_bounded
from ...format.tokens import CONTROL_SPELLINGS
from ...format.vocabulary import load_encoding
from ...schema.grammar_gate import grammar_limit_problem
from ..bounds import check_context
from ..errors import GatewayError, bad_request
from ..fields import MAX_TOP_LOGPROBS
from ..fields import integer as _integer
from ..fields import number as _number
from ..plan import Limits

__all__ = ["DEFAULT_MAX_TOKENS", "UNCONSTRAINED", "CompletionPlan", "plan_completion"]

#: The grammar of a completion with no constraint: any text, then end-of-sequence.
UNCONSTRAINED = "%llguidance {}\nstart: /(?s:.*)/\n"
#: vLLM's default ``max_tokens`` for a completion.
DEFAULT_MAX_TOKENS = 16


@dataclass(frozen=True)
class CompletionPlan:
    """A ``/v1/completions`` request, read and checked."""

    prompt: list[int]
    grammar: str
    max_tokens: int
    temperature: float
    seed: int | None
    stop_ids: frozenset[int]
    stream: bool
    include_usage: bool
    model: str
    #: Alternatives per position wanted with each id's log-probability; None: not asked.
    logprobs: int | None = None


def _prompt(value: Any) -> list[int]:
    ids: list[int] | None = None
    if isinstance(value, str):
        # Control-token spellings are their ids; any other special spelling
        # (``<|endoftext|>``) is text, as tiktoken would otherwise refuse it.
        try:
            ids = encode_bounded(load_encoding(), value, allowed_special=CONTROL_SPELLINGS)
        except EncodeLimitError as exc:
            raise bad_request(f"the prompt cannot be encoded: {exc}", "prompt") from None
    elif isinstance(value, list) and all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < load_encoding().n_vocab
        for i in value
    ):
        ids = list(value)
    if not ids:  # an empty prompt gives a model nothing to continue: never the engine's 502
        raise bad_request(
            "prompt must be a non-empty string or a non-empty list of o200k_harmony token ids",
            "prompt",
        )
    return ids


def _grammar(request: Mapping[str, Any]) -> str:
    outputs = request.get("structured_outputs")
    if outputs is None:
        return UNCONSTRAINED
    if not isinstance(outputs, Mapping):
        raise bad_request("must be an object", "structured_outputs")
    grammar = outputs.get("grammar")
    if not isinstance(grammar, str):
        raise bad_request(
            "the embedded engine takes structured_outputs.grammar (llguidance) only",
            "structured_outputs",
        )
    problem = grammar_limit_problem(grammar)
    if problem is not None:
        raise GatewayError(
            400,
            f"the grammar is past the gateway's {problem.limit} limit: {problem}",
            param="structured_outputs.grammar",
            code=f"grammar_{problem.limit}_exceeded",
        )
    return grammar


def plan_completion(request: Any, *, model: str, limits: Limits) -> CompletionPlan:
    """The plan of a ``/v1/completions`` body; :class:`GatewayError` (400) naming the field."""
    if not isinstance(request, Mapping):
        raise bad_request("the request body must be a JSON object")
    max_tokens = _integer(request, "max_tokens", 1, limits.max_tokens)
    temperature = _number(request, "temperature", 0.0, 2.0)
    stops = request.get("stop_token_ids")
    if stops is not None and (
        not isinstance(stops, list)
        or not all(isinstance(i, int) and not isinstance(i, bool) for i in stops)
    ):
        raise bad_request("stop_token_ids must be a list of token ids", "stop_token_ids")
    stream = request.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise bad_request("stream must be a boolean", "stream")
    options = request.get("stream_options")
    if options is not None and not isinstance(options, Mapping):
        raise bad_request("stream_options must be an object", "stream_options")
    name = request.get("model")
    if name is not None and not isinstance(name, str):
        raise bad_request("model must be a string", "model")
    prompt = _prompt(request.get("prompt"))
    limit = DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens
    # Before the grammar is read.
    check_context(len(prompt), limit, limits.context_tokens, param="prompt")
    return CompletionPlan(
        prompt=prompt,
        grammar=_grammar(request),
        max_tokens=limit,
        temperature=1.0 if temperature is None else temperature,
        seed=_integer(request, "seed", -(2**63), 2**63 - 1),
        stop_ids=frozenset(stops or ()),
        stream=bool(stream),
        include_usage=isinstance(options, Mapping) and options.get("include_usage") is True,
        model=name or model,
        logprobs=_integer(request, "logprobs", 0, MAX_TOP_LOGPROBS),
    )
