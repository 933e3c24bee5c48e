"""What an assistant turn may hold, target-neutral: the message kinds and their shapes.

The turn is what the model writes after a prompt that ends with ``<|start|>assistant``:
an optional ``analysis`` message, optional ``commentary`` preambles, then either a call to one
of the tools (its body bound to the tool's JSON Schema, ending in ``<|call|>``) or a ``final``
answer (ending in ``<|return|>``, bound to ``response_format`` when one is given).

Derived, not re-typed. The shape of every message comes from ``grammars/harmony.lark``: the
terminal sequences of its ``completion`` rule (the first message, whose author the prompt
already wrote) and of its ``message`` rule (every later one) are enumerated from Lark's
compiled rules, and each message kind picks the one sequence whose header terminals are the
kind's (a channel; a recipient in the role or the channel section; a content type spelled
``<|constrain|>json`` or ``json``). :func:`turn_plan` fills in only the values: channel
names, recipients, content type words and which body each kind has. The emitters
(:mod:`.turn_grammar` for llguidance, :mod:`.xgrammar_tag` for xgrammar) write the plan in
their target's syntax.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..declarations.custom import FUNCTIONS, CustomBody
from ..declarations.toolset import ToolsArgument
from ..format.grammar import harmony_parser
from ..format.tokens import ControlToken
from ..tools.parameters import checked_tools
from .options import TurnGrammarError, TurnOptions

__all__ = [
    "CONTROL_TERMINALS",
    "MessageKind",
    "Opening",
    "TurnGrammarError",
    "TurnPlan",
    "body_grammar",
    "message_shape",
    "message_text",
    "response_schema",
    "turn_plan",
]

#: Grammar terminal name -> the control token it stands for.
CONTROL_TERMINALS = {token.terminal: token for token in ControlToken}
_RECIPIENT_TERMINALS = {"role": ("ROLE_RECIPIENT",), "channel": ("CHANNEL_RECIPIENT",)}
_CONTENT_TYPE_TERMINALS = {
    "<|constrain|>json": frozenset({"SPACE", "CONSTRAIN", "CONTENT_TYPE"}),
    "json": frozenset({"SPACE", "CONTENT_TYPE"}),
    None: frozenset(),
}
#: Terminals of the envelope around the header: they never select a shape.
_ENVELOPE = frozenset({"START", "AUTHOR", "MESSAGE", "CONTENT"})


@functools.lru_cache(maxsize=1)
def _rules() -> dict[str, list[tuple[str, ...]]]:
    rules: dict[str, list[tuple[str, ...]]] = {}
    for rule in harmony_parser().rules:
        rules.setdefault(rule.origin.name, []).append(tuple(s.name for s in rule.expansion))
    return rules


def _expand(symbol: str, depth: int = 0) -> list[tuple[str, ...]]:
    """Every terminal sequence of a non-recursive rule (terminals expand to themselves)."""
    rules = _rules()
    if symbol not in rules:
        return [(symbol,)]
    if depth > 12:
        raise TurnGrammarError(f"rule {symbol!r} is recursive; it has no finite shapes")
    sequences: list[tuple[str, ...]] = []
    for expansion in rules[symbol]:
        partial: list[tuple[str, ...]] = [()]
        for part in expansion:
            partial = [p + tail for p in partial for tail in _expand(part, depth + 1)]
        sequences += partial
    return sequences


@functools.cache
def _message_shapes(first: bool) -> tuple[tuple[str, ...], ...]:
    """Shapes of a complete message with content: the completion's first, or a later one."""
    if first:
        # completion: completion_header MESSAGE CONTENT? (terminator continuation)?
        prefixes = [
            e[: e.index("continuation")]
            for e in _rules()["completion"]
            if "continuation" in e and "CONTENT" in e
        ]
        shapes = [s for p in prefixes for s in _expand_all(p)]
    else:
        shapes = [s for e in _rules()["message"] if "CONTENT" in e for s in _expand_all(e)]
    return tuple(shapes)


def _expand_all(parts: Sequence[str]) -> list[tuple[str, ...]]:
    partial: list[tuple[str, ...]] = [()]
    for part in parts:
        partial = [p + tail for p in partial for tail in _expand(part)]
    return partial


