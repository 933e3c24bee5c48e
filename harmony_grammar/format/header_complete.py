"""The ``HEADER_COMPLETE`` rows of :mod:`.repairs`: the whole header, once more, at ``<|message|>``.

When ``<|message|>`` arrives the header's fields are known together, and a few deviations
show only then: a content type not in lower case (HG155), a tool's reply header around a
call's content type (HG168), ``to=assistant`` in the assistant's own header (HG167), a
content type glued onto the recipient (HG154), a declared function named without
``functions.`` (HG169), a ``functions.*`` call with no channel (HG165). Each row rewrites
the draft's fields and reports its own code; none drops text (a field split in two keeps
both slices).
"""

from __future__ import annotations

import re

from .draft import Draft, supersede
from .engine_view import Repairable
from .model import RecipientPosition, Role
from .tokens import GLUED_CONTENT_TYPES

__all__ = [
    "repair_bare_function_name",
    "repair_call_shaped_as_reply",
    "repair_call_without_channel",
    "repair_content_type_case",
    "repair_glued_content_type",
    "repair_stray_to_assistant",
]

#: A content type glued onto the recipient by the model: ``to=functions.shelljson``,
#: ``to=functions.message_agentresponse`` (``<|constrain|>`` stripped between them).
_GLUED_TYPE = re.compile(
    rf"^(?P<recipient>.*[A-Za-z0-9])(?P<type>{'|'.join(GLUED_CONTENT_TYPES)})$"
)
_FUNCTIONS = "functions."


def repair_content_type_case(engine: Repairable, draft: Draft, at: int) -> None:
    """HG155: a content type not in lower case (``JSON``, ``<|constrain|>Json``).

    The field stays as written (a field is an exact slice of the input, issue 30); the
    warning says what it means, and readers compare content types without case.
    """
    written = draft.content_type
    if written is None or written == written.lower():
        return
    engine.diagnose(
        "HG155",
        f"content type {written!r} is not in lower case: {written.lower()!r}",
        draft.start,
        at,
    )


def repair_call_shaped_as_reply(engine: Repairable, draft: Draft, at: int) -> None:
    """HG168: ``<|start|>functions.f<|channel|>commentary to=assistant code<|message|>``.

    A real tool reply puts ``to=assistant`` in the role section and has no content type:
    this is the assistant's call to the tool, written in a reply's shape.
    """
    if draft.role is not Role.TOOL or draft.recipient != Role.ASSISTANT.value:
        return
    if draft.recipient_position is not RecipientPosition.CHANNEL or not draft.content_type:
        return
    engine.diagnose(
        "HG168",
        f"a header shaped like {draft.name!r}'s reply but with a content type in the"
        f" channel section: read as the assistant's call to {draft.name!r}",
        draft.start,
        at,
    )
    draft.role, draft.recipient, draft.name = Role.ASSISTANT, draft.name, None
    # The ledger follows the reading: the tool's name is the recipient's slice, and the
    # written ``assistant`` is the author's.
    swap = {"author": "recipient", "recipient": "author"}
    draft.fields = [(swap.get(name, name), a, b) for name, a, b in draft.fields]


def repair_stray_to_assistant(engine: Repairable, draft: Draft, at: int) -> None:
    """HG167: ``to=assistant`` in the assistant's own header is no recipient."""
    if draft.role is not Role.ASSISTANT or draft.recipient != Role.ASSISTANT.value:
        return
    engine.diagnose(
        "HG167",
        "a stray 'to=assistant' in the assistant's own header is no recipient (kept in"
        " Message.superseded)",
        draft.start,
        at,
    )
    draft.recipient = draft.recipient_position = None
    supersede(draft, "recipient", Role.ASSISTANT.value)


def repair_glued_content_type(engine: Repairable, draft: Draft, at: int) -> None:
    """HG154: ``to=functions.fs_readjson``: a content type glued onto the recipient.

    With known tools the name is split after the longest declared name it starts with
    (``message_agentresponse`` → ``message_agent`` + ``response``); otherwise a trailing
    word of :data:`.tokens.GLUED_CONTENT_TYPES` (``json``, ``response``) is split off.
    """
    if not draft.recipient or draft.content_type is not None:
        return
    recipient = draft.recipient
    names = engine.tool_names
    rest = ""
    if recipient.startswith(_FUNCTIONS) and names:
        name = recipient[len(_FUNCTIONS) :]
        if name in names:
            return
        prefixes = [n for n in names if name.startswith(n) and name[len(n) :].isalpha()]
        if prefixes:
            best = max(prefixes, key=len)
            recipient, rest = _FUNCTIONS + best, name[len(best) :].lower()
    if not rest:
        glued = _GLUED_TYPE.match(recipient)
        if glued is None:
            return
        recipient, rest = glued["recipient"], glued["type"]
    engine.diagnose(
        "HG154",
        f"recipient {draft.recipient!r} read as {recipient!r} with content type {rest!r}",
        draft.start,
        at,
    )
    draft.recipient, draft.content_type = recipient, rest
    _split_field(engine, draft, len(recipient))


def _split_field(engine: Repairable, draft: Draft, cut: int) -> None:
    """The recipient's slice, split after ``cut`` characters: recipient, content type."""
    for index in range(len(draft.fields) - 1, -1, -1):
        name, start, end = draft.fields[index]
        if name != "recipient":
            continue
        if start < 0 or not engine.exact_positions:  # token ids: both are the whole run
            draft.fields.append(("content_type", start, end))
            return
        draft.fields[index] = ("recipient", start, start + cut)
        draft.fields.append(("content_type", start + cut, end))
        return


def repair_bare_function_name(engine: Repairable, draft: Draft, at: int) -> None:
    """HG169: a declared function named without ``functions.`` gets it."""
    recipient = draft.recipient
    if not recipient or draft.role is Role.TOOL or "." in recipient:
        return
    if recipient not in engine.tool_names:
        return
    engine.diagnose(
        "HG169",
        f"recipient {recipient!r} is a declared function: read as 'functions.{recipient}'",
        draft.start,
        at,
    )
    draft.recipient = _FUNCTIONS + recipient


def repair_call_without_channel(engine: Repairable, draft: Draft, at: int) -> None:
    """HG165: a ``functions.*`` call with no channel is on ``commentary``."""
    if not draft.is_tool_call or draft.channel is not None:
        return
    if not (draft.recipient or "").startswith(_FUNCTIONS):
        return
    engine.diagnose(
        "HG165",
        f"the call to {draft.recipient!r} had no channel: read on 'commentary'",
        draft.start,
        at,
    )
    draft.channel = "commentary"
    draft.fields.append(("channel", -1, -1))  # a default: the input spells no channel
