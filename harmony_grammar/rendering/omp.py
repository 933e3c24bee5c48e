"""oh-my-pi's render functions (harmony-format.md §8), over the ``omp`` profile.

OMP drives gpt-oss through text and renders its history itself. Each function here is the
renderer with ``profile="omp"`` on a small conversation, so there is one set of rules (in
:mod:`.profiles`) and these are their names as OMP spells them:

- :func:`render_tool_call` (``renderToolCall``):
  ``<|start|>assistant<|channel|>commentary to=functions.NAME<|message|>{compact JSON}<|call|>``;
  :func:`render_assistant_tool_calls` concatenates one per call;
- :func:`render_tool_results` (``renderToolResults``):
  ``<|start|>functions.NAME to=assistant<|channel|>commentary<|message|>{text}<|end|>`` each;
- :func:`render_thinking` (``renderThinking``):
  ``<|start|>assistant<|channel|>analysis<|message|>{text}<|end|>``;
- :func:`render_transcript` (``renderTranscript``): a whole conversation, each generation
  as thinking, visible text (as ``final``), then its calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..format.model import Message, Role
from .conversation import Conversation
from .profiles import harmony_recipient
from .renderer import render

__all__ = [
    "render_assistant_tool_calls",
    "render_thinking",
    "render_tool_call",
    "render_tool_results",
    "render_transcript",
]

_OMP = "omp"


def _arguments(arguments: Mapping[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _call(name: str, arguments: Mapping[str, Any] | str) -> Message:
    recipient = harmony_recipient(name)
    return Message(Role.ASSISTANT, _arguments(arguments), recipient=recipient, channel="commentary")


def render_tool_call(name: str, arguments: Mapping[str, Any] | str) -> str:
    """One call as OMP writes it (``arguments``: an object, or its JSON text)."""
    return render(Conversation((_call(name, arguments),)), profile=_OMP)


def render_assistant_tool_calls(calls: Iterable[tuple[str, Mapping[str, Any] | str]]) -> str:
    """One call message per ``(name, arguments)``, concatenated."""
    return render(Conversation(tuple(_call(name, args) for name, args in calls)), profile=_OMP)


def render_tool_results(results: Iterable[tuple[str, str]]) -> str:
    """One result envelope per ``(tool name, text)``, in call order; the text verbatim."""
    messages = tuple(
        Message(Role.TOOL, text, name=harmony_recipient(name), recipient="assistant")
        for name, text in results
    )
    return render(Conversation(messages), profile=_OMP)


def render_thinking(text: str) -> str:
    """Thinking as an analysis message."""
    return render(Conversation((Message(Role.ASSISTANT, text, channel="analysis"),)), profile=_OMP)


def render_transcript(conversation: Conversation, *, next_turn: str | None = None) -> str:
    """The whole conversation as OMP renders history (``profile="omp"``)."""
    return render(conversation, profile=_OMP, next_turn=next_turn)
