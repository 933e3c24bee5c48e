"""Request fields the gateway's backends cannot honour: a 400 that names them, never silence.

A client that sets ``logprobs`` or a penalty and gets an answer without them would believe
they were applied. Each API's fields below are refused when set to anything but their
neutral value, with one 400 naming every such field and the backend. None of the backends
sends them on today: the engines' requests carry the prompt ids, the grammar and the
sampling fields of docs/serving.md only, and the embedded sampler has no penalties,
biases or log-probabilities.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import bad_request

__all__ = ["UNHONOURED", "check_honoured"]

#: Per API, the fields no backend honours, each with its neutral values (accepted).
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
    },
}


def check_honoured(body: Any, api: str, backend: str) -> None:
    """400 naming every field of ``body`` that ``backend`` cannot honour (``param``: the first)."""
    if not isinstance(body, Mapping):
        return  # the planner reports a body that is not an object
    fields = UNHONOURED[api]
    refused = [
        key
        for key, neutral in fields.items()
        if key in body and not any(_same(body[key], value) for value in neutral)
    ]
    if refused:
        names = ", ".join(refused)
        raise bad_request(
            f"the gateway's {backend} backend cannot honour {names}: remove "
            f"{'it' if len(refused) == 1 else 'them'} from the request (docs/serving.md lists "
            "what each backend applies)",
            refused[0],
        )


def _same(value: Any, neutral: Any) -> bool:
    # bool is an int in Python: False must not pass for 0, nor True for 1; 0 and 0.0 are one.
    if isinstance(value, bool) or isinstance(neutral, bool):
        return value is neutral
    return bool(value == neutral) if type(value) in (type(neutral), int, float) else False
