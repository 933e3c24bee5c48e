"""Chat Completions in: a ``/v1/chat/completions`` body checked and planned.

What only Chat has is read here (``stream_options.include_usage``, ``stop``, ``logprobs``
with ``top_logprobs``, the penalties, ``logit_bias`` by token id, ``max_completion_tokens``
or the older ``max_tokens``); the rest is :mod:`..planning`'s, shared with Responses. The
run that answers a plan is :mod:`.serving`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...rendering.request_fields import CHAT_FIELDS, unknown_fields
from ..bounds import check_shape
from ..errors import bad_request
from ..fields import given, logprobs, max_tokens, number, stop
from ..plan import Limits, Plan
from ..planning import plan_turn, read_body
from ..validation import check_fields

__all__ = ["MAX_LOGIT_BIAS", "plan_chat"]


#: OpenAI's bounds on ``logit_bias``: at most this many ids, each biased by -100 to 100.
MAX_LOGIT_BIAS = 300
#: A ``logit_bias`` key: a token id in ASCII decimal (o200k_harmony has fewer than 10**7).
_TOKEN_ID = re.compile(r"[0-9]{1,7}")


def _logit_bias(value: Any) -> tuple[tuple[int, float], ...]:
    """Chat's ``logit_bias`` (``{"id": bias}``) as ``(id, bias)`` pairs; a 400 naming the
    field for anything else (ids of o200k_harmony, biases from -100 to 100)."""
    if value is None:
        return ()
    from ...format.vocabulary import load_encoding

    size = load_encoding().n_vocab
    if not isinstance(value, Mapping) or len(value) > MAX_LOGIT_BIAS:
        raise bad_request(f"must be an object of at most {MAX_LOGIT_BIAS} ids", "logit_bias")
    pairs = []
    for key, bias in value.items():
        # ASCII digits only, and few: str.isdigit() takes '²' and '٣' (int() refuses the
        # first), and int() refuses more than 4,300 digits; neither may reach it unchecked.
        if not (isinstance(key, str) and _TOKEN_ID.fullmatch(key) and int(key) < size):
            raise bad_request(f"{key!r} is not an o200k_harmony token id", "logit_bias")
        if isinstance(bias, bool) or not isinstance(bias, (int, float)) or abs(bias) > 100:
            raise bad_request(f"the bias of {key} must be a number from -100 to 100", "logit_bias")
        pairs.append((int(key), float(bias)))
    return tuple(pairs)


def plan_chat(request: Any, *, model: str, limits: Limits) -> Plan:
    """The plan of a Chat Completions body; a :class:`~..errors.GatewayError` (400) names
    the field otherwise."""
    if not isinstance(request, Mapping):
        raise bad_request("the request body must be a JSON object")
    # A misspelled field first: ``mesages`` is named as such, not as ``messages`` missing.
    unknown_fields(request, CHAT_FIELDS, "", bad_request)
    check_fields(request, "chat")
    check_shape(request, max_tools=limits.max_tools, max_tools_bytes=limits.max_tools_bytes)
    reading = read_body(request, "chat")
    options = request.get("stream_options")
    include_usage = isinstance(options, Mapping) and options.get("include_usage") is True
    return plan_turn(
        request,
        reading,
        max_tokens(request, ("max_completion_tokens", "max_tokens"), limits),
        model=model,
        limits=limits,
        stop=stop(request),
        include_usage=include_usage or not request.get("stream", False),
        limit_given=given(request, "max_completion_tokens", "max_tokens"),
        logprobs=logprobs(request, request.get("logprobs") is True, top_alone=False),
        presence_penalty=number(request, "presence_penalty", -2.0, 2.0),
        frequency_penalty=number(request, "frequency_penalty", -2.0, 2.0),
        logit_bias=_logit_bias(request.get("logit_bias")),
    )
