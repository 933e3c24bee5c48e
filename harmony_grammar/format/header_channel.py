"""The header rows that read the channel in lenient mode: the most contested field.

The channel is written after ``<|channel|>`` (:func:`channel_token`, :func:`channel_name`),
written again before any content (:func:`channel_again`, HG157), glued to text
(:func:`glued_channel`, HG177), bare where ``<|channel|>`` was stripped
(:func:`stripped_channel`, HG160), or its slot holds a tool's dotted name
(:func:`tool_in_channel_slot`, HG166). Each row offers a :class:`.header_search.Move` at a
cost from the one table (:mod:`.costs`); the other fields' rows are :mod:`.headers`'.
"""

from __future__ import annotations

from .costs import COSTS
from .header_search import HeaderState, HeaderText, Move
from .header_words import (
    CHANNEL_NAME,
    DOTTED,
    EXACT_CHANNEL,
    GLUED_CHANNEL,
    NON_ASCII_WORD,
    control_at,
    glued_inside,
    word_end,
)
from .tokens import ControlToken

__all__ = [
    "channel_again",
    "channel_name",
    "channel_token",
    "glued_channel",
    "stripped_channel",
    "tool_in_channel_slot",
]


def channel_token(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """``<|channel|>`` in a header with no channel yet: the channel's name follows."""
    if control_at(header, pos) is not ControlToken.CHANNEL or state.expect:
        return None
    if state.channel is not None and not state.channel_default:
        return None
    end = header.controls[pos][1]
    if state.content_type is not None:
        return Move(
            "syntax",
            pos,
            end,
            COSTS["channel-after-type"],
            "HG179",
            "<|channel|> after the content type",
            expect="channel",
        )
    return Move("syntax", pos, end, expect="channel")


def channel_name(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """The channel's name after ``<|channel|>``: the grammar's CHANNEL_NAME, never a known
    word glued to text (the glued row reads the word); non-ASCII letters keep the word
    whole (HG173)."""
    if state.expect != "channel" or control_at(header, pos):
        return None
    match = CHANNEL_NAME.match(header.text, pos)
    if match is not None:
        end = word_end(header, pos, match.end())
        if glued_inside(GLUED_CHANNEL.match(header.text, pos), end):
            return None
        return Move("field", pos, end, fields=(("channel", header.text[pos:end], pos, end),))
    word = NON_ASCII_WORD.match(header.text, pos)
    if word is None or word.group().isascii() or GLUED_CHANNEL.match(header.text, pos):
        return None
    end = word_end(header, pos, word.end())
    return Move(
        "field",
        pos,
        end,
        COSTS["non-ascii-channel"],
        "HG173",
        f"channel name {header.text[pos:end]!r} has non-ASCII letters: kept whole",
        (("channel", header.text[pos:end], pos, end),),
    )


def channel_again(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """HG157: the header's channel written again before any content, the one move of a
    header written over: the same word again is the one field, written twice, with or
    without ``<|channel|>`` before it (``final!final!``, ``final<|channel|>final``, a
    looping model's repeats); after ``<|channel|>`` a different word is the message's
    channel and the earlier one is kept in :attr:`.model.Message.superseded` (the model
    wrote its header over: an empty message is never made up, a call is never broken)."""
    channel = state.channel
    if channel is None or state.channel_default:
        return None
    text = header.text
    if control_at(header, pos) is ControlToken.CHANNEL:
        end = header.controls[pos][1]
        word = CHANNEL_NAME.match(text, end)
        if word is None or word.group() != channel:  # a different word: written over
            what = f"'<|channel|>' wrote over the channel {channel!r} before any content"
            over = (("superseded", "channel", -1, -1),)
            cost = COSTS["channel-written-over"]
            return Move("field", pos, end, cost, "HG157", what, over, expect="channel")
        start, stop, cost = end, word.end(), COSTS["channel-token-again"]
    else:
        if state.expect or control_at(header, pos) or not text.startswith(channel, pos):
            return None
        start, stop, cost = pos, pos + len(channel), COSTS["channel-again"]
        glued = stop < len(text) and (text[stop].isalnum() or text[stop] in "_-")
        if glued and GLUED_CHANNEL.match(text, pos) is None:
            return None  # a longer word (``finalize``), not the channel again
    what = f"the channel {channel!r} written twice"
    return Move("field", pos, stop, cost, "HG157", what, (("channel", channel, start, stop),))


def glued_channel(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """HG177: a channel word glued to text (``analysisOK``): the word is the channel; with
    no ``<|channel|>`` before it, the token was stripped too."""
    if state.channel is not None or control_at(header, pos) or state.expect == "content_type":
        return None
    if state.author_open and not state.author:
        return None
    match = GLUED_CHANNEL.match(header.text, pos)
    if match is None:
        return None
    cost = COSTS["glued-channel" if state.expect == "channel" else "glued-channel-bare"]
    return Move(
        "field",
        pos,
        match.end(),
        cost,
        "HG177",
        f"the channel {match.group()!r} was glued to the text after it",
        (("channel", match.group(), pos, match.end()),),
    )


def stripped_channel(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """HG160: a channel word with no ``<|channel|>`` before it."""
    if state.channel is not None or state.expect or control_at(header, pos):
        return None
    if state.author_open and not state.author:
        return None
    match = EXACT_CHANNEL.match(header.text, pos)
    if match is None:
        return None
    glued = pos > 0 and header.text[pos - 1].isalpha()  # after ``assistant``: said there
    return Move(
        "field",
        pos,
        match.end(),
        COSTS["stripped-channel"],
        None if glued else "HG160",
        f"<|channel|> before {match.group()!r}",
        (("channel", match.group(), pos, match.end()),),
    )


def tool_in_channel_slot(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """HG166: a tool's dotted name where the channel belongs: channel ``commentary`` (a
    default) to that tool."""
    if state.expect != "channel" or state.recipient is not None:
        return None
    match = DOTTED.match(header.text, pos)
    if match is None:
        return None
    end = word_end(header, pos, match.end())
    name = header.text[pos:end]
    return Move(
        "field",
        pos,
        end,
        COSTS["tool-in-channel"],
        "HG166",
        f"the tool name {name!r} stood where the channel belongs: read as channel"
        f" 'commentary' to={name}",
        (("channel", "commentary", -1, -1), ("recipient", name, pos, end)),
    )
