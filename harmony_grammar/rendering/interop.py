"""Converting conversations to and from openai-harmony's classes.

openai-harmony is optional: it is imported when one of these functions is called, and a
missing package raises ImportError with the install hint. Nothing else in harmony-grammar
imports it.

The two models differ in small ways, and the conversions say so rather than guess:

* openai-harmony messages hold a list of contents; several text contents are joined into one
  (the text is the same; its token ids may differ at the seams, since openai-harmony encodes
  each content separately). A mix of text and structured content raises ValueError.
* harmony-grammar's ``terminator`` and ``recipient_position`` have no openai-harmony field and
  are dropped by :func:`to_openai_harmony`; ``DeveloperContent.response_formats`` has no
  counterpart and raises ValueError.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..declarations.spec import ToolNamespace, ToolSpec
from ..format.model import Message, Role
from .conversation import (
    Conversation,
    ConversationItem,
    DeveloperContent,
    ReasoningEffort,
    SystemContent,
)

__all__ = ["from_openai_harmony", "to_openai_harmony"]


def _openai_harmony() -> Any:
    try:
        import openai_harmony
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("openai-harmony is not installed (pip install openai-harmony)") from exc
    return openai_harmony


# -- to openai-harmony -------------------------------------------------------------------


def _namespace_to(oh: Any, namespace: ToolNamespace) -> Any:
    tools = [
        oh.ToolDescription(
            name=tool.name,
            description=tool.description,
            parameters=dict(tool.parameters) if tool.parameters is not None else None,
        )
        for tool in namespace.tools
    ]
    return oh.ToolNamespaceConfig(
        name=namespace.name, description=namespace.description, tools=tools
    )


def _namespaces_to(oh: Any, namespaces: Iterable[ToolNamespace]) -> dict[str, Any] | None:
    table = {namespace.name: _namespace_to(oh, namespace) for namespace in namespaces}
    return table or None


def _system_to(oh: Any, content: SystemContent) -> Any:
    effort = content.reasoning_effort
    return oh.SystemContent(
        model_identity=content.model_identity,
        reasoning_effort=oh.ReasoningEffort(effort.value.capitalize()) if effort else None,
        conversation_start_date=content.conversation_start_date,
        knowledge_cutoff=content.knowledge_cutoff,
        channel_config=(
            oh.ChannelConfig(
                valid_channels=list(content.valid_channels),
                channel_required=content.channel_required,
            )
            if content.valid_channels
            else None
        ),
        tools=_namespaces_to(oh, content.tools),
    )


def _developer_to(oh: Any, content: DeveloperContent) -> Any:
    if content.response_formats:
        raise ValueError("openai-harmony has no response formats; render them with harmony-grammar")
    namespaces = list(content.namespaces)
    if content.tools:
        namespaces.append(ToolNamespace("functions", None, content.tools))
    return oh.DeveloperContent(
        instructions=content.instructions, tools=_namespaces_to(oh, namespaces)
    )


def _item_to(oh: Any, item: ConversationItem) -> Any:
    if isinstance(item, SystemContent):
        return oh.Message.from_role_and_content(oh.Role.SYSTEM, _system_to(oh, item))
    if isinstance(item, DeveloperContent):
        return oh.Message.from_role_and_content(oh.Role.DEVELOPER, _developer_to(oh, item))
    return oh.Message(
        author=oh.Author(role=oh.Role(item.role.value), name=item.name),
        content=[oh.TextContent(text=item.content)],
        channel=item.channel,
        recipient=item.recipient,
        content_type=item.content_type,
    )


def to_openai_harmony(conversation: Conversation | Iterable[ConversationItem]) -> Any:
    """An ``openai_harmony.Conversation`` with the same messages."""
    oh = _openai_harmony()
    items = conversation.messages if isinstance(conversation, Conversation) else conversation
    return oh.Conversation(messages=[_item_to(oh, item) for item in items])


# -- from openai-harmony -----------------------------------------------------------------


def _namespace_from(config: Any) -> ToolNamespace:
    tools = tuple(ToolSpec(tool.name, tool.description, tool.parameters) for tool in config.tools)
    return ToolNamespace(config.name, config.description, tools)


def _system_from(content: Any) -> SystemContent:
    channels = content.channel_config
    effort = content.reasoning_effort
    return SystemContent(
        model_identity=content.model_identity,
        reasoning_effort=ReasoningEffort(effort.value.lower()) if effort is not None else None,
        conversation_start_date=content.conversation_start_date,
        knowledge_cutoff=content.knowledge_cutoff,
        valid_channels=tuple(channels.valid_channels) if channels is not None else (),
        channel_required=channels.channel_required if channels is not None else True,
        tools=tuple(_namespace_from(c) for c in (content.tools or {}).values()),
    )


def _developer_from(content: Any) -> DeveloperContent:
    namespaces = [_namespace_from(c) for c in (content.tools or {}).values()]
    functions = next((n for n in namespaces if n.name == "functions"), None)
    if functions is not None and functions.description is None and functions.tools:
        # The usual case: plain function tools.
        namespaces.remove(functions)
        return DeveloperContent(content.instructions, functions.tools, tuple(namespaces))
    return DeveloperContent(content.instructions, (), tuple(namespaces))


def _message_from(oh: Any, message: Any, index: int) -> ConversationItem:
    contents = list(message.content)
    structured = [c for c in contents if not isinstance(c, oh.TextContent)]
    if structured:
        if len(contents) != 1 or message.author.name is not None:
            raise ValueError(
                f"message {index}: a system or developer content must be the message's only "
                "content, with no author name"
            )
        if isinstance(structured[0], oh.SystemContent):
            return _system_from(structured[0])
        if isinstance(structured[0], oh.DeveloperContent):
            return _developer_from(structured[0])
        raise ValueError(f"message {index}: unsupported content {type(structured[0]).__name__}")
    return Message(
        role=Role(message.author.role.value),
        content="".join(c.text for c in contents),
        name=message.author.name,
        recipient=message.recipient,
        channel=message.channel,
        content_type=message.content_type,
    )


def from_openai_harmony(conversation: Any) -> Conversation:
    """A :class:`Conversation` from an ``openai_harmony.Conversation`` (or its messages)."""
    oh = _openai_harmony()
    messages = conversation.messages if isinstance(conversation, oh.Conversation) else conversation
    return Conversation(tuple(_message_from(oh, m, i) for i, m in enumerate(messages)))
