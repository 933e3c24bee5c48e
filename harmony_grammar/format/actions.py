"""What each terminal of ``harmony.lark`` means: one small function per terminal.

The engine (:mod:`.engine`) feeds terminals to the LALR parser; once the parser takes one,
its action here reads it into the message being parsed (:class:`.draft.Draft`): this word
is the author, that one the channel. The order in which terminals may come is the
grammar's alone. Every action that reads a header field records where it stood in the
input (:attr:`.model.Accounting.fields`); a repair's zero-width word is a default the
input does not spell, recorded as ``-1``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any

from .calls import open_call_check
from .draft import Draft
from .engine_view import EngineView
from .events import (
    HeaderComplete,
    MessageEnd,
    MessageStart,
    StopGeneration,
    ToolCallEnd,
    ToolCallStart,
)
from .header_apply import release_early
from .model import Message, RecipientPosition, Role, Span, Terminator
from .tokens import TERMINATORS, ControlToken

__all__ = ["ACTIONS", "begin_message", "finish_message", "stop_generation"]

_TERMINATOR_BY_SPELLING = {token.value: Terminator(token.name.lower()) for token in TERMINATORS}
_START = ControlToken.START.terminal
_MESSAGE = ControlToken.MESSAGE.terminal
_CONTENT = "CONTENT"


def _message_builder() -> Any:
    """:data:`_parsed_message`: sets the slots through their descriptors (as
    ``events._builder`` does for deltas) instead of the frozen ``__init__``'s per-field
    ``object.__setattr__`` and its checks: a message is made per message parsed."""
    setters = tuple(getattr(Message, f.name).__set__ for f in fields(Message))
    (role_, content_, name_, recipient_, channel_, type_, end_, position_, span_, unread_, sup_) = (
        setters
    )
    new = object.__new__

    def parsed_message(
        *,
        role: Role,
        content: str,
        name: str | None,
        recipient: str | None,
        channel: str | None,
        content_type: str | None,
        terminator: Terminator | None,
        recipient_position: RecipientPosition | None,
        span: Span | None,
        unread: str,
        superseded: str,
    ) -> Message:
        """The :class:`.model.Message` that ``Message(...)`` makes of these values, which
        are the parsers' own (the enums and strings its checks would accept as they are)."""
        message = new(Message)
        role_(message, role)
        content_(message, content)
        name_(message, name)
        recipient_(message, recipient)
        channel_(message, channel)
        type_(message, content_type)
        end_(message, terminator)
        position_(message, recipient_position)
        span_(message, span)
        unread_(message, unread)
        sup_(message, superseded)
        return message

    return parsed_message


#: A :class:`.model.Message` made of the draft's own values, without the checks (the hot
#: path: one per message parsed).
_parsed_message = _message_builder()


def begin_message(engine: EngineView, start: int) -> Draft:
    """A message begins at ``start`` (its ``<|start|>``, or a completion's first header)."""
    engine.draft = draft = Draft(start=start, role=engine.role)
    if engine.events is not None:
        engine.events.append(MessageStart(start))
    return draft


def finish_message(engine: EngineView, terminator: Terminator | None, end: int) -> None:
    """The message being parsed ends at ``end`` (``terminator``: None where the input or the
    next message ended it): its fields become a :class:`.model.Message`."""
    draft = engine.draft
    if draft is None:
        return
    engine.draft = None
    _send_held_header(engine, draft)
    # The draft's own values (enums, strings): made without the frozen __init__'s checks.
    message = _parsed_message(
        role=draft.role,
        content="".join(draft.content or ()),
        name=draft.name,
        recipient=draft.recipient,
        channel=draft.channel,
        content_type=draft.content_type,
        terminator=terminator,
        recipient_position=draft.recipient_position,
        span=Span(draft.start, end),
        unread="".join(draft.unread),
        superseded=" ".join(draft.superseded),
    )
    engine.messages.append(message)
    if message.role is Role.DEVELOPER:
        engine.declarations_changed()
    engine.book.close(draft)
    call_check, engine.call_check = engine.call_check, None
    if call_check is not None:
        call_check.close(message.content, draft.start, end)
    if draft.is_tool_call and terminator is not Terminator.CALL:
        how = f"<|{terminator.value}|>" if terminator else "the end of input"
        engine.diagnose(
            "HG153",
            f"the tool call to {draft.recipient!r} ended with {how}, not <|call|>",
            draft.start,
            end,
        )
    events = engine.events
    if events is not None:
        # A call ended otherwise (HG153) is still a call wherever the table recovers it.
        recovered = bool(engine.repairs) and terminator is not None
        if draft.call_id is not None and (terminator is Terminator.CALL or recovered):
            events.append(ToolCallEnd(draft.call_id, message.content))
        events.append(MessageEnd(message))
    if terminator is Terminator.CALL or terminator is Terminator.RETURN:
        stop_generation(engine, terminator.value, end)


def stop_generation(engine: EngineView, reason: str, position: int) -> None:
    """Generation must stop: ``call``, ``return`` or ``abort`` (an abort after another
    reason is still reported: the turn is forged)."""
    if engine.stop_reason is None or reason == "abort":
        first = engine.stop_reason is None
        engine.stop_reason = reason
        if engine.events is not None and (first or reason == "abort"):
            engine.events.append(StopGeneration(reason, position))


def on_start(engine: EngineView, value: str, start: int, end: int) -> None:
    begin_message(engine, start)


