"""One conversation rendered by several profiles, compared token by token.

:func:`diff_renderings` renders the conversation with each profile (as o200k_harmony ids) and
compares every rendering with the first, by :class:`difflib.SequenceMatcher` over the ids:
each stretch where they differ is a :class:`Difference`, with the ids on both sides. A
profile that cannot express the conversation has ``error`` set (its RenderError) and counts
as one difference. ``harmony-grammar diff-render`` prints the result.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .conversation import Conversation
from .errors import RenderError
from .options import RenderOptions
from .profiles import Profile, get_profile
from .renderer import render

if TYPE_CHECKING:
    import tiktoken

__all__ = ["Difference", "RenderDiff", "Rendering", "diff_renderings"]


@dataclass(frozen=True)
class Rendering:
    """One profile's rendering: its ids, or why it has none."""

    profile: str
    tokens: tuple[int, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class Difference:
    """Where two renderings differ: ``a[a_start:a_end]`` stands where ``b[b_start:b_end]``
    does (one side may be empty: an insertion or a deletion)."""

    a_start: int
    a_end: int
    b_start: int
    b_end: int


@dataclass(frozen=True)
class Comparison:
    """The first rendering against another one."""

    a: str
    b: str
    differences: tuple[Difference, ...]
    #: Set when either side could not be rendered: the two cannot be aligned.
    unrendered: bool = False

    @property
    def count(self) -> int:
        """How many differences (an unrendered side counts as one)."""
        return 1 if self.unrendered else len(self.differences)


@dataclass(frozen=True)
class RenderDiff:
    """Every rendering and every comparison with the first."""

    renderings: tuple[Rendering, ...]
    comparisons: tuple[Comparison, ...]

    @property
    def count(self) -> int:
        """The total number of differences."""
        return sum(c.count for c in self.comparisons)

    @property
    def summary(self) -> str:
        """``same`` or ``N differences``."""
        n = self.count
        return "same" if n == 0 else f"{n} difference{'s' if n != 1 else ''}"


def _render(
    conversation: Conversation,
    profile: Profile,
    options: RenderOptions,
    encoding: tiktoken.Encoding,
) -> Rendering:
    try:
        chosen = dataclasses.replace(options, profile=profile)
        ids = render(conversation, chosen, tokens=True, encoding=encoding)
    except RenderError as exc:
        return Rendering(profile.name, error=str(exc))
    return Rendering(profile.name, tuple(ids))


def _compare(a: Rendering, b: Rendering) -> Comparison:
    if a.error is not None or b.error is not None:
        return Comparison(a.profile, b.profile, (), unrendered=True)
    matcher = difflib.SequenceMatcher(None, a.tokens, b.tokens, autojunk=False)
    differences = tuple(
        Difference(i1, i2, j1, j2)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    )
    return Comparison(a.profile, b.profile, differences)


def diff_renderings(
    conversation: Conversation,
    profiles: Sequence[str | Profile],
    options: RenderOptions | None = None,
    *,
    encoding: tiktoken.Encoding | None = None,
) -> RenderDiff:
    """Render ``conversation`` with each of ``profiles`` (at least two) and compare each
    rendering with the first. ``options`` are the other render options (their ``profile``
    is replaced); ValueError for an unknown profile or fewer than two."""
    chosen = [get_profile(p) for p in profiles]
    if len(chosen) < 2:
        raise ValueError("name at least two profiles to compare")
    if encoding is None:
        from ..format.vocabulary import load_encoding

        encoding = load_encoding()
    base = options or RenderOptions()
    renderings = tuple(_render(conversation, p, base, encoding) for p in chosen)
    comparisons = tuple(_compare(renderings[0], other) for other in renderings[1:])
    return RenderDiff(renderings, comparisons)
