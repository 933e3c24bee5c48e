"""The conversation model the renderer takes: what a host feeds gpt-oss.

Names follow openai-harmony (``Conversation``, ``SystemContent``, ``DeveloperContent``; the
tools, ``ToolSpec`` and ``ToolNamespace``, live in :mod:`harmony_grammar.declarations.spec`) so code
reads the same on both sides. Messages are :class:`harmony_grammar.format.model.Message`, the
type the parser returns; a system or developer message whose content is structured is written as a
:class:`SystemContent` or :class:`DeveloperContent` item in ``Conversation.messages`` instead.

Everything is frozen; the ``with_*`` methods return changed copies.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ..base.enums import StrEnum
from ..declarations.spec import ToolNamespace, ToolSpec
from ..format.model import Message, Role
from ..format.tokens import CHANNELS, ControlToken

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
    "assistant_message",
    "tool_call_message",
    "tool_result_message",
    "user_message",
]

#: openai-harmony's defaults for a new ``SystemContent``.
DEFAULT_IDENTITY = "You are ChatGPT, a large language model trained by OpenAI."
DEFAULT_KNOWLEDGE_CUTOFF = "2024-06"
DEFAULT_CHANNELS = CHANNELS

#: The content type of a JSON tool call as the model generates it (``<|constrain|>`` is a
#: special token, see harmony-format.md §2).
JSON_CONTENT_TYPE = f"{ControlToken.CONSTRAIN.value}json"


class ReasoningEffort(StrEnum):
    """``Reasoning: low|medium|high`` in the system message (Chat Completions spelling)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


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
        """A conversation of these items, in order.

        The items are :class:`Message` s (``user_message("hi")``, ``Message(role="user",
        content="hi")``) or the structured system/developer contents. Chat Completions message
        dicts are a request's, with its tools and defaults: read them with
        ``from_chat_completions({"messages": [...]})``, or pass the request to ``render``.
        """
        items = tuple(messages)
        for i, item in enumerate(items):
            if not isinstance(item, (Message, SystemContent, DeveloperContent)):
                hint = (
                    "for Chat Completions message dicts use"
                    " from_chat_completions({'messages': [...]}) (or render({'messages': [...]}))"
                    if isinstance(item, Mapping)
                    else "build each with Message(role=..., content=...) or user_message(...)"
                )
                raise TypeError(
                    f"Conversation.from_messages: item {i} is a {type(item).__name__},"
                    f" not a Message; {hint}"
                )
        return cls(items)

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
