"""Splitting input into pieces: control tokens and the text between them.

This is the project's one lexer for control tokens. In text, a control token is its exact
spelling (``tokens.CONTROL_SPELLING_RE``); in token ids, it is its special id and nothing
else. Both batch and incremental forms live here and agree by construction: the incremental
forms hold back what a later chunk could still change (a partial spelling, a split UTF-8
sequence) and otherwise cut exactly where the batch forms cut.
"""

from __future__ import annotations

import codecs
import operator
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .tokens import CONTROL_SPELLING_RE, FIRST_SPECIAL_ID, ControlToken

__all__ = [
    "IncrementalTextLexer",
    "PieceSink",
    "RunDecoder",
    "TextLexer",
    "TextRun",
    "TokenLexer",
    "partial_spelling_length",
    "split_text",
    "token_sequence",
]

_SPELLINGS = tuple(token.value for token in ControlToken)
_BY_SPELLING = {token.value: token for token in ControlToken}
#: Every proper prefix of a control token's spelling (what a chunk's end may hold back).
_PREFIXES = frozenset(s[:size] for s in _SPELLINGS for size in range(1, len(s)))
_SURROGATES = re.compile("[\udc80-\udcff]")


def split_text(text: str) -> Iterator[tuple[ControlToken | None, str, int, int]]:
    """Yield ``(control or None, text, start, end)`` pieces of a whole text."""
    pos = 0
    for match in CONTROL_SPELLING_RE.finditer(text):
        start = match.start()
        if start > pos:
            yield None, text[pos:start], pos, start
        yield ControlToken.from_spelling(match.group()), match.group(), start, match.end()
        pos = match.end()
    if pos < len(text):
        yield None, text[pos:], pos, len(text)


def partial_spelling_length(text: str) -> int:
    """How many trailing characters of ``text`` are a proper prefix of a control spelling."""
    start = text.rfind("<", max(0, len(text) - 12))
    while start >= 0:
        if text[start:] in _PREFIXES:
            return len(text) - start
        start = text.rfind("<", max(0, len(text) - 12), start)
    return 0


@dataclass
class IncrementalTextLexer:
    """The chunked form of :func:`split_text`: a partial spelling at a chunk's end waits."""

    _held: str = ""
    offset: int = 0

    def feed(self, chunk: str) -> Iterator[tuple[ControlToken | None, str, int, int]]:
        """Pieces that are certain after this chunk."""
        text = self._held + chunk
        keep = partial_spelling_length(text)
        ready, self._held = (text[:-keep], text[-keep:]) if keep else (text, "")
        base = self.offset
        self.offset += len(ready)
        for control, piece, start, end in split_text(ready):
            yield control, piece, base + start, base + end

    def holds(self) -> bool:
        """True while the start of a control token's spelling is held back."""
        return bool(self._held)

    def close(self) -> Iterator[tuple[ControlToken | None, str, int, int]]:
        """The held-back tail, which can no longer become a control token."""
        if self._held:
            held, self._held = self._held, ""
            yield None, held, self.offset, self.offset + len(held)
            self.offset += len(held)


@dataclass(frozen=True, slots=True)
class TextRun:
    """Facts about one run of ordinary token ids, known when the run ends."""

    start: int
    end: int
    invalid_utf8: bool
    spellings: tuple[str, ...]


