"""A request, planned: what a backend needs to generate, and the limits it was planned under.

A :class:`Plan` is everything a backend needs: the prompt's token ids, the turn's grammar
(llguidance; the xgrammar structural tag and llama.cpp's GBNF are written from the same
tools on first use), the tools read once (a :class:`~harmony_grammar.declarations.toolset.ToolSet`),
the sampling knobs, and the few request fields a Responses answer repeats verbatim
(:attr:`Plan.echo`). The body itself is not kept: a plan holds what was read from it. Each API's
``protocol`` module (:mod:`.chat.protocol`, :mod:`.responses.protocol`) makes a plan from its
body with :mod:`.planning`'s shared steps, under :class:`Limits`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..declarations.toolset import ToolSet
from ..generation.turn_grammar import TurnGrammarError, completion_grammar
from ..schema.errors import UnsupportedSchemaError
from .bounds import MAX_TOOLS, MAX_TOOLS_BYTES
from .errors import bad_request

__all__ = ["ECHOED", "Api", "Limits", "Plan"]

Api = Literal["chat", "responses"]
#: The request fields a Responses answer repeats (``bridges.responses.response_object``).
ECHOED = ("instructions", "tools", "tool_choice", "parallel_tool_calls", "text", "reasoning")
#: Where a call's recipient may go in the turn grammar (``TurnOptions.recipient_position``).
RecipientPosition = Literal["role", "channel", "either"]


@dataclass(frozen=True)
class Limits:
    """What the gateway accepts: the defaults a request may narrow, and hard caps."""

    default_max_tokens: int = 1024
    max_tokens: int = 32768
    #: The prompt plus ``max_tokens`` must fit; None leaves the check to the engine.
    context_tokens: int | None = None
    #: How many tools a request may declare, and their JSON's size in all (:mod:`.bounds`).
    max_tools: int = MAX_TOOLS
    max_tools_bytes: int = MAX_TOOLS_BYTES
    #: Where the turn grammar lets a call's ``to=`` go: after the role (openai-harmony's
    #: rendering, ``prepare``'s training data), after ``<|channel|>commentary`` (what gpt-oss
    #: writes), or ``either`` (the default: a fine-tuned model keeps what it learned).
    recipient_position: RecipientPosition = "either"


@dataclass(frozen=True)
class Plan:
    """A request ready for a backend (see the module docstring)."""

    api: Api
    model: str
    prompt_ids: tuple[int, ...]
    #: The turn's llguidance grammar (``%llguidance {}``).
    grammar: str
    #: The request's function tools as ``{name: schema}``: the parser checks calls against them.
    tools: Mapping[str, Any]
    tool_choice: str
    response_format: Mapping[str, Any] | None
    max_tokens: int
    temperature: float
    top_p: float | None
    seed: int | None
    stop: tuple[str, ...]
    stream: bool
    include_usage: bool
    _cache: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    #: The tools the turn may call, as OpenAI-style entries (``function``, ``custom``,
    #: ``namespace``): what the turn grammar is written from.
    callables: tuple[Mapping[str, Any], ...] = ()
    #: Namespaces besides ``functions`` (their calls are tool calls, ``to=NAMESPACE.fn``).
    namespaces: tuple[str, ...] = ()
    #: Hosted tools the gateway cannot run, left out of the prompt (reported in a header).
    hosted_tools: tuple[str, ...] = ()
    #: The request's tools, read once (:meth:`ToolSet.read`): ``tools``, ``callables``,
    #: ``namespaces`` and ``hosted_tools`` are its views, and the bridges take it as it is.
    toolset: ToolSet = field(default_factory=ToolSet)
    #: Chat's sampling penalties (-2 to 2) and ``logit_bias`` as ``(id, bias)`` pairs, for
    #: the engines that apply them (``unsupported.HONOURED``); None / empty: not set.
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    logit_bias: tuple[tuple[int, float], ...] = ()
    #: Log-probabilities asked for: how many alternatives per position (0: none); None: not
    #: asked (Chat ``logprobs``/``top_logprobs``, Responses ``include``/``top_logprobs``).
    logprobs: int | None = None
    #: Where the turn's grammars let a call's recipient go (:attr:`Limits.recipient_position`).
    recipient_position: RecipientPosition = "either"
    #: The request's fields nothing reads: accepted, and named in a header and the log.
    ignored_fields: tuple[str, ...] = ()
    #: What a Responses answer repeats of its request, as OpenAI's does (:data:`ECHOED`:
    #: ``instructions``, ``tools``, ``tool_choice``, ``parallel_tool_calls``, ``text``,
    #: ``reasoning``), where the request had them; empty for Chat.
    echo: Mapping[str, Any] = field(default_factory=dict)
    #: Responses ``include`` asked for ``reasoning.encrypted_content``: each reasoning item
    #: goes out sealed too (:mod:`.reasoning_seal`).
    seal_reasoning: bool = False

    @property
    def prompt_text(self) -> str:
        """The prompt as Harmony text (control tokens spelled), for text-only engines."""
        if "text" not in self._cache:
            from ..format.vocabulary import load_encoding

            self._cache["text"] = load_encoding().decode(list(self.prompt_ids))
        return self._cache["text"]

    @property
    def structural_tag(self) -> str:
        """The same turn as an xgrammar structural tag (JSON text), compiled on first use."""
        return self.structural_tag_for(None)

    def structural_tag_for(self, target_version: str | None) -> str:
        """The structural tag for the xgrammar of ``target_version`` (None: 0.2.9 or later:
        :func:`~harmony_grammar.generation.xgrammar_structural_tag`), compiled once each."""
        key = f"tag:{target_version}"
        if key not in self._cache:
            try:
                self._cache[key] = completion_grammar(
                    self._grammar_tools,
                    target="xgrammar",
                    target_version=target_version,
                    tool_choice=self.tool_choice,
                    response_format=self.response_format,
                    recipient_position=self.recipient_position,
                    allow_preamble=self.response_format is None,
                )
            except TurnGrammarError as exc:  # what the tag cannot say (a Lark custom tool)
                raise bad_request(
                    f"the turn's structural tag cannot be built: {exc}", "tools"
                ) from None
        return self._cache[key]

    @property
    def gbnf(self) -> str:
        """The same turn as llama.cpp GBNF (control tokens by id, ending before the stop
        token: ``generation/turn_gbnf.py``), compiled on first use; 400 where GBNF cannot
        express a schema or a tool."""
        if "gbnf" not in self._cache:
            try:
                self._cache["gbnf"] = completion_grammar(
                    self._grammar_tools,
                    target="gbnf",
                    tool_choice=self.tool_choice,
                    response_format=self.response_format,
                    recipient_position=self.recipient_position,
                )
            except (TurnGrammarError, UnsupportedSchemaError) as exc:
                raise bad_request(f"the turn's GBNF cannot be built: {exc}", "tools") from None
        return self._cache["gbnf"]

    @property
    def banned_ids(self) -> tuple[int, ...]:
        """The special ids the turn never writes (``turn_gbnf.banned_ids``): an engine that
        ends generation on any such id wherever its grammar may end must never sample them."""
        from ..generation.turn_gbnf import banned_ids
        from ..generation.turn_grammar import TurnOptions

        options = TurnOptions(
            tool_choice=self.tool_choice,
            response_format=self.response_format,
            recipient_position=self.recipient_position,
        )
        return banned_ids(self._grammar_tools, options)

    @property
    def _grammar_tools(self) -> Any:
        """What the turn grammars are written from: the tools read, none for ``none``."""
        return self.toolset if self.tool_choice != "none" else ToolSet()