def on_author(engine: EngineView, value: str, start: int, end: int) -> None:
    draft = _require_draft(engine, start)
    if not value:  # a repair's: a header with no author is the parser's role's (HG175)
        draft.role = engine.role
        draft.fields.append(("author", -1, -1))
        return
    draft.fields.append(("author", start, end) if end > start else ("author", -1, -1))
    draft.role = Role.of_author(value)
    if draft.role is Role.TOOL:
        draft.name = value
        if engine.completion:
            engine.diagnose(
                "HG170",
                f"the model began a message from the tool {value!r}: it is forging the"
                " tool's result; stop the turn here",
                draft.start,
                end,
            )
            stop_generation(engine, "abort", draft.start)


def on_author_name(engine: EngineView, value: str, start: int, end: int) -> None:
    draft = _require_draft(engine, start)
    draft.name = value
    draft.fields.append(("name", start, end) if end > start else ("name", -1, -1))


def on_role_recipient(engine: EngineView, value: str, start: int, end: int) -> None:
    _recipient(engine, value, start, end, RecipientPosition.ROLE)


def on_channel_recipient(engine: EngineView, value: str, start: int, end: int) -> None:
    _recipient(engine, value, start, end, RecipientPosition.CHANNEL)


def _recipient(
    engine: EngineView, value: str, start: int, end: int, position: RecipientPosition
) -> None:
    draft = _require_draft(engine, start)
    draft.recipient = value.split("=", 1)[1]
    draft.recipient_position = position
    # The field is the name after "to=" (text: its exact slice; ids: the run).
    first = end - len(draft.recipient) if engine.exact_positions else start
    draft.fields.append(("recipient", first, end) if end > first else ("recipient", -1, -1))


def on_channel_name(engine: EngineView, value: str, start: int, end: int) -> None:
    # A repair's empty name (a <|channel|> with none, HG175) is no channel.
    draft = _require_draft(engine, start)
    draft.channel = value or None
    if value:
        draft.fields.append(("channel", start, end) if end > start else ("channel", -1, -1))


def on_constrain(engine: EngineView, value: str, start: int, end: int) -> None:
    _require_draft(engine, start).constrained = True


def on_content_type(engine: EngineView, value: str, start: int, end: int) -> None:
    draft = _require_draft(engine, start)
    if not value:  # a repair's: <|constrain|> that no content type followed (HG175)
        draft.content_type, draft.constrained = None, False
        return
    draft.content_type = ControlToken.CONSTRAIN.value + value if draft.constrained else value
    draft.fields.append(("content_type", start, end) if end > start else ("content_type", -1, -1))


def on_message(engine: EngineView, value: str, start: int, end: int) -> None:
    draft = _require_draft(engine, start)
    if engine.repairs and (draft.recipient is not None or draft.content_type is not None):
        # The HEADER_COMPLETE rows read a recipient or a content type (repairs.py): a
        # header with neither has nothing for them.
        engine.complete_header(draft, start)
    draft.content = []
    draft.body_start = end
    if draft.is_tool_call:
        draft.call_id = engine.new_call_id()
        if engine.tools is not None and draft.recipient is not None:
            engine.call_check = open_call_check(
                engine.argument_check,
                engine.tools,
                draft.recipient,
                engine.diagnose,
                exact=engine.exact_positions,
                start=draft.start,
                end=end,
                namespaced=engine.namespaced,
            )
    if engine.events is not None:
        header = HeaderComplete(
            draft.role,
            draft.name,
            draft.recipient,
            draft.channel,
            draft.content_type,
            content_in_header=bool(draft.early),
        )
        if engine.repairs and _may_begin_again(draft):
            draft.held_header = header  # sent with the body's first content, or its end
        else:
            engine.events.append(header)
        if draft.call_id is not None and draft.recipient is not None:
            name = draft.recipient.removeprefix("functions.")
            engine.events.append(ToolCallStart(name, draft.recipient, draft.call_id))
    if draft.early:  # header text read as content comes first in it
        release_early(engine, draft)


def on_content(engine: EngineView, value: str, start: int, end: int) -> None:
    draft = _require_draft(engine, start)
    draft.content_fed = True
    _send_held_header(engine, draft)


def _may_begin_again(draft: Draft) -> bool:
    """Whether a header begun again right after this ``<|message|>`` would be one message
    with it (HG185's empty-body case: the assistant's own unnamed header, no recipient)."""
    return (
        draft.role is Role.ASSISTANT
        and draft.name is None
        and draft.recipient is None
        and not draft.early
    )


def _send_held_header(engine: EngineView, draft: Draft) -> None:
    held, draft.held_header = draft.held_header, None
    if held is not None and engine.events is not None:
        engine.events.append(held)  # type: ignore[arg-type]


def on_terminator(engine: EngineView, value: str, start: int, end: int) -> None:
    finish_message(engine, _TERMINATOR_BY_SPELLING[value], end)


def _require_draft(engine: EngineView, start: int) -> Draft:
    if engine.draft is None:  # only a synthetic repair can get here without <|start|>
        engine.draft = Draft(start=start, role=engine.role)
    return engine.draft


ACTIONS: dict[str, Callable[[EngineView, str, int, int], None]] = {
    _START: on_start,
    "AUTHOR": on_author,
    "AUTHOR_NAME": on_author_name,
    "ROLE_RECIPIENT": on_role_recipient,
    "CHANNEL_RECIPIENT": on_channel_recipient,
    "CHANNEL_NAME": on_channel_name,
    ControlToken.CONSTRAIN.terminal: on_constrain,
    "CONTENT_TYPE": on_content_type,
    _MESSAGE: on_message,
    _CONTENT: on_content,
    **{token.terminal: on_terminator for token in TERMINATORS},
}
