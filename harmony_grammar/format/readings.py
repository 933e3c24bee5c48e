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

When ``<|message|>`` arrives, the ``HEADER_COMPLETE`` rows look at the whole header once more
(HG154, HG165-HG169); at the end of input, the ``END_OF_INPUT`` rows close what is open.
Like :mod:`.recoveries`, every row feeds the grammar's terminals and reports its own code,
and none drops text: what a header cannot hold becomes content.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .draft import Draft
from .model import RecipientPosition, Role
from .recoveries import (
    Repairable,
    end_open_body,
    open_empty_body,
    report_before_header,
    report_call_like,
    report_garbage,
    report_stripped,
    start_missing,
)
from .stripped import read_stripped, stripped_evidence
from .tokens import CHANNEL_WORD, ControlToken

__all__ = [
    "DOTTED_NAME",
    "body_at_end",
    "header_at_end",
    "read_author_without_start",
    "read_channel_without_token",
    "read_free_header",
    "read_header_before_space",
    "read_headerless",
    "read_leading_recipient",
    "read_stripped_headers",
    "recover_stray_text",
    "repair_bare_function_name",
    "repair_call_shaped_as_reply",
    "repair_call_without_channel",
    "repair_content_type_case",
    "repair_glued_content_type",
    "repair_stray_to_assistant",
    "tool_in_channel_slot",
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
#: A content type glued onto the recipient by the model: ``to=functions.shelljson``.
_GLUED_JSON = re.compile(r"^(?P<recipient>.*[A-Za-z0-9])json$")
#: A tool's dotted name where the channel name belongs: ``<|channel|>functions.read``.
DOTTED_NAME = re.compile(
    rf"(?!{CHANNEL_WORD}\.)[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z_][A-Za-z0-9_\-]*)+"
    r"(?![^\s<>|])"
)
#: ``assistant`` glued to a channel word: the one stripped shape read inside a real header.
_GLUED_AUTHOR = re.compile(f"assistant{CHANNEL_WORD}")
#: A channel word alone (a recipient and a content type may follow) where ``<|channel|>``
#: was stripped: ``analysis<|message|>``, `` commentary to=functions.f json<|message|>``.
_BARE_CHANNEL = re.compile(
    rf"\s*({CHANNEL_WORD})(?=$| to=[^\s<>|]+(?: ?[a-z]+)?$| [a-z]+$)"
)
#: An author a header may begin with: a role (``user:alice``) or a tool's dotted name.
_AUTHOR_WORD = re.compile(
    r"(?:(?:system|developer|user|assistant)(?![^\s:<>|=])|[A-Za-z_][\w\-]*(?:\.[\w\-]+)+)"
)
#: ``to=NAME`` at a completion's very start, its space lost.
_LEADING_RECIPIENT = re.compile(r"\s*(to=[^\s<>|]+)")
#: One word before a recipient: ``commentary to=…``.
_WORD_THEN_RECIPIENT = re.compile(r"\s*[^\s<>|]+(?= to=)")
#: A channel word glued to its text (``finalHello``): the evidence rule of the stripped
#: dialect's LEAD_CHANNEL (a capital letter, a quote, a brace or bracket, non-ASCII).
_CHANNEL_GLUED = re.compile(CHANNEL_WORD + r"(?=[A-Z\"{\[\u0080-\U0010ffff])")
#: A channel word repeated as junk before prose (``?commentary? The user…``).
_CHANNEL_WORD_JUNK = re.compile(CHANNEL_WORD + r"(?=[^A-Za-z\s])")
_FUNCTIONS = "functions."


def _positions(engine: Repairable, start: int, end: int) -> Callable[[int], int]:
    """Input offset of an offset into pending text (token ids: the whole run's range)."""
    if engine.exact_positions:
        return lambda offset: start + offset
    return lambda offset: start


def _outside_messages(engine: Repairable) -> bool:
    """Whether the parser stands where a message may begin (no header is open)."""
    return engine.at_completion_start or _START in engine.parser.choices()


# ------------------------------------------------------------------ a message of its own
def _own_message(engine: Repairable, text: str, start: int, end: int, closer: str) -> bool:
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
    if engine.at_completion_start:
        if followed:
            code = "HG171"
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
    if code == "HG171":
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
        if engine.header_prefix(text):
            return False  # a header, then debris (HG156) or its text (read_free_header)
        if closer in _HEADER_CLOSERS and (
            text.strip() == engine.role.value
            or not any(c.isalnum() for c in text)
            or _debris_then_header(engine, text)
        ):
            return False
    elif closer in _HEADER_CLOSERS and not engine.completion and engine.lexes_as_header(text):
        return False
    return _own_message(engine, text, start, end, closer)


def _debris_then_header(engine: Repairable, text: str) -> bool:
    """One word, then a header: ``commentary to=functions.f<|channel|>…`` (the word is
    header debris, HG156, and the recipient stands)."""
    word = _WORD_THEN_RECIPIENT.match(text)
    return word is not None and engine.lexes_as_header(text[word.end() :])


def read_header_before_space(
    engine: Repairable, text: str, start: int, end: int, closer: str
) -> bool:
    """HG156: ``<|channel|>analysis <|message|>``: whitespace that ends a header's text.

    Lexed, its space would commit the header to a content type that never comes (only
    ``<|constrain|>`` may follow a space); it is header garbage, and the header ends as
    written.
    """
    if closer not in (_MESSAGE, _CHANNEL) or not text or not text[-1].isspace():
        return False
    draft = engine.draft
    if draft is None or draft.content is not None:
        return False
    kept = len(text.rstrip())
    at = _positions(engine, start, end)
    if kept:
        engine.lex_header_text(text[:kept], start, at(kept) if engine.exact_positions else end)
    report_garbage(engine, text[kept:], at(kept), end)
    return True


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
    if _AUTHOR_WORD.match(text, lead) is None or not engine.lexes_as_header_after_start(
        text[lead:]
    ):
        return False  # any other word is text of its own (read_headerless), never an author
    at = _positions(engine, start, end)
    start_missing(
        engine, f"{stripped[:40]!r} began a message without <|start|>; read as its author", at(lead)
    )
    engine.lex_header_text(text[lead:], at(lead), end)
    return True


def read_channel_without_token(
    engine: Repairable, text: str, start: int, end: int, closer: str
) -> bool:
    """HG160: ``analysis<|message|>…``: a channel word whose ``<|channel|>`` was stripped.

    Where a header may take ``<|channel|>`` and the text before ``<|message|>`` (or
    ``<|constrain|>``) is a channel word, with a recipient and content type after it if any,
    the word is the channel: a header position, so token ids read it too.
    """
    if closer == _CHANNEL or closer not in _HEADER_CLOSERS:
        return False
    if _CHANNEL not in engine.parser.choices():
        return False
    match = _BARE_CHANNEL.match(text)
    if match is None:
        return False
    at = _positions(engine, start, end)
    here = at(match.start(1))
    report_stripped(
        engine,
        f"<|channel|> before {match.group(1)!r}",
        here,
        at(match.end(1)) if engine.exact_positions else end,
    )
    engine.feed(_CHANNEL, "", here, here)
    engine.lex_header_text(text[match.start(1) :], here, end)
    return True


def recover_stray_text(engine: Repairable, text: str, pos: int, start: int, end: int) -> int | None:
    """HG164/HG152: text between messages that did not lex: a message of its own."""
    if _START not in engine.parser.choices() or not text[pos:].strip():
        return None
    _own_message(engine, text[pos:], start, end, "$END" if engine.completion else _START)
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
    if lead and text[:lead].strip():
        if "AUTHOR" in engine.parser.choices():
            return False  # <|start|> then prose then a glued header: not this shape
        _own_message(engine, text[:lead], start, at(lead), _START)
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
        report_stripped(
            engine,
            f"{text[header.start : header.end]!r} read as {shown + '<|message|>'!r}",
            here,
            there if engine.exact_positions else end,
        )
        if open_header:  # the real <|channel|>/<|message|> comes next
            if header.end < len(text):
                engine.lex_header_text(text[header.end :], there, end)
            return True
        engine.feed(_MESSAGE, _SPELLING[_MESSAGE], there, there)
        following = headers[index + 1].start if index + 1 < len(headers) else len(text)
        if following > header.end:
            engine.route_text(text[header.end : following], there, at(following))
    return True


# ------------------------------------------------------------------ a recipient first
def read_leading_recipient(
    engine: Repairable, text: str, start: int, end: int, closer: str
) -> bool:
    """HG176: ``to=functions.f<|channel|>commentary json<|message|>…``: the recipient first.

    At a completion's start the role section's `` to=`` lost its space (the prompt's
    ``<|start|>assistant`` ends where it stood): it is the recipient, and the call is kept.
    """
    if closer not in _HEADER_CLOSERS or not engine.at_completion_start:
        return False
    match = _LEADING_RECIPIENT.match(text)
    if match is None or "ROLE_RECIPIENT" not in engine.parser.choices():
        return False
    if engine.lexes_as_header(text):
        return False  # `` to=…`` as written
    rest = text[match.end() :]
    if not engine.lexes_as_header(" " + match.group(1) + rest):
        return False
    at = _positions(engine, start, end)
    here, there = at(match.start(1)), at(match.end())
    engine.diagnose(
        "HG176",
        f"the completion began with {match.group(1)!r}, its space lost: read as its recipient",
        here,
        there if engine.exact_positions else end,
    )
    engine.feed("ROLE_RECIPIENT", " " + match.group(1), here, there)
    if rest:
        engine.lex_header_text(rest, there, end)
    return True


# ------------------------------------------------------------------ prose in a header
def _content_start(rest: str) -> int | None:
    """Where the content begins in what follows a header: its first letter, brace, bracket
    or quote, past junk (``... ``, `` 2? ``, a channel word glued to punctuation). None
    when nothing but junk follows; digits alone (``42``) are content too."""
    pos = 0
    while pos < len(rest):
        char = rest[pos]
        if char.isalpha():
            glued = _CHANNEL_WORD_JUNK.match(rest, pos)
            if glued is None:
                return pos
            pos = glued.end()
            continue
        if char in '{["':
            return pos
        pos += 1
    stripped = rest.strip()
    if stripped and any(c.isalnum() for c in stripped):
        return len(rest) - len(rest.lstrip())
    return None


def read_free_header(engine: Repairable, text: str, start: int, end: int, closer: str) -> bool:
    """HG161: a header that never reached ``<|message|>`` and holds prose or a body.

    ``<|channel|>commentary... The user asks: …<|end|>``, ``<|channel|>commentary Hello<|end|>``,
    ``<|channel|>final {"answer": "hi"}``: the model wrote its text where the header should
    have ended. The header stands as far as it reads (a bare content type other than
    ``json``/``code`` is not one here: it is the first word of the text); junk between it and
    the text stays in the header; the rest is the content, verbatim. ``commentary`` with no
    recipient is read as ``analysis`` (it is reasoning, never a preamble for the user); a
    call's arguments after its header had their ``<|message|>`` stripped (HG160).
    """
    draft = engine.draft
    if closer in _HEADER_CLOSERS or draft is None or draft.content is not None:
        return False
    at_start = engine.at_completion_start
    if not at_start and _outside_messages(engine):
        return False
    glued = _CHANNEL_GLUED.match(text) if "CHANNEL_NAME" in engine.parser.choices() else None
    cut = glued.end() if glued is not None else engine.header_prefix(text)
    if at_start and not cut:
        return False  # no header at all: a message of its own (read_headerless)
    rest = text[cut:]
    offset = _content_start(rest)
    at = _positions(engine, start, end)
    if offset is None:
        if not cut or not rest:
            return False
        # The header, then only junk (a space, a "?"): lexed, a trailing space would commit
        # the header to a content type that never comes; the junk is header garbage.
        engine.lex_header_text(text[:cut], start, at(cut) if engine.exact_positions else end)
        report_garbage(engine, rest, at(cut), end)
        return True
    begins = cut + offset
    prose = at(begins)
    if cut:
        engine.lex_header_text(text[:cut], start, at(cut) if engine.exact_positions else end)
    if draft.channel is None and _CHANNEL not in engine.parser.choices():
        engine.fill_header_words(prose)  # ``<|start|> Hello<|end|>``: the author first
    if draft.channel is None and _CHANNEL in engine.parser.choices():
        engine.feed(_CHANNEL, "", prose, prose)
        engine.feed("CHANNEL_NAME", _CHANNEL_BY_CLOSER.get(closer, _DEFAULT_CHANNEL), prose, prose)
    engine.fill_header_words(prose)
    shown = text[:begins]
    if draft.recipient is not None and text[begins] in "{[":
        report_stripped(
            engine,
            f"<|message|> before the arguments of {draft.recipient!r}",
            prose,
            prose if engine.exact_positions else end,
        )
    else:
        if draft.channel == "commentary" and draft.recipient is None:
            draft.channel = "analysis"
        engine.diagnose(
            "HG161",
            f"the header holds text and no <|message|>: {shown!r} read as channel"
            f" {draft.channel!r}, the rest as its content",
            at(0),
            prose if engine.exact_positions else end,
        )
    engine.feed(_MESSAGE, "", prose, prose)
    engine.route_text(text[begins:], prose, end)
    return True


# ------------------------------------------------------------------ header text, before lexing
def tool_in_channel_slot(
    engine: Repairable, text: str, pos: int, start: int, end: int
) -> int | None:
    """HG166: ``<|channel|>functions.read``: a tool's name where the channel belongs.

    Read as ``<|channel|>commentary to=functions.read`` (calls go to commentary); returns
    where lexing resumes, or None when no dotted name stands at ``pos``.
    """
    match = DOTTED_NAME.match(text, pos)
    if match is None or "CHANNEL_NAME" not in engine.parser.choices():
        return None
    name = match.group()
    here = start
    there = start + len(name) if engine.exact_positions else end
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
def repair_content_type_case(engine: Repairable, draft: Draft, at: int) -> None:
    """HG155: a content type not in lower case (``JSON``, ``<|constrain|>Json``)."""
    written = draft.content_type
    if written is None or written == written.lower():
        return
    constrain = ControlToken.CONSTRAIN.value
    read = constrain + written[len(constrain) :].lower() if draft.constrained else written.lower()
    engine.diagnose("HG155", f"content type {written!r} read as {read!r}", draft.start, at)
    draft.content_type = read


def repair_call_shaped_as_reply(engine: Repairable, draft: Draft, at: int) -> None:
    """HG168: ``<|start|>functions.f<|channel|>commentary to=assistant code<|message|>``.

    A real tool reply puts ``to=assistant`` in the role section and has no content type:
    this is the assistant's call to the tool, written in a reply's shape.
    """
    if draft.role is not Role.TOOL or draft.recipient != Role.ASSISTANT.value:
        return
    if draft.recipient_position is not RecipientPosition.CHANNEL or not draft.content_type:
        return
    engine.diagnose(
        "HG168",
        f"a header shaped like {draft.name!r}'s reply but with a content type in the"
        f" channel section: read as the assistant's call to {draft.name!r}",
        draft.start,
        at,
    )
    draft.role, draft.recipient, draft.name = Role.ASSISTANT, draft.name, None


def repair_stray_to_assistant(engine: Repairable, draft: Draft, at: int) -> None:
    """HG167: ``to=assistant`` in the assistant's own header is no recipient."""
    if draft.role is not Role.ASSISTANT or draft.recipient != Role.ASSISTANT.value:
        return
    engine.diagnose(
        "HG167", "a stray 'to=assistant' in the assistant's own header was ignored", draft.start, at
    )
    draft.recipient = draft.recipient_position = None


def repair_glued_content_type(engine: Repairable, draft: Draft, at: int) -> None:
    """HG154: ``to=functions.fs_readjson``: a content type glued onto the recipient.

    With known tools the name is split after the longest declared name it starts with
    (``message_agentresponse`` → ``message_agent`` + ``response``); otherwise only a
    trailing ``json`` is split off.
    """
    if not draft.recipient or draft.content_type is not None:
        return
    recipient = draft.recipient
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


def repair_bare_function_name(engine: Repairable, draft: Draft, at: int) -> None:
    """HG169: a declared function named without ``functions.`` gets it."""
    recipient = draft.recipient
    if not recipient or draft.role is Role.TOOL or "." in recipient:
        return
    if recipient not in engine.tool_names:
        return
    engine.diagnose(
        "HG169",
        f"recipient {recipient!r} is a declared function: read as 'functions.{recipient}'",
        draft.start,
        at,
    )
    draft.recipient = _FUNCTIONS + recipient


def repair_call_without_channel(engine: Repairable, draft: Draft, at: int) -> None:
    """HG165: a ``functions.*`` call with no channel is on ``commentary``."""
    if not draft.is_tool_call or draft.channel is not None:
        return
    if not (draft.recipient or "").startswith(_FUNCTIONS):
        return
    engine.diagnose(
        "HG165",
        f"the call to {draft.recipient!r} had no channel: read on 'commentary'",
        draft.start,
        at,
    )
    draft.channel = "commentary"


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
