"""The ``hf-chat-template`` profile: the model repo's Jinja chat template, as rules.

The template (shipped by TRL as ``trl/chat_templates/gptoss.jinja``; harmony-format.md §9)
takes Chat Completions-style messages, so a Harmony conversation is first seen as the chat
messages it stands for, then written the way the template writes them:

* the system message is the template's own: identity, ``Knowledge cutoff: 2024-06``,
  ``Current date:`` (the conversation's date, else today's, as ``strftime_now`` gives),
  ``Reasoning:``, the built-in tools, the channels line, the routing line when there are tools;
* the developer message is ``# Instructions`` (with a trailing blank line) and the
  functions namespace in the template's own TypeScript (:func:`hf_tools_namespace`);
* a call is ``assistant to=functions.NAME<|channel|>commentary json`` with the arguments
  through ``tojson`` (Python's ``json.dumps``: ``", "`` and ``": "``); the text before it
  (analysis, or a commentary preamble) is rendered as analysis only while no later final
  answer exists; one call per assistant message;
* a tool result is ``functions.NAME to=assistant<|channel|>commentary`` (NAME: the latest
  call's) with the content through ``tojson`` (a JSON string literal);
* a final answer ends with ``<|end|>``; the last one, when no generation prompt follows,
  keeps its analysis and ends with ``<|return|>``.

Whatever the template cannot be given (two calls in one generation, two analysis messages
before one answer, names on authors, a second developer message, ...) raises
:class:`~.errors.RenderError` naming the profile and the message: the template would
silently drop or misattribute it.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..declarations.spec import ToolNamespace, ToolSpec
from ..format.model import Message, RecipientPosition, Role, Terminator
from ..format.tokens import ControlToken
from .conversation import (
    DEFAULT_CHANNELS,
    DEFAULT_KNOWLEDGE_CUTOFF,
    ConversationItem,
    DeveloperContent,
    SystemContent,
)
from .errors import RenderError

__all__ = [
    "HF_BROWSER_TOOL",
    "HF_PYTHON_TOOL",
    "arrange_for_hf_template",
    "hf_developer_text",
    "hf_system_text",
    "hf_tools_namespace",
    "hf_typescript_type",
]

_NAME = "hf-chat-template"
_CONSTRAIN = ControlToken.CONSTRAIN.value
_ROUTING_LINE = "\nCalls to these tools must go to the commentary channel: 'functions'."
_CHANNELS_LINE = (
    "# Valid channels: analysis, commentary, final. Channel must be included for every message."
)
# The template refuses messages whose content spells these (raise_exception).
_FORBIDDEN = ("<|channel|>analysis<|message|>", "<|channel|>final<|message|>")

#: The template's built-in browser tool text (render_builtin_tools), verbatim.
HF_BROWSER_TOOL = (
    "## browser\n\n"
    "// Tool for browsing.\n"
    "// The `cursor` appears in brackets before each browsing display: `[{cursor}]`.\n"
    "// Cite information from the tool using the following format:\n"
    "// `【{cursor}†L{line_start}(-L{line_end})?】`, for example: `【6†L9-L11】` or `【8†L3】`.\n"
    "// Do not quote more than 10 words directly from the tool output.\n"
    "// sources=web (default: web)\n"
    "namespace browser {\n\n"
    "// Searches for information related to `query` and displays `topn` results.\n"
    "type search = (_: {\n"
    "query: string,\n"
    "topn?: number, // default: 10\n"
    "source?: string,\n"
    "}) => any;\n\n"
    "// Opens the link `id` from the page indicated by `cursor` starting at line number `loc`,"
    " showing `num_lines` lines.\n"
    "// Valid link ids are displayed with the formatting: `【{id}†.*】`.\n"
    "// If `cursor` is not provided, the most recent page is implied.\n"
    "// If `id` is a string, it is treated as a fully qualified URL associated with `source`.\n"
    "// If `loc` is not provided, the viewport will be positioned at the beginning of the "
    "document or centered on the most relevant passage, if available.\n"
    "// Use this function without `id` to scroll to a new location of an opened page.\n"
    "type open = (_: {\n"
    "id?: number | string, // default: -1\n"
    "cursor?: number, // default: -1\n"
    "loc?: number, // default: -1\n"
    "num_lines?: number, // default: -1\n"
    "view_source?: boolean, // default: false\n"
    "source?: string,\n"
    "}) => any;\n\n"
    "// Finds exact matches of `pattern` in the current page, or the page given by `cursor`.\n"
    "type find = (_: {\n"
    "pattern: string,\n"
    "cursor?: number, // default: -1\n"
    "}) => any;\n\n"
    "} // namespace browser\n\n"
)

#: The template's built-in python tool text: openai-harmony's description, as its own section.
HF_PYTHON_TOOL = f"## python\n\n{ToolNamespace.python().description}\n\n"


def _error(index: int, why: str) -> RenderError:
    return RenderError(f"{_NAME}: messages[{index}]: {why}")


def _tojson(value: Any) -> str:
    # transformers' own tojson filter: json.dumps, non-ASCII kept, default separators.
    return json.dumps(value, ensure_ascii=False)


# -- the template's TypeScript -----------------------------------------------------------


def hf_typescript_type(spec: Mapping[str, Any]) -> str:
    """The template's ``render_typescript_type`` macro, whitespace quirks included."""
    kind = spec.get("type")
    if kind == "array":
        items = spec.get("items")
        if items:
            item_kind = items.get("type") if isinstance(items, Mapping) else None
            if item_kind == "string":
                out = "string[]"
            elif item_kind in ("number", "integer"):
                out = "number[]"
            elif item_kind == "boolean":
                out = "boolean[]"
            else:
                inner = hf_typescript_type(items)
                out = "any[]" if inner == "object | object" or len(inner) > 50 else inner + "[]"
        else:
            out = "any[]"
        return out + (" | null" if spec.get("nullable") else "")
    if isinstance(kind, (list, tuple)) and kind:
        return " | ".join(str(k) for k in kind) if len(kind) > 1 else str(kind[0])
    one_of = spec.get("oneOf")
    if one_of:
        # The template means to write `any` for a oneOf with an object variant, but its flag is
        # set inside a for loop, and Jinja's loop scope drops it: every variant is written.
        variants = [v for v in one_of if isinstance(v, Mapping)]
        parts: list[str] = []
        for position, variant in enumerate(variants):
            part = hf_typescript_type(variant)
            if variant.get("description"):
                part += f"// {variant['description']}"
            if "default" in variant:
                # The template's `{{ ... }}` here has no `-`: its indentation is output.
                part += " " * 20 + "// default: " + _tojson(variant["default"])
            if position < len(variants) - 1:
                part += " | \n"
            parts.append(part)
        return "".join(parts)
    if kind == "string":
        if spec.get("enum"):
            return '"' + '" | "'.join(str(v) for v in spec["enum"]) + '"'
        return "string" + (" | null" if spec.get("nullable") else "")
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "object":
        properties = spec.get("properties")
        if not properties:
            return "object"
        required = spec.get("required") or []
        fields = [
            # `{{- ": " }}` then a newline and 16 spaces of indentation before `{{ ... }}`.
            f"{name}{'' if name in required else '?'}: \n{' ' * 16}{hf_typescript_type(prop)}"
            for name, prop in properties.items()
        ]
        return "{\n" + ", ".join(fields) + "}"
    return "any"


