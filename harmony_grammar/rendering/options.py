"""The render options: one frozen object behind :func:`~.renderer.render`'s keywords.

Every entry point that renders (``render``, ``rendered_messages``, the CLI, the conformance
adapters, ``diff-render``) builds one :class:`RenderOptions` and passes it down; a new option
is a field here and nowhere else. The keywords of ``render(...)`` are exactly the fields
(:class:`RenderKeywords`), so ``render(c, next_turn="assistant")`` and
``render(c, RenderOptions(next_turn="assistant"))`` are the same call, and keywords given
beside an options object replace its fields (:meth:`~harmony_grammar.base.options.Options.of`,
the library's one options idiom).

``auto_drop_analysis``, ``drop_rule``, ``recipient_position`` and ``json_content_type``
default to None, "the profile's choice": a profile that fixes one of them (the HF template
has its own dropping, oss-harmony its own header spelling) refuses an explicit value instead
of silently ignoring it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypedDict, cast

from ..base.enums import StrEnum
from ..base.options import Options
from ..format.model import RecipientPosition, Role
from .profiles import DEFAULT_PROFILE, Profile, get_profile

__all__ = ["DropRule", "JsonContentType", "RenderKeywords", "RenderOptions"]

JsonContentType = Literal["constrain", "bare"]


class DropRule(StrEnum):
    """Which analysis (chain-of-thought) messages ``auto_drop_analysis`` removes.

    ``harmony`` is openai-harmony's rule, quirk included: only when the last assistant message
    is on ``final``, and only analysis before the FIRST final message. ``every-final`` is vLLM's:
    all analysis before the LAST assistant final, whatever comes after it, so earlier turns
    lose their chain of thought while the current tool loop keeps it.
    """

    HARMONY = "harmony"
    EVERY_FINAL = "every-final"


class RenderKeywords(TypedDict, total=False):
    """The keyword arguments of ``render`` that are options (the fields of RenderOptions)."""

    profile: str | Profile
    next_turn: str | Role | None
    training: bool
    auto_drop_analysis: bool | None
    drop_rule: DropRule | str | None
    recipient_position: RecipientPosition | str | None
    json_content_type: JsonContentType | None
    trusted_text: bool


@dataclass(frozen=True, kw_only=True)
class RenderOptions(Options):
    """How a conversation is rendered. Strings are accepted and normalised on creation.

    - ``profile``: whose rendering (:mod:`.profiles`; default ``openai-harmony-0.0.8``);
    - ``next_turn``: append ``<|start|>{next_turn}`` (a prompt for that author);
    - ``training``: end a last assistant ``final`` message with ``<|return|>``; not with
      ``next_turn``;
    - ``auto_drop_analysis`` / ``drop_rule``: drop earlier chain of thought, and by which rule
      (None: the profile's, which for openai-harmony is ``True`` / ``harmony``);
    - ``recipient_position`` / ``json_content_type``: respell headers (openai-harmony
      profile only; see :func:`~.renderer.render`);
    - ``trusted_text``: control-token spellings in text become special ids.

    Raises ValueError for an unknown value or a combination that cannot be rendered.
    """

    profile: Profile | str = DEFAULT_PROFILE
    next_turn: str | Role | None = None
    training: bool = False
    auto_drop_analysis: bool | None = None
    drop_rule: DropRule | str | None = None
    recipient_position: RecipientPosition | str | None = None
    json_content_type: JsonContentType | None = None
    trusted_text: bool = False

    def __post_init__(self) -> None:
        # Normalise in place (the object is frozen to everyone else): one spelling per value.
        normal = object.__setattr__
        normal(self, "profile", get_profile(self.profile))
        if isinstance(self.next_turn, Role):
            normal(self, "next_turn", self.next_turn.value)
        if self.drop_rule is not None:
            normal(self, "drop_rule", DropRule(self.drop_rule))
        if self.recipient_position is not None:
            normal(self, "recipient_position", RecipientPosition(self.recipient_position))
        if self.json_content_type not in (None, "constrain", "bare"):
            raise ValueError(
                f"json_content_type must be 'constrain' or 'bare', not {self.json_content_type!r}"
            )
        if self.training and self.next_turn is not None:
            raise ValueError(
                "training=True renders a finished conversation; next_turn must be None"
            )
        for name in self.spec.fixed_options:
            if getattr(self, name) is not None:
                raise ValueError(
                    f"{name} is decided by the profile {self.spec.name}; leave it unset"
                )

    @property
    def spec(self) -> Profile:
        """The profile as an object (``profile`` may have been given by name)."""
        return cast(Profile, self.profile)

    @property
    def drops_analysis(self) -> bool:
        """Whether earlier chain of thought is dropped (the profile's default when unset)."""
        return True if self.auto_drop_analysis is None else self.auto_drop_analysis

    @property
    def rule(self) -> DropRule:
        """The drop rule in force (openai-harmony's when unset)."""
        return cast(DropRule, self.drop_rule or DropRule.HARMONY)

    @property
    def turn(self) -> str | None:
        """``next_turn`` as the author's text (a Role is given by its value)."""
        return None if self.next_turn is None else str(self.next_turn)

    @property
    def position(self) -> RecipientPosition | None:
        """``recipient_position`` as the enum."""
        return cast("RecipientPosition | None", self.recipient_position)