def message_shape(
    *, first: bool, terminator: ControlToken, header: Iterable[str]
) -> tuple[str, ...]:
    """The grammar's terminal sequence for a message whose header holds exactly ``header``
    (besides the author), ending in ``terminator``. Raises if the grammar has none."""
    wanted = frozenset(header)
    for shape in _message_shapes(first):
        if shape[-1] != terminator.terminal:
            continue
        if frozenset(shape[:-1]) - _ENVELOPE == wanted:
            return shape
    raise TurnGrammarError(
        f"grammars/harmony.lark has no message with header {sorted(wanted)} ending in"
        f" {terminator.value}"
    )


@dataclass(frozen=True)
class MessageKind:
    """One kind of message in the turn: its header terminals, their values, its body.

    ``body`` is ``"text"`` (any text) or a key of :attr:`TurnPlan.schemas`.
    """

    terminator: ControlToken
    header: frozenset[str]
    values: Mapping[str, str]
    body: str

    def shape(self, *, first: bool) -> tuple[str, ...]:
        """The terminal sequence of this kind as the turn's first message or a later one."""
        return message_shape(first=first, terminator=self.terminator, header=self.header)


@dataclass(frozen=True)
class TurnPlan:
    """The turn: ``[analysis] preamble* end``, one ``end`` kind of :attr:`ends`.

    :attr:`kinds` maps a kind's key (``analysis``, ``preamble``, ``call0_channel``, ...,
    ``final``) to it; :attr:`schemas` maps each body key (``a0_``, ``rf_``) to its JSON Schema
    (or, for a custom tool with a grammar, its
    :class:`~harmony_grammar.declarations.custom.CustomBody`).
    Analysis can only come first, so it has no later form.
    """

    kinds: Mapping[str, MessageKind]
    ends: tuple[str, ...]
    schemas: Mapping[str, Any]

    @property
    def leading(self) -> tuple[str, ...]:
        """The kinds that may come before the end: ``analysis`` and ``preamble``, if allowed."""
        return tuple(k for k in ("analysis", "preamble") if k in self.kinds)

    @property
    def openings(self) -> tuple[Opening, ...]:
        """The turn's alternatives, one per kind its first message may be (leading, then ends).

        ``[analysis] preamble* end`` spelled out: after a leading message come the
        preambles (when allowed) and then one end message; an end message is the whole turn.
        Both emitters write these, each in its own syntax.
        """
        return tuple(
            Opening(
                first,
                preambles=first in self.leading and "preamble" in self.kinds,
                end=first in self.leading,
            )
            for first in self.leading + self.ends
        )


class Opening(NamedTuple):
    """One alternative of a turn: its first message's kind, whether ``preamble*`` follows,
    and whether an end message follows (after them)."""

    first: str
    preambles: bool
    end: bool


def message_text(
    kind: MessageKind,
    body: str,
    *,
    first: bool,
    control: Callable[[ControlToken], str | None],
    literal: Callable[[str], str],
) -> str:
    """One message of ``kind`` in a grammar target's syntax: each control token as
    ``control`` writes it (None leaves it out), the author and header values as ``literal``
    writes them, the content as the rule ``body``, joined by spaces."""
    parts = []
    for terminal in kind.shape(first=first):
        if terminal in CONTROL_TERMINALS:
            written = control(CONTROL_TERMINALS[terminal])
            if written is not None:
                parts.append(written)
        elif terminal == "CONTENT":
            parts.append(body)
        elif terminal == "AUTHOR":
            parts.append(literal("assistant"))
        else:
            parts.append(literal(kind.values[terminal]))
    return " ".join(parts)


def response_schema(response_format: Mapping[str, Any]) -> Any:
    """The JSON Schema of a ``response_format``: OpenAI's ``{"type": "json_schema",
    "json_schema": {"schema": ...}}``, ``{"schema": ...}``, or a schema itself."""
    if response_format.get("type") == "json_schema":
        return response_format.get("json_schema", {}).get("schema", {})
    if "schema" in response_format and isinstance(response_format["schema"], Mapping):
        return response_format["schema"]
    return response_format


