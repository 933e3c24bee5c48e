"""Request fields a backend cannot honour: a 400 that names them, never silence.

A client that sets ``logprobs`` or a penalty and gets an answer without them would believe
they were applied. Each API's fields below are refused when set to anything but their
neutral value, unless the backend honours them (:data:`HONOURED`), with one 400 naming every
such field and the backend. The embedded backend gives log-probabilities (its sampler scores
every step); vLLM and llama-server apply the penalties and ``logit_bias``, which the
gateway forwards (``engines.py``); the others have none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import bad_request

__all__ = ["HONOURED", "LOGPROBS_INCLUDE", "PENALTIES", "UNHONOURED", "check_honoured"]

#: The Responses ``include`` entry that asks for the answer's log-probabilities.
LOGPROBS_INCLUDE = "message.output_text.logprobs"

#: Per API, the fields not every backend honours, each with its neutral values (accepted).
UNHONOURED: Mapping[str, Mapping[str, tuple[Any, ...]]] = {
    "chat": {
        "logprobs": (None, False),
        "top_logprobs": (None, 0),
        "logit_bias": (None, {}),
        "presence_penalty": (None, 0, 0.0),
        "frequency_penalty": (None, 0, 0.0),
    },
    "responses": {
        "top_logprobs": (None, 0),
        LOGPROBS_INCLUDE: (None, False),  # an ``include`` entry, read as a field (below)
    },
}

#: Chat's sampling penalties and biases, which vLLM and llama-server apply as OpenAI does.
PENALTIES = frozenset({"presence_penalty", "frequency_penalty", "logit_bias"})

#: Per backend, the fields of :data:`UNHONOURED` it does honour.
HONOURED: Mapping[str, frozenset[str]] = {
    "embedded": frozenset({"logprobs", "top_logprobs", LOGPROBS_INCLUDE}),
    "vllm": PENALTIES,
    "llamacpp": PENALTIES,
}


def check_honoured(body: Any, api: str, backend: str) -> None:
    """400 naming every field of ``body`` that ``backend`` cannot honour (``param``: the first)."""
    if not isinstance(body, Mapping):
        return  # the planner reports a body that is not an object
    include = body.get("include")
    if isinstance(include, list) and LOGPROBS_INCLUDE in include:
        body = {**body, LOGPROBS_INCLUDE: True}
    honoured = HONOURED.get(backend, frozenset())
    refused = [
        key
        for key, neutral in UNHONOURED[api].items()
        if key in body
        and key not in honoured
        and not any(_same(body[key], value) for value in neutral)
    ]
    if refused:
        names = ", ".join(refused)
        raise bad_request(
            f"the gateway's {backend} backend cannot honour {names}: remove "
            f"{'it' if len(refused) == 1 else 'them'} from the request (docs/serving.md lists "
            "what each backend applies)",
            "include" if refused[0] == LOGPROBS_INCLUDE else refused[0],
        )


def _same(value: Any, neutral: Any) -> bool:
    # bool is an int in Python: False must not pass for 0, nor True for 1; 0 and 0.0 are one.
    if isinstance(value, bool) or isinstance(neutral, bool):
        return value is neutral
    return bool(value == neutral) if type(value) in (type(neutral), int, float) else False
