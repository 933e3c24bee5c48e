"""Responses in: a ``/v1/responses`` body checked and planned.

What only Responses has is read here: ``previous_response_id`` and ``background`` are
refused (the gateway is stateless), sealed reasoning items sent back are opened
(:mod:`..reasoning_seal`), ``include`` asks for log-probabilities and sealed reasoning,
``max_output_tokens`` is the token limit; the rest is :mod:`..planning`'s, shared with Chat.
The plan keeps the fields the answer repeats (:attr:`~..plan.Plan.echo`), not the body. The
run that answers a plan is :mod:`.serving`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rendering.request_fields import RESPONSES_FIELDS, unknown_fields
from ..bounds import check_shape
from ..errors import bad_request
from ..fields import given, logprobs, max_tokens
from ..plan import Limits, Plan
from ..planning import plan_turn, read_body
from ..reasoning_seal import INCLUDE_KEY, ReasoningSeal, open_reasoning
from ..unsupported import LOGPROBS_INCLUDE
from ..validation import check_fields

__all__ = ["plan_responses"]


def plan_responses(
    request: Any, *, model: str, limits: Limits, seal: ReasoningSeal | None = None
) -> Plan:
    """The plan of a Responses body; a :class:`~..errors.GatewayError` (400) names the field
    otherwise.

    With ``seal``, reasoning items sent back with ``encrypted_content`` are opened into the
    analysis they hold (:mod:`..reasoning_seal`); one that does not open is a 400.
    """
    if not isinstance(request, Mapping):
        raise bad_request("the request body must be a JSON object")
    unknown_fields(request, RESPONSES_FIELDS, "", bad_request)
    check_fields(request, "responses")
    check_shape(request, max_tools=limits.max_tools, max_tools_bytes=limits.max_tools_bytes)
    if request.get("previous_response_id") is not None:
        raise bad_request(
            "the gateway is stateless and stores no responses (store: true keeps nothing "
            "here): send the earlier output items in input instead of previous_response_id",
            "previous_response_id",
        )
    if request.get("background") not in (None, False):
        raise bad_request(
            "background responses need a server that keeps them, and the gateway is "
            "stateless: leave background out and read the response (or its stream) directly",
            "background",
        )
    if seal is not None:
        request = open_reasoning(request, seal)
    return plan_turn(
        request,
        read_body(request, "responses"),
        max_tokens(request, ("max_output_tokens",), limits),
        model=model,
        limits=limits,
        limit_given=given(request, "max_output_tokens"),
        logprobs=logprobs(request, _includes(request, LOGPROBS_INCLUDE), top_alone=True),
        seal_reasoning=_includes(request, INCLUDE_KEY),
    )


def _includes(request: Mapping[str, Any], entry: str) -> bool:
    include = request.get("include")
    return isinstance(include, list) and entry in include
