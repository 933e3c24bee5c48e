"""Backends that call an engine over HTTP: vLLM, SGLang, llama.cpp server and Ollama.

Each engine's raw completion endpoint takes the prompt the gateway rendered and returns what
the model wrote; the gateway owns the format. One class per engine says only its request and
how to read one streamed record; :class:`~.http_engine.HttpBackend` does the rest once (the
connection pool, timeouts, status codes, stream framing, and closing the upstream response
when the client leaves). The exact requests, what each engine can constrain and the flags it needs
are in docs/serving.md ("The gateway's backends"); in short:

=========  ====================  ==========================================  ============
engine     endpoint              grammar sent                                output read
=========  ====================  ==========================================  ============
vLLM       ``/v1/completions``   ``structured_outputs.grammar`` (llguidance)  token ids
                                 or ``.structural_tag`` (xgrammar)
SGLang     ``/generate``         ``sampling_params.ebnf`` (llguidance text)   token ids
                                 or ``.structural_tag`` (xgrammar)
llama.cpp  ``/completion``       ``grammar``: GBNF with special tokens by     token ids
                                 id (any build), and ``logit_bias`` banning
                                 the special ids the turn never writes; or
                                 llguidance text (``--grammar llguidance``,
                                 a ``LLAMA_LLGUIDANCE`` build)
Ollama     ``/api/generate``     none (``raw: true``; no token-level           text
                                 grammar), read leniently
=========  ====================  ==========================================  ============
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar

from ..format.tokens import STOP_TOKENS
from .backend import Output
from .errors import UpstreamError
from .http_engine import HttpBackend
from .plan import Plan

__all__ = [
    "BACKENDS",
    "LlamaCppBackend",
    "OllamaBackend",
    "SGLangBackend",
    "VllmBackend",
    "vllm_sampling",
]

#: ``<|call|>`` and ``<|return|>``: every engine is told to stop at them.
STOP_IDS = sorted(token.id for token in STOP_TOKENS)
STOP_SPELLINGS = sorted(token.value for token in STOP_TOKENS)


def _ids(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < 201088 for i in value
    ):
        raise UpstreamError(f"{where}: token ids must be a list of o200k_harmony ids")
    return tuple(value)


def _penalties(plan: Plan) -> dict[str, float]:
    """The request's presence and frequency penalties, under OpenAI's names (vLLM's and
    llama-server's too), where it set them."""
    given = {
        "presence_penalty": plan.presence_penalty,
        "frequency_penalty": plan.frequency_penalty,
    }
    return {key: value for key, value in given.items() if value is not None}


def _finish(value: Any) -> str | None:
    """An engine's finish word as the gateway reads it: ``length``, ``stop`` or None."""
    return value if value in ("length", "stop") else None


def vllm_sampling(
    plan: Plan, structured_outputs: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """What vLLM is asked to sample for ``plan``, under vLLM's names: the fields of the
    ``/v1/completions`` body and of ``SamplingParams`` alike (the endpoint plugin's backend
    builds one from them, :mod:`.vllm_engine`). ``structured_outputs`` is the grammar's
    field (default: the llguidance grammar); ``logit_bias`` is keyed by id."""
    fields: dict[str, Any] = {
        "max_tokens": plan.max_tokens,
        "temperature": plan.temperature,
        "skip_special_tokens": False,
        "stop_token_ids": list(STOP_IDS),
        "structured_outputs": dict(structured_outputs or {"grammar": plan.grammar}),
    }
    if plan.seed is not None:
        fields["seed"] = plan.seed
    if plan.top_p is not None:
        fields["top_p"] = plan.top_p
    fields.update(_penalties(plan))
    if plan.logit_bias:
        fields["logit_bias"] = dict(plan.logit_bias)
    return fields


class VllmBackend(HttpBackend):
    """vLLM's ``/v1/completions`` with prompt ids, ``return_token_ids`` and a grammar.

    Also the embedded server's own ``/v1/completions``, so one gateway can front another.
    """

    name = "vllm"
    path = "/v1/completions"
    #: vLLM 0.34 pins ``xgrammar==0.2.8`` (docs/schema-grammar.md: what the tag changes there).
    xgrammar_pins: ClassVar[Mapping[tuple[int, int], str]] = {(0, 34): "0.2.8"}

    def body(self, plan: Plan) -> dict[str, Any]:
        """``prompt`` as ids, the grammar in ``structured_outputs``, stop at the stop ids."""
        fields = vllm_sampling(plan, self._grammar_field("grammar", "structural_tag", plan))
        if "logit_bias" in fields:  # JSON keys are text
            fields["logit_bias"] = {str(i): bias for i, bias in fields["logit_bias"].items()}
        return {
            "model": self.model or plan.model,
            "prompt": list(plan.prompt_ids),
            "stream": True,
            "return_token_ids": True,
            **fields,
        }

    def read(self, record: Mapping[str, Any]) -> Output | None:
        """``choices[0].token_ids`` of one chunk, and its ``finish_reason``."""
        choices = record.get("choices")
        if not isinstance(choices, list) or not choices:
            return None  # the usage chunk
        choice = choices[0]
        if not isinstance(choice, Mapping) or "token_ids" not in choice:
            raise UpstreamError("vllm sent a chunk without token_ids (is return_token_ids on?)")
        ids = _ids(choice["token_ids"], "vllm")
        finish = _finish(choice.get("finish_reason"))
        return Output(ids=ids, finish_reason=finish) if ids or finish else None


class SGLangBackend(HttpBackend):
    """SGLang's native ``/generate`` with ``input_ids`` and an EBNF or a structural tag."""

    name = "sglang"
    path = "/generate"

    def body(self, plan: Plan) -> dict[str, Any]:
        """``input_ids``, ``sampling_params`` (with the grammar), ``stream: true``."""
        params: dict[str, Any] = {
            "max_new_tokens": plan.max_tokens,
            "temperature": plan.temperature,
            "stop_token_ids": STOP_IDS,
            "skip_special_tokens": False,
            "no_stop_trim": True,
            **self._grammar_field("ebnf", "structural_tag", plan),
        }
        if plan.seed is not None:
            params["sampling_seed"] = plan.seed
        if plan.top_p is not None:
            params["top_p"] = plan.top_p
        return {"input_ids": list(plan.prompt_ids), "sampling_params": params, "stream": True}

    async def generate(self, plan: Plan) -> AsyncIterator[Output]:
        """As :meth:`HttpBackend.generate`, each record's ``output_ids`` cut to what is new.

        SGLang streams the whole output so far in every record: only the tail is new.
        """
        seen = 0
        async for output in super().generate(plan):
            new = output.ids[seen:]
            seen = len(output.ids)
            if new or output.finish_reason:
                yield Output(ids=new, finish_reason=output.finish_reason)

    def merge(self, outputs: list[Output]) -> Output | None:
        """The last record of a read: each holds all of the output so far."""
        return outputs[-1] if outputs else None

    def read(self, record: Mapping[str, Any]) -> Output | None:
        """``output_ids`` (all of the output so far), and ``meta_info.finish_reason.type``."""
        if "output_ids" not in record:
            raise UpstreamError("sglang sent a record without output_ids")
        meta = record.get("meta_info")
        reason = meta.get("finish_reason") if isinstance(meta, Mapping) else None
        finish = _finish(reason.get("type") if isinstance(reason, Mapping) else None)
        return Output(ids=_ids(record["output_ids"], "sglang"), finish_reason=finish)


class LlamaCppBackend(HttpBackend):
    """llama.cpp server's ``/completion`` with a token prompt, a grammar and ``return_tokens``.

    The grammar is GBNF with special tokens by id by default (stock builds have no
    llguidance); ``--grammar llguidance`` sends the llguidance text to a build that has it.
    """

    name = "llamacpp"
    path = "/completion"
    grammars = ("gbnf", "llguidance")
    end_marker = 'a record with "stop": true'

    def body(self, plan: Plan) -> dict[str, Any]:
        """``prompt`` as ids, ``grammar``, ``return_tokens``, streaming; with GBNF, the
        special ids the turn never writes banned by ``logit_bias`` (``turn_gbnf``)."""
        body: dict[str, Any] = {
            "prompt": list(plan.prompt_ids),
            "n_predict": plan.max_tokens,
            "temperature": plan.temperature,
            "stream": True,
            "return_tokens": True,
            "cache_prompt": True,
            # llama-server's own defaults (top_k 40, top_p 0.95, min_p 0.05) would narrow
            # the draw behind the request's back: an OpenAI request samples from all of it.
            "top_k": 0,
            "top_p": 1.0 if plan.top_p is None else plan.top_p,
            "min_p": 0.0,
        }
        # The client's biases, then the bans (GBNF): a banned id stays banned whatever its bias.
        banned = plan.banned_ids if self.grammar == "gbnf" else ()
        bias: list[list[Any]] = [[i, b] for i, b in plan.logit_bias if i not in set(banned)]
        bias += [[i, False] for i in banned]
        body["grammar"] = plan.gbnf if self.grammar == "gbnf" else plan.grammar
        if bias or banned:
            body["logit_bias"] = bias
        if plan.seed is not None:
            body["seed"] = plan.seed
        body.update(_penalties(plan))
        return body

    def read(self, record: Mapping[str, Any]) -> Output | None:
        """``tokens`` of one record (the last one, ``stop: true``, may carry none) and, on the
        last, ``stop_type``: ``limit`` is the token limit, ``eos`` and ``word`` a stop."""
        ids = _ids(record.get("tokens", []), "llamacpp")
        finish = None
        if record.get("stop") is True:
            finish = {"limit": "length", "eos": "stop", "word": "stop"}.get(
                str(record.get("stop_type"))
            )
        return Output(ids=ids, finish_reason=finish) if ids or finish else None

    def ends(self, record: Mapping[str, Any]) -> bool:
        """The record with ``stop: true`` is the last."""
        return record.get("stop") is True


class OllamaBackend(HttpBackend):
    """Ollama's ``/api/generate`` with ``raw: true``: the prompt as text, text back."""

    name = "ollama"
    path = "/api/generate"
    health_path = "/api/version"
    framing = "ndjson"
    end_marker = 'a record with "done": true'

    def body(self, plan: Plan) -> dict[str, Any]:
        """The rendered prompt as text, ``raw: true``, options; no grammar (see the table)."""
        options: dict[str, Any] = {
            "temperature": plan.temperature,
            "num_predict": plan.max_tokens,
            "stop": STOP_SPELLINGS,
        }
        if plan.seed is not None:
            options["seed"] = plan.seed
        if plan.top_p is not None:
            options["top_p"] = plan.top_p
        return {
            "model": self.model or plan.model,
            "prompt": plan.prompt_text,
            "raw": True,
            "stream": True,
            "options": options,
        }

    def read(self, record: Mapping[str, Any]) -> Output | None:
        """``response`` text; the last record's ``eval_count`` is the token count and its
        ``done_reason`` (``length`` or ``stop``) the engine's finish."""
        text = record.get("response", "")
        if not isinstance(text, str):
            raise UpstreamError("ollama sent a response that is not text")
        done = record.get("done") is True
        count = record.get("eval_count") if done else None
        finish = _finish(record.get("done_reason")) if done else None
        if not text and count is None and finish is None:
            return None
        return Output(
            text=text,
            completion_tokens=count if isinstance(count, int) else None,
            finish_reason=finish,
        )

    def ends(self, record: Mapping[str, Any]) -> bool:
        """The record with ``done: true`` is the last."""
        return record.get("done") is True


#: ``--backend`` name -> class (``embedded`` is built separately: it has no upstream).
BACKENDS: dict[str, type[HttpBackend]] = {
    backend.name: backend
    for backend in (VllmBackend, SGLangBackend, LlamaCppBackend, OllamaBackend)
}
