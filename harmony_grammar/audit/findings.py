"""What is wrong with a mask: one small check per finding, in a table (jsonschema's shape).

Each check looks at one record (its :class:`~.segments.Layout`, its mask and the exact mask)
and says whether the finding applies; a record counts once per finding. The table is the
catalogue: ``docs/training.md`` lists the same codes with what they cost and how to fix them.
Findings about records that could not be audited at all (``undecodable``, ``mask-invalid``,
``not-comparable``) are decided in :mod:`.batch`, before any check runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..format.model import Role
from ..rendering.renderer import DropRule, _dropped
from ..training.render import trained_turn_start
from .segments import SEGMENTS, Layout, MessageLayout

__all__ = ["FINDINGS", "UNAUDITABLE", "Finding", "RecordView"]


@dataclass(frozen=True, slots=True)
class RecordView:
    """What a check sees: the record's layout, its mask and the exact mask (same length), and
    the drop rule hosts apply to earlier turns' analysis."""

    layout: Layout
    mask: Sequence[int]
    exact: Sequence[int]
    drop_rule: DropRule = DropRule.HARMONY

    def trained(self, start: int, end: int) -> bool:
        """True when the mask trains any token of ``[start, end)``."""
        return any(self.mask[start:end])


@dataclass(frozen=True, slots=True)
class Finding:
    """A finding's ``code``, what it means, and the check that decides it."""

    code: str
    summary: str
    check: Callable[[RecordView], bool] | None


def _last_turn(view: RecordView) -> Sequence[MessageLayout]:
    messages = view.layout.messages
    return messages[trained_turn_start([m.message for m in messages]) :]


def _analysis_unseen(view: RecordView) -> bool:
    # The analysis a host drops from the prompt of the last turn (the drop rule, the
    # renderer's own function): the model never sees it again there. Training on it (and
    # training later turns with it in context) teaches a context inference never shows.
    messages = view.layout.messages
    items = [m.message for m in messages]
    dropped = _dropped(items[: trained_turn_start(items)], view.drop_rule)
    return any(view.trained(messages[i].body, messages[i].content_end) for i in dropped)


def _terminator_untrained(segment: str, last_turn_only: bool) -> Callable[[RecordView], bool]:
    def check(view: RecordView) -> bool:
        messages = _last_turn(view) if last_turn_only else view.layout.messages
        labels, mask = view.layout.labels, view.mask
        return any(
            m.end > m.content_end
            and not mask[m.content_end]
            and SEGMENTS[labels[m.content_end]] == segment
            for m in messages
        )

    return check


def _authored_by(roles: tuple[Role, ...]) -> Callable[[RecordView], bool]:
    def check(view: RecordView) -> bool:
        return any(
            view.trained(m.start, m.end) for m in view.layout.messages if m.message.role in roles
        )

    return check


def _generation_start_trained(view: RecordView) -> bool:
    # The <|start|>assistant that opens a generation (after a prompt or a tool result) is
    # written by the host, not sampled: the exact mask starts after it.
    previous: MessageLayout | None = None
    for m in view.layout.messages:
        opens = m.message.role is Role.ASSISTANT and (
            previous is None or previous.message.role is not Role.ASSISTANT
        )
        if opens and view.trained(m.start, m.head):
            return True
        previous = m
    return False


def _differs(view: RecordView) -> bool:
    return list(view.mask) != list(view.exact)


def _off_by_one(view: RecordView) -> bool:
    mask, exact = list(view.mask), list(view.exact)
    if mask == exact or not any(exact):
        return False
    # Shifted right (labels shifted twice, or the mask taken from the labels' positions) or
    # left by one token, with the vacated end filled either way.
    return mask[1:] == exact[:-1] or mask[:-1] == exact[1:]


#: The findings, in report order. ``check`` None: decided before the checks (unauditable).
FINDINGS: tuple[Finding, ...] = (
    Finding("undecodable", "the ids do not read as a Harmony conversation", None),
    Finding("mask-invalid", "no mask, a mask of another length, or values other than 0/1", None),
    Finding("not-comparable", "render_training cannot render the record's messages", None),
    Finding(
        "analysis-trained-unseen",
        "analysis of an earlier, finished turn is trained: hosts drop it from later prompts",
        _analysis_unseen,
    ),
    Finding(
        "return-untrained",
        "a <|return|> is not trained: the model does not learn to stop after its answer",
        _terminator_untrained("return", last_turn_only=False),
    ),
    Finding(
        "call-untrained",
        "a <|call|> of the last turn is not trained: the model does not learn to stop at a call",
        _terminator_untrained("call_token", last_turn_only=True),
    ),
    Finding(
        "tool-result-trained",
        "tokens of a tool result are trained: the model learns to write tool output",
        _authored_by((Role.TOOL,)),
    ),
    Finding(
        "prompt-trained",
        "system, developer or user tokens are trained",
        _authored_by((Role.SYSTEM, Role.DEVELOPER, Role.USER)),
    ),
    Finding(
        "generation-start-trained",
        "the <|start|>assistant a host writes before a generation is trained",
        _generation_start_trained,
    ),
    Finding("off-by-one", "the mask is the exact mask shifted by one token", _off_by_one),
    Finding("differs-from-exact", "the mask is not render_training's exact mask", _differs),
)

#: The codes of records that could not be audited (no segment counts).
UNAUDITABLE = frozenset({"undecodable", "mask-invalid", "not-comparable"})
