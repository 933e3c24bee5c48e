"""A second conservation check, independent of the parser's ledger: input characters against
the characters of the message fields.

The parser's own check (:func:`harmony_grammar.format.accounting.conservation_problems`)
trusts the ledger the engine writes. This one trusts nothing the engine says about where
things went: it reads only the input and the messages' field values, so a ledger that
records a sink (text kept "in a header's span" but in no field) cannot pass it.

* **The input's characters**: for text, the input with every complete control-token
  spelling taken out; for token ids, the ordinary ids decoded run by run (a special id is
  structure; ordinary ids that spell ``<|channel|>`` are text). Whitespace never counts.
* **The fields' characters**: every message's author, recipient, channel, content type,
  ``unread`` (header text read as no field) and content; a content type's ``<|constrain|>``
  is the control token, not text.
* **Missing** characters are in the input and in no field, as a multiset, less what the
  format itself spells as syntax or debris: one ``t``, ``o`` and ``=`` per ``to=`` in the
  input, and (text only) the characters of a partial control-token spelling (``<|cha``,
  ``<|call|``, a lone ``<``), which the issue lets the parser discard as debris; and a
  recipient or channel one header spells twice (``to=f to=f``), one field: forgiven one
  header at a time, never by a word another header holds.
* **Extra** characters are in a field and not in the input: a field read twice, or text
  made up. An author that is a role word and a channel that is a channel word may be a
  default the input never spelled (a completion's ``assistant``), so they are left out here.
* **Out of order**: the messages' contents, joined in message order, are not a subsequence
  of the input (content moved, or read twice).

This module never reads ``ParseResult.accounting`` or ``Message.span``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

from harmony_grammar.format.model import Message, ParseResult, Role
from harmony_grammar.format.tokens import (
    CHANNELS,
    CONTROL_SPELLING_RE,
    FIRST_SPECIAL_ID,
    ControlToken,
    special_token_spelling,
)
from harmony_grammar.format.vocabulary import load_encoding, token_bytes_table

__all__ = ["FieldCheck", "field_check", "input_text"]

_CONSTRAIN = ControlToken.CONSTRAIN.value
_DEFAULT_AUTHORS = frozenset(role.value for role in Role)


def _partial_spelling_re() -> re.Pattern[str]:
    # Every proper prefix of a control spelling, longest first, so a match is the whole
    # partial spelling (``<|call|`` and not ``<|c``); a lone ``<`` too (a cut's last char).
    prefixes = {token.value[:n] for token in ControlToken for n in range(1, len(token.value))}
    return re.compile("|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True)))


_PARTIAL = _partial_spelling_re()


@cache
def _byte_table() -> tuple[bytes, ...]:
    return token_bytes_table(load_encoding())


def input_text(source: str | Sequence[int], sep: str = "") -> str:
    """The input's text with its structure taken out (see the module docstring); ``sep``
    stands where structure was."""
    if isinstance(source, str):
        return CONTROL_SPELLING_RE.sub(sep, source)
    table = _byte_table()
    runs: list[str] = []
    run: list[bytes] = []
    for token in source:
        ordinary = type(token) is int and 0 <= token < min(FIRST_SPECIAL_ID, len(table))
        if ordinary:
            run.append(table[token])
        elif run:
            runs.append(b"".join(run).decode("utf-8", errors="replace"))
            run = []
    if run:
        runs.append(b"".join(run).decode("utf-8", errors="replace"))
    return sep.join(runs)


#: Whitespace, exactly as ``str.isspace`` says (``re``'s ``\s`` is the same Unicode property).
_SPACE = re.compile(r"\s+")


def _visible(text: str) -> str:
    return _SPACE.sub("", text)


def _visible_counts(text: str) -> Counter[str]:
    """``Counter(_visible(text))``, counted in C: count everything, then drop whitespace."""
    counts = Counter(text)
    for ch in [ch for ch in counts if ch.isspace()]:
        del counts[ch]
    return counts


def _fields(message: Message, *, ids: bool) -> tuple[list[str], list[str]]:
    """``(fields the input must spell, fields that may be defaults)`` of one message."""
    ctype = message.content_type or ""
    # In ids, <|constrain|> is the special id (structure); in text, its spelling is.
    ctype = ctype.removeprefix(_CONSTRAIN) if ids else ctype.replace(_CONSTRAIN, "")
    spelled = [
        message.recipient or "",
        ctype,
        getattr(message, "unread", "") or "",
        getattr(message, "superseded", "") or "",
        message.content,
    ]
    maybe_default: list[str] = []
    author = message.author
    (maybe_default if author in _DEFAULT_AUTHORS else spelled).append(author)
    channel = message.channel or ""
    (maybe_default if channel in CHANNELS else spelled).append(channel)
    return spelled, maybe_default


@dataclass
class FieldCheck:
    """What :func:`field_check` found; :attr:`ok` when nothing."""

    missing: Counter[str] = field(default_factory=Counter)
    extra: Counter[str] = field(default_factory=Counter)
    out_of_order: bool = False

    @property
    def ok(self) -> bool:
        """True when no character is missing, none is extra, and contents are in order."""
        return not self.missing and not self.extra and not self.out_of_order

    @property
    def missing_count(self) -> int:
        """How many input characters are in no field."""
        return sum(self.missing.values())

    def problems(self) -> list[str]:
        """One line per finding (empty when :attr:`ok`)."""
        out = []
        if self.missing:
            out.append(f"in no field: {''.join(sorted(self.missing.elements()))!r}")
        if self.extra:
            out.append(
                f"in a field but not in the input: {''.join(sorted(self.extra.elements()))!r}"
            )
        if self.out_of_order:
            out.append("the contents are not in input order")
        return out


#: Where one header ends and the next begins: a word written twice between two of these is
#: written twice in one header.
_HEADER_BOUNDARY = re.compile(r"<\|(?:start|message|end|call|return)\|>")


def _written_twice(source: str | Sequence[int], messages: Sequence[Message]) -> Counter[str]:
    """The characters of a field a header spells twice (docs/parser.md: ``to=f to=f``,
    ``to=f<|channel|>commentary to=f``, ``final<|channel|>final``, ``final!final!``): a
    recipient, channel or author word written more often in the input than in all the fields
    together, as a whole word, forgiven only as often as it is repeated *within one header*
    (between two of ``<|start|>``, ``<|message|>`` and the terminators), so a word lost from
    another header is never forgiven by it."""
    twice: Counter[str] = Counter()
    fields = [
        value
        for m in messages
        for value in (
            m.author,
            m.recipient,
            m.channel,
            m.content_type,
            m.unread,
            getattr(m, "superseded", ""),
            m.content,
        )
        if value
    ]
    text = _structured_text(source)
    headers = _HEADER_BOUNDARY.split(text)
    words = {m.recipient for m in messages} | {m.channel for m in messages}
    for word in (words | {m.author for m in messages}) - {None, ""}:
        assert word is not None
        spelled = re.compile(rf"(?<![\w.\-:/@]){re.escape(word)}(?![\w.\-:/@])")
        extra = len(spelled.findall(text)) - sum(len(spelled.findall(f)) for f in fields)
        repeated = sum(max(0, len(spelled.findall(header)) - 1) for header in headers)
        for _ in range(min(extra, repeated)):
            twice.update(_visible(word))
    return twice


def _structured_text(source: str | Sequence[int]) -> str:
    """The input as text with its control tokens spelled (ids: special ids as their
    spelling, ordinary runs decoded), so headers can be told apart."""
    if isinstance(source, str):
        return source
    table = _byte_table()
    out: list[str] = []
    run: list[bytes] = []
    for token in source:
        if type(token) is int and 0 <= token < min(FIRST_SPECIAL_ID, len(table)):
            run.append(table[token])
            continue
        if run:
            out.append(b"".join(run).decode("utf-8", errors="replace"))
            run = []
        out.append(special_token_spelling(token) if type(token) is int else " ")
    if run:
        out.append(b"".join(run).decode("utf-8", errors="replace"))
    return "".join(out)


def field_check(source: str | Sequence[int], result: ParseResult) -> FieldCheck:
    """Check a lenient parse of ``source`` field by field (see the module docstring)."""
    ids = not isinstance(source, str)
    text = input_text(source)
    have = _visible_counts(text)
    spelled: list[str] = []
    defaults: list[str] = []
    for message in result.messages:
        must, may = _fields(message, ids=ids)
        spelled += must
        defaults += may
    read = _visible_counts("".join(spelled))
    may_be_default = _visible_counts("".join(defaults))
    syntax = text.count("to=")
    forgiven = Counter({"t": syntax, "o": syntax, "=": syntax})
    if not ids:
        forgiven.update(_visible_counts("".join(_PARTIAL.findall(text))))
    forgiven.update(_written_twice(source, result.messages))
    # Counter arithmetic in one pass (Counter's ``-`` loops in Python, once per operator):
    # missing = have - read - may_be_default - forgiven, extra = read - have, each >= 0.
    missing: Counter[str] = Counter()
    extra: Counter[str] = Counter()
    for ch in have.keys() | read.keys():
        got, want = read.get(ch, 0), have.get(ch, 0)
        lost = want - got - may_be_default.get(ch, 0) - forgiven.get(ch, 0)
        if lost > 0:
            missing[ch] = lost
        if got > want:
            extra[ch] = got - want
    visible = _visible(text)
    contents = [_visible(m.content) for m in result.messages]
    return FieldCheck(missing, extra, not _in_order(visible, contents))


def _in_order(text: str, contents: list[str]) -> bool:
    """Whether ``contents``, joined, are a subsequence of ``text``."""
    # Fast path: each content found whole, one after the other, is an embedding.
    position = 0
    for content in contents:
        found = text.find(content, position)
        if found < 0:
            break
        position = found + len(content)
    else:
        return True
    # Else the greedy check, character by character (earliest match: it never misses one).
    rest = iter(text)
    return all(ch in rest for ch in "".join(contents))
