"""The header rows for what no field reads: stray punctuation, debris, content.

Beside the rows that read fields (:mod:`.headers`), each offering a
:class:`.header_search.Move` at a cost from the one table (:mod:`.costs`):

* ``unread``: text with no letter, read as no field (HG156): stray punctuation, or a
  number with closing punctuation right after the channel word of a header that lost
  ``<|message|>`` (``commentary 2? The…``);
* debris: a control token no field can take (HG175);
* content: text with a letter or a digit that no field reads (HG161, HG178), or a message
  of its own (prose before a completion's first header, HG171).

Content costs a base plus one per visible character it reads, so the cheapest reading is
the one whose fields read the most: a header that never reached ``<|message|>`` is the
longest run of fields, and its content starts at the first character no field reads.
"""

from __future__ import annotations

import re

from .costs import COSTS
from .header_search import HeaderState, HeaderText, Move
from .header_words import (
    HARMONY_WORD,
    HARMONY_WORD_END,
    WORD_END_PUNCTUATION,
)
from .tokens import ControlToken

__all__ = ["content", "debris", "unread"]

#: A number with closing punctuation glued on (``2?``, ``7)``, ``3.``) and a space after it:
#: right after the channel word of a header that lost ``<|message|>`` it is a degraded
#: model's junk or a list marker, never a field, and the prose starts after it.
_NUMBER_JUNK = re.compile(r"[0-9]{1,3}[?!.,;:)\]]+(?=\s)")


def unread(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """HG156: stray characters with no letter and no digit, read as no field (only where
    the header goes on: a header that never reached ``<|message|>`` ends at its first
    character that is no field); in such a header, also a number with closing punctuation
    right after the channel word (``commentary 7) We should…``)."""
    text = header.text
    if text[pos : pos + 1].isdigit():
        end = _number_junk(header, pos, state)
        if end == pos:
            return None
        what = f"stray characters {text[pos:end]!r} after the channel word"
        return Move("unread", pos, end, COSTS["unread-number"], "HG156", what)
    end = pos
    while end < len(text) and end not in header.controls:
        char = text[end]
        if char.isspace() or char.isalnum():
            break
        end += 1
    glued = end < len(text) and end not in header.controls and text[end].isalnum()
    if end == pos:
        return None
    # Right after a Harmony word of this header (``analysis??``, ``final!final!``): stray
    # punctuation glued to the word, wherever the header goes on or stops.
    after_word = (
        state.read_any
        and text[pos] in WORD_END_PUNCTUATION
        and HARMONY_WORD_END.search(text, 0, pos) is not None
    )
    if after_word:
        end = pos
        while end < len(text) and text[end] in WORD_END_PUNCTUATION:
            end += 1
        glued = end < len(text) and end not in header.controls and text[end].isalnum()
    if glued and not HARMONY_WORD.match(text, end) and not after_word:
        return None  # punctuation glued to a word is part of that text (content)
    if pos and pos - 1 not in header.controls and text[pos - 1].isalnum() and not state.read_any:
        return None
    if not after_word and not header.closed and header.control_after(end) >= len(text):
        return None
    cost = COSTS["unread-after-word" if after_word else "unread"]
    return Move("unread", pos, end, cost, "HG156", f"stray characters {text[pos:end]!r}")


def _number_junk(header: HeaderText, pos: int, state: HeaderState) -> int:
    """Where ``<|channel|>commentary 2? The request…``'s junk ends: a number and its
    punctuation right after the channel word (spaces apart at most) of a header that lost
    ``<|message|>``; ``pos`` when there is none (elsewhere a number is text)."""
    if header.closed or state.channel is None or state.channel_default:
        return pos
    junk = _NUMBER_JUNK.match(header.text, pos)
    # after the channel word and any punctuation glued to it (``analysis?? 2) The…``)
    before = header.text[:pos].rstrip().rstrip("".join(WORD_END_PUNCTUATION)).rstrip()
    if junk is None or not before.endswith(state.channel):
        return pos
    return junk.end()


def debris(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """HG175: a control token no field of this header can take."""
    found = header.controls.get(pos)
    if found is None:
        return None
    return Move(
        "debris", pos, found[1], COSTS["debris"], "HG175", f"a stray {found[0].value} was discarded"
    )


def content(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """HG178/HG160/HG158: text with a letter or a digit that no field reads (in a header
    that lost ``<|message|>``, HG161, reported by :func:`.header_apply.apply_reading`).

    Before a completion's first header (nothing read, a ``<|channel|>`` after it) it is a
    message of its own. Where a control token follows that the header can still use, it
    is content up to that token and the reading goes on; else the content starts here.
    """
    if pos in header.controls:
        return None
    text = header.text
    following = header.control_after(pos)
    if state.completion_start and not state.read_any and min(header.controls, default=pos) >= pos:
        channel = header.control_after(pos, ControlToken.CHANNEL)
        if channel < len(text):
            cost = _content_cost(text, pos, following)  # as content costs
            # A message of its own: readings.own_message reports it (HG171).
            return Move("prose", pos, following, cost, None, "text before the first header")
    if following < len(text) and _usable(header, following, state):
        stop = len(text[pos:following].rstrip()) + pos
        code = "HG158" if state.recipient and text.startswith("to=", pos) else "HG178"
        end = max(stop, pos + 1)
        cost = _content_cost(text, pos, end)
        return Move("content", pos, end, cost, code, "header text read as content")
    # No code for content where a header lost <|message|>: where it began is known only
    # once the reading is whole, and header_apply reports it there (HG161).
    last: str | None = None if not header.closed else "HG178"
    if state.recipient is not None and text[pos] in "{[":
        last = "HG160"
    elif state.recipient is not None and text.startswith("to=", pos):
        last = "HG158"  # a second recipient
    cost = _content_cost(text, pos, len(text))
    return Move("content", pos, len(text), cost, last, "header text read as content", stop=True)


def _content_cost(text: str, start: int, end: int) -> int:
    """What reading ``text[start:end]`` as content costs: a base plus a price per visible
    character, so the least-cost reading is the one whose fields read the most (a header is
    the longest run of fields; its content starts at the first character no field reads)."""
    return COSTS["content"] + COSTS["content-per-char"] * _visible(text, start, end)


def _visible(text: str, start: int, end: int) -> int:
    return sum(not c.isspace() for c in text[start:end])


def _usable(header: HeaderText, offset: int, state: HeaderState) -> bool:
    """Whether a field of this header can still take the control token at ``offset``."""
    token = header.controls[offset][0]
    if token is ControlToken.CHANNEL:
        return state.channel is None
    return token is ControlToken.CONSTRAIN and state.content_type is None
