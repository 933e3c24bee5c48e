"""Checking the conservation ledger of a parse: did any of the input go missing?

:attr:`ParseResult.accounting <harmony_grammar.format.model.ParseResult.accounting>` says
where the input went; :func:`conservation_problems` checks it against the input itself, so
a test, or a user auditing a dataset, can prove that nothing was lost.

For text input the check is field by field. Every character is in exactly one of:

* a header field whose value is the slice of the input it was read from (author, name,
  recipient, channel, content type; a repair's reading of it is named by a diagnostic:
  lower case, ``functions.`` before a declared name), or a header word the message's own
  fields replaced (:attr:`~harmony_grammar.format.model.Message.superseded`: a header
  written over, a stray ``to=assistant``);
* a message's content (its ranges, joined, are the content exactly);
* a message's :attr:`~harmony_grammar.format.model.Message.unread` text (no letter: stray
  punctuation, or a number with closing punctuation after a broken header's channel word;
  its ranges, joined, are ``unread`` exactly);
* a discarded range (in lenient mode control-token debris only, or a control token's
  spelling cut short at the end of input; in strict mode also an error's skip, which the
  error names);
* syntax: whitespace, complete control-token spellings, and the ``to=`` before a recipient
  or the ``:`` before a name.

The ranges of each message lie inside its span, nothing overlaps, and together with the
syntax they tile the input. The check sorts the ranges once and walks them: linear in the
input and the ledger (Python's sort is linear on ranges that come nearly in order).

Token ids have no character positions inside a run of text, so for them the check is by
message: spans and discarded ranges tile the ids with whitespace between, and lenient mode
discards only special ids.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..base.deprecation import renamed_keyword
from .lexer import partial_spelling_length
from .model import Accounting, Message, ParseResult, Span
from .tokens import CONTROL_SPELLING_RE, FIRST_SPECIAL_ID, special_token_spelling
from .vocabulary import load_encoding, token_bytes_table

__all__ = ["conservation_problems"]

#: What may stand between the ranges: whitespace and complete control-token spellings.
_SYNTAX = re.compile(rf"(?:\s|{CONTROL_SPELLING_RE.pattern})*")
_FUNCTIONS = "functions."


def conservation_problems(
    source: str | Sequence[int],
    result: ParseResult,
    *,
    lenient: bool = True,
    strict: bool | None = None,
) -> list[str]:
    """What the ledger of ``result`` (parsed from ``source``) fails to account for.

    An empty list means every character (or token id) of ``source`` is in a field, the
    content or the unread text of a message, in a discarded range a diagnostic names, or
    is syntax; and (``lenient=True``) only control-token debris was discarded. ``lenient``
    must say which mode produced ``result``; ``strict``, its former spelling (negated),
    still works for one release with a DeprecationWarning.
    """
    if strict is not None:
        renamed_keyword("conservation_problems", f"strict={strict!r}", f"lenient={not strict!r}")
        lenient = not strict
    ledger = result.accounting
    if ledger is None:
        return ["the result carries no accounting"]
    problems: list[str] = []
    if ledger.length != len(source):
        problems.append(f"the ledger covers {ledger.length} of {len(source)} units")
    if len(ledger.content) != len(result.messages):
        problems.append(
            f"{len(ledger.content)} content ledgers for {len(result.messages)} messages"
        )
        return problems
    if isinstance(source, str):
        problems += _text_problems(source, result.messages, ledger)
        debris = _text_debris
    else:
        problems += _ids_problems(list(source), result.messages, ledger)
        debris = _ids_debris
    if lenient:
        for span in ledger.discarded:
            if not debris(source, span):
                problems.append(f"discarded {span} is not control-token debris")
    return problems


# ------------------------------------------------------------------ text: field by field
def _text_problems(text: str, messages: Sequence[Message], ledger: Accounting) -> list[str]:
    problems: list[str] = []
    # (start, end, kind, message index, field name): kind orders ranges that start together
    ranges: list[tuple[int, int, str, int, str]] = []
    fields = ledger.fields or ((),) * len(messages)
    unread = ledger.unread or ((),) * len(messages)
    for index, message in enumerate(messages):
        span = message.span
        if span is None:
            problems.append(f"message {index} has no span")
            continue
        owned: list[tuple[int, int, str, int, str]] = []
        for name, where in fields[index]:
            if where is not None:
                owned.append((where.start, where.end, "field", index, name))
                shown = text[where.start : where.end]
                if not _field_holds(message, name, shown):
                    problems.append(f"message {index}: {name} is not the input {shown[:40]!r}")
        problems += _unspelled_fields(index, message, fields[index])
        content = ledger.content[index]
        owned += [(s.start, s.end, "content", index, "") for s in content]
        read = "".join(text[s.start : s.end] for s in content)
        if read != message.content:
            problems.append(
                f"message {index}: content {message.content[:40]!r} is not the input it came"
                f" from ({read[:40]!r})"
            )
        owned += [(s.start, s.end, "unread", index, "") for s in unread[index]]
        stray = "".join(text[s.start : s.end] for s in unread[index])
        if stray != message.unread:
            problems.append(f"message {index}: unread {message.unread[:40]!r} is not the input")
        if any(c.isalpha() for c in message.unread):
            problems.append(f"message {index}: unread {message.unread[:40]!r} holds a letter")
        for start, end, kind, _, _ in owned:
            if not span.start <= start <= end <= span.end:
                problems.append(f"message {index}: {kind} {Span(start, end)} outside {span}")
        ranges += owned
    ranges += [(s.start, s.end, "discarded", -1, "") for s in ledger.discarded]
    if ledger.next_turn is not None:  # a prompt's trailing <|start|>{author}: a header
        ranges.append((ledger.next_turn.start, ledger.next_turn.end, "next turn", -1, ""))
    ranges.sort()
    position = 0
    for start, end, kind, _, name in ranges:
        if start < position:
            problems.append(f"{kind} {Span(start, end)} overlaps what precedes it")
        elif start > position:
            gap = text[position:start]
            if kind == "field" and name in ("recipient", "superseded", "author"):
                gap = gap.removesuffix("to=")  # a recipient's, as written (HG167, HG168)
            elif kind == "field" and name == "name":
                gap = gap.removesuffix(":")
            if _SYNTAX.fullmatch(gap) is None:
                problems.append(f"input {position}-{start} is in no field: {gap[:40]!r}")
        position = max(position, end)
    rest = text[position:]
    if _SYNTAX.fullmatch(rest) is None:
        problems.append(f"input {position}-{len(text)} is in no field: {rest[:40]!r}")
    return problems


def _field_holds(message: Message, name: str, written: str) -> bool:
    """Whether the field ``name`` of ``message`` was read from ``written`` (as written, or
    as a repair reads it: case, ``functions.``, a role a repair changed)."""
    if name == "author":
        return written in (message.role.value, message.name, message.recipient)
    if name == "name":
        return written == message.name
    if name == "channel":
        return written == message.channel
    if name == "superseded":  # a header word the message's own fields replaced
        return written in message.superseded.split(" ")
    if name == "recipient":
        recipient = message.recipient
        return recipient is not None and written in (recipient, recipient.removeprefix(_FUNCTIONS))
    if name == "content_type":
        value = (message.content_type or "").removeprefix("<|constrain|>")
        return written.lower() == value.lower()
    return False


def _unspelled_fields(
    index: int, message: Message, fields: Sequence[tuple[str, Span | None]]
) -> list[str]:
    """A field the message holds with no entry in the ledger, not even as a default."""
    named = {name for name, _ in fields}
    held = {
        "channel": message.channel,
        "recipient": message.recipient,
        "content_type": message.content_type,
    }
    return [
        f"message {index}: {name} {value!r} has no place in the ledger"
        for name, value in held.items()
        if value is not None and name not in named
    ]


def _text_debris(source: str | Sequence[int], span: Span) -> bool:
    """Control-token spellings, and at the very end of input the start of one (cut)."""
    assert isinstance(source, str)
    rest = CONTROL_SPELLING_RE.sub("", source[span.start : span.end])
    if span.end == len(source) and rest.startswith("<|"):
        return partial_spelling_length(rest) == len(rest)
    return rest == ""


# ------------------------------------------------------------------ token ids: by message
def _ids_problems(ids: list[object], messages: Sequence[Message], ledger: Accounting) -> list[str]:
    problems: list[str] = []
    decode = _decoder()
    regions = [(s.start, s.end) for s in ledger.discarded]
    if ledger.next_turn is not None:
        regions.append((ledger.next_turn.start, ledger.next_turn.end))
    for index, message in enumerate(messages):
        span = message.span
        if span is None:
            problems.append(f"message {index} has no span")
            continue
        regions.append((span.start, span.end))
        content = ledger.content[index]
        if message.content and not content:
            problems.append(f"message {index}: content with no input range")
        for part in content:
            if not span.start <= part.start <= part.end <= span.end:
                problems.append(f"message {index}: content {part} outside its span {span}")
            elif part.end <= part.start and message.content:
                problems.append(f"message {index}: content from the empty range {part}")
    regions.sort()
    position = 0
    for start, end in regions:
        # Overlaps are no problem here: debris inside a header is in its message's span, and
        # messages read from one run of text share its range (no positions inside a run).
        if start > position:
            gap = decode(ids[position:start])
            if _SYNTAX.fullmatch(gap) is None:
                problems.append(f"input {position}-{start} is in no message: {gap[:40]!r}")
        position = max(position, end)
    if position < len(ids):
        gap = decode(ids[position:])
        if _SYNTAX.fullmatch(gap) is None:
            problems.append(f"input {position}-{len(ids)} is in no message: {gap[:40]!r}")
    return problems


def _ids_debris(source: str | Sequence[int], span: Span) -> bool:
    return all(
        not isinstance(token, int) or isinstance(token, bool) or token >= FIRST_SPECIAL_ID
        for token in source[span.start : span.end]
    )


def _decoder() -> Callable[[Sequence[object]], str]:
    table = token_bytes_table(load_encoding())

    def spelled(token: object) -> bytes:
        if not isinstance(token, int) or isinstance(token, bool) or token < 0:
            return b""
        if token < len(table):
            return table[token]
        return special_token_spelling(token).encode() if token >= FIRST_SPECIAL_ID else b""

    def decode(ids: Sequence[object]) -> str:
        return b"".join(map(spelled, ids)).decode("utf-8", errors="replace")

    return decode
