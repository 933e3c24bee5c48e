"""The conversation model the renderer takes: what a host feeds gpt-oss.

Names follow openai-harmony (``Conversation``, ``SystemContent``, ``DeveloperContent``,
``ToolSpec`` for its ``ToolDescription``, ``ToolNamespace`` for its ``ToolNamespaceConfig``) so
code reads the same on both sides. Messages are :class:`harmony_grammar.model.Message`, the type
the parser returns; a system or developer message whose content is structured is written as a
:class:`SystemContent` or :class:`DeveloperContent` item in ``Conversation.messages`` instead.

Everything is frozen; the ``with_*`` methods return changed copies.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from .model import Message, Role
from .tokens import ControlToken

__all__ = [
    "DEFAULT_CHANNELS",
    "DEFAULT_IDENTITY",
    "DEFAULT_KNOWLEDGE_CUTOFF",
    "Conversation",
    "ConversationItem",
    "DeveloperContent",
    "Message",
    "ReasoningEffort",
    "ResponseFormat",
    "SystemContent",
    "ToolNamespace",
    "ToolSpec",
    "assistant_message",
    "tool_call_message",
    "tool_result_message",
    "user_message",
]

#: openai-harmony's defaults for a new ``SystemContent``.
DEFAULT_IDENTITY = "You are ChatGPT, a large language model trained by OpenAI."
DEFAULT_KNOWLEDGE_CUTOFF = "2024-06"
DEFAULT_CHANNELS = ("analysis", "commentary", "final")

#: The content type of a JSON tool call as the model generates it (``<|constrain|>`` is a
#: special token, see harmony-format.md §2).
JSON_CONTENT_TYPE = f"{ControlToken.CONSTRAIN.value}json"


class ReasoningEffort(str, enum.Enum):
    """``Reasoning: low|medium|high`` in the system message (Chat Completions spelling)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class ToolSpec:
    """A function tool: name, description and a JSON Schema for its single argument.

    ``parameters=None`` renders ``type name = () => any;``. The schema is kept as given (key
    order matters: properties render in insertion order) and should not be mutated.
    """

    name: str
    description: str = ""
    parameters: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class ToolNamespace:
    """A ``## name`` block of tools: ``functions`` in the developer message, ``browser`` or
    ``python`` in the system message. A namespace without tools renders its description as
    plain text (that is how the python tool is described)."""

    name: str
    description: str | None = None
    tools: tuple[ToolSpec, ...] = ()

    @classmethod
    def browser(cls) -> ToolNamespace:
        """The built-in browser tool gpt-oss was trained with (openai-harmony's text)."""
        return cls("browser", _BROWSER_DESCRIPTION, _BROWSER_TOOLS)

    @classmethod
    def python(cls) -> ToolNamespace:
        """The built-in python tool gpt-oss was trained with (openai-harmony's text)."""
        return cls("python", _PYTHON_DESCRIPTION)


@dataclass(frozen=True)
class ResponseFormat:
    """A structured-output format for ``# Response Formats`` in the developer message.

    openai-harmony does not render these; the layout is the cookbook's.
    """

    name: str
    schema: Mapping[str, Any]
    description: str | None = None


def _with_namespace(
    namespaces: tuple[ToolNamespace, ...], namespace: ToolNamespace
) -> tuple[ToolNamespace, ...]:
    # openai-harmony keeps namespaces in a map keyed by name: a second one replaces the first.
    return (*(n for n in namespaces if n.name != namespace.name), namespace)


@dataclass(frozen=True)
class SystemContent:
    """The structured system message. Defaults are openai-harmony's ``SystemContent.new()``.

    Set a field to None (or ``valid_channels`` to ``()``) to leave its line out.
    """

    model_identity: str | None = DEFAULT_IDENTITY
    reasoning_effort: ReasoningEffort | None = ReasoningEffort.MEDIUM
    conversation_start_date: str | None = None
    knowledge_cutoff: str | None = DEFAULT_KNOWLEDGE_CUTOFF
    valid_channels: tuple[str, ...] = DEFAULT_CHANNELS
    channel_required: bool = True
    tools: tuple[ToolNamespace, ...] = ()

    def with_tools(self, namespace: ToolNamespace) -> SystemContent:
        """A copy with this namespace added (replacing one of the same name)."""
        return dataclasses.replace(self, tools=_with_namespace(self.tools, namespace))

    def with_browser_tool(self) -> SystemContent:
        """A copy with the built-in browser tool."""
        return self.with_tools(ToolNamespace.browser())

    def with_python_tool(self) -> SystemContent:
        """A copy with the built-in python tool."""
        return self.with_tools(ToolNamespace.python())


@dataclass(frozen=True)
class DeveloperContent:
    """The structured developer message: instructions, function tools, response formats.

    ``tools`` are the ``functions`` namespace; ``namespaces`` holds any other namespace (rare).
    ``response_formats`` renders the cookbook's ``# Response Formats`` section, which
    openai-harmony does not: leave it empty for output identical to openai-harmony.
    """

    instructions: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    namespaces: tuple[ToolNamespace, ...] = ()
    response_formats: tuple[ResponseFormat, ...] = ()

    def with_function_tools(self, tools: Iterable[ToolSpec]) -> DeveloperContent:
        """A copy whose ``functions`` namespace is exactly these tools."""
        return dataclasses.replace(self, tools=tuple(tools))

    @property
    def has_function_tools(self) -> bool:
        """Whether a ``functions`` namespace with at least one tool is declared.

        This is what makes openai-harmony add the commentary routing line to the system
        message.
        """
        if self.tools:
            return True
        return any(n.name == "functions" and n.tools for n in self.namespaces)


