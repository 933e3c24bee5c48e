"""Lenient readings of what real engines deliver: stripped tokens, prose, missing headers.

Theory of operation
-------------------
The engine gives pending header text one more chance before it is lexed
(:func:`read_dialect`), knowing which terminal closed it: text whose control tokens were
stripped is read with the dialect grammar ``harmony_stripped.lark`` (:mod:`.stripped`,
HG160) and turned into terminals of ``harmony.lark``, fed to the same engine; prose written
where a header should end becomes content (HG161); text with no header at all stays the
content of a message of its own (HG163, HG164). Nothing is dropped on the way. When
``<|message|>`` arrives, :func:`repair_header` looks at the complete header once more
(HG154, HG165-HG169). Like :mod:`.recoveries`, every repair feeds the grammar's terminals
and reports its own warning code; strict mode never gets here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .draft import Draft
from .model import RecipientPosition, Role
from .recoveries import Repairable, report_call_like
from .stripped import read_free_header, read_stripped, stripped_evidence
from .tokens import ControlToken

__all__ = ["header_at_end", "read_dialect", "repair_header", "tool_in_channel_slot"]


_START = ControlToken.START.terminal
_MESSAGE = ControlToken.MESSAGE.terminal
_CHANNEL = ControlToken.CHANNEL.terminal
_END = ControlToken.END.terminal
_CALL = ControlToken.CALL.terminal
_SPELLING = {token.terminal: token.value for token in ControlToken}
#: Terminals that continue a header: text they close is header text, never a message.
_HEADER_CLOSERS = frozenset({_CHANNEL, _MESSAGE, ControlToken.CONSTRAIN.terminal})
#: The channel a message with no header most likely had, by the token that ended it: gpt-oss
#: ends reasoning with <|end|>; an answer with no header that simply stops is a final one.
_CHANNEL_BY_CLOSER = {_END: "analysis", ControlToken.RETURN.terminal: "final", "$END": "final"}
#: A content type glued onto the recipient by the model: ``to=functions.shelljson``.
_GLUED_JSON = re.compile(r"^(?P<recipient>.*[A-Za-z0-9])json$")
#: A tool's dotted name where the channel name belongs: ``<|channel|>functions.read``.
_DOTTED_NAME = re.compile(
    r"(?!(?:analysis|commentary|final)\.)[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z_][A-Za-z0-9_\-]*)+"
    r"(?![^\s<>|])"
)
_FUNCTIONS = "functions."


def _positions(engine: Repairable, start: int, end: int) -> Callable[[int], int]:
    """Input offset of an offset into pending text (token ids: the whole run's range)."""
    if engine.exact_positions:
        return lambda offset: start + offset
    return lambda offset: start


def read_dialect(engine: Repairable, text: str, start: int, end: int, closer: str) -> bool:
    """Lenient: read pending header text as what it really is, before it is lexed.

    ``closer`` is the terminal that ended the text (``$END`` at the end of input). True when
    the text was consumed: stripped control tokens (HG160), prose where a header should end
    (HG161), or text with no header (HG163, HG164).
    """
    if closer in _HEADER_CLOSERS and "assistant" not in text:
        return False  # the hot path: a header as written (only a glued author is re-read)
    return (
        _read_stripped(engine, text, start, end, closer)
        or _read_free_header(engine, text, start, end, closer)
        or _read_headerless(engine, text, start, end, closer)
    )


def _close_open_message(engine: Repairable, at: int) -> None:
    """End the message whose body is open with the terminator that was stripped."""
    draft = engine.draft
    if draft is None or draft.content is None:
        return
    terminal = _CALL if draft.is_tool_call else _END
    engine.feed(terminal, _SPELLING[terminal], at, at)


def _read_stripped(engine: Repairable, text: str, start: int, end: int, closer: str) -> bool:
    """HG160: headers whose control tokens were stripped, read with the dialect grammar."""
    at_start = engine.at_completion_start
    choices = engine.parser.choices()
    if not (at_start or "AUTHOR" in choices or _START in choices):
        return False
    # Before a surviving <|channel|>/<|message|> the text is a header: only a glued author
    # (<|start|>assistantcommentary to=…<|message|>) is read, and only as the whole header.
    open_header = closer in _HEADER_CLOSERS
    if open_header and at_start:
        return False
    if not stripped_evidence(text, at_start=at_start, closed=closer != "$END"):
        return False
    headers = read_stripped(text, at_start=at_start)
    if headers is None or (open_header and (len(headers) > 1 or text[headers[0].end :].strip())):
        return False
    at = _positions(engine, start, end)
    for index, header in enumerate(headers):
        here, there = at(header.start), at(header.end)
        _close_open_message(engine, here)
        if _START in engine.parser.choices():
            engine.feed(_START, "", here, here)
        if "AUTHOR" in engine.parser.choices():
            engine.feed("AUTHOR", Role.ASSISTANT.value, here, here)
        engine.feed(_CHANNEL, _SPELLING[_CHANNEL], here, here)
        engine.feed("CHANNEL_NAME", header.channel, here, there)
        shown = f"<|start|>assistant<|channel|>{header.channel}"
        if header.recipient:
            engine.feed("CHANNEL_RECIPIENT", f" to={header.recipient}", here, there)
            shown += f" to={header.recipient}"
        if header.content_type:
            engine.feed("SPACE", " ", here, here)
            engine.feed("CONTENT_TYPE", header.content_type, here, there)
            shown += f" {header.content_type}"
        engine.diagnose(
            "HG160",
            f"control tokens were stripped: {text[header.start : header.end]!r} read as"
            f" {shown + '<|message|>'!r}",
            here,
            there if engine.exact_positions else end,
        )
        if open_header:
            return True  # the real <|channel|>/<|message|> comes next
        engine.feed(_MESSAGE, _SPELLING[_MESSAGE], there, there)
        following = headers[index + 1].start if index + 1 < len(headers) else len(text)
        if following > header.end:
            engine.route_text(text[header.end : following], there, at(following))
    return True


def _read_free_header(engine: Repairable, text: str, start: int, end: int, closer: str) -> bool:
    """HG161: ``<|channel|>commentary... The user asks: …<|end|>``: prose in the header.

    The model wrote its reasoning where the header should have ended and never wrote
    ``<|message|>``. The channel word stands (``commentary`` with no recipient is read as
    ``analysis``: it is reasoning, not a preamble for the user); the prose is the content.
    """
    draft = engine.draft
    if closer in _HEADER_CLOSERS or draft is None or draft.content is not None:
        return False
    if "CHANNEL_NAME" not in engine.parser.choices() or engine.lexes_as_header(text):
        return False
    free = read_free_header(text)
    if free is None:
        return False
    channel = "analysis" if free.channel in ("analysis", "commentary") else free.channel
    at = _positions(engine, start, end)
    prose = at(free.prose_start)
    engine.feed("CHANNEL_NAME", channel, at(0), prose)
    engine.diagnose(
        "HG161",
        f"the header holds prose and no <|message|>: {text[: free.prose_start]!r} read as"
        f" channel {channel!r}, the rest as its content",
        at(0),
        prose if engine.exact_positions else end,
    )
    engine.feed(_MESSAGE, "", prose, prose)
    engine.route_text(text[free.prose_start :], prose, end)
    return True


def _read_headerless(engine: Repairable, text: str, start: int, end: int, closer: str) -> bool:
    """HG163/HG164: text with no header becomes the content of a message of its own.

    At a completion's start (HG163) that is text the server returned without its header
    (or an ordinary answer): one message, its content the whole text; its channel is
    ``analysis`` when ``<|end|>`` ended it, ``final`` for ``<|return|>``, else unknown.
    Between a completion's messages, before it stopped (HG164), it is a message of its
    own; after the stop or in a stored conversation it stays outside (HG152).
    """
    if closer in _HEADER_CLOSERS or not text.strip():
        return False
    at = _positions(engine, start, end)
    if engine.at_completion_start:
        if text.lstrip().startswith("to=") or engine.lexes_as_header(text):
            return False
        if closer == _START:  # "Sure.<|start|>assistant…": junk before the first header
            engine.diagnose(
                "HG171", f"text before the first header was dropped: {text[:80]!r}", at(0), end
            )
            report_call_like(engine, text, start, end)
            return True
        code = "HG163"
        what = "a completion with no header: its text was read as the content of one message"
    elif _START in engine.parser.choices() and engine.completion and not engine.stopped:
        engine.feed(_START, "", at(0), at(0))
        engine.feed("AUTHOR", engine.role.value, at(0), at(0))
        code = "HG164"
        what = "text between messages was kept as the content of a message of its own"
    else:
        return False
    draft = engine.draft
    if draft is None:
        return False
    draft.channel = _CHANNEL_BY_CLOSER.get(closer)
    if draft.channel:
        how = _SPELLING.get(closer, "the end of input")
        what += f" on channel {draft.channel!r} (it ended with {how})"
    engine.diagnose(code, what, at(0), end)
    engine.feed(_MESSAGE, "", at(0), at(0))
    engine.route_text(text, at(0), end)
    report_call_like(engine, text, start, end)
    return True


def header_at_end(engine: Repairable, end: int) -> None:
    """HG150 at the end of input: the header never reached ``<|message|>``; content empty."""
    if _MESSAGE in engine.parser.choices():
        engine.diagnose("HG150", "the input ended before <|message|>", end, end)
        engine.feed(_MESSAGE, "", end, end)


def tool_in_channel_slot(
    engine: Repairable, text: str, pos: int, start: int, end: int
) -> int | None:
    """HG166: ``<|channel|>functions.read``: a tool's name where the channel belongs.

    Read as ``<|channel|>commentary to=functions.read`` (calls go to commentary); returns
    where lexing resumes, or None when no dotted name stands at ``pos``.
    """
    match = _DOTTED_NAME.match(text, pos)
    if match is None:
        return None
    name = match.group()
    at = _positions(engine, start, end)
    here, there = at(pos), at(match.end()) if engine.exact_positions else end
    engine.feed("CHANNEL_NAME", "commentary", here, here)
    engine.feed("CHANNEL_RECIPIENT", f" to={name}", here, there)
    engine.diagnose(
        "HG166",
        f"the tool name {name!r} stood where the channel belongs: read as channel"
        f" 'commentary' to={name}",
        here,
        there,
    )
    return match.end()


# ------------------------------------------------------------------ header, complete
def repair_header(engine: Repairable, draft: Draft, at: int) -> None:
    """Lenient repairs of a complete header, when ``<|message|>`` arrives."""
    if draft.role is Role.TOOL and draft.recipient == Role.ASSISTANT.value:
        if draft.recipient_position is RecipientPosition.CHANNEL and draft.content_type:
            # HG168: <|start|>functions.f<|channel|>commentary to=assistant code<|message|>
            engine.diagnose(
                "HG168",
                f"a header shaped like {draft.name!r}'s reply but with a content type in the"
                f" channel section: read as the assistant's call to {draft.name!r}",
                draft.start,
                at,
            )
            draft.role, draft.recipient, draft.name = Role.ASSISTANT, draft.name, None
    elif draft.role is Role.ASSISTANT and draft.recipient == Role.ASSISTANT.value:
        engine.diagnose(
            "HG167",
            "a stray 'to=assistant' in the assistant's own header was dropped",
            draft.start,
            at,
        )
        draft.recipient = draft.recipient_position = None
    if draft.recipient and draft.content_type is None:
        _split_glued_content_type(engine, draft, at)
    recipient = draft.recipient
    bare = recipient and draft.role is not Role.TOOL and "." not in recipient
    if bare and recipient in engine.tool_names:
        engine.diagnose(
            "HG169",
            f"recipient {recipient!r} is a declared function: read as 'functions.{recipient}'",
            draft.start,
            at,
        )
        draft.recipient = recipient = _FUNCTIONS + str(recipient)
    if draft.is_tool_call and draft.channel is None and (recipient or "").startswith(_FUNCTIONS):
        engine.diagnose(
            "HG165",
            f"the call to {draft.recipient!r} had no channel: read on 'commentary'",
            draft.start,
            at,
        )
        draft.channel = "commentary"


def _split_glued_content_type(engine: Repairable, draft: Draft, at: int) -> None:
    """HG154: ``to=functions.fs_readjson``: a content type glued onto the recipient.

    With known tools the name is split after the longest declared name it starts with
    (``message_agentresponse`` → ``message_agent`` + ``response``); otherwise only a
    trailing ``json`` is split off.
    """
    recipient = draft.recipient or ""
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
        glued = _GLUED_JSON.match(recipient)
        if glued is None:
            return
        recipient, rest = glued["recipient"], "json"
    engine.diagnose(
        "HG154",
        f"recipient {draft.recipient!r} read as {recipient!r} with content type {rest!r}",
        draft.start,
        at,
    )
    draft.recipient, draft.content_type = recipient, rest