def _default_text(name: str, spec: Mapping[str, Any]) -> str:
    default = spec["default"]
    if spec.get("enum") or spec.get("oneOf"):
        if not isinstance(default, str):  # the template concatenates it as a string
            raise RenderError(
                f"{_NAME}: parameter {name!r}: the template cannot write a non-string default "
                "of an enum or oneOf"
            )
        return (", " if spec.get("enum") else "") + "// default: " + default
    return ", // default: " + _tojson(default)


def _function_text(tool: ToolSpec) -> str:
    text = f"// {tool.description}\ntype {tool.name} = "
    parameters = tool.parameters or {}
    properties = parameters.get("properties")
    if not properties:
        return text + "() => any;\n\n"
    required = parameters.get("required") or []
    text += "(_: {\n"
    for name, spec in properties.items():
        if spec.get("description"):
            text += f"// {spec['description']}\n"
        text += f"{name}{'' if name in required else '?'}: {hf_typescript_type(spec)}"
        if "default" in spec:
            text += _default_text(name, spec)
        text += ",\n"
    return text + "}) => any;\n\n"


def hf_tools_namespace(tools: Sequence[ToolSpec]) -> str:
    """The template's ``render_tool_namespace("functions", tools)``."""
    body = "".join(_function_text(tool) for tool in tools)
    return f"## functions\n\nnamespace functions {{\n\n{body}}} // namespace functions"


# -- system and developer ----------------------------------------------------------------