#: One entry of ``Conversation.messages``: a message, or a structured system/developer message.
ConversationItem: TypeAlias = Message | SystemContent | DeveloperContent


@dataclass(frozen=True)
class Conversation:
    """An ordered sequence of messages (and structured system/developer contents)."""

    messages: tuple[ConversationItem, ...] = field(default_factory=tuple)

    @classmethod
    def from_messages(cls, messages: Iterable[ConversationItem]) -> Conversation:
        """A conversation of these items, in order."""
        return cls(tuple(messages))

    def with_messages(self, *messages: ConversationItem) -> Conversation:
        """A copy with these items appended."""
        return Conversation((*self.messages, *messages))

    def __iter__(self) -> Any:
        return iter(self.messages)

    def __len__(self) -> int:
        return len(self.messages)


def user_message(content: str, *, name: str | None = None) -> Message:
    """``<|start|>user<|message|>{content}<|end|>`` (``user:{name}`` with a name)."""
    return Message(Role.USER, content, name=name)


def assistant_message(content: str, *, channel: str = "final") -> Message:
    """An assistant message on a channel (``final`` answer, ``analysis``, ``commentary``)."""
    return Message(Role.ASSISTANT, content, channel=channel)


def tool_call_message(
    recipient: str,
    arguments: str,
    *,
    channel: str = "commentary",
    content_type: str | None = JSON_CONTENT_TYPE,
) -> Message:
    """An assistant call: ``to={recipient}`` with the arguments text as content.

    ``recipient`` is the full name (``functions.get_weather``, ``browser.search``, ``python``).
    Built-in tools are called on ``analysis``; pass ``channel`` and ``content_type`` for them.
    """
    return Message(
        Role.ASSISTANT, arguments, recipient=recipient, channel=channel, content_type=content_type
    )


def tool_result_message(author: str, content: str, *, channel: str = "commentary") -> Message:
    """A tool's result: ``<|start|>{author} to=assistant<|channel|>…<|message|>{content}``."""
    return Message(Role.TOOL, content, name=author, recipient="assistant", channel=channel)


# The built-in tools, as openai-harmony 0.0.8 defines them (``ToolNamespaceConfig.browser()`` and
# ``.python()``). This is the text gpt-oss was trained on, so it is data, reproduced exactly;
# tests/test_render_builtin.py checks it against the package.
_BROWSER_DESCRIPTION = (
    "Tool for browsing.\n"
    "The `cursor` appears in brackets before each browsing display: `[{cursor}]`.\n"
    "Cite information from the tool using the following format:\n"
    "`【{cursor}†L{line_start}(-L{line_end})?】`, for example: `【6†L9-L11】` or `【8†L3】`.\n"
    "Do not quote more than 10 words directly from the tool output.\n"
    "sources=web (default: web)"
)
_BROWSER_TOOLS = (
    ToolSpec(
        "search",
        "Searches for information related to `query` and displays `topn` results.",
        {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "topn": {"type": "number", "default": 10},
                "source": {"type": "string"},
            },
            "required": ["query"],
        },
    ),
    ToolSpec(
        "open",
        "Opens the link `id` from the page indicated by `cursor` starting at line number `loc`, "
        "showing `num_lines` lines.\n"
        "Valid link ids are displayed with the formatting: `【{id}†.*】`.\n"
        "If `cursor` is not provided, the most recent page is implied.\n"
        "If `id` is a string, it is treated as a fully qualified URL associated with `source`.\n"
        "If `loc` is not provided, the viewport will be positioned at the beginning of the "
        "document or centered on the most relevant passage, if available.\n"
        "Use this function without `id` to scroll to a new location of an opened page.",
        {
            "type": "object",
            "properties": {
                "id": {"type": ["number", "string"], "default": -1},
                "cursor": {"type": "number", "default": -1},
                "loc": {"type": "number", "default": -1},
                "num_lines": {"type": "number", "default": -1},
                "view_source": {"type": "boolean", "default": False},
                "source": {"type": "string"},
            },
        },
    ),
    ToolSpec(
        "find",
        "Finds exact matches of `pattern` in the current page, or the page given by `cursor`.",
        {
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "cursor": {"type": "number", "default": -1},
            },
            "required": ["pattern"],
        },
    ),
)
_PYTHON_DESCRIPTION = (
    "Use this tool to execute Python code in your chain of thought. The code will not be shown "
    "to the user. This tool should be used for internal reasoning, but not for code that is "
    "intended to be visible to the user (e.g. when creating plots, tables, or files).\n\n"
    "When you send a message containing Python code to python, it will be executed in a "
    "stateful Jupyter notebook environment. python will respond with the output of the "
    "execution or time out after 120.0 seconds. The drive at '/mnt/data' can be used to save "
    "and persist user files. Internet access for this session is UNKNOWN. Depends on the "
    "cluster."
)
