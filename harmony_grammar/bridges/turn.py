"""How a turn's messages become API output: one mapping of messages to kinds, one end rule.

Both bridges (Chat Completions and Responses) read the model's turn with these rules and no
others, so they cannot disagree on what a message is or on how the turn ended:

* :func:`item_kind`: a ``functions.*`` call (or one into a namespace the request declared)
  is a ``function_call``, analysis and a built-in
  tool's call are ``reasoning``, a final answer or a preamble is a ``message``, and a
  message the model should not write (a tool's result) ends the turn (None);
* :func:`message_cut`: whether a message was cut before its end;
* :func:`finish_reason`: ``tool_calls``, ``length`` or ``stop`` for the whole turn (the
  Responses bridge reads ``length`` as ``incomplete``).

The end of the input says nothing by itself: servers drop the stop token that ended
generation (``<|call|>``, ``<|return|>``), and detokenizers strip every control token
(HG160, a code whose record says ``stripped_dialect``). So a call the input ends inside is
still a call the host must run, unless the caller says the output was ``truncated`` (it
stopped at the token limit); a text message the input ends inside is cut, unless the control
tokens were stripped (then no terminator could have survived). docs/bridges.md records these
decisions.
"""

from __future__ import annotations

from ..format.model import Message, Role
from ..rendering.chat import FUNCTIONS_PREFIX

__all__ = [
    "FUNCTION_CALL",
    "MESSAGE",
    "REASONING",
    "call_name",
    "finish_reason",
    "item_kind",
    "message_cut",
]

FUNCTION_CALL = "function_call"
REASONING = "reasoning"
MESSAGE = "message"


def item_kind(
    role: Role,
    recipient: str | None,
    channel: str | None,
    namespaces: frozenset[str] = frozenset(),
) -> str | None:
    """The kind a message becomes: ``function_call`` (a ``functions.*`` call, or a call into
    one of the request's ``namespaces``), ``reasoning`` (analysis, or a built-in tool's
    call), ``message`` (a final answer or a preamble), or None for a message the model
    should not have written (a tool's result): the turn ends before it."""
    if role is not Role.ASSISTANT:
        return None
    if recipient is not None and (
        recipient.startswith(FUNCTIONS_PREFIX) or recipient.partition(".")[0] in namespaces
    ):
        return FUNCTION_CALL
    if recipient is not None or channel == "analysis":
        return REASONING
    return MESSAGE


def call_name(recipient: str | None) -> str:
    """The name a call is reported under: ``fn`` for ``functions.fn``, else the whole
    recipient (``NAMESPACE.fn``), as Chat Completions clients declared it."""
    recipient = recipient or ""
    return recipient.removeprefix(FUNCTIONS_PREFIX)


def message_cut(kind: str, message: Message, *, stripped: bool, truncated: bool) -> bool:
    """Whether ``message`` (of ``kind``) was cut before its end.

    ``truncated`` says the output stopped at the token limit right after this message (the
    caller's word, given only for the turn's last message). A message with its terminator is
    whole. Without one, a call is whole unless ``truncated`` (its ``<|call|>`` was dropped by
    the server or stripped: the host must still run it); a text message is cut unless the
    control tokens were ``stripped`` and the output was not ``truncated``.
    """
    if message.terminator is not None:
        return False
    if kind == FUNCTION_CALL:
        return truncated
    return truncated or not stripped


def finish_reason(calls: int, last_cut: bool | None, *, truncated: bool) -> str:
    """The turn's end: ``length`` when the output was ``truncated`` at the token limit,
    ``tool_calls`` when it made a call, ``length`` when its last message was cut (or it has
    none: ``last_cut`` None), else ``stop``."""
    if truncated:
        return "length"
    if calls:
        return "tool_calls"
    return "length" if last_cut is None or last_cut else "stop"
