"""Harmony's words as they stand in a header's text: the patterns the header rows read.

One place for what a role, a channel word, a recipient, a content type or a tool's dotted
name looks like in buffered header text (:class:`.header_search.HeaderText`), glued or
spaced, for the rows that read fields (:mod:`.headers`), the rows that read what no field
does (:mod:`.header_rest`), the grammar's own reading (:mod:`.header_reader`) and the
readings outside headers (:mod:`.readings`).
"""

from __future__ import annotations

import re

from .header_search import ROLES, HeaderText
from .tokens import CHANNEL_WORD, ControlToken

__all__ = [
    "AUTHOR",
    "CHANNEL_NAME",
    "CONTENT_TYPE",
    "DOTTED",
    "EXACT_CHANNEL",
    "GLUED_CHANNEL",
    "GLUED_ROLE",
    "HARMONY_WORD",
    "HARMONY_WORD_END",
    "NAME",
    "NON_ASCII_WORD",
    "RECIPIENT",
    "SPACE",
    "WORD_END_PUNCTUATION",
    "control_at",
    "glued_inside",
    "word_end",
]

_ROLES = "|".join(sorted(ROLES))
#: A role glued to text that is no part of a name: ``assistantThe``, ``userfinal``.
GLUED_ROLE = re.compile(rf"(?:{_ROLES})(?=[^a-z0-9_\-:=\s<>|]|{CHANNEL_WORD})")
#: A channel word glued to text that is no part of a name: ``analysisOK``, ``commentary?``.
GLUED_CHANNEL = re.compile(rf"{CHANNEL_WORD}(?=[^a-z0-9_\-\s<>|])")
#: A channel word that ends there (no longer word).
EXACT_CHANNEL = re.compile(rf"{CHANNEL_WORD}(?![\w\-])")
#: An author in lenient reading: a role or a tool's name (``functions.f``, ``browser.search``,
#: ``python``), never JSON or prose the grammar's wider AUTHOR would take (``{"q"``).
AUTHOR = re.compile(r"\w[\w.\-/@]*")
#: A ``:NAME`` after a role.
NAME = re.compile(r"[^\s<>|=]+")
#: A recipient's name: a tool's name (``functions.f``, ``browser.search``, ``container.exec``);
#: it stops where a call's arguments or stray punctuation begin (``to=functions.f{"a":1}``).
RECIPIENT = re.compile(r"to=([\w.\-:/@]+)")
#: The grammar's CHANNEL_NAME, never the first word of a dotted tool name.
CHANNEL_NAME = re.compile(r"[A-Za-z0-9_\-]+(?![\w\-]|\.\w)")
#: A word in any script: a channel name with non-ASCII letters.
NON_ASCII_WORD = re.compile(r"[\w\-]+")
#: A tool's dotted name (``functions.read``), never a channel word's: where a channel
#: belongs it is HG166's shape; elsewhere, a recipient with no ``to=``.
DOTTED = re.compile(
    rf"(?!{CHANNEL_WORD}\.)[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z_][A-Za-z0-9_\-]*)+(?![^\s<>|])"
)
#: A content type's word (never ``to=``'s).
CONTENT_TYPE = re.compile(r"(?![A-Za-z0-9_.+/\-]*=)[A-Za-z0-9_.+/\-]+")
#: Whitespace between fields.
SPACE = re.compile(r"\s+")
#: A word of Harmony's own (a role, a channel, ``to=``): punctuation glued before it is
#: stray (``––commentary``), not the start of prose.
HARMONY_WORD = re.compile(rf"(?:{_ROLES}|{CHANNEL_WORD}|to=)")
#: Punctuation that ends a word: glued to a Harmony word of a header that lost
#: ``<|message|>`` (``analysis??``, ``final!final!``, ``commentary...``) it is unread.
WORD_END_PUNCTUATION = frozenset("?!.,;:")
#: A channel word or a role that ends right where the text searched ends.
HARMONY_WORD_END = re.compile(rf"(?<![A-Za-z])(?:{_ROLES}|{CHANNEL_WORD})$")


def control_at(header: HeaderText, pos: int) -> ControlToken | None:
    """The control token at ``pos`` of the header, if one is there."""
    found = header.controls.get(pos)
    return found[0] if found else None


def word_end(header: HeaderText, pos: int, match_end: int) -> int:
    """``match_end``, cut at the next control token."""
    return min(match_end, header.control_after(pos))


def glued_inside(glued: re.Match[str] | None, end: int) -> bool:
    """Whether a known word is glued to text before ``end`` (``assistantThe``,
    ``assistantcommentary``): such a word is never read whole, whatever the rest of the
    header costs. A price on the whole word cannot promise that: the search weighs whole
    readings, and a header whose later fields read cheaper under a tool's author
    (``assistantcommentary to=f json…<|channel|>commentary``) took the whole word as a
    tool's name, which repair then wrote back as a header the reader reads otherwise
    (not idempotent). The grammar's fast path refuses the same words (header_reader's
    ``_holds``), so one rule reads them both ways."""
    return glued is not None and glued.end() < end