def _builtin_tools(content: SystemContent) -> str:
    names = set()
    for namespace in content.tools:
        if namespace == ToolNamespace.browser():
            names.add("browser")
        elif namespace == ToolNamespace.python():
            names.add("python")
        else:
            raise _error(0, f"the template knows only the built-in browser and python tools, "
                         f"not the namespace {namespace.name!r}")
    if not names:
        return ""
    return (
        "# Tools\n\n"
        + (HF_BROWSER_TOOL if "browser" in names else "")
        + (HF_PYTHON_TOOL if "python" in names else "")
    )


def hf_system_text(content: SystemContent, *, has_tools: bool, date: str | None = None) -> str:
    """The template's system message for this content (``date``: today's when None and the
    content has none, as ``strftime_now("%Y-%m-%d")`` gives)."""
    if content.model_identity is None or content.reasoning_effort is None:
        raise _error(0, "the template always writes a model identity and a reasoning effort")
    if content.knowledge_cutoff != DEFAULT_KNOWLEDGE_CUTOFF:
        raise _error(0, f"the template's knowledge cutoff is fixed at {DEFAULT_KNOWLEDGE_CUTOFF}")
    if tuple(content.valid_channels) != DEFAULT_CHANNELS or not content.channel_required:
        raise _error(0, "the template's channels line is fixed (analysis, commentary, final)")
    day = date or content.conversation_start_date or datetime.date.today().strftime("%Y-%m-%d")
    return (
        f"{content.model_identity}\nKnowledge cutoff: {DEFAULT_KNOWLEDGE_CUTOFF}\n"
        f"Current date: {day}\n\nReasoning: {content.reasoning_effort.value}\n\n"
        + _builtin_tools(content)
        + _CHANNELS_LINE
        + (_ROUTING_LINE if has_tools else "")
    )


def hf_developer_text(content: DeveloperContent) -> str | None:
    """The template's developer message, or None when it writes none."""
    if content.namespaces or content.response_formats:
        raise _error(1, "the template writes only the functions namespace (no other namespaces, "
                     "no response formats)")
    text = ""
    if content.instructions:
        text += f"# Instructions\n\n{content.instructions}\n\n"
    if content.tools:
        text += "# Tools\n\n" + hf_tools_namespace(content.tools)
    return text or None


# -- the history -------------------------------------------------------------------------


@dataclass
class _Turn:
    """One chat message as the template sees it (an assistant one: thinking + a call or a
    final answer)."""

    kind: str  # "user", "tool", "call", "final"
    index: int
    message: Message
    thinking: tuple[int, Message] | None = None


def _check_text(index: int, message: Message) -> None:
    if any(spelled in message.content for spelled in _FORBIDDEN):
        raise _error(index, "the template refuses assistant text that spells <|channel|> tags")


def _turns(items: Sequence[tuple[int, ConversationItem]]) -> list[_Turn]:
    """The chat messages the items stand for, checked against what the template can take."""
    turns: list[_Turn] = []
    thinking: tuple[int, Message] | None = None
    preamble: tuple[int, Message] | None = None
    called = False  # the current chat message has its call already

    def close(index: int) -> None:
        nonlocal thinking, preamble
        if preamble is not None:  # visible text with no call after it is a final answer
            final = dataclasses.replace(preamble[1], channel="final")
            turns.append(_Turn("final", preamble[0], final, thinking))
        elif thinking is not None:
            raise _error(thinking[0], "analysis with no call or final answer after it cannot "
                         "be given to the template")
        thinking = preamble = None

    for index, item in items:
        if not isinstance(item, Message) or item.role in (Role.SYSTEM, Role.DEVELOPER):
            raise _error(index, "the template takes one system or developer message, first")
        if item.name is not None and item.role is not Role.TOOL:
            raise _error(index, "the template writes no author names (role:name)")
        if item.role is not Role.ASSISTANT:
            close(index)
            called = False
            if item.role is Role.USER:
                if item.recipient or item.channel or item.content_type:
                    raise _error(index, "the template writes a user message with no header fields")
                turns.append(_Turn("user", index, item))
            else:
                turns.append(_Turn("tool", index, item))
            continue
        _check_text(index, item)
        if item.recipient is None:
            called = False  # text after a call starts the next chat message
        if item.recipient is not None:
            if not item.recipient.startswith("functions.") or item.channel != "commentary":
                raise _error(index, "the template writes only functions.* calls on commentary")
            if called:
                raise _error(index, "the template takes one call per assistant message; this "
                             "is a second call with no text or tool result between")
            if thinking is not None and preamble is not None:
                raise _error(preamble[0], "the template cannot take both analysis and a "
                             "preamble before one call")
            turns.append(_Turn("call", index, item, thinking or preamble))
            thinking = preamble = None
            called = True
        elif item.channel == "analysis":
            if thinking is not None or preamble is not None:
                raise _error(index, "the template takes one analysis message per answer")
            thinking = (index, item)
        elif item.channel in ("commentary", "final") and item.content_type is None:
            if preamble is not None:  # the earlier text had no call after it: an answer
                close(index)
            if item.channel == "final":
                turns.append(_Turn("final", index, item, thinking))
                thinking = None
            else:
                preamble = (index, item)
        else:
            raise _error(index, "the template writes assistant messages on analysis, "
                         "commentary (calls and preambles) and final only, with no content type")
    close(len(items))
    return turns


