"""The grammar of a whole assistant turn, for constrained generation (llguidance).

:func:`~.turn_plan.turn_plan` says which messages the turn may hold, with each message's
shape derived from ``grammars/harmony.lark``; this module writes that plan as an llguidance
grammar. Only the values are filled in here: the author, channel names, recipients, content
type words and bodies. Control tokens are emitted as llguidance special tokens (``<|call|>``
unquoted), never as quoted text. ``target="xgrammar"`` hands the same plan to
:mod:`.xgrammar_tag`.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from ..declarations.custom import CustomBody
from ..declarations.toolset import ToolsArgument
from .custom_grammar import custom_body_rules
from .options import TurnGrammarError, TurnOptions, turn_options
from .turn_plan import MessageKind, body_grammar, message_shape, message_text, turn_plan

__all__ = ["TurnGrammarError", "TurnOptions", "completion_grammar", "message_shape"]


def _literal(text: str) -> str:
    return json.dumps(text)  # llguidance string literals are JSON strings


def _emit_message(kind: MessageKind, body: str, *, first: bool) -> str:
    # A special token unquoted: quoted, it would be its spelling as text.
    return message_text(kind, body, first=first, control=lambda t: t.value, literal=_literal)


def _schema_rules(schema: Any, prefix: str, whitespace: str, closed: bool) -> tuple[str, list[str]]:
    """The start rule name and the rule lines of a schema's grammar, names prefixed."""
    # Key order is kept: declared property order decides the generated order.
    start, rules = _cached_schema_rules(json.dumps(schema), prefix, whitespace, closed)
    return start, list(rules)


@functools.lru_cache(maxsize=4)
def _any_json_rules(prefix: str, value: str) -> tuple[str, tuple[str, ...]]:
    # The checking body: any JSON object (a call's arguments) or value (a formatted answer),
    # in any key order, whitespace and spelling (float_safe=False: every JSON number), so
    # the JSON Schema validator alone decides the document.
    from ..schema import compile_schema
    from ..schema.emit_llguidance import llguidance_rules

    grammar = compile_schema(
        json.loads(value), whitespace="flexible", float_safe=False, escaped_ascii=True
    )
    return f"{prefix}{grammar.start}", tuple(llguidance_rules(grammar, prefix))


@functools.lru_cache(maxsize=512)
def _cached_schema_rules(
    schema_json: str, prefix: str, whitespace: str, closed: bool
) -> tuple[str, tuple[str, ...]]:
    # A server sees the same tools on request after request: compile each schema once.
    from ..schema.emit_llguidance import llguidance_rules

    grammar = body_grammar(schema_json, whitespace, closed, complements=True)
    return f"{prefix}{grammar.start}", tuple(llguidance_rules(grammar, prefix))


