"""Token ids cut into segments: what each token of a training record is.

A record's ids are read as a Harmony conversation (the strict parser, on token ids, so a
spelled control token in text is text). Every token then belongs to exactly one segment:

* ``header``: ``<|start|>`` through ``<|message|>`` of every message (and the header of a
  trailing ``<|start|>assistant`` generation prompt);
* the content of a message, by who wrote it: ``system``, ``developer``, ``user``,
  ``tool_result`` (a message authored by a tool), and for the assistant ``analysis``,
  ``preamble`` (``commentary`` without a recipient), ``call`` (any message with a
  recipient, built-in tools included) and ``final``;
* the terminator: ``end``, ``return`` or ``call_token``.

:class:`Layout` also keeps, per message, where its *head* ends: ``<|start|>`` and the
author's tokens, the part a host writes before the model samples (see
:func:`harmony_grammar.training.render.render_training`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from ..format.model import Message, Role
from ..format.parser import parse
from ..format.tokens import ControlToken
from ..format.vocabulary import load_encoding, token_bytes_table

__all__ = [
    "CONTENT_SEGMENTS",
    "SEGMENTS",
    "Layout",
    "MessageLayout",
    "content_segment",
    "layout",
]

#: Content segments, in the order reports list them.
CONTENT_SEGMENTS = (
    "system",
    "developer",
    "user",
    "tool_result",
    "analysis",
    "preamble",
    "call",
    "final",
)
#: Every segment a token can belong to, in report order.
SEGMENTS = (*CONTENT_SEGMENTS, "header", "end", "return", "call_token")

_MESSAGE = ControlToken.MESSAGE.id
_TERMINATOR_SEGMENT = {
    ControlToken.END.id: "end",
    ControlToken.RETURN.id: "return",
    ControlToken.CALL.id: "call_token",
}


def content_segment(message: Message) -> str:
    """The segment of ``message``'s content (see the module docstring)."""
    if message.role is Role.TOOL:
        return "tool_result"
    if message.role is not Role.ASSISTANT:
        return str(message.role.value)  # system, developer, user
    if message.recipient is not None and message.recipient != "assistant":
        return "call"
    if message.channel == "analysis":
        return "analysis"
    if message.channel == "final":
        return "final"
    return "preamble"


@dataclass(frozen=True, slots=True)
class MessageLayout:
    """One message's tokens: ``[start, head)`` is ``<|start|>`` and the author,
    ``[head, body)`` the rest of the header through ``<|message|>``, ``[body, content_end)``
    the content and ``[content_end, end)`` the terminator (empty when there is none)."""

    message: Message
    segment: str
    start: int
    head: int
    body: int
    content_end: int
    end: int


@dataclass(frozen=True, slots=True)
class Layout:
    """A record's messages and the segment of each token (``labels[i]`` indexes
    :data:`SEGMENTS`)."""

    messages: tuple[MessageLayout, ...]
    labels: tuple[int, ...]


def _author_tokens(ids: Sequence[int], start: int, author: str, limit: int) -> int:
    """How many ordinary tokens after ``<|start|>`` spell the author (at least one)."""
    table = _bytes_table()
    want = len(author.encode("utf-8"))
    seen, i = 0, start
    while i < limit and seen < want:
        token = ids[i]
        if token >= len(table):
            break
        seen += len(table[token])
        i += 1
    return max(i - start, 1 if limit > start else 0)


@cache
def _bytes_table() -> tuple[bytes, ...]:
    return token_bytes_table(load_encoding())


def layout(ids: Sequence[int]) -> Layout | str:
    """The segments of ``ids``, or why they are not a Harmony conversation (the first error's
    code, message and token index)."""
    result = parse(ids, start="prompt" if _ends_in_prompt(ids) else "conversation")
    if not result.ok:
        first = next(d for d in result.diagnostics if d.severity.value == "error")
        return f"{first.code} at token {first.start}: {first.message}"
    index = {name: i for i, name in enumerate(SEGMENTS)}
    header = index["header"]
    labels = [header] * len(ids)  # a trailing generation prompt stays header
    messages = []
    for message in result.messages:
        assert message.span is not None  # the parser sets it on every message
        start, end = message.span.start, message.span.end
        body = start
        while body < end and ids[body] != _MESSAGE:
            body += 1
        body += 1
        terminator = _TERMINATOR_SEGMENT.get(ids[end - 1]) if end > body else None
        content_end = end - 1 if terminator else end
        author = message.name if message.role is Role.TOOL else message.role.value
        head = start + 1 + _author_tokens(ids, start + 1, author or "", body - 1)
        segment = content_segment(message)
        labels[body:content_end] = [index[segment]] * (content_end - body)
        if terminator:
            labels[content_end] = index[terminator]
        messages.append(MessageLayout(message, segment, start, head, body, content_end, end))
    return Layout(tuple(messages), tuple(labels))


@cache
def _assistant_id() -> int:
    return int(load_encoding().encode_single_token("assistant"))


def _ends_in_prompt(ids: Sequence[int]) -> bool:
    """True when the ids end in ``<|start|>assistant``, a generation prompt."""
    return len(ids) >= 2 and ids[-2] == ControlToken.START.id and ids[-1] == _assistant_id()
