"""Reading a render request: its conversation, its options, the profile it asks for.

One place, so that our renderer and every reference (openai-harmony, oss-harmony in its own
environment, the HF chat template) read a request the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..rendering.chat import from_chat_completions
from ..rendering.conversation import Conversation, SystemContent
from ..rendering.options import RenderOptions
from ..rendering.profiles import DEFAULT_PROFILE
from .interface import Unsupported

__all__ = ["render_request", "requested_profile"]


def requested_profile(request: Mapping[str, Any], *accepted: str) -> str:
    """The profile a render request asks for (the default when it names none); raises
    :class:`Unsupported` when ``accepted`` is given and does not hold it."""
    profile = str(request.get("profile", DEFAULT_PROFILE))
    if accepted and profile not in accepted:
        raise Unsupported(f"renders {', '.join(accepted)}, not {profile}")
    return profile


def render_request(request: Mapping[str, Any]) -> tuple[Conversation, RenderOptions]:
    """A render request's conversation and options, as every renderer here reads them:
    the Chat Completions mapping, ``current_date`` on the system message, ``mode``."""
    date = request.get("current_date")
    system = SystemContent(conversation_start_date=date) if date is not None else None
    conversation = from_chat_completions(request["conversation"], system=system)
    mode = request["mode"]
    options = RenderOptions(
        profile=requested_profile(request),
        next_turn=request.get("next_turn", "assistant") if mode == "prompt" else None,
        training=mode == "training",
        auto_drop_analysis=request.get("auto_drop_analysis"),
    )
    return conversation, options