@dataclass
class RunDecoder:
    """Decodes runs of ordinary token ids to text, holding split UTF-8 sequences back.

    Invalid bytes become U+FFFD, one per maximal subpart (as ``bytes.decode("utf-8",
    errors="replace")`` on the run's bytes, however the ids are fed). A run ends at any
    special id or at the end of input; :meth:`end_run` then reports whether the run had
    invalid bytes and which control-token spellings it contained as text (those are content,
    never structure).
    """

    table: Sequence[bytes]
    #: Optional: each ordinary id's text where it needs no check (``token_text_table``).
    texts: Sequence[str | None] | None = None
    _held: bytes = b""  # the start of a UTF-8 sequence that the next token may complete
    _held_from: int = 0  # the index of the id the held bytes came from
    text_start: int = 0
    _run_start: int = -1
    _invalid: bool = False
    _tail: str = ""
    _found: set[str] = field(default_factory=set)

    def decode(self, token_ids: Sequence[int], index: int) -> str:
        """The text that is complete after these ordinary ids (starting at ``index``).

        :attr:`text_start` is then the index of the first id the text came from: an id
        whose bytes were held back by an earlier call, if any.
        """
        if self._run_start < 0:
            self._run_start = index
        held = self._held
        self.text_start = self._held_from if held else index
        if len(token_ids) == 1:
            data = self.table[token_ids[0]]
        else:
            data = b"".join(map(self.table.__getitem__, token_ids))
        if held:
            data, self._held = held + data, b""
        try:
            text = data.decode("utf-8")  # the common case, in C
        except UnicodeDecodeError:
            # final=False leaves an incomplete trailing sequence unconsumed: hold it back.
            text, consumed = codecs.utf_8_decode(data, "surrogateescape", False)
            self._held = data[consumed:]
            if self._held:
                self._held_from = self._first_id_of_tail(token_ids, index, len(self._held))
            if _SURROGATES.search(text):
                # Invalid bytes: one U+FFFD per maximal subpart (Unicode's recommended
                # practice, and bytes.decode(errors="replace")), never one per byte.
                self._invalid = True
                text = data[:consumed].decode("utf-8", errors="replace")
        if not self._tail and text.isascii() and "<" not in text and "|" not in text:
            return text  # plain ASCII prose: nothing to replace or look for
        return self._checked(text)

    def _first_id_of_tail(self, token_ids: Sequence[int], index: int, size: int) -> int:
        """The index of the id in which the last ``size`` bytes begin."""
        position = len(token_ids)
        while size > 0 and position > 0:
            position -= 1
            size -= len(self.table[token_ids[position]])
        return index + position if size <= 0 else self.text_start

    def _checked(self, text: str) -> str:
        # A spelling can straddle tokens ("<|", "start", "|>"): keep the tail from the last
        # "<" while it could still open one. Prose without "<" or "|" skips all of this.
        if self._tail or "<" in text or "|" in text:
            window = self._tail + text
            if "|>" in window:
                self._found.update(m.group() for m in CONTROL_SPELLING_RE.finditer(window))
            last = window.rfind("<", max(0, len(window) - 12))
            self._tail = window[last:] if last >= 0 else ""
        return text

    @property
    def held_from(self) -> int:
        """The index of the id whose bytes are held back (meaningful while some are)."""
        return self._held_from

    def end_run(self, end: int) -> tuple[str, TextRun | None]:
        """Flush the run: the last text (split bytes as U+FFFD) and the run's facts."""
        if self._run_start < 0:
            return "", None
        held, self._held = self._held, b""
        text = ""
        if held:  # an incomplete sequence at the run's end: one U+FFFD
            self._invalid = True
            text = self._checked(held.decode("utf-8", errors="replace"))
        run = TextRun(self._run_start, end, self._invalid, tuple(sorted(self._found)))
        self._run_start, self._invalid, self._tail = -1, False, ""
        self._found = set()
        return text, run


class PieceSink(Protocol):
    """What the lexers push pieces into (the parsing engine)."""

    def control(self, token: ControlToken, start: int, end: int) -> None: ...
    def text(self, text: str, start: int, end: int) -> None: ...
    def special(self, token_id: object, index: int) -> None: ...
    def run_end(self, run: TextRun) -> None: ...
    def partial(self, text: str, start: int, end: int) -> None: ...


def token_sequence(value: object, caller: str) -> Sequence[object]:
    """``value`` when it can hold token ids (a sized, indexable sequence that is not text).

    A wrong argument type raises ``TypeError``; a sequence holding something other than an
    integer is bad input instead, reported per element (HG106) by :class:`TokenLexer`.
    """
    if (
        isinstance(value, (str, bytes, bytearray, memoryview, Mapping))
        or not hasattr(value, "__len__")
        or not hasattr(value, "__getitem__")
    ):
        raise TypeError(
            f"{caller} takes a sequence of token ids (ints), not {type(value).__name__}"
        )
    return value  # type: ignore[return-value]