def completion_grammar(
    tools: ToolsArgument,
    options: TurnOptions | None = None,
    *,
    target: str = "llguidance",
    target_version: str | None = None,
    bodies: str = "schema",
    **changes: Any,
) -> str:
    """The grammar of the model's output after ``<|start|>assistant``.

    ``tools``: OpenAI-style or plain tool lists, or ``{name: schema}``. ``options`` is a
    :class:`~.options.TurnOptions` (what the turn may hold: ``tool_choice``, analysis,
    preambles, where the recipient goes, the calls' content type, a ``response_format``,
    whitespace, undeclared properties); keyword arguments of the same names override it
    (``completion_grammar(tools, tool_choice="required")``). Bodies follow
    :func:`harmony_grammar.schema.schema_to_grammar`; schemas it refuses raise
    :class:`~harmony_grammar.schema.UnsupportedSchemaError`.

    ``target``: ``llguidance`` (a Lark-style llguidance grammar, the default), ``xgrammar``:
    the JSON text of :func:`~harmony_grammar.generation.xgrammar_structural_tag` for the same
    tools and options (one function, the tag as a dict there and as text here), or ``gbnf``:
    llama.cpp's GBNF with control tokens by id, ending before the stop token
    (:mod:`.turn_gbnf` says how it differs).

    Objects that leave ``additionalProperties`` unset get only their declared properties by
    default (as OpenAI's strict function calling does): every output is still valid, and the
    grammar stays small enough for llguidance's per-token budget (an open object must exclude
    every declared name from the names it may add, which on ten tools exceeded it).

    ``bodies``: ``schema`` (the default, for generation: each body in its schema's declared
    key order) or ``json`` (for *checking* output that was not generated under the grammar,
    llguidance only): a call's body is any JSON object and a formatted answer any JSON value,
    in any key order, whitespace and spelling; the caller checks each body with the JSON
    Schema validator (``tools.arguments.first_schema_error``), so a valid document written in
    another key order than the schema declares is not refused (the replay backend does this).
    """
    if bodies not in ("schema", "json"):
        raise TurnGrammarError(f"bodies must be schema or json; not {bodies!r}")
    if bodies == "json" and target != "llguidance":
        raise TurnGrammarError("bodies='json' (a checking grammar) is for the llguidance target")
    if target not in ("llguidance", "xgrammar", "gbnf"):
        raise TurnGrammarError(
            f"completion_grammar targets llguidance, xgrammar or gbnf; not {target!r}"
        )
    options = turn_options(options, **changes)
    if options.reasoning_budget == 0:
        options = turn_options(options, allow_analysis=False, reasoning_budget=None)
    if target == "xgrammar":
        from .xgrammar_tag import xgrammar_structural_tag

        tag = xgrammar_structural_tag(tools, options, target_version=target_version)
        return json.dumps(tag, ensure_ascii=False)
    if target == "gbnf":
        from .turn_gbnf import gbnf_turn_grammar

        return gbnf_turn_grammar(tools, options)
    plan = turn_plan(tools, options)
    whitespace, undeclared_properties = options.whitespace, options.undeclared_properties

    lines = ["%llguidance {}", ""]
    texts = {"text": "text"}
    body_rules: list[str] = []
    for prefix, schema in plan.schemas.items():
        if isinstance(schema, CustomBody):  # a custom tool's own grammar (custom_grammar.py)
            texts[prefix], rules = custom_body_rules(schema, prefix)
        elif bodies == "json":
            texts[prefix], any_rules = _any_json_rules(
                prefix, '{"type": "object"}' if prefix != "rf_" else "{}"
            )
            rules = list(any_rules)
        else:
            texts[prefix], rules = _schema_rules(
                schema, prefix, whitespace, not undeclared_properties
            )
        body_rules += rules

    # start: [analysis] preamble* end — the first message has no <|start|>assistant.
    kinds = plan.kinds
    alternatives = []
    for first, preambles, end in plan.openings:
        rest = (["preamble_next*"] if preambles else []) + (["end_next"] if end else [])
        alternatives.append(" ".join([f"{first}_first", *rest]))
    lines.append("start: " + "\n     | ".join(alternatives))
    lines.append("end_next: " + " | ".join(f"{k}_next" for k in plan.ends))
    # The first message continues the prompt's <|start|>assistant; later ones start anew.
    # Analysis can only come first, so it has no "_next" form.
    for key, kind in kinds.items():
        body = texts[kind.body]
        if key == "analysis" and options.reasoning_budget is not None:
            body = "analysis_text"  # the same text, bounded by llguidance's max_tokens
        lines.append(f"{key}_first: {_emit_message(kind, body, first=True)}")
        if key != "analysis":
            lines.append(f"{key}_next: {_emit_message(kind, body, first=False)}")
    # Free text: any characters; special tokens are not characters, so none can slip in.
    lines.append("text: TEXT")
    lines.append("TEXT: /(?s:.*)/")
    if options.reasoning_budget is not None and "analysis" in kinds:
        lines.append(f"analysis_text[max_tokens={options.reasoning_budget}]: /(?s:.*)/")
    lines += body_rules
    return "\n".join(lines) + "\n"
