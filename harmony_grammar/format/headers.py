"""The rows that read a whole header in lenient mode: every piece of it goes to one place.

Theory of operation
-------------------
In lenient mode the engine buffers a header until it ends (``<|message|>``, a terminator,
the next ``<|start|>`` or the end of input), control tokens included, and reads it whole
when the grammar alone cannot. The header is one string (text pieces and control-token
spellings, :class:`.header_search.HeaderText`). At each position every row here, the repair
table's ``HEADER`` hook (:mod:`.repairs`), may offer a :class:`.header_search.Move` at a
cost, and the least-cost reading of the whole header wins (:func:`.header_search.read_header`,
a uniform-cost search; ties go to the earlier rows): the cost table *is* the repair table
(strict mode is the empty table and never gets here). Content costs a base plus one per
visible character it reads, so the cheapest reading is the one whose fields read the most.

A move puts the text it reads in exactly one place:

* a field whose value is an exact slice of the input (author, name, recipient, channel,
  content type), or two slices of one field when the header repeats it. An author is a role
  or a tool's name (JSON and punctuation are none); ``:NAME`` names a role, right after it;
* whitespace and the syntax between fields (``to=``, ``:``, a control token a field takes);
* ``unread``: text with no letter, read as no field (HG156): stray punctuation, or a
  number with closing punctuation right after the channel word of a header that lost
  ``<|message|>`` (``commentary 2? The…``);
* debris: a control token no field can take (HG175);
* content: text with a letter or a digit that no field reads (HG161, HG178);
* a message of its own (prose before a completion's first header, HG171), or the end of this
  header (a second, different channel begins the next message, HG157).

A header that never reached ``<|message|>`` is the longest run of fields: its content
starts at the first character no field reads, and runs to the end (HG161).
"""

from __future__ import annotations

import re

from .costs import COSTS
from .header_search import ROLES, HeaderState, HeaderText, Move
from .tokens import BARE_CONTENT_TYPES, CHANNEL_WORD, ControlToken

__all__ = [
    "AUTHOR",
    "GLUED_CHANNEL",
    "GLUED_ROLE",
    "RECIPIENT",
    "WORD_END_PUNCTUATION",
]

_ROLES = "|".join(sorted(ROLES))
#: A role glued to text that is no part of a name: ``assistantThe``, ``userfinal``.
GLUED_ROLE = re.compile(rf"(?:{_ROLES})(?=[^a-z0-9_\-:=\s<>|]|{CHANNEL_WORD})")
#: A channel word glued to text that is no part of a name: ``analysisOK``, ``commentary?``.
GLUED_CHANNEL = re.compile(rf"{CHANNEL_WORD}(?=[^a-z0-9_\-\s<>|])")
_EXACT_CHANNEL = re.compile(rf"{CHANNEL_WORD}(?![\w\-])")
#: An author in lenient reading: a role or a tool's name (``functions.f``, ``browser.search``,
#: ``python``), never JSON or prose the grammar's wider AUTHOR would take (``{"q"``).
AUTHOR = re.compile(r"\w[\w.\-/@]*")
_NAME = re.compile(r"[^\s<>|=]+")
#: A recipient's name: a tool's name (``functions.f``, ``browser.search``, ``container.exec``);
#: it stops where a call's arguments or stray punctuation begin (``to=functions.f{"a":1}``).
RECIPIENT = re.compile(r"to=([\w.\-:/@]+)")
#: The grammar's CHANNEL_NAME, never the first word of a dotted tool name.
_CHANNEL_NAME = re.compile(r"[A-Za-z0-9_\-]+(?![\w\-]|\.\w)")
_NON_ASCII_WORD = re.compile(r"[\w\-]+")
_DOTTED = re.compile(
    rf"(?!{CHANNEL_WORD}\.)[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z_][A-Za-z0-9_\-]*)+(?![^\s<>|])"
)
_CONTENT_TYPE = re.compile(r"(?![A-Za-z0-9_.+/\-]*=)[A-Za-z0-9_.+/\-]+")
_SPACE = re.compile(r"\s+")
#: A word of Harmony's own (a role, a channel, ``to=``): punctuation glued before it is
#: stray (``––commentary``), not the start of prose.
_HARMONY_WORD = re.compile(rf"(?:{_ROLES}|{CHANNEL_WORD}|to=)")
_FIELDS = ("author", "name", "recipient", "channel", "content_type")
#: Punctuation that ends a word: glued to a Harmony word of a header that lost
#: ``<|message|>`` (``analysis??``, ``final!final!``, ``commentary...``) it is unread.
WORD_END_PUNCTUATION = frozenset("?!.,;:")
#: A number with closing punctuation glued on (``2?``, ``7)``, ``3.``) and a space after it:
#: right after the channel word of a header that lost ``<|message|>`` it is a degraded
#: model's junk or a list marker, never a field, and the prose starts after it.
_NUMBER_JUNK = re.compile(r"[0-9]{1,3}[?!.,;:)\]]+(?=\s)")
#: A channel word or a role that ends right where the text searched ends.
_HARMONY_WORD_END = re.compile(rf"(?<![A-Za-z])(?:{_ROLES}|{CHANNEL_WORD})$")


