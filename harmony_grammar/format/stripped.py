"""Reading the stripped dialect (``grammars/harmony_stripped.lark``) out of text runs.

Theory of operation
-------------------
A detokenizer run with ``skip_special_tokens=True`` drops Harmony's control tokens and keeps
the words of the headers: ``analysisWe need…assistantfinalfour``. The dialect grammar says
where those headers stand; this module runs it, with the same LALR driver (:mod:`.lalr`) and
contextual lexing (:class:`.grammar.HeaderLexer`) as the main grammar, and reports what it
read as plain data: each :class:`StrippedHeader` with the offsets of its text. It never
builds a message itself: the engine turns each header into the control tokens of
``harmony.lark`` and feeds them to its one parser (:mod:`.recoveries`), so messages, events,
argument checks and streaming stay one code path.

The dialect is read only on evidence (:func:`stripped_evidence`, documented in
docs/parser.md): prose that merely mentions analysis, commentary or a final answer is never
split.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from .grammar import HeaderLexer, stripped_lexer, stripped_parser
from .lalr import LalrDriver, LalrTable, parse_table

__all__ = ["StrippedHeader", "read_stripped", "stripped_evidence"]


@dataclass(frozen=True, slots=True)
class StrippedHeader:
    """One header read in stripped text: ``text[start:end]`` held it; content follows."""

    start: int
    end: int
    channel: str
    recipient: str | None = None
    content_type: str | None = None
    #: Where each field was written in ``text``: ``{field: (start, end)}`` (the channel is
    #: absent where a call with no channel word goes to ``commentary``, a default);
    #: ``unread``: a separator's ``:`` (no letter, no digit: :attr:`.model.Message.unread`).
    slices: tuple[tuple[str, int, int], ...] = ()


@functools.lru_cache(maxsize=1)
def _machinery() -> tuple[LalrTable, HeaderLexer, re.Pattern[str]]:
    lexer = stripped_lexer()
    return parse_table(stripped_parser()), lexer, lexer.terminal_regex("MARKER")


def _lex(start: str, text: str, pos: int) -> tuple[list[tuple[str, str, int]], int] | None:
    """Lex and parse ``text[pos:]`` from ``start`` as far as the grammar goes.

    Returns the terminals read (name, text, start) and where they end, or None when what
    was read is not a complete ``start``.
    """
    table, lexer, _ = _machinery()
    driver = LalrDriver(table, start)
    read, pos = lexer.lex(driver, text, pos)
    return (read, pos) if read and driver.feed_eof() else None


def _header(text: str, pos: int) -> StrippedHeader | None:
    lexed = _lex("stripped_header", text, pos)
    if lexed is None:
        return None
    read, end = lexed
    values = {name: value for name, value, _ in read}
    slices = []
    for name, value, at in read:
        field = _FIELD_OF.get(name)
        if name == "SEPARATOR" and value.strip():
            field = "unread"  # ``analysis: hmm``: the ':' is no field (Message.unread)
            value = value.rstrip()
        if field is None:
            continue
        if field == "recipient":  # the name after "to="
            at += value.index("=") + 1
            value = value[value.index("=") + 1 :]
        lead = len(value) - len(value.lstrip())
        slices.append((field, at + lead, at + len(value.rstrip())))
    recipient = values.get("RECIPIENT") or values.get("LEAD_RECIPIENT")
    channel = (
        values.get("CHANNEL_WORD")
        or values.get("LEAD_CHANNEL")
        or values.get("LEAD_LOOSE_CHANNEL")
        or ("commentary" if recipient else None)  # a call with no channel word: calls go there
    )
    if channel is None:
        return None
    content_type = values.get("CONTENT_TYPE")
    return StrippedHeader(
        pos,
        end,
        channel,
        recipient.split("=", 1)[1].strip() if recipient else None,
        content_type.strip() if content_type else None,
        tuple(slices),
    )


#: The header field each terminal of the stripped dialect holds.
_FIELD_OF = {
    "GLUED_AUTHOR": "author",
    "CHANNEL_WORD": "channel",
    "LEAD_CHANNEL": "channel",
    "LEAD_LOOSE_CHANNEL": "channel",
    "RECIPIENT": "recipient",
    "LEAD_RECIPIENT": "recipient",
    "CONTENT_TYPE": "content_type",
}


def stripped_evidence(text: str, *, at_start: bool, closed: bool) -> bool:
    """Whether ``text`` holds real evidence of stripped control tokens.

    Evidence is a glued ``assistant`` + channel word anywhere, or (``at_start``, the very
    beginning of a completion) a channel word glued to its content (``analysisWe``) or
    followed by `` to=``; a leading ``analysis:``, or ``analysis`` and a line break or a
    space, counts only when a real control token ``closed`` the text (or a glued marker
    follows, above).
    """
    if _machinery()[2].search(text) is not None:
        return True
    if not at_start:
        return False
    header = _header(text, 0)
    if header is None:
        return False
    loose = text.startswith((":", "\n", "\r\n"), len(header.channel)) or (
        text.startswith((" ", "\t"), len(header.channel)) and header.recipient is None
    )
    return closed or not loose


def read_stripped(
    text: str, *, at_start: bool, glued_lead: bool = False
) -> tuple[int, list[StrippedHeader]] | None:
    """The headers of stripped ``text``, in order, after ``lead`` characters of text that
    precede the first; None when it does not read as the dialect.

    The first header stands at the start of ``text`` (after whitespace): a glued
    ``assistant`` + channel word, or, ``at_start`` of a completion, a leading channel word.
    With ``glued_lead``, it may instead follow text (``…is nice.assistantcommentary
    to=…``, as where a detokenizer dropped ``<|end|><|start|>``): glued to it, or at the
    start of a line (``Checking.`` then a blank line, then ``assistantcommentary to=…``);
    that text is the lead. A marker after a space mid-line is prose quoting the word.
    Every later header is a glued marker; the
    content of each header runs to the next one.
    """
    _, _, marker = _machinery()
    first = len(text) - len(text.lstrip())
    lead = 0
    header = None
    if at_start or marker.match(text, first) is not None:
        header = _header(text, first)
    if header is None and glued_lead:
        for glued in marker.finditer(text, first):
            if glued.start() <= first:
                continue
            before = text[glued.start() - 1]
            header = _header(text, glued.start())
            # Glued to the text before it, or at the start of a line: a header (a marker
            # after a space mid-line is prose quoting the word).
            if header is not None and (not before.isspace() or before in "\r\n"):
                lead = glued.start()
                break
            header = None
    if header is None:
        return None
    headers = [header]
    pos = header.end
    while True:
        found = marker.search(text, pos)
        if found is None:
            return lead, headers
        header = _header(text, found.start())
        if header is None:  # "assistantfinal" with nothing a header needs: leave it as content
            pos = found.end()
            continue
        headers.append(header)
        pos = header.end
