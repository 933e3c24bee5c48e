"""Reading a whole header in lenient mode: every piece of it goes to exactly one place.

Theory of operation
-------------------
In lenient mode the engine buffers a header until it ends (``<|message|>``, a terminator,
the next ``<|start|>`` or the end of input), control tokens included, and hands it here
whole when the grammar alone cannot read it. The header is one string (text pieces and
control-token spellings, :class:`HeaderText`) read left to right. At each position every
row of the repair table's ``HEADER`` hook (:mod:`.repairs`) may offer a :class:`Move`, and
the cheapest wins, ties going to the earlier row: the cost table *is* the repair table
(strict mode is the empty table and never gets here).

A move puts the text it reads in exactly one place:

* a field whose value is an exact slice of the input (author, name, recipient, channel,
  content type), or two slices of one field when the header repeats it;
* whitespace and the syntax between fields (``to=``, ``:``, a control token a field takes);
* ``unread``: text with no letter and no digit, read as no field (HG156);
* debris: a control token no field can take (HG175);
* content: text with a letter or a digit that no field reads (HG161, HG178);
* a message of its own (prose before a completion's first header, HG171), or the end of this
  header (a second, different channel begins the next message, HG157).

A header that never reached ``<|message|>`` is the longest run of fields: its content
starts at the first character no field reads, and runs to the end (HG161).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .tokens import CHANNEL_WORD, ControlToken

__all__ = [
    "AUTHOR",
    "GLUED_CHANNEL",
    "GLUED_ROLE",
    "RECIPIENT",
    "ROLES",
    "HeaderState",
    "HeaderText",
    "Move",
    "Reading",
    "read_header",
]

_ROLES = "system|developer|user|assistant"
#: A role glued to text that is no part of a name: ``assistantThe``, ``userfinal``.
GLUED_ROLE = re.compile(rf"(?:{_ROLES})(?=[^a-z0-9_\-:=\s<>|]|{CHANNEL_WORD})")
#: A channel word glued to text that is no part of a name: ``analysisOK``, ``commentary?``.
GLUED_CHANNEL = re.compile(rf"{CHANNEL_WORD}(?=[^a-z0-9_\-\s<>|])")
_EXACT_CHANNEL = re.compile(rf"{CHANNEL_WORD}(?![\w\-])")
#: An author in lenient reading: a role or a tool's name (``functions.f``, ``browser.search``,
#: ``python``), never JSON or prose the grammar's wider AUTHOR would take (``{"q"``).
AUTHOR = re.compile(r"\w[\w.\-/@]*")
#: The roles: ``:NAME`` names one of them (``user:alice``); after a tool's name a ``:`` is
#: no separator (the grammar's AUTHOR_NAME would overwrite the tool's name).
ROLES = frozenset(_ROLES.split("|"))
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
#: Bare content types a header holds even when it never reached ``<|message|>``.
_BARE_TYPES = frozenset({"json", "code"})
_SPACE = re.compile(r"\s+")
#: A word of Harmony's own (a role, a channel, ``to=``): punctuation glued before it is
#: stray (``––commentary``), not the start of prose.
_HARMONY_WORD = re.compile(rf"(?:{_ROLES}|{CHANNEL_WORD}|to=)")
_FIELDS = ("author", "name", "recipient", "channel", "content_type")


@dataclass
class HeaderText:
    """A buffered header: its text with control tokens spelled, and where each piece was.

    ``controls`` maps the offset of each control token to the token and its end offset.
    ``closed`` says that ``<|message|>`` ended the header.
    """

    text: str
    controls: dict[int, tuple[ControlToken, int]]
    closed: bool
    #: ``(offset, input start, input end)`` per piece, in order (positions of token ids).
    pieces: list[tuple[int, int, int]] = field(default_factory=list)
    #: Offsets of control tokens spelled by ordinary token ids (HG174).
    spelled: list[int] = field(default_factory=list)

    def control_after(self, pos: int, token: ControlToken | None = None) -> int:
        """The offset of the first control token at or after ``pos`` (``token`` only, if
        given); ``len(text)`` when none."""
        found = [o for o, (t, _) in self.controls.items() if o >= pos and token in (None, t)]
        return min(found, default=len(self.text))


@dataclass
class HeaderState:
    """What the header holds so far, as the reading goes on."""

    author_open: bool = False
    author: bool = False
    #: Where the author ended: ``:NAME`` must follow it right there (the grammar's
    #: ``AUTHOR (":" AUTHOR_NAME)?``), never after another field.
    author_end: int = -1
    name: bool = False
    recipient: str | None = None
    channel: str | None = None
    #: Whether the channel is a default the input does not spell (HG166's ``commentary``):
    #: a ``<|channel|>`` may still write it.
    channel_default: bool = False
    content_type: str | None = None
    #: ``channel`` after ``<|channel|>``, ``content_type`` after ``<|constrain|>``.
    expect: str | None = None
    #: Whether a field was read in this reading (a completion's prose comes before any).
    read_any: bool = False
    #: Whether this header is a completion's first, before anything was read.
    completion_start: bool = False


@dataclass(frozen=True, slots=True)
class Move:
    """One step of a reading: what ``[start, end)`` of the header is, and what it costs.

    ``kind`` is ``field``, ``syntax``, ``unread``, ``debris``, ``content`` (text no field
    reads; ``stop`` says that everything after it is content too), ``prose`` (a message of
    its own) or ``split`` (this header ends; the next message begins at ``start``).
    ``fields`` holds ``(field, value, start, end)``, start -1 for a default.
    """

    kind: str
    start: int
    end: int
    cost: int = 0
    code: str | None = None
    what: str = ""
    fields: tuple[tuple[str, str, int, int], ...] = ()
    expect: str | None = None
    stop: bool = False


@dataclass
class Reading:
    """The chosen reading: its moves in order, their total cost, and the final state."""

    moves: list[Move]
    cost: int
    state: HeaderState


#: A row of the ``HEADER`` hook: the move it offers at a position, or None.
HeaderRow = Callable[[HeaderText, int, HeaderState], "Move | None"]


def read_header(
    header: HeaderText, state: HeaderState, rows: Sequence[tuple[HeaderRow, int]]
) -> Reading:
    """The least-cost reading of ``header`` from ``state``, one move at a time.

    ``rows`` are the table's ``(row, cost)`` pairs in order; each row offers at most one
    move, and the move's cost is the row's unless the row says otherwise (a row may rate a
    shape above its base cost). Every position is read: the last rows always apply.
    """
    moves: list[Move] = []
    total, pos, text = 0, 0, header.text
    while pos < len(text):
        best: Move | None = None
        for row, cost in rows:
            move = row(header, pos, state)
            if move is None:
                continue
            if move.cost < cost:
                move = _with_cost(move, cost)
            if best is None or move.cost < best.cost:
                best = move
        if best is None or (best.end <= pos and best.kind not in ("split", "prose")):
            raise AssertionError(f"no header row read {text[pos : pos + 20]!r}")  # pragma: no cover
        moves.append(best)
        total += best.cost
        _advance(state, best)
        if best.kind in ("split", "prose") or best.stop:
            break
        pos = best.end
    return Reading(moves, total, state)


def _with_cost(move: Move, cost: int) -> Move:
    return Move(
        move.kind,
        move.start,
        move.end,
        cost,
        move.code,
        move.what,
        move.fields,
        move.expect,
        move.stop,
    )


def _advance(state: HeaderState, move: Move) -> None:
    if move.expect is not None:
        state.expect = move.expect
        state.author_open = False  # a control token the header took: the author is past
    for name, value, start, end in move.fields:
        state.read_any = True
        if name == "author":
            state.author, state.author_open = True, False
            state.author_end = end if value in ROLES else -1
            continue
        state.author_open = False
        if name == "name":
            state.name = True
        elif name == "recipient":
            state.recipient = value
        elif name == "channel":
            state.channel, state.expect = value, None
            state.channel_default = start < 0
        elif name == "content_type":
            state.content_type, state.expect = value, None
    if move.kind == "content":
        state.author_open = False


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
            "syntax", pos, end, 1, "HG179", "<|channel|> after the content type", expect="channel"
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
    """The author where the header begins (``<|start|>`` read): the grammar's AUTHOR; a
    word that is a role glued to text costs more (the glued row reads the role)."""
    if not state.author_open or state.author or _control(header, pos):
        return None
    match = AUTHOR.match(header.text, pos)
    if match is None:
        return None
    end = _word_end(header, pos, match.end())
    glued = GLUED_ROLE.match(header.text, pos)
    cost = 2 if glued is not None and glued.end() < end else 0
    return Move("field", pos, end, cost, fields=(("author", header.text[pos:end], pos, end),))


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
            1,
            "HG160",
            f"<|channel|> after the role {match.group()!r}",
            fields=(("author", match.group(), pos, match.end()),),
        )
    return Move(
        "field",
        pos,
        match.end(),
        1,
        "HG177",
        f"the role {match.group()!r} was glued to the text after it",
        fields=(("author", match.group(), pos, match.end()),),
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
    if end <= match.start(1):
        return None
    value = header.text[match.start(1) : end]
    here = (("recipient", value, match.start(1), end),)
    if state.recipient is not None:
        if value != state.recipient:
            return None  # a second recipient is no field (HG158: content)
        # The same recipient again: one field written twice (a call is never broken).
        return Move("field", pos, end, 1, "HG158", f"'to={value}' written twice", here)
    if state.content_type is not None:
        return Move("field", pos, end, 1, "HG172", f"'to={value}' after the content type", here)
    if state.completion_start and not state.read_any and pos == 0:
        return Move("field", pos, end, 1, "HG176", f"the completion began with 'to={value}'", here)
    return Move("field", pos, end, fields=here)


def channel_name(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """The channel's name after ``<|channel|>``: the grammar's CHANNEL_NAME (a known word
    glued to text costs more: the glued row reads the word); non-ASCII letters keep the
    word whole (HG173)."""
    if state.expect != "channel" or _control(header, pos):
        return None
    match = _CHANNEL_NAME.match(header.text, pos)
    if match is not None:
        end = _word_end(header, pos, match.end())
        glued = GLUED_CHANNEL.match(header.text, pos)
        cost = 2 if glued is not None and glued.end() < end else 0
        return Move("field", pos, end, cost, fields=(("channel", header.text[pos:end], pos, end),))
    word = _NON_ASCII_WORD.match(header.text, pos)
    if word is None or word.group().isascii() or GLUED_CHANNEL.match(header.text, pos):
        return None
    end = _word_end(header, pos, word.end())
    return Move(
        "field",
        pos,
        end,
        1,
        "HG173",
        f"channel name {header.text[pos:end]!r} has non-ASCII letters: kept whole",
        (("channel", header.text[pos:end], pos, end),),
    )


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
    cost = 1 if state.expect == "channel" else 3
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
        2,
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
        1,
        "HG166",
        f"the tool name {name!r} stood where the channel belongs: read as channel"
        f" 'commentary' to={name}",
        (("channel", "commentary", -1, -1), ("recipient", name, pos, end)),
    )


def content_type(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """The content type: any word after ``<|constrain|>``; a bare one after another field,
    when the header ends after it (a header that never reached ``<|message|>`` holds only
    ``json`` or ``code``, or ``json`` right before its arguments)."""
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
    if value.lower() in _BARE_TYPES and (last or header.text[end : end + 1] in ("{", "[")):
        return Move("field", pos, end, fields=here)
    return None


def unread(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """HG156: stray characters with no letter and no digit, read as no field (only where
    the header goes on: a header that never reached ``<|message|>`` ends at its first
    character that is no field)."""
    text = header.text
    end = pos
    while end < len(text) and end not in header.controls:
        char = text[end]
        if char.isspace() or char.isalnum():
            break
        end += 1
    glued = end < len(text) and end not in header.controls and text[end].isalnum()
    if end == pos or (glued and not _HARMONY_WORD.match(text, end)):
        return None  # punctuation glued to a word is part of that text (content)
    if pos and pos - 1 not in header.controls and text[pos - 1].isalnum() and not state.read_any:
        return None
    if not header.closed and header.control_after(end) >= len(text):
        return None
    return Move("unread", pos, end, 3, "HG156", f"stray characters {text[pos:end]!r}")


def debris(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """HG175: a control token no field of this header can take."""
    found = header.controls.get(pos)
    if found is None:
        return None
    return Move("debris", pos, found[1], 5, "HG175", f"a stray {found[0].value} was discarded")


def second_channel(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """HG157: ``<|channel|>`` in a header whose channel is written: it begins the next
    message (``<|message|><|end|><|start|>assistant`` lost before it), so each channel word
    stays the field of one message; a header writing the same channel twice keeps it as one
    field (an empty message is never made up, a call is never broken)."""
    if _control(header, pos) is not ControlToken.CHANNEL or state.channel is None:
        return None
    if state.channel_default:
        return None
    end = header.controls[pos][1]
    word = _CHANNEL_NAME.match(header.text, end)
    if word is not None and word.group() == state.channel:
        # The same channel written twice (``final<|channel|>final``: a bare channel word,
        # then the header it began spelled out): one field; a call is never broken.
        return Move(
            "field",
            pos,
            word.end(),
            1,
            "HG157",
            f"'<|channel|>{state.channel}' written twice",
            (("channel", state.channel, end, word.end()),),
        )
    return Move("split", pos, pos, 4, "HG157", "a second <|channel|> began the next message")


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
            return Move("prose", pos, following, 6, "HG171", "text before the first header")
    if following < len(text) and _usable(header, following, state):
        stop = len(text[pos:following].rstrip()) + pos
        code = "HG158" if state.recipient and text.startswith("to=", pos) else "HG178"
        return Move("content", pos, max(stop, pos + 1), 6, code, "header text read as content")
    code = "HG161" if not header.closed else "HG178"
    if state.recipient is not None and text[pos] in "{[":
        code = "HG160"
    elif state.recipient is not None and text.startswith("to=", pos):
        code = "HG158"  # a second recipient
    return Move("content", pos, len(text), 6, code, "header text read as content", stop=True)


def _usable(header: HeaderText, offset: int, state: HeaderState) -> bool:
    """Whether a field of this header can still take the control token at ``offset``."""
    token = header.controls[offset][0]
    if token is ControlToken.CHANNEL:
        return state.channel is None
    return token is ControlToken.CONSTRAIN and state.content_type is None
