"""The sampling fields of a request, read and checked: a 400 naming the field otherwise.

Numbers in a range, integers in a range (``bool`` is neither), the token limit under the
gateway's :class:`~.plan.Limits`, ``stop`` (OpenAI's up to four strings) and how many
log-probabilities a request asks for. Chat, Responses
and ``/v1/completions`` read their fields with these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .errors import bad_request
from .plan import Limits

__all__ = [
    "MAX_STOP",
    "MAX_TOP_LOGPROBS",
    "given",
    "integer",
    "logprobs",
    "max_tokens",
    "number",
    "stop",
]

#: OpenAI allows up to four stop sequences.
MAX_STOP = 4


def number(request: Mapping[str, Any], key: str, low: float, high: float) -> float | None:
    """``request[key]`` as a float from ``low`` to ``high``; None when absent."""
    value = request.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise bad_request(f"{key} must be a number from {low} to {high}", key)
    return float(value)


def integer(request: Mapping[str, Any], key: str, low: int, high: int) -> int | None:
    """``request[key]`` as an int from ``low`` to ``high``; None when absent."""
    value = request.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise bad_request(f"{key} must be an integer from {low} to {high}", key)
    return value


def max_tokens(request: Mapping[str, Any], keys: Sequence[str], limits: Limits) -> int:
    """The first of ``keys`` given (1 to ``limits.max_tokens``), else the default."""
    for key in keys:
        value = integer(request, key, 1, limits.max_tokens)
        if value is not None:
            return value
    return limits.default_max_tokens


def given(request: Mapping[str, Any], *keys: str) -> bool:
    """Whether any of ``keys`` is set (not null)."""
    return any(request.get(key) is not None for key in keys)


def stop(request: Mapping[str, Any]) -> tuple[str, ...]:
    """``stop`` as a tuple of non-empty strings (at most :data:`MAX_STOP`)."""
    value = request.get("stop")
    if value is None:
        return ()
    stops = [value] if isinstance(value, str) else value
    if (
        not isinstance(stops, list)
        or len(stops) > MAX_STOP
        or not all(isinstance(s, str) and s for s in stops)
    ):
        raise bad_request(f"stop must be a non-empty string or a list of up to {MAX_STOP}", "stop")
    return tuple(stops)


#: OpenAI's bound on ``top_logprobs``.
MAX_TOP_LOGPROBS = 20


def logprobs(request: Mapping[str, Any], asked: bool, *, top_alone: bool) -> int | None:
    """How many alternatives per position the request wants, or None when it asks for no
    log-probabilities. ``asked``: the API's own switch (Chat ``logprobs: true``, Responses
    ``include``); ``top_alone``: whether ``top_logprobs`` asks by itself (Responses) or needs
    the switch (Chat, as OpenAI's: a 400 without it)."""
    top = integer(request, "top_logprobs", 0, MAX_TOP_LOGPROBS)
    if asked:
        return top or 0
    if top and not top_alone:
        raise bad_request("top_logprobs needs logprobs: true", "top_logprobs")
    return top or None
