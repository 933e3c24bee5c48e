"""The planning steps Chat Completions and Responses share: a body read into a :class:`~.plan.Plan`.

Each API's ``protocol`` module (:func:`~.chat.protocol.plan_chat`,
:func:`~.responses.protocol.plan_responses`) checks what only its API has, then calls
:func:`read_body` (the one reading of a request body every door shares) and
:func:`plan_turn`: the tools judged, the prompt rendered and checked against the context, the
turn's grammar written once per distinct grammar (and through the grammar gate), the sampling
fields read. Every check on the body happens before any engine is called, so a bad request
is a 400 with the field's path. A plan holds nothing of the wire, only what was read.

Decisions the APIs leave open (docs/serving.md, "The gateway"):

* chain of thought is rendered by vLLM's rule (``DropRule.EVERY_FINAL``): analysis before
  the last final answer is dropped, the current tool loop keeps its analysis. The gateway is
  stateless, so it keeps what the client sends back (Responses ``reasoning`` items, Chat
  ``reasoning_content``); it stores nothing between requests;
* one Harmony turn holds at most one call (the model stops at ``<|call|>``), so
  ``parallel_tool_calls`` is accepted and echoed, and a turn never has two calls;
* ``temperature: 0`` is greedy (the allowed id with the highest score), so the same request
  gives the same output; ``seed`` fixes the draw otherwise;
* ``stop`` strings cut the final answer's text (never a header or a call's arguments);
* an answer bound to ``response_format`` has no preambles (its content is exactly the JSON),
  and where the turn is forced (a required or named call, or a format) under a token limit
  the request set, the analysis gets a budget (:func:`reasoning_budget`) and no preamble
  may follow it.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from typing import Any

from ..declarations.toolset import ToolSet
from ..generation.turn_grammar import TurnGrammarError, completion_grammar
from ..rendering.chat import ChatCompletionError
from ..rendering.errors import RenderError
from ..rendering.renderer import DropRule, render
from ..rendering.request_body import RequestReading, read_request
from ..rendering.request_fields import named_fields
from ..schema.errors import UnsupportedSchemaError
from ..schema.grammar_gate import GrammarLimitError, check_grammar
from ..tools.parameters import schema_problem
from .bounds import check_context
from .errors import GatewayError, bad_request
from .fields import integer as _integer
from .fields import number as _number
from .plan import ECHOED, Api, Limits, Plan

__all__ = ["REASONING_SHARE", "plan_turn", "read_body", "reasoning_budget"]

#: The field that holds each API's conversation (an error in it names this field).
_CONVERSATION: dict[Api, str] = {"chat": "messages", "responses": "input"}
_LOG = logging.getLogger("harmony_grammar.gateway")


def _tool_choice(choice: Any) -> str:
    """The grammar's ``tool_choice``: auto, required, none or the named tool's recipient
    (``NAMESPACE.fn`` when the choice names a namespace, else the name)."""
    if choice is None:
        return "auto"
    if isinstance(choice, str):
        return choice  # the bridges have checked it is auto, required or none
    named = next(
        (choice[k] for k in ("function", "custom") if isinstance(choice.get(k), Mapping)), None
    )
    function = choice if named is None else named
    namespace = function.get("namespace")
    name = str(function.get("name"))
    return f"{namespace}.{name}" if isinstance(namespace, str) else name


# -- the plan --------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _grammar(
    tools: ToolSet, tool_choice: str, format_json: str, budget: int | None, position: str
) -> str:
    # A server sees the same tools and formats request after request: write each grammar once
    # (a ToolSet hashes by its entries).
    fmt = json.loads(format_json)
    grammar = completion_grammar(
        tools,
        tool_choice=tool_choice,
        response_format=fmt,
        # An answer bound to a format is exactly the JSON: no preamble joins its content;
        # and under a budget none may spend the tokens the call or the answer needs.
        allow_preamble=fmt is None and budget is None,
        reasoning_budget=budget,
        recipient_position=position,
    )
    # The grammar gate, once per distinct grammar: every backend gets only grammars within
    # its limits (the embedded sampler checks again; an engine over HTTP would not).
    check_grammar(grammar)
    return grammar


#: The share of ``max_tokens`` the analysis may take, by reasoning effort (docs/serving.md).
REASONING_SHARE = {"low": 0.25, "medium": 0.5, "high": 0.75}


def _effort(request: Mapping[str, Any]) -> str:
    reasoning = request.get("reasoning")
    effort = request.get("reasoning_effort")
    if effort is None and isinstance(reasoning, Mapping):
        effort = reasoning.get("effort")
    return effort if isinstance(effort, str) and effort in REASONING_SHARE else "medium"


def reasoning_budget(
    request: Mapping[str, Any], max_tokens: int, *, forced: bool, limit_given: bool
) -> int | None:
    """The analysis's token budget: the request's ``reasoning_budget`` (an extension field,
    0 to ``max_tokens``), else, where the turn must end in a call or a formatted answer
    (``forced``) and the request set its token limit, ``REASONING_SHARE[effort]`` of it
    (low a quarter, medium half, high three quarters), else None (unbounded)."""
    explicit = _integer(request, "reasoning_budget", 0, max_tokens)
    if explicit is not None:
        return explicit
    if not forced or not limit_given:
        return None
    return int(max_tokens * REASONING_SHARE[_effort(request)])


def read_body(request: Mapping[str, Any], api: Api) -> RequestReading:
    """The request read by the one reader every door shares (:func:`read_request`): a bad
    body is a 400 with its path; ignored fields are logged (and go out in a header)."""
    try:
        reading = read_request(request, api=api)
    except ChatCompletionError as exc:  # ResponsesError is one
        raise bad_request(str(exc), exc.path) from None
    if reading.ignored:
        _LOG.info("ignored unknown request fields: %s", named_fields(reading.ignored))
    return reading


def plan_turn(
    request: Mapping[str, Any],
    reading: RequestReading,
    max_tokens: int,
    *,
    model: str,
    limits: Limits,
    stop: tuple[str, ...] = (),
    include_usage: bool = True,
    limit_given: bool = False,
    logprobs: int | None = None,
    presence_penalty: float | None = None,
    frequency_penalty: float | None = None,
    logit_bias: tuple[tuple[int, float], ...] = (),
    seal_reasoning: bool = False,
) -> Plan:
    """The plan of ``request`` as ``reading`` read it, with what the API's own protocol read
    (the token limit, ``stop``, usage, log-probabilities, Chat's penalties and biases, a
    Responses ``include``); a :class:`~.errors.GatewayError` (400) naming the field otherwise.
    The plan keeps none of the body: a Responses plan keeps the fields its answer repeats
    (:data:`~.plan.ECHOED`)."""
    # The request's tools as the reader read them, once: the grammar and the parser take them,
    # once every parameters schema is judged able to check (tools.parameters.schema_problem).
    api, toolset = reading.api, reading.toolset
    try:
        if toolset is None:  # the prompt could be written, but no grammar holds these tools
            raise ValueError(reading.tools_problem)
        toolset.check(schema_problem)
    except ValueError as exc:
        raise bad_request(f"the turn's grammar cannot be built: {exc}", "tools") from None
    response_format = (
        None if reading.response_schema is None else {"schema": reading.response_schema}
    )
    # The prompt before the grammar: rendering is linear in the request, and a prompt past
    # the context is refused before the grammar (seconds for many tools) is written.
    try:
        prompt = render(
            reading.conversation,
            next_turn="assistant",
            tokens=True,
            drop_rule=DropRule.EVERY_FINAL,
        )
    except (RenderError, ValueError) as exc:
        raise bad_request(
            f"the conversation cannot be rendered: {exc}", _CONVERSATION[api]
        ) from None
    check_context(len(prompt), max_tokens, limits.context_tokens, param=_CONVERSATION[api])
    tool_choice = _tool_choice(request.get("tool_choice"))
    if not toolset.callables and tool_choice == "auto":
        tool_choice = "none"
    budget = reasoning_budget(
        request,
        max_tokens,
        forced=tool_choice not in ("auto", "none") or response_format is not None,
        limit_given=limit_given,
    )
    try:
        grammar = _grammar(
            toolset if tool_choice != "none" else ToolSet(),
            tool_choice,
            json.dumps(response_format),
            budget,
            limits.recipient_position,
        )
    except GrammarLimitError as exc:
        raise GatewayError(
            400,
            f"the turn's grammar is past the gateway's {exc.limit} limit: {exc}",
            param="tools",
            code=f"grammar_{exc.limit}_exceeded",
        ) from None
    except (TurnGrammarError, UnsupportedSchemaError, ValueError) as exc:
        raise bad_request(f"the turn's grammar cannot be built: {exc}", "tools") from None
    temperature = _number(request, "temperature", 0.0, 2.0)
    stream = request.get("stream", False)
    if not isinstance(stream, bool):
        raise bad_request("stream must be a boolean", "stream")
    return Plan(
        api=api,
        model=str(request["model"]) if isinstance(request.get("model"), str) else model,
        prompt_ids=tuple(prompt),
        grammar=grammar,
        tools=toolset.schemas,
        tool_choice=tool_choice,
        response_format=response_format,
        max_tokens=max_tokens,
        temperature=1.0 if temperature is None else temperature,
        top_p=_number(request, "top_p", 0.0, 1.0),
        seed=_integer(request, "seed", -(2**63), 2**63 - 1),
        stop=stop,
        stream=stream,
        include_usage=include_usage,
        callables=toolset.callables,
        namespaces=toolset.namespaces,
        hosted_tools=toolset.hosted if api == "responses" else (),
        toolset=toolset,
        logprobs=logprobs,
        presence_penalty=presence_penalty,
        frequency_penalty=frequency_penalty,
        logit_bias=logit_bias,
        recipient_position=limits.recipient_position,
        ignored_fields=reading.ignored,
        echo={key: request[key] for key in ECHOED if key in request and api == "responses"},
        seal_reasoning=seal_reasoning,
    )
