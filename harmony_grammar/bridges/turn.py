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
generation (``<|call|>``, ``<|return|>``), an engine may end at its end-of-sequence or a
stop string it strips, and detokenizers strip every control token (HG160). So a message the
input ends inside is whole, a call included (the host must run it), unless the caller says
the output was ``truncated`` (it stopped at the token limit): only that is a cut, reported as
``length`` (Responses: ``incomplete``, ``max_output_tokens``). docs/bridges.md records these
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
    *,
    content_in_header: bool = False,
) -> str | None:
    """The kind a message becomes: ``function_call`` (a ``functions.*`` call, or a call into
    one of the request's ``namespaces``), ``reasoning`` (analysis, or a built-in tool's
    call), ``message`` (a final answer or a preamble), or None for a message the model
    should not have written (a tool's result): the turn ends before it.

    A ``commentary`` message with no recipient whose content began in a broken header
    (``content_in_header``: ``<|channel|>commentary... The user asks`` never reached
    ``<|message|>``) is ``reasoning``, not a preamble: in the outputs reported from real
    servers such text is the model's chain of thought, and shown as reasoning it stays in
    the answer (nothing is dropped) without reaching the user as the answer's text.
    """
    if role is not Role.ASSISTANT:
        return None
    if recipient is not None and (
        recipient.startswith(FUNCTIONS_PREFIX) or recipient.partition(".")[0] in namespaces
    ):
        return FUNCTION_CALL
    if recipient is not None or channel == "analysis":
        return REASONING
    if channel == "commentary" and content_in_header:
        return REASONING
    return MESSAGE


def call_name(recipient: str | None) -> str:
    """The name a call is reported under: ``fn`` for ``functions.fn``, else the whole
    recipient (``NAMESPACE.fn``), as Chat Completions clients declared it."""
    recipient = recipient or ""
    return recipient.removeprefix(FUNCTIONS_PREFIX)


def message_cut(message: Message, *, truncated: bool) -> bool:
    """Whether ``message`` was cut before its end.

    ``truncated`` says the output stopped at the token limit right after this message (the
    caller's word, given only for the turn's last message). A message with its terminator is
    whole; one without is cut only when ``truncated``: its terminator was otherwise dropped
    by the server, stripped, or never written because the engine stopped there (end of
    sequence, a stop string), none of which is a cut.
    """
    if message.terminator is not None:
        return False
    return truncated


def finish_reason(calls: int, last_cut: bool | None, *, truncated: bool) -> str:
    """The turn's end: ``length`` when the output was ``truncated`` at the token limit (or
    its last message was cut, which only a truncation does), ``tool_calls`` when it made a
    call, else ``stop`` (an empty output that was not cut included)."""
    if truncated or last_cut:
        return "length"
    if calls:
        return "tool_calls"
    return "stop"