def _call_arguments(index: int, text: str) -> str:
    try:
        value = json.loads(text)
    except ValueError:
        raise _error(index, f"a call's arguments go through tojson, and {text[:40]!r} is not "
                     "JSON") from None
    return _tojson(value)


def _write(turns: Sequence[_Turn], prompt: bool) -> list[tuple[int, ConversationItem]]:
    out: list[tuple[int, ConversationItem]] = []
    latest_call: str | None = None
    for position, turn in enumerate(turns):
        message = turn.message
        if turn.kind == "user":
            out.append((turn.index, dataclasses.replace(message, terminator=Terminator.END)))
        elif turn.kind == "tool":
            if latest_call is None:
                raise _error(turn.index, "a tool result with no call before it")
            if message.name != latest_call or message.recipient != "assistant":
                raise _error(turn.index, f"the template names every result after the latest "
                             f"call ({latest_call}) and sends it to=assistant")
            if message.channel != "commentary" or message.content_type is not None:
                raise _error(turn.index, "the template writes results on commentary, with no "
                             "content type")
            result = Message(
                Role.TOOL,
                _tojson(message.content),
                name=latest_call,
                recipient="assistant",
                recipient_position=RecipientPosition.ROLE,
                channel="commentary",
                terminator=Terminator.END,
            )
            out.append((turn.index, result))
        elif turn.kind == "call":
            later_final = any(t.kind == "final" for t in turns[position + 1 :])
            if turn.thinking is not None and not later_final:
                index, text = turn.thinking
                analysis = Message(Role.ASSISTANT, text.content, channel="analysis")
                out.append((index, dataclasses.replace(analysis, terminator=Terminator.END)))
            content_type = (message.content_type or "json").removeprefix(_CONSTRAIN)
            call = Message(
                Role.ASSISTANT,
                _call_arguments(turn.index, message.content),
                recipient=message.recipient,
                recipient_position=RecipientPosition.ROLE,
                channel="commentary",
                content_type=content_type,
                terminator=Terminator.CALL,
            )
            out.append((turn.index, call))
            latest_call = message.recipient
        else:  # final
            last = position == len(turns) - 1 and not prompt
            if last and turn.thinking is not None:
                index, text = turn.thinking
                analysis = Message(Role.ASSISTANT, text.content, channel="analysis")
                out.append((index, dataclasses.replace(analysis, terminator=Terminator.END)))
            final = Message(
                Role.ASSISTANT,
                message.content,
                channel="final",
                terminator=Terminator.RETURN if last else Terminator.END,
            )
            out.append((turn.index, final))
            if not last:
                latest_call = None
    return out


def arrange_for_hf_template(
    items: Sequence[ConversationItem], next_turn: str | None
) -> list[tuple[int, ConversationItem]]:
    """The conversation as the template writes it (see the module docstring), followed by
    ``<|start|>{next_turn}`` (the generation prompt) when that is not None."""
    if next_turn not in (None, "assistant"):
        raise RenderError(f"{_NAME}: the template's generation prompt is <|start|>assistant only")
    if not items or not isinstance(items[0], SystemContent):
        raise _error(0, "the template always writes its own system message: start the "
                     "conversation with a SystemContent")
    system = items[0]
    rest = list(enumerate(items))[1:]
    developer: DeveloperContent | None = None
    if rest and isinstance(rest[0][1], DeveloperContent):
        developer = rest.pop(0)[1]  # type: ignore[assignment]
    has_tools = developer is not None and bool(developer.tools)
    out: list[tuple[int, ConversationItem]] = [
        (0, Message(Role.SYSTEM, hf_system_text(system, has_tools=has_tools)))
    ]
    developer_text = hf_developer_text(developer) if developer is not None else None
    if developer_text is not None:
        out.append((1, Message(Role.DEVELOPER, developer_text)))
    out += _write(_turns(rest), prompt=next_turn is not None)
    return out