def _as_token_id(value: object) -> int | None:
    """``value`` as an int when it is an integer (``numpy.int64`` too), else None (bool too)."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None


class TokenLexer:
    """Pushes the pieces of token ids into a sink, one call or many.

    Feeding all ids at once or one at a time produces the same pieces, except that text
    may arrive in more, smaller parts. ``per_token=True`` makes every feed one id at a time,
    so a sink that reports a position inside text (a call's arguments checked against its
    tool) names the same id however the ids were chunked.
    """

    def __init__(
        self,
        table: Sequence[bytes],
        sink: PieceSink,
        texts: Sequence[str | None] | None = None,
        *,
        per_token: bool = False,
    ) -> None:
        self._decoder = RunDecoder(table, texts)
        self._sink = sink
        #: The index of the next id.
        self.index = 0
        self._per_token = per_token

    def holds_nothing(self) -> bool:
        """True inside a run of ordinary ids with nothing held back: the next id whose text
        needs no check (``RunDecoder.texts``) is that text, at the next index."""
        held = self._decoder._held or self._decoder._tail
        return self._decoder.texts is not None and self._decoder._run_start >= 0 and not held

    def feed_one(self, token_id: int) -> None:
        """One ordinary id (``0 <= token_id < FIRST_SPECIAL_ID``): how serving loops call."""
        index = self.index
        self.index = index + 1
        decoder = self._decoder
        texts = decoder.texts
        if texts is not None and not decoder._held and not decoder._tail:
            # Nothing held back: the id's text is a table lookup (RunDecoder.texts), and this
            # is the hottest path there is, so it reads the decoder's state in place.
            text = texts[token_id]
            if text is not None:
                if decoder._run_start < 0:
                    decoder._run_start = index
                self._sink.text(text, index, index + 1)
                return
        text = decoder.decode((token_id,), index)
        if text:
            self._sink.text(text, decoder.text_start, index + 1)

    def feed(self, token_ids: Sequence[int]) -> None:
        """Lex more ids; an element that is not an integer is passed to ``sink.special``."""
        if self._per_token and len(token_ids) > 1:
            for position in range(len(token_ids)):
                self.feed(token_ids[position : position + 1])
            return
        if len(token_ids) == 1:
            token_id = token_ids[0]
            if type(token_id) is int and 0 <= token_id < FIRST_SPECIAL_ID:
                self.feed_one(token_id)  # one ordinary id at a time: the serving loop's call
                return
        if not all(type(token_id) is int for token_id in token_ids):
            self._feed_checked(token_ids)
            return
        sink, decoder = self._sink, self._decoder
        index = self.index
        run_start = -1
        for offset, token_id in enumerate(token_ids):
            if 0 <= token_id < FIRST_SPECIAL_ID:
                if run_start < 0:
                    run_start = offset
                continue
            if run_start >= 0:
                text = decoder.decode(token_ids[run_start:offset], index + run_start)
                if text:
                    sink.text(text, decoder.text_start, index + offset)
                run_start = -1
            self._end_run(index + offset)
            control = ControlToken.from_id(token_id)
            if control is None:
                sink.special(token_id, index + offset)
            else:
                sink.control(control, index + offset, index + offset + 1)
        if run_start >= 0:
            text = decoder.decode(token_ids[run_start:], index + run_start)
            if text:
                sink.text(text, decoder.text_start, index + len(token_ids))
        self.index = index + len(token_ids)

    def _feed_checked(self, values: Sequence[object]) -> None:
        # The rare path: convert integers of other types, report the rest one by one.
        ids: list[int] = []
        for value in values:
            token_id = _as_token_id(value)
            if token_id is not None:
                ids.append(token_id)
                continue
            if ids:
                self.feed(ids)
                ids = []
            self._end_run(self.index)
            self._sink.special(value, self.index)
            self.index += 1
        if ids:
            self.feed(ids)

    def _end_run(self, end: int) -> None:
        held_from = self._decoder.held_from
        text, run = self._decoder.end_run(end)
        if run is not None:
            if text:
                self._sink.text(text, held_from, run.end)
            self._sink.run_end(run)

    def close(self) -> int:
        """End of input: flush the last run; returns the number of ids seen."""
        self._end_run(self.index)
        return self.index


class TextLexer:
    """Pushes the pieces of text into a sink; a partial spelling at a chunk's end waits.

    It cuts exactly where :class:`IncrementalTextLexer` cuts (whose state it keeps), in one
    loop with no generator: a chunk with no ``<`` and nothing held is one text piece.
    """

    def __init__(self, sink: PieceSink) -> None:
        #: Where the text was cut so far (its ``offset``), and what it holds back.
        self.cuts = IncrementalTextLexer()
        self._sink = sink

    def feed(self, chunk: str) -> None:
        """Lex more text."""
        lexer, sink = self.cuts, self._sink
        base = lexer.offset
        if not lexer._held and "<" not in chunk:  # prose: one piece, nothing to hold back
            if chunk:
                lexer.offset = base + len(chunk)
                sink.text(chunk, base, base + len(chunk))
            return
        text = lexer._held + chunk
        keep = partial_spelling_length(text)
        if keep:
            text, lexer._held = text[:-keep], text[-keep:]
        else:
            lexer._held = ""
        lexer.offset = base + len(text)
        pos = 0
        for match in CONTROL_SPELLING_RE.finditer(text):
            start, end = match.span()
            if start > pos:
                sink.text(text[pos:start], base + pos, base + start)
            sink.control(_BY_SPELLING[match.group()], base + start, base + end)
            pos = end
        if pos < len(text):
            sink.text(text[pos:] if pos else text, base + pos, base + len(text))

    def close(self) -> int:
        """End of input: flush the held-back tail; returns the number of characters seen.

        A tail that began a control token's spelling (``<|cal``: an output cut inside a stop
        token) goes to ``sink.partial``, never to content; a lone ``<`` is text.
        """
        for _, piece, start, end in self.cuts.close():
            if piece.startswith("<|"):
                self._sink.partial(piece, start, end)
            else:
                self._sink.text(piece, start, end)
        return self.cuts.offset
