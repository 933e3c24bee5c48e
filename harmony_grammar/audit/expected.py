"""The exact mask of a record: what :func:`render_training` masks in, laid on the record's ids.

The record's messages are rendered again with
:func:`~harmony_grammar.training.render.render_training` (``auto_drop_analysis=False``:
the record already holds the messages it holds). When the ids come back the same, its
``assistant_masks`` is the exact mask as it is. When the record was rendered another way (a
chat template with its own spacing, say), the two renderings hold the same messages in the
same order, and ``render_training`` gives every message two values: one for its head
(``<|start|>`` and the author) and one for the rest (header, content, terminator); those
values are laid on the record's own tokens, message by message.
"""

from __future__ import annotations

from ..format.model import Message
from ..rendering.conversation import Conversation
from ..rendering.errors import RenderError
from ..rendering.options import RenderKeywords, RenderOptions
from ..training.render import TrainOn, render_training
from .segments import Layout, layout

__all__ = ["exact_mask"]


def exact_mask(
    ids: list[int], record: Layout, train_on: TrainOn, render: RenderOptions | None = None
) -> list[int] | str:
    """The exact mask for ``ids`` (laid out as ``record``), or why there is none; ``render``
    is the render options (default: the defaults) it is rendered with."""
    messages: list[Message] = [m.message for m in record.messages]
    render = RenderOptions() if render is None else render
    # Nothing is dropped (the record holds what it holds), unless the profile decides that.
    keep: RenderKeywords = {}
    if "auto_drop_analysis" not in render.spec.fixed_options:
        keep["auto_drop_analysis"] = False
    try:
        example = render_training(Conversation(tuple(messages)), render, train_on=train_on, **keep)
    except (RenderError, ValueError) as exc:
        return f"render_training cannot render the record's messages ({exc})"
    if example.input_ids == ids:
        return list(example.assistant_masks)
    rendered = layout(example.input_ids)
    if isinstance(rendered, str) or len(rendered.messages) != len(record.messages):
        return "render_training's rendering does not read back as the same messages"
    mask = [0] * len(ids)
    source = example.assistant_masks
    for mine, theirs in zip(record.messages, rendered.messages, strict=True):
        head, rest = source[theirs.start], source[theirs.end - 1]
        mask[mine.start : mine.head] = [head] * (mine.head - mine.start)
        mask[mine.head : mine.end] = [rest] * (mine.end - mine.head)
    return mask