# ------------------------------------------------------------------ the rows
def _control(header: HeaderText, pos: int) -> ControlToken | None:
    found = header.controls.get(pos)
    return found[0] if found else None


def _word_end(header: HeaderText, pos: int, match_end: int) -> int:
    """``match_end``, cut at the next control token."""
    return min(match_end, header.control_after(pos))


def syntax_space(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """Whitespace between fields is syntax."""
    match = _SPACE.match(header.text, pos)
    if match is None or _control(header, pos):
        return None
    return Move("syntax", pos, _word_end(header, pos, match.end()))


def channel_token(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """``<|channel|>`` in a header with no channel yet: the channel's name follows."""
    if _control(header, pos) is not ControlToken.CHANNEL or state.expect:
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


def constrain_token(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """``<|constrain|>`` in a header with no content type yet: the content type follows."""
    if _control(header, pos) is not ControlToken.CONSTRAIN or state.expect:
        return None
    if state.content_type is not None:
        return None
    return Move("syntax", pos, header.controls[pos][1], expect="content_type")


def author_word(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """The author where the header begins (``<|start|>`` read): the grammar's AUTHOR; never
    a word that is a role glued to text (the glued row reads the role)."""
    if not state.author_open or state.author or _control(header, pos):
        return None
    match = AUTHOR.match(header.text, pos)
    if match is None:
        return None
    end = _word_end(header, pos, match.end())
    if _glued_inside(GLUED_ROLE.match(header.text, pos), end):
        return None
    return Move("field", pos, end, fields=(("author", header.text[pos:end], pos, end),))


def glued_role(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """HG177: a role glued to text (``assistantThe``): the role is the author."""
    if not state.author_open or state.author or _control(header, pos):
        return None
    match = GLUED_ROLE.match(header.text, pos)
    if match is None:
        return None
    if _EXACT_CHANNEL.match(header.text, match.end()) or GLUED_CHANNEL.match(
        header.text, match.end()
    ):  # ``assistantcommentary``: <|channel|> was stripped between them
        return Move(
            "field",
            pos,
            match.end(),
            COSTS["glued-role-channel"],
            "HG160",
            f"<|channel|> after the role {match.group()!r}",
            fields=(("author", match.group(), pos, match.end()),),
        )
    return Move(
        "field",
        pos,
        match.end(),
        COSTS["glued-role"],
        "HG177",
        f"the role {match.group()!r} was glued to the text after it",
        fields=(("author", match.group(), pos, match.end()),),
    )


def completion_role(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """HG151: the completion's own role written before its first header
    (``assistant<|channel|>final``, its ``<|start|>`` lost): the author's field."""
    role = state.completion_role
    if not role or state.read_any or state.author or _control(header, pos):
        return None
    if not header.text.startswith(role, pos) or header.text[:pos].strip():
        return None
    end = pos + len(role)
    following = header.control_after(end)
    if header.text[end:following].strip() or following >= len(header.text):
        return None  # a word of prose (``assistant is here``), or glued (``assistantfinal``)
    return Move(
        "field",
        pos,
        end,
        COSTS["completion-role"],
        "HG151",
        f"the role {role!r} began the header without <|start|>",
        (("author", role, pos, end),),
    )


def author_name(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """``:NAME`` right after a role: the author's name."""
    if pos != state.author_end or state.name or not header.text.startswith(":", pos):
        return None
    match = _NAME.match(header.text, pos + 1)
    if match is None:
        return None
    end = _word_end(header, pos, match.end())
    return Move("field", pos, end, fields=(("name", header.text[pos + 1 : end], pos + 1, end),))


def recipient(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """``to=NAME``: the recipient; after the content type it is out of order (HG172); a
    different second recipient is no field: it is content (HG158); the same one again is
    the one field, written twice."""
    match = RECIPIENT.match(header.text, pos)
    if match is None or _control(header, pos) or state.expect == "content_type":
        return None
    end = _word_end(header, pos, match.end())
    spaced = _spaced_name(header, match.start(1))
    if spaced:  # a declared name with spaces: the longest that is written here
        end = match.start(1) + len(spaced)
    if end <= match.start(1):
        return None
    value = header.text[match.start(1) : end]
    here = (("recipient", value, match.start(1), end),)
    if state.recipient is not None:
        if value != state.recipient and value in ROLES:
            # ``to=assistant`` after a tool's name: a stray word of the header (a reply's
            # shape), kept as superseded, never the call's arguments.
            stray = (("superseded", value, match.start(1), end),)
            return Move(
                "field",
                pos,
                end,
                COSTS["stray-role-recipient"],
                "HG158",
                f"a stray 'to={value}'",
                stray,
            )
        if value != state.recipient:
            return None  # a second recipient is no field (HG158: content)
        # The same recipient again: one field written twice (a call is never broken).
        return Move(
            "field",
            pos,
            end,
            COSTS["recipient-again"],
            "HG158",
            f"'to={value}' written twice",
            here,
        )
    if state.content_type is not None:
        return Move(
            "field",
            pos,
            end,
            COSTS["recipient-after-type"],
            "HG172",
            f"'to={value}' after the content type",
            here,
        )
    if state.completion_start and not state.read_any and pos == 0:
        return Move(
            "field",
            pos,
            end,
            COSTS["recipient-first"],
            "HG176",
            f"the completion began with 'to={value}'",
            here,
        )
    return Move("field", pos, end, fields=here)


def _spaced_name(header: HeaderText, pos: int) -> str | None:
    """The longest declared name with a space written at ``pos``, whole (not followed by
    more of a name)."""
    text = header.text
    for name in header.spaced_names:
        end = pos + len(name)
        whole = end == len(text) or not (text[end].isalnum() or text[end] in "_.-")
        if text.startswith(name, pos) and end <= header.control_after(pos) and whole:
            return name
    return None


def channel_name(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """The channel's name after ``<|channel|>``: the grammar's CHANNEL_NAME, never a known
    word glued to text (the glued row reads the word); non-ASCII letters keep the word
    whole (HG173)."""
    if state.expect != "channel" or _control(header, pos):
        return None
    match = _CHANNEL_NAME.match(header.text, pos)
    if match is not None:
        end = _word_end(header, pos, match.end())
        if _glued_inside(GLUED_CHANNEL.match(header.text, pos), end):
            return None
        return Move("field", pos, end, fields=(("channel", header.text[pos:end], pos, end),))
    word = _NON_ASCII_WORD.match(header.text, pos)
    if word is None or word.group().isascii() or GLUED_CHANNEL.match(header.text, pos):
        return None
    end = _word_end(header, pos, word.end())
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
    if _control(header, pos) is ControlToken.CHANNEL:
        end = header.controls[pos][1]
        word = _CHANNEL_NAME.match(text, end)
        if word is None or word.group() != channel:  # a different word: written over
            what = f"'<|channel|>' wrote over the channel {channel!r} before any content"
            over = (("superseded", "channel", -1, -1),)
            cost = COSTS["channel-written-over"]
            return Move("field", pos, end, cost, "HG157", what, over, expect="channel")
        start, stop, cost = end, word.end(), COSTS["channel-token-again"]
    else:
        if state.expect or _control(header, pos) or not text.startswith(channel, pos):
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
    if state.channel is not None or _control(header, pos) or state.expect == "content_type":
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
    if state.channel is not None or state.expect or _control(header, pos):
        return None
    if state.author_open and not state.author:
        return None
    match = _EXACT_CHANNEL.match(header.text, pos)
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
    match = _DOTTED.match(header.text, pos)
    if match is None:
        return None
    end = _word_end(header, pos, match.end())
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


def content_type(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """The content type: any word after ``<|constrain|>``; a bare one after another field,
    when the header ends after it (a header that never reached ``<|message|>`` holds only
    one of :data:`.tokens.BARE_CONTENT_TYPES`, last or right before its arguments)."""
    if state.content_type is not None or _control(header, pos):
        return None
    match = _CONTENT_TYPE.match(header.text, pos)
    if match is None:
        return None
    end = _word_end(header, pos, match.end())
    value = header.text[pos:end]
    here = (("content_type", value, pos, end),)
    if state.expect == "content_type":
        return Move("field", pos, end, fields=here)
    if state.expect or not state.read_any or pos == 0 or not header.text[pos - 1].isspace():
        return None
    if not any(c.isalpha() for c in value):
        return None  # ``--``, ``42``: no bare content type has no letter
    after = _SPACE.match(header.text, end)
    rest = after.end() if after else end
    last = (
        rest >= len(header.text)
        or rest in header.controls
        or (rest > end and RECIPIENT.match(header.text, rest) is not None)
    )
    if header.closed and last:
        return Move("field", pos, end, fields=here)
    if value.lower() in BARE_CONTENT_TYPES and (last or header.text[end : end + 1] in ("{", "[")):
        return Move("field", pos, end, fields=here)
    return None


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
        and _HARMONY_WORD_END.search(text, 0, pos) is not None
    )
    if after_word:
        end = pos
        while end < len(text) and text[end] in WORD_END_PUNCTUATION:
            end += 1
        glued = end < len(text) and end not in header.controls and text[end].isalnum()
    if glued and not _HARMONY_WORD.match(text, end) and not after_word:
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
    if junk is None or not header.text[:pos].rstrip().endswith(state.channel):
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
    """HG161/HG178/HG171: text with a letter or a digit that no field reads.

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
            return Move("prose", pos, following, cost, "HG171", "text before the first header")
    if following < len(text) and _usable(header, following, state):
        stop = len(text[pos:following].rstrip()) + pos
        code = "HG158" if state.recipient and text.startswith("to=", pos) else "HG178"
        end = max(stop, pos + 1)
        cost = _content_cost(text, pos, end)
        return Move("content", pos, end, cost, code, "header text read as content")
    code = "HG161" if not header.closed else "HG178"
    if state.recipient is not None and text[pos] in "{[":
        code = "HG160"
    elif state.recipient is not None and text.startswith("to=", pos):
        code = "HG158"  # a second recipient
    cost = _content_cost(text, pos, len(text))
    return Move("content", pos, len(text), cost, code, "header text read as content", stop=True)


def _glued_inside(glued: re.Match[str] | None, end: int) -> bool:
    """Whether a known word is glued to text before ``end`` (``assistantThe``,
    ``assistantcommentary``): such a word is never read whole, whatever the rest of the
    header costs. A price on the whole word cannot promise that: the search weighs whole
    readings, and a header whose later fields read cheaper under a tool's author
    (``assistantcommentary to=f json…<|channel|>commentary``) took the whole word as a
    tool's name, which repair then wrote back as a header the reader reads otherwise
    (not idempotent). The grammar's fast path refuses the same words (header_reader's
    ``_holds``), so one rule reads them both ways."""
    return glued is not None and glued.end() < end


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
