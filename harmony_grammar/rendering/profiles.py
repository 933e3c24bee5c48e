"""Rendering profiles: whose rendering of a conversation, as data plus small functions.

The ecosystem renders the same gpt-oss conversation in several ways (harmony-format.md §9),
and a prompt off by one token costs accuracy. A :class:`Profile` names one of them and says,
in a few fields, how it differs from openai-harmony 0.0.8; the renderer
(:mod:`.renderer`) is one, and consults the profile at three points:

1. ``arrange(items, next_turn)`` (optional): the profile writes the history its own way
   before anything else (the HF template regroups messages and drops chain of thought by
   its own rule; OMP orders each generation as thinking, text, calls). It returns the items
   with their indexes in the conversation, and raises :class:`~.errors.RenderError` for
   what it cannot express.
2. ``header`` (optional): each resolved message's header respelled (oss-harmony moves
   commentary recipients into the channel section and adds ``<|constrain|>``).
3. ``joined_text``: the text between two control tokens is encoded as one run, as a
   tokenizer does with a template's output, instead of openai-harmony's separate pieces.

``fixed_options`` names the render options the profile decides itself; giving one raises
ValueError (:class:`~.options.RenderOptions`). The table of what each profile renders
differently is in docs/rendering.md.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..format.model import Message, RecipientPosition, Role
from ..format.tokens import ControlToken
from .conversation import ConversationItem
from .errors import RenderError
from .hf_template import arrange_for_hf_template

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "Arranged",
    "Profile",
    "get_profile",
    "harmony_recipient",
]

#: Items in the order a profile writes them, each with its index in the conversation.
Arranged = list[tuple[int, ConversationItem]]

_CONSTRAIN = ControlToken.CONSTRAIN.value
_HEADER_OPTIONS = frozenset({"recipient_position", "json_content_type"})
_ALL_OPTIONS = _HEADER_OPTIONS | {"auto_drop_analysis", "drop_rule"}


@dataclass(frozen=True)
class Profile:
    """One way of rendering Harmony (see the module docstring for how each field is used).

    ``reference`` says what the profile is token-exact with, or where its rules are written.
    """

    name: str
    reference: str
    joined_text: bool = False
    fixed_options: frozenset[str] = frozenset()
    #: Whether the options' drop rule (``auto_drop_analysis``, ``drop_rule``) applies; False
    #: when ``arrange`` drops by the profile's own rule.
    standard_drop: bool = True
    #: The profile's own drop rule (a :class:`~.options.DropRule` value), always applied;
    #: None: the options' rule.
    drop_rule: str | None = None
    arrange: Callable[[Sequence[ConversationItem], str | None], Arranged] | None = None
    header: Callable[[Message], Message] | None = None

    def __str__(self) -> str:
        return self.name


# -- oss-harmony 0.0.11 ------------------------------------------------------------------


def _oss_header(message: Message) -> Message:
    """oss-harmony 0.0.11, measured (harmony-format.md §9): on the commentary channel the
    recipient follows the channel, whatever the author; elsewhere it follows the author; every
    content type is written after ``<|constrain|>``."""
    content_type = message.content_type
    if content_type is not None and not content_type.startswith(_CONSTRAIN):
        content_type = _CONSTRAIN + content_type
    where = message.recipient_position
    if message.recipient is not None:
        in_channel = message.channel == "commentary"
        where = RecipientPosition.CHANNEL if in_channel else RecipientPosition.ROLE
    return dataclasses.replace(message, content_type=content_type, recipient_position=where)


# -- vLLM 0.34 (oss-harmony 0.0.11, then its own rewrite) ---------------------------------


def _vllm_header(message: Message) -> Message:
    """vLLM 0.34's ``_use_legacy_tool_call_headers`` over oss-harmony's header: an assistant
    call whose header oss-harmony writes as ``assistant<|channel|>commentary to=X
    <|constrain|>T`` is written back as ``assistant to=X<|channel|>commentary T`` (the
    recipient in the role section, the content type bare). Headers without a content type,
    tool results and named authors keep oss-harmony's form, as vLLM's token-level rewrite
    leaves them."""
    oss = _oss_header(message)
    if (
        oss.role is not Role.ASSISTANT
        or oss.name is not None
        or oss.recipient_position is not RecipientPosition.CHANNEL
        or not (oss.content_type or "").removeprefix(_CONSTRAIN)
    ):
        return oss
    return dataclasses.replace(
        oss,
        recipient_position=RecipientPosition.ROLE,
        content_type=(oss.content_type or "").removeprefix(_CONSTRAIN),
    )


def _is_preamble(item: ConversationItem) -> bool:
    return (
        isinstance(item, Message)
        and item.role is Role.ASSISTANT
        and item.channel == "commentary"
        and item.recipient is None
    )


def _is_call(item: ConversationItem) -> bool:
    return isinstance(item, Message) and item.role is Role.ASSISTANT and item.recipient is not None


def _is_analysis(item: ConversationItem) -> bool:
    return isinstance(item, Message) and item.role is Role.ASSISTANT and item.channel == "analysis"


def _vllm_arrange(items: Sequence[ConversationItem], next_turn: str | None) -> Arranged:
    """vLLM 0.34's ``parse_chat_input_to_harmony_message``: an assistant message with tool
    calls is written as its text (commentary), then its reasoning (analysis), then its calls;
    so where the history has analysis, a preamble and a call in a row, the preamble goes
    first."""
    out: Arranged = list(enumerate(items))
    for at in range(len(out) - 2):
        (_, first), (_, second), (_, third) = out[at : at + 3]
        if _is_analysis(first) and _is_preamble(second) and _is_call(third):
            out[at], out[at + 1] = out[at + 1], out[at]
    return out


# -- omp (oh-my-pi's in-band history, harmony-format.md §8) ------------------------------


def harmony_recipient(name: str) -> str:
    """OMP's ``harmonyRecipient``: ``functions.`` added unless the name already has it."""
    return name if name.startswith("functions.") else f"functions.{name}"


