"""The grammar of a whole assistant turn, for constrained generation (llguidance).

The turn is what the model writes after a prompt that ends with ``<|start|>assistant``:
an optional ``analysis`` message, optional ``commentary`` preambles, then either a call to one
of the tools (its body bound to the tool's JSON Schema, ending in ``<|call|>``) or a ``final``
answer (ending in ``<|return|>``, bound to ``response_format`` when one is given).

Derived, not re-typed. The shape of every message comes from ``grammars/harmony.lark``: the
terminal sequences of its ``completion`` rule (the first message, whose author the prompt
already wrote) and of its ``message`` rule (every later one) are enumerated from Lark's
compiled rules, and each message kind picks the one sequence whose header terminals are the
kind's (a channel; a recipient in the role or the channel section; a content type spelled
``<|constrain|>json`` or ``json``). Only the values are filled in here: the author, channel
names, recipients, content type words and bodies. Control tokens are emitted as llguidance
special tokens (``<|call|>`` unquoted), never as quoted text.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..format.grammar import harmony_parser
from ..format.tokens import ControlToken
from ..tools.arguments import ToolsArgument, tool_schemas

__all__ = ["TurnGrammarError", "completion_grammar", "message_shape"]

_CONTROL_TERMINALS = {token.terminal: token for token in ControlToken}
_RECIPIENT_TERMINALS = {"role": ("ROLE_RECIPIENT",), "channel": ("CHANNEL_RECIPIENT",)}
_CONTENT_TYPE_TERMINALS = {
    "<|constrain|>json": frozenset({"SPACE", "CONSTRAIN", "CONTENT_TYPE"}),
    "json": frozenset({"SPACE", "CONTENT_TYPE"}),
    None: frozenset(),
}
#: Terminals of the envelope around the header: they never select a shape.
_ENVELOPE = frozenset({"START", "AUTHOR", "MESSAGE", "CONTENT"})


class TurnGrammarError(ValueError):
    """The options ask for a turn the grammar cannot express (or name no such tool)."""


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
class _Kind:
    """One kind of message in the turn: its header terminals, their values, its body rule."""

    terminator: ControlToken
    header: frozenset[str]
    values: Mapping[str, str]
    body: str


def _literal(text: str) -> str:
    return json.dumps(text)  # llguidance string literals are JSON strings


def _emit_message(kind: _Kind, *, first: bool) -> str:
    shape = message_shape(first=first, terminator=kind.terminator, header=kind.header)
    parts = []
    for terminal in shape:
        if terminal in _CONTROL_TERMINALS:
            parts.append(_CONTROL_TERMINALS[terminal].value)  # a special token, unquoted
        elif terminal == "CONTENT":
            parts.append(kind.body)
        elif terminal == "AUTHOR":
            parts.append(_literal("assistant"))
        else:
            parts.append(_literal(kind.values[terminal]))
    return " ".join(parts)


def _schema_rules(schema: Any, prefix: str, whitespace: str, closed: bool) -> tuple[str, list[str]]:
    """The start rule name and the rule lines of a schema's grammar, names prefixed."""
    # Key order is kept: declared property order decides the generated order.
    start, rules = _cached_schema_rules(json.dumps(schema), prefix, whitespace, closed)
    return start, list(rules)


@functools.lru_cache(maxsize=512)
def _cached_schema_rules(
    schema_json: str, prefix: str, whitespace: str, closed: bool
) -> tuple[str, tuple[str, ...]]:
    # A server sees the same tools on request after request: compile each schema once.
    from ..schema import compile_schema
    from ..schema.emit_llguidance import llguidance_rules

    grammar = compile_schema(
        json.loads(schema_json),
        whitespace=whitespace,  # type: ignore[arg-type]
        closed_objects=closed,
    )
    return f"{prefix}{grammar.start}", tuple(llguidance_rules(grammar, prefix))


def _response_schema(response_format: Mapping[str, Any]) -> Any:
    """The JSON Schema of a ``response_format``: OpenAI's ``{"type": "json_schema",
    "json_schema": {"schema": ...}}``, ``{"schema": ...}``, or a schema itself."""
    if response_format.get("type") == "json_schema":
        return response_format.get("json_schema", {}).get("schema", {})
    if "schema" in response_format and isinstance(response_format["schema"], Mapping):
        return response_format["schema"]
    return response_format


