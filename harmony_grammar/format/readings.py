"""Lenient readings of what real engines deliver (rows of :mod:`.repairs`).

Theory of operation
-------------------
Text outside a message body waits until the token that ends it is known; then the
``PENDING_TEXT`` rows here read what it really is before it is lexed as a header:

* headers whose control tokens a detokenizer stripped (``analysisWe…assistantfinal…``),
  read with the dialect grammar ``harmony_stripped.lark`` (:mod:`.stripped`, HG160), in text
  input only unless the caller opts in (token ids are authoritative);
* a completion that begins with its recipient, ``to=functions.f<|channel|>…`` (HG176);
* a header that never reached ``<|message|>`` and holds prose or a body (HG161): the header
  as far as it reads, the rest as content;
* text outside any header (HG163, HG164, HG152, HG171): a message of its own.

When ``<|message|>`` arrives, the ``HEADER_COMPLETE`` rows (:mod:`.header_complete`) look
at the whole header once more; at the end of input, the ``END_OF_INPUT`` rows here close
what is open.
Like :mod:`.recoveries`, every row feeds the grammar's terminals and reports its own code,
and none drops text: what a header cannot hold becomes content.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .draft import PendingText
from .engine_view import Repairable
from .model import Role
from .recoveries import (
    end_open_body,
    open_empty_body,
    report_before_header,
    report_call_like,
    report_stripped,
    start_missing,
)
from .stripped import read_stripped, stripped_evidence
from .tokens import CHANNEL_WORD, ControlToken

__all__ = [
    "body_at_end",
    "header_at_end",
    "read_author_without_start",
    "read_headerless",
    "read_long_header",
    "read_stripped_headers",
    "recover_stray_text",
]


_START = ControlToken.START.terminal
_MESSAGE = ControlToken.MESSAGE.terminal
_CHANNEL = ControlToken.CHANNEL.terminal
_END = ControlToken.END.terminal
_CALL = ControlToken.CALL.terminal
_SPELLING = {token.terminal: token.value for token in ControlToken}
#: Terminals that continue a header: text they close is header text, never a message.
_HEADER_CLOSERS = frozenset({_CHANNEL, _MESSAGE, ControlToken.CONSTRAIN.terminal})
#: The channel of a message with no header, by the token that ended it: gpt-oss ends
#: reasoning with <|end|>; an answer that simply stops is a final one; text that a header
#: follows cannot be told, and reasoning must never reach the user, so it is analysis.
_CHANNEL_BY_CLOSER = {ControlToken.RETURN.terminal: "final", "$END": "final"}
_DEFAULT_CHANNEL = "analysis"
#: ``assistant`` glued to a channel word: the one stripped shape read inside a real header.
_GLUED_AUTHOR = re.compile(f"assistant{CHANNEL_WORD}")
#: A channel word alone (a recipient and a content type may follow) where ``<|channel|>``
#: was stripped: ``analysis<|message|>``, `` commentary to=functions.f json<|message|>``.
_BARE_CHANNEL = re.compile(
    rf"\s*({CHANNEL_WORD})(?=\s*$|\s+to=[^\s<>|]+(?:\s*[a-z]+)?\s*$|\s+[a-z]+\s*$)"
)
#: An author a header may begin with: a role (``user:alice``) or a tool's dotted name.
_AUTHOR_WORD = re.compile(
    r"(?:(?:system|developer|user|assistant)(?![^\s:<>|=])|[A-Za-z_][\w\-]*(?:\.[\w\-]+)+)"
)


def _positions(engine: Repairable, start: int, end: int) -> Callable[[int], int]:
    """Input offset of an offset into pending text (token ids: the whole run's range)."""
    if engine.exact_positions:
        return lambda offset: start + offset
    return lambda offset: start


def _outside_messages(engine: Repairable) -> bool:
    """Whether the parser stands where a message may begin (no header is open)."""
    return engine.at_completion_start or _START in engine.parser.choices()


# ------------------------------------------------------------------ a message of its own
def own_message(engine: Repairable, text: str, start: int, end: int, closer: str) -> bool:
    """Text no header holds becomes the content of a message of its own.

    The one place HG163, HG164, HG152 and HG171 (for text) are chosen: at a completion's
    start, text followed by a header is text before the first header (HG171), text that
    is the whole completion has no header (HG163); between messages it is HG164 while the
    completion has not stopped, HG152 after the stop and in stored conversations. Its
    channel is ``final`` when ``<|return|>`` or the end of input ended it, else ``analysis``;
    whitespace around it stays between messages.
    """
    body = text.strip()
    if not body:
        return False
    at = _positions(engine, start, end)
    followed = closer == _START or closer in _HEADER_CLOSERS
    # Whitespace next to another message stays between messages; a whole completion's
    # text is kept exactly as it is.
    lead = 0 if engine.at_completion_start else len(text) - len(text.lstrip())
    stop = len(text.rstrip()) if followed or not engine.at_completion_start else len(text)
    here, there = at(lead), at(stop) if engine.exact_positions else end
    channel = _CHANNEL_BY_CLOSER.get(closer, _DEFAULT_CHANNEL)
    code: str | None = None  # None: text before the first header (HG171, its one reporter)
    if engine.at_completion_start:
        if followed:
            what = "text before the first header was kept as a message of its own"
        else:
            code = "HG163"
            what = "a completion with no header: its text was read as the content of one message"
    else:
        code = "HG164" if engine.completion and not engine.stopped else "HG152"
        what = "text outside any message was kept as the content of a message of its own"
        engine.feed(_START, "", here, here)
        engine.feed("AUTHOR", engine.role.value, here, here)
    engine.feed(_CHANNEL, "", here, here)
    engine.feed("CHANNEL_NAME", channel, here, here)
    what += f" on channel {channel!r}"
    if code is None:
        report_before_header(engine, f"{what}: {body[:80]!r}", here, there)
    else:
        engine.diagnose(code, f"{what}: {body[:80]!r}", here, there)
    engine.feed(_MESSAGE, "", here, here)
    engine.route_text(text[lead:stop], here, there)
    report_call_like(engine, text, start, end)
    if followed or (closer == "$END" and not engine.completion):
        # A header (or the end of a stored conversation) follows: the message ends here.
        engine.parser.feed(_END)
        engine.finish(None, there)
    return True


def read_headerless(engine: Repairable, text: str, start: int, end: int, closer: str) -> bool:
    """HG163/HG164/HG152/HG171: text outside any header is a message of its own.

    Between messages any text but whitespace is (no header begins without ``<|start|>`` or
    ``<|channel|>``). At a completion's start, text a header follows is one only when it
    holds a letter or digit and is not the echoed author (``assistant<|channel|>…``):
    punctuation there is header debris (HG156).
    """
    draft = engine.draft
    if draft is not None and draft.content is None and not engine.at_completion_start:
        return False  # inside a header (the hot path)
    if not _outside_messages(engine) or not text.strip():
        return False
    if engine.at_completion_start:
        if closer in _HEADER_CLOSERS:
            return False  # a header's text: read whole (headers.py)
    elif closer in _HEADER_CLOSERS and not engine.completion and engine.lexes_as_header(text):
        return False
    return own_message(engine, text, start, end, closer)


def read_author_without_start(
    engine: Repairable, text: str, start: int, end: int, closer: str
) -> bool:
    """HG151: ``…<|end|>assistant<|channel|>final…``: an author whose ``<|start|>`` was lost.

    Between messages, text that a header token follows and that reads as a header's start
    once ``<|start|>`` stands before it (``assistant``, ``functions.f to=assistant``) is that
    header, not a message of its own.
    """
    if closer not in _HEADER_CLOSERS or engine.at_completion_start or engine.draft is not None:
        return False
    stripped = text.strip()
    if not stripped or _START not in engine.parser.choices():
        return False
    lead = len(text) - len(text.lstrip())
    at = _positions(engine, start, end)
    if _BARE_CHANNEL.match(text) is not None:  # <|start|>assistant<|channel|> stripped
        start_missing(engine, f"{stripped[:40]!r} began a message without <|start|>", at(lead))
        engine.feed("AUTHOR", "", at(lead), at(lead))
        engine.hold(None, text[lead:], at(lead), end)
        return True
    if _AUTHOR_WORD.match(text, lead) is None or not engine.lexes_as_header_after_start(
        text[lead:]
    ):
        return False  # any other word is text of its own (read_headerless), never an author
    start_missing(
        engine, f"{stripped[:40]!r} began a message without <|start|>; read as its author", at(lead)
    )
    engine.hold(None, text[lead:], at(lead), end)  # the header, read whole with its tokens
    return True


def recover_stray_text(engine: Repairable, text: str, pos: int, start: int, end: int) -> int | None:
    """HG164/HG152: text between messages that did not lex: a message of its own."""
    if _START not in engine.parser.choices() or not text[pos:].strip():
        return None
    own_message(engine, text[pos:], start, end, "$END" if engine.completion else _START)
    return len(text)


# ------------------------------------------------------------------ stripped control tokens
def _close_open_message(engine: Repairable, at: int) -> None:
    """End the message whose body is open with the terminator that was stripped."""
    draft = engine.draft
    if draft is None or draft.content is None:
        return
    terminal = _CALL if draft.is_tool_call else _END
    engine.feed(terminal, _SPELLING[terminal], at, at)


def read_stripped_headers(engine: Repairable, text: str, start: int, end: int, closer: str) -> bool:
    """HG160: headers whose control tokens were stripped, read with the dialect grammar.

    Only where ordinary text may be structure (text input, or ``stripped_dialect=True``).
    Text before the first glued header (``It is nice.assistantcommentary to=…``) is a
    message of its own.
    """
    open_header = closer in _HEADER_CLOSERS
    if open_header and _GLUED_AUTHOR.search(text) is None:
        return False  # the hot path: a header as written (only a glued author is re-read)
    if not engine.reads_stripped and not open_header:
        return False  # token ids: outside a header, ordinary text is never structure
    at_start = engine.at_completion_start
    if not (at_start or "AUTHOR" in engine.parser.choices() or _START in engine.parser.choices()):
        return False
    # Before a surviving <|channel|>/<|message|> the text is a header: only a glued author
    # (<|start|>assistantcommentary to=…<|message|>) is read, and only as the whole header.
    if open_header and at_start:
        return False
    if not stripped_evidence(text, at_start=at_start, closed=closer != "$END"):
        return False
    reading = read_stripped(text, at_start=at_start, glued_lead=not open_header)
    if reading is None:
        return False
    lead, headers = reading
    if open_header:
        if lead:
            return False
        headers = headers[:1]  # the glued author's header; the rest is lexed as written
    at = _positions(engine, start, end)
    exact = engine.exact_positions
    if lead and text[:lead].strip():
        if "AUTHOR" in engine.parser.choices():
            return False  # <|start|> then prose then a glued header: not this shape
        own_message(engine, text[:lead], start, at(lead), _START)
    for index, header in enumerate(headers):
        here, there = at(header.start), at(header.end)
        _close_open_message(engine, here if exact else end)  # ids: the run holds both
        if _START in engine.parser.choices():
            engine.feed(_START, "", here, here)
        written = {name: (at(a), at(b) if exact else end) for name, a, b in header.slices}
        if "AUTHOR" in engine.parser.choices():
            engine.feed("AUTHOR", Role.ASSISTANT.value, *written.get("author", (-1, -1)))
        elif "author" in written and engine.draft is not None:
            # A completion's header has no author terminal: the role it spells is the
            # (assistant) author's field all the same.
            engine.draft.fields.append(("author", *written["author"]))
        engine.feed(_CHANNEL, _SPELLING[_CHANNEL], here, here)
        engine.feed("CHANNEL_NAME", header.channel, *written.get("channel", (-1, -1)))
        shown = f"<|start|>assistant<|channel|>{header.channel}"
        if header.recipient:
            a, b = written["recipient"]
            engine.feed("CHANNEL_RECIPIENT", f" to={header.recipient}", a, b)
            shown += f" to={header.recipient}"
        if header.content_type:
            engine.feed("SPACE", " ", here, here)
            engine.feed("CONTENT_TYPE", header.content_type, *written["content_type"])
            shown += f" {header.content_type}"
        report_stripped(
            engine,
            f"{text[header.start : header.end]!r} read as {shown + '<|message|>'!r}",
            here,
            there if engine.exact_positions else end,
        )
        for name, a, b in header.slices:
            if name == "unread" and engine.draft is not None:  # a separator's ':'
                engine.draft.unread.append(text[a:b])
                engine.draft.unread_spans += written["unread"]
        if open_header:  # the real <|channel|>/<|message|> comes next
            if header.end < len(text):
                engine.hold(None, text[header.end :], there, end)
            return True
        engine.feed(_MESSAGE, _SPELLING[_MESSAGE], there, there)
        following = headers[index + 1].start if index + 1 < len(headers) else len(text)
        if following > header.end:  # token ids: the whole run is the range
            until = at(following) if exact else end
            engine.route_text(text[header.end : following], there, until)
    return True


# ------------------------------------------------------------------ the end of input
def header_at_end(engine: Repairable, end: int) -> bool:
    """HG150 at the end of input: the header never reached ``<|message|>``; content empty.

    Where the grammar cannot take ``<|message|>`` yet (``<|start|>assistant<|channel|>``),
    the message is kept as far as its header was read.
    """
    draft = engine.draft
    if draft is None or draft.content is not None:
        return False
    if open_empty_body(engine, "the input ended before <|message|>", end, keep=True):
        return engine.draft is None or engine.parser.feed_eof() or body_at_end(engine, end)
    return False


def body_at_end(engine: Repairable, end: int) -> bool:
    """HG159 at the end of input: a body still open where the grammar needs a terminator."""
    return end_open_body(engine, "the input ended before the message's terminator", end)


# ------------------------------------------------------------------ a header too long
def read_long_header(engine: Repairable, pending: PendingText, over: int) -> bool:
    """HG104: header text past the length limit.

    Text that may be a whole message (a completion's start, between messages) has no
    limit: it is prose. Elsewhere the header ends where it began, and its text is the
    content (memory stays bounded all the same: content streams).
    """
    if engine.at_completion_start or _START in engine.parser.choices():
        return True
    if not _fill_header_words(engine, pending.start):
        return False
    engine.take_pending()
    engine.diagnose(
        "HG104",
        f"header text is longer than {engine.max_header_length} characters: read as the"
        " message's content",
        pending.start,
        over,
    )
    engine.feed(_MESSAGE, "", pending.start, pending.start)
    for token, piece, begin, finish in pending.pieces:
        if token is None:
            engine.route_text(piece, begin, finish)
        else:
            engine.book.discard(begin, finish)
    return True


#: Header words fed empty to reach ``<|message|>`` (the actions read them as the parser's
#: role, no channel, no content type).
_EMPTY_WORDS = ("AUTHOR", "CHANNEL_NAME", "CONTENT_TYPE")


def _fill_header_words(engine: Repairable, at: int) -> bool:
    """Feed empty header words until ``<|message|>`` is acceptable; False if it never is."""
    for _ in range(3):
        choices = engine.parser.choices()
        if _MESSAGE in choices:
            return True
        word = next((w for w in _EMPTY_WORDS if w in choices), None)
        if word is None:
            return False
        engine.feed(word, "", at, at)
    return _MESSAGE in engine.parser.choices()