def _compact_json(index: int, text: str) -> str:
    try:
        value = json.loads(text)
    except ValueError:
        raise RenderError(
            f"omp: messages[{index}]: a call's arguments render as compact JSON, and "
            f"{text[:40]!r} is not JSON"
        ) from None
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _omp_message(index: int, message: Message) -> tuple[int, Message]:
    """(order within its generation, the message as OMP writes it)."""
    if message.role is Role.TOOL:  # renderToolResults: one envelope per result
        name = harmony_recipient(message.name or "")
        return 0, dataclasses.replace(
            message,
            name=name,
            recipient="assistant",
            recipient_position=RecipientPosition.ROLE,
            channel="commentary",
            content_type=None,
        )
    if message.role is not Role.ASSISTANT:
        return 0, message
    if message.name is not None:
        raise RenderError(f"omp: messages[{index}]: OMP writes no author names (assistant:name)")
    if message.recipient is not None and message.recipient != "all":  # renderToolCall
        return 2, dataclasses.replace(
            message,
            content=_compact_json(index, message.content),
            recipient=harmony_recipient(message.recipient),
            recipient_position=RecipientPosition.CHANNEL,
            channel="commentary",
            content_type=None,
            terminator=None,
        )
    if message.channel == "analysis":  # renderThinking
        return 0, dataclasses.replace(message, content_type=None)
    # Visible text, a commentary preamble included, renders as final (renderTranscript).
    return 1, dataclasses.replace(message, channel="final", content_type=None)


def _omp_arrange(items: Sequence[ConversationItem], next_turn: str | None) -> Arranged:
    """renderTranscript: messages in stream order; within one generation (consecutive
    assistant messages) the thinking first, then the visible text, then the calls."""
    out: Arranged = []
    run: list[tuple[int, int, Message]] = []

    def flush() -> None:
        run.sort(key=lambda entry: entry[0])  # stable: the order within a kind is kept
        out.extend((index, message) for _, index, message in run)
        run.clear()

    for index, item in enumerate(items):
        if isinstance(item, Message):
            order, message = _omp_message(index, item)
            if message.role is Role.ASSISTANT:
                run.append((order, index, message))
                continue
            flush()
            out.append((index, message))
        else:
            flush()
            out.append((index, item))
    flush()
    return out


# -- the table ---------------------------------------------------------------------------

#: The profiles by name, the default first.
PROFILES: dict[str, Profile] = {
    profile.name: profile
    for profile in (
        Profile("openai-harmony-0.0.8", "openai-harmony 0.0.8 (openai/harmony's last release)"),
        Profile(
            "oss-harmony-0.0.11",
            "oss-harmony 0.0.11, the fork vLLM 0.33 depends on",
            fixed_options=_HEADER_OPTIONS,
            header=_oss_header,
        ),
        Profile(
            "vllm-0.34",
            "vLLM 0.34's Chat Completions rendering (entrypoints/openai/parser/harmony_utils.py "
            "on oss-harmony 0.0.11: legacy call headers, text before reasoning, every-final "
            "dropping)",
            fixed_options=_ALL_OPTIONS,
            drop_rule="every-final",
            arrange=_vllm_arrange,
            header=_vllm_header,
        ),
        Profile(
            "hf-chat-template",
            "the model repo's chat template (trl/chat_templates/gptoss.jinja) through "
            "transformers' apply_chat_template",
            joined_text=True,
            fixed_options=_ALL_OPTIONS,
            standard_drop=False,
            arrange=arrange_for_hf_template,
        ),
        Profile(
            "omp",
            "oh-my-pi's in-band dialect (harmony-format.md §8: renderToolCall, "
            "renderToolResults, renderThinking, renderTranscript)",
            joined_text=True,
            fixed_options=_ALL_OPTIONS,
            standard_drop=False,
            arrange=_omp_arrange,
        ),
    )
}

#: The profile used when none is named.
DEFAULT_PROFILE = "openai-harmony-0.0.8"


def get_profile(profile: str | Profile) -> Profile:
    """The profile of that name (a :class:`Profile` is returned as it is)."""
    if isinstance(profile, Profile):
        return profile
    found = PROFILES.get(profile)
    if found is None:
        raise ValueError(f"unknown profile {profile!r}: use one of {', '.join(PROFILES)}")
    return found
