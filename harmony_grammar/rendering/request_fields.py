"""What a request's unknown fields get: a misspelling is refused, anything else is reported.

OpenAI's API answers 400 for an argument it does not know; vLLM accepts it and logs it. A
request read here (:func:`~.request_body.read_request`) sits between the two:

* a field one edit away from a field of its level that the API knows (a letter added,
  dropped, changed, or two neighbours swapped: ``temprature``, ``tool``, ``contnet``) is a
  misspelling, refused with the field it meant (``did you mean 'temperature'?``): read as
  unknown, it would be dropped and the request would run without what the client asked for;
* any other unknown field is accepted and its path named in :attr:`RequestReading.ignored`
  (the gateway's ``x-harmony-grammar-ignored-fields`` header and its log, the CLI's
  warning line), so nothing is dropped without a word.

The levels checked are the request's top level and each message (a Chat ``messages`` entry,
a Responses ``input`` item). Other engines' sampling extensions (vLLM's ``top_k``,
``min_p``, ...) are unknown to the API but never read as misspellings (``top_k`` is one edit
from ``top_p``): they are reported as ignored. Names shorter than three characters (``n``,
``id``) are too short to tell a misspelling from a new field and suggest nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "CHAT_FIELDS",
    "CHAT_MESSAGE_FIELDS",
    "ENGINE_EXTENSIONS",
    "RESPONSES_FIELDS",
    "RESPONSES_ITEM_FIELDS",
    "misspelling_of",
    "named_fields",
    "unknown_fields",
]

#: Makes the bridge's error from a message and the path it locates.
ErrorFactory = Callable[[str, str], Exception]

#: The Chat Completions request's top-level fields (OpenAI's, and ``reasoning_budget``, the
#: gateway's extension: docs/serving.md).
CHAT_FIELDS = frozenset(
    {
        "messages", "model", "audio", "frequency_penalty", "function_call", "functions",
        "logit_bias", "logprobs", "max_completion_tokens", "max_tokens", "metadata",
        "modalities", "n", "parallel_tool_calls", "prediction", "presence_penalty",
        "prompt_cache_key", "reasoning_effort", "response_format", "safety_identifier", "seed",
        "service_tier", "stop", "store", "stream", "stream_options", "temperature",
        "tool_choice", "tools", "top_logprobs", "top_p", "user", "verbosity",
        "web_search_options", "prompt_cache_retention", "reasoning_budget",
    }
)  # fmt: skip

#: The Responses API request's top-level fields (and ``reasoning_budget``).
RESPONSES_FIELDS = frozenset(
    {
        "input", "model", "background", "conversation", "include", "instructions",
        "max_output_tokens", "max_tool_calls", "metadata", "parallel_tool_calls",
        "previous_response_id", "prompt", "prompt_cache_key", "reasoning",
        "safety_identifier", "service_tier", "store", "stream", "stream_options",
        "temperature", "text", "tool_choice", "tools", "top_logprobs", "top_p", "truncation",
        "user", "prompt_cache_retention", "client_metadata", "reasoning_budget",
    }
)  # fmt: skip

#: A Chat message's fields, whatever its role (``reasoning_content`` / ``reasoning``: the
#: chain of thought vLLM and others send back on assistant messages).
CHAT_MESSAGE_FIELDS = frozenset(
    {
        "role", "content", "name", "tool_calls", "tool_call_id", "refusal", "audio",
        "function_call", "reasoning_content", "reasoning",
    }
)  # fmt: skip

_CALL = frozenset({"type", "id", "call_id", "name", "namespace", "status"})
_OUTPUT = frozenset({"type", "id", "call_id", "output", "status"})

#: A Responses ``input`` item's fields, by item type.
RESPONSES_ITEM_FIELDS: Mapping[str, frozenset[str]] = {
    "message": frozenset({"type", "role", "content", "id", "status", "phase"}),
    "reasoning": frozenset({"type", "id", "summary", "content", "encrypted_content", "status"}),
    "function_call": _CALL | {"arguments"},
    "custom_tool_call": _CALL | {"input"},
    "function_call_output": _OUTPUT,
    "custom_tool_call_output": _OUTPUT,
}

#: Request fields other engines read (vLLM's and SGLang's sampling and template extensions):
#: unknown to the API, reported as ignored, never refused as a misspelling of a known field.
ENGINE_EXTENSIONS = frozenset(
    {
        "top_k", "min_p", "repetition_penalty", "length_penalty", "min_tokens", "ignore_eos",
        "skip_special_tokens", "spaces_between_special_tokens", "include_stop_str_in_output",
        "stop_token_ids", "use_beam_search", "best_of", "echo", "add_generation_prompt",
        "continue_final_message", "add_special_tokens", "chat_template", "chat_template_kwargs",
        "documents", "guided_json", "guided_regex", "guided_choice", "guided_grammar",
        "guided_decoding_backend", "structured_outputs", "priority", "request_id",
        "return_tokens_as_token_ids", "truncate_prompt_tokens", "cache_salt",
        "kv_transfer_params", "vllm_xargs", "mm_processor_kwargs", "allowed_token_ids",
        "bad_words", "prompt_logprobs", "logits_processors", "separate_reasoning",
        "no_stop_trim", "regex", "ebnf", "json_schema",
    }
)  # fmt: skip

#: Shorter known names suggest nothing (see the module docstring).
_MIN_SUGGESTED = 3


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by exactly one insertion, deletion, substitution or
    swap of two neighbouring characters."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diffs = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diffs) == 1:
            return True
        i, j = diffs[0], diffs[-1]
        return len(diffs) == 2 and j == i + 1 and a[i] == b[j] and a[j] == b[i]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k, (x, y) in enumerate(zip(short, long, strict=False)) if x != y), len(short))
    return short[i:] == long[i + 1 :]


def misspelling_of(name: str, known: Iterable[str]) -> str | None:
    """The known field ``name`` is one edit away from (the first in sorted order), or None.
    A name that is itself known, or an engine extension, is no misspelling."""
    if name in ENGINE_EXTENSIONS:
        return None
    candidates = sorted(k for k in known if len(k) >= _MIN_SUGGESTED and _one_edit(name, k))
    return candidates[0] if candidates and name not in known else None


def _path(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def unknown_fields(
    fields: Mapping[str, Any], known: frozenset[str], prefix: str, error: ErrorFactory
) -> list[str]:
    """The paths of the fields of ``fields`` not in ``known`` (at ``prefix``); raises
    ``error`` naming the first misspelled one and the field it meant."""
    unknown: list[str] = []
    for name in fields:
        if name in known:
            continue
        if not isinstance(name, str):  # JSON keys are strings; a dict built in Python may not be
            unknown.append(_path(prefix, repr(name)))
            continue
        meant = misspelling_of(name, known)
        if meant is not None:
            raise error(
                f"unknown field {name!r}: did you mean {meant!r}? (a misspelled field would "
                "be ignored, so it is refused)",
                _path(prefix, name),
            )
        unknown.append(_path(prefix, name))
    return unknown


def named_fields(paths: Sequence[str], limit: int = 32) -> str:
    """``top_k, messages[0].x``: the paths of ignored fields for a header or a log line, each
    JSON-escaped (a field name is the client's text: no line break or non-ASCII gets through),
    at most ``limit`` of them, then ``and N more``."""
    named = [_cut(json.dumps(path)[1:-1]) for path in paths[:limit]]
    if len(paths) > limit:
        named.append(f"and {len(paths) - limit} more")
    return ", ".join(named)


#: How much of one ignored field's path a report names (a client may send a 70,000-character
#: key: the header and the log line stay short).
MAX_NAMED_PATH = 80


def _cut(path: str) -> str:
    return path if len(path) <= MAX_NAMED_PATH else path[:MAX_NAMED_PATH] + "..."