def completion_grammar(
    tools: ToolsArgument,
    *,
    target: str = "llguidance",
    tool_choice: str = "auto",
    allow_analysis: bool = True,
    allow_preamble: bool = True,
    recipient_position: str = "channel",
    content_type: str | None = "<|constrain|>json",
    response_format: Mapping[str, Any] | None = None,
    whitespace: str = "compact",
    undeclared_properties: bool = False,
) -> str:
    """The llguidance grammar of the model's output after ``<|start|>assistant``.

    ``tools``: OpenAI-style or plain tool lists, or ``{name: schema}``. ``tool_choice``:
    ``auto`` (a call or a final answer), ``required`` (a call), ``none`` (a final answer) or
    a tool's name (a call to it). ``recipient_position``: ``channel`` (as the model writes
    it), ``role`` (as openai-harmony renders it) or ``either``. ``content_type``:
    ``<|constrain|>json``, ``json`` or None for the calls' header. Bodies follow
    :func:`harmony_grammar.schema.schema_to_grammar` (``whitespace`` as there); schemas it
    refuses raise :class:`~harmony_grammar.schema.UnsupportedSchemaError`.

    Objects that leave ``additionalProperties`` unset get only their declared properties
    (``undeclared_properties=False``, as OpenAI's strict function calling does): every
    output is still valid, and the grammar stays small enough for llguidance's per-token
    budget (an open object must exclude every declared name from the names it may add,
    which on ten tools exceeded it). ``undeclared_properties=True`` keeps the exact language.
    """
    if target != "llguidance":
        raise TurnGrammarError(
            f"completion_grammar targets llguidance (special tokens as tokens); not {target!r}"
        )
    if recipient_position not in ("channel", "role", "either"):
        raise TurnGrammarError("recipient_position must be channel, role or either")
    if content_type not in _CONTENT_TYPE_TERMINALS:
        raise TurnGrammarError("content_type must be '<|constrain|>json', 'json' or None")
    schemas = tool_schemas(tools)
    if tool_choice not in ("auto", "required", "none"):
        if tool_choice not in schemas:
            raise TurnGrammarError(f"tool_choice {tool_choice!r} is not among the tools")
        schemas = {tool_choice: schemas[tool_choice]}
    calls_allowed = tool_choice != "none" and bool(schemas)
    final_allowed = tool_choice in ("auto", "none")
    if tool_choice == "required" and not schemas:
        raise TurnGrammarError("tool_choice 'required' needs at least one tool")

    lines = ["%llguidance {}", ""]
    kinds: dict[str, _Kind] = {}
    channel = frozenset({"CHANNEL", "CHANNEL_NAME"})
    if allow_analysis:
        kinds["analysis"] = _Kind(ControlToken.END, channel, {"CHANNEL_NAME": "analysis"}, "text")
    if allow_preamble:
        kinds["preamble"] = _Kind(ControlToken.END, channel, {"CHANNEL_NAME": "commentary"}, "text")
    ends: list[str] = []
    body_rules: list[str] = []
    if calls_allowed:
        positions = ("role", "channel") if recipient_position == "either" else (recipient_position,)
        for index, (name, schema) in enumerate(schemas.items()):
            start_rule, rules = _schema_rules(
                schema, f"a{index}_", whitespace, not undeclared_properties
            )
            body_rules += rules
            for position in positions:
                key = f"call{index}_{position}"
                kinds[key] = _Kind(
                    ControlToken.CALL,
                    channel
                    | set(_RECIPIENT_TERMINALS[position])
                    | _CONTENT_TYPE_TERMINALS[content_type],
                    {
                        "CHANNEL_NAME": "commentary",
                        "ROLE_RECIPIENT": f" to=functions.{name}",
                        "CHANNEL_RECIPIENT": f" to=functions.{name}",
                        "SPACE": " ",
                        "CONTENT_TYPE": "json",
                    },
                    start_rule,
                )
                ends.append(key)
    if final_allowed:
        body, header = "text", channel
        if response_format is not None:
            body, rules = _schema_rules(
                _response_schema(response_format), "rf_", whitespace, not undeclared_properties
            )
            body_rules += rules
            header = channel | _CONTENT_TYPE_TERMINALS["<|constrain|>json"]
        kinds["final"] = _Kind(
            ControlToken.RETURN,
            header,
            {"CHANNEL_NAME": "final", "SPACE": " ", "CONTENT_TYPE": "json"},
            body,
        )
        ends.append("final")

    # start: [analysis] preamble* end — the first message has no <|start|>assistant.
    leading = [k for k in ("analysis", "preamble") if k in kinds]
    alternatives = []
    for first in leading + ends:
        rest = []
        if (first == "analysis" and "preamble" in kinds) or first == "preamble":
            rest.append("preamble_next*")
        if first in leading:
            rest.append("end_next")
        alternatives.append(" ".join([f"{first}_first", *rest]))
    lines.append("start: " + "\n     | ".join(alternatives))
    lines.append("end_next: " + " | ".join(f"{k}_next" for k in ends))
    # The first message continues the prompt's <|start|>assistant; later ones start anew.
    # Analysis can only come first, so it has no "_next" form.
    for key, kind in kinds.items():
        lines.append(f"{key}_first: {_emit_message(kind, first=True)}")
        if key != "analysis":
            lines.append(f"{key}_next: {_emit_message(kind, first=False)}")
    # Free text: any characters; special tokens are not characters, so none can slip in.
    lines.append("text: TEXT")
    lines.append("TEXT: /(?s:.*)/")
    lines += body_rules
    return "\n".join(lines) + "\n"