def turn_plan(tools: ToolsArgument, options: TurnOptions | None = None) -> TurnPlan:
    """The message kinds a turn may hold under ``options`` (:class:`~.options.TurnOptions`,
    checked when it was made; default: the defaults)."""
    if options is None:
        options = TurnOptions()
    tool_choice, recipient_position = options.tool_choice, options.recipient_position
    content_type, response_format = options.content_type, options.response_format
    allow_analysis, allow_preamble = options.allow_analysis, options.allow_preamble
    # Keyed by recipient: functions.NAME, or NAMESPACE.NAME for a namespace's tools.
    schemas = dict(checked_tools(tools).targets)
    if tool_choice not in ("auto", "required", "none"):
        chosen = f"{FUNCTIONS}.{tool_choice}"
        chosen = chosen if chosen in schemas else tool_choice
        if chosen not in schemas:
            raise TurnGrammarError(f"tool_choice {tool_choice!r} is not among the tools")
        schemas = {chosen: schemas[chosen]}
    calls_allowed = tool_choice != "none" and bool(schemas)
    final_allowed = tool_choice in ("auto", "none")
    if tool_choice == "required" and not schemas:
        raise TurnGrammarError("tool_choice 'required' needs at least one tool")

    kinds: dict[str, MessageKind] = {}
    bodies: dict[str, Any] = {}
    channel = frozenset({"CHANNEL", "CHANNEL_NAME"})
    if allow_analysis:
        kinds["analysis"] = MessageKind(
            ControlToken.END, channel, {"CHANNEL_NAME": "analysis"}, "text"
        )
    if allow_preamble:
        kinds["preamble"] = MessageKind(
            ControlToken.END, channel, {"CHANNEL_NAME": "commentary"}, "text"
        )
    ends: list[str] = []
    if calls_allowed:
        positions = ("role", "channel") if recipient_position == "either" else (recipient_position,)
        for index, (recipient, schema) in enumerate(schemas.items()):
            # A custom tool's input is raw text: no JSON content type, and its body is free
            # text or the tool's own grammar (docs/serving.md, "Custom tools").
            custom = isinstance(schema, CustomBody)
            body = "text" if custom and schema.syntax == "text" else f"a{index}_"
            if body != "text":
                bodies[body] = schema
            for position in positions:
                key = f"call{index}_{position}"
                kinds[key] = MessageKind(
                    ControlToken.CALL,
                    channel
                    | set(_RECIPIENT_TERMINALS[position])
                    | _CONTENT_TYPE_TERMINALS[None if custom else content_type],
                    {
                        "CHANNEL_NAME": "commentary",
                        "ROLE_RECIPIENT": f" to={recipient}",
                        "CHANNEL_RECIPIENT": f" to={recipient}",
                        "SPACE": " ",
                        "CONTENT_TYPE": "json",
                    },
                    body,
                )
                ends.append(key)
    if final_allowed:
        body, header = "text", channel
        if response_format is not None:
            body = "rf_"
            bodies[body] = response_schema(response_format)
            header = channel | _CONTENT_TYPE_TERMINALS["<|constrain|>json"]
        kinds["final"] = MessageKind(
            ControlToken.RETURN,
            header,
            {"CHANNEL_NAME": "final", "SPACE": " ", "CONTENT_TYPE": "json"},
            body,
        )
        ends.append("final")
    return TurnPlan(kinds, tuple(ends), bodies)


def body_grammar(
    schema_json: str, whitespace: str, closed_objects: bool, complements: bool = False
) -> Any:
    """The IR grammar (``harmony_grammar.schema.Grammar``) a turn generates a body with: the
    schema (as JSON text, key order kept: declared order is the generated order) compiled
    with ``closed_objects`` and printable ASCII spelled only as itself (``escaped_ascii=False``:
    smaller lexemes that mask faster, docs/schema-grammar.md). Both targets embed it;
    ``complements`` for llguidance's (names not declared as a complement)."""
    import json

    from ..schema import compile_schema

    return compile_schema(
        json.loads(schema_json),
        whitespace=whitespace,  # type: ignore[arg-type]
        closed_objects=closed_objects,
        escaped_ascii=False,
        complements=complements,
    )
