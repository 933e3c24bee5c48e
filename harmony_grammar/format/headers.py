"""The header rows that read fields in lenient mode: every piece of a header goes to one place.

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

The rows here read fields: a move puts the text it reads in exactly one place, a field whose
value is an exact slice of the input (author, name, recipient, channel, content type; two
slices of one field when the header repeats it), or the syntax between fields (whitespace,
``to=``, ``:``, a control token a field takes). An author is a role or a tool's name (JSON
and punctuation are none); ``:NAME`` names a role, right after it. What no field reads
(unread punctuation, debris, content) is :mod:`.header_rest`'s, the channel's rows are
:mod:`.header_channel`'s, and the words' patterns :mod:`.header_words`'.
"""

from __future__ import annotations

from .costs import COSTS
from .header_search import ROLES, HeaderState, HeaderText, Move
from .header_words import (
    AUTHOR,
    CONTENT_TYPE,
    EXACT_CHANNEL,
    GLUED_CHANNEL,
    GLUED_ROLE,
    NAME,
    RECIPIENT,
    SPACE,
    control_at,
    glued_inside,
    word_end,
)
from .tokens import BARE_CONTENT_TYPES, ControlToken

__all__ = [
    "author_name",
    "author_word",
    "completion_role",
    "constrain_token",
    "content_type",
    "glued_role",
    "recipient",
    "syntax_space",
]


# ------------------------------------------------------------------ the rows
def syntax_space(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """Whitespace between fields is syntax."""
    match = SPACE.match(header.text, pos)
    if match is None or control_at(header, pos):
        return None
    return Move("syntax", pos, word_end(header, pos, match.end()))


def constrain_token(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """``<|constrain|>`` in a header with no content type yet: the content type follows."""
    if control_at(header, pos) is not ControlToken.CONSTRAIN or state.expect:
        return None
    if state.content_type is not None:
        return None
    return Move("syntax", pos, header.controls[pos][1], expect="content_type")


def author_word(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """The author where the header begins (``<|start|>`` read): the grammar's AUTHOR; never
    a word that is a role glued to text (the glued row reads the role)."""
    if not state.author_open or state.author or control_at(header, pos):
        return None
    match = AUTHOR.match(header.text, pos)
    if match is None:
        return None
    end = word_end(header, pos, match.end())
    if glued_inside(GLUED_ROLE.match(header.text, pos), end):
        return None
    return Move("field", pos, end, fields=(("author", header.text[pos:end], pos, end),))


def glued_role(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """HG177: a role glued to text (``assistantThe``): the role is the author."""
    if not state.author_open or state.author or control_at(header, pos):
        return None
    match = GLUED_ROLE.match(header.text, pos)
    if match is None:
        return None
    if EXACT_CHANNEL.match(header.text, match.end()) or GLUED_CHANNEL.match(
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
    if not role or state.read_any or state.author or control_at(header, pos):
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
    match = NAME.match(header.text, pos + 1)
    if match is None:
        return None
    end = word_end(header, pos, match.end())
    return Move("field", pos, end, fields=(("name", header.text[pos + 1 : end], pos + 1, end),))


def recipient(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """``to=NAME``: the recipient; after the content type it is out of order (HG172); a
    different second recipient is no field: it is content (HG158); the same one again is
    the one field, written twice."""
    match = RECIPIENT.match(header.text, pos)
    if match is None or control_at(header, pos) or state.expect == "content_type":
        return None
    end = word_end(header, pos, match.end())
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


def content_type(header: HeaderText, pos: int, state: HeaderState) -> Move | None:
    """The content type: any word after ``<|constrain|>``; a bare one after another field,
    when the header ends after it (a header that never reached ``<|message|>`` holds only
    one of :data:`.tokens.BARE_CONTENT_TYPES`, last or right before its arguments)."""
    if state.content_type is not None or control_at(header, pos):
        return None
    match = CONTENT_TYPE.match(header.text, pos)
    if match is None:
        return None
    end = word_end(header, pos, match.end())
    value = header.text[pos:end]
    here = (("content_type", value, pos, end),)
    if state.expect == "content_type":
        return Move("field", pos, end, fields=here)
    if state.expect or not state.read_any or pos == 0 or not header.text[pos - 1].isspace():
        return None
    if not any(c.isalpha() for c in value):
        return None  # ``--``, ``42``: no bare content type has no letter
    after = SPACE.match(header.text, end)
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
