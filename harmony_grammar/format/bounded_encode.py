"""Encoding ordinary text with tiktoken in bounded pieces, with the ids unchanged.

tiktoken splits text with a pre-tokenizer regex and runs BPE on each match. Its memory grows
with the longest input it is handed (about 60 bytes per character for one long match, so 8 MB
of NUL bytes peaked at 541 MB and 256 MB at 13 GB). Here the text is cut into pieces of about
:data:`PIECE_CHARS` characters, only where the pre-tokenizer cuts anyway, so encoding the
pieces one by one gives exactly the ids of encoding the whole:

* after a newline (``\\r`` or ``\\n``) followed by anything but whitespace or ``/``: no
  alternative of the o200k pattern matches across that pair (the optional leading character
  of a word excludes newlines; only punctuation runs take trailing newlines, and ``/``);
* failing that, at the end of a match of the pre-tokenizer pattern itself, run over the whole
  text from the previous cut (so no match is truncated), when the match does not end in
  whitespace: alone, a piece's trailing whitespace would be one match (``\\s+(?!\\S)``)
  where the whole text has two.

One pre-tokenizer match longer than :data:`MAX_MATCH_CHARS` cannot be cut without changing
its ids; :class:`EncodeLimitError` says where it is.

tiktoken has a limit of its own: its regex engine backtracks through a run of whitespace
(``\\s+(?!\\S)``) on a bounded stack, and panics (``PanicException``, a ``BaseException``)
on a run of about a million spaces, tabs, NBSPs or ideographic spaces, well below
:data:`MAX_MATCH_CHARS`. So a run of Unicode whitespace longer than
:data:`MAX_WHITESPACE_RUN` is an :class:`EncodeLimitError` too, found before tiktoken sees
the text (:func:`check_whitespace_runs`), in every function here and in
:func:`encode_bounded`, the one way this package hands text to tiktoken.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

from ..base.errors import HarmonyGrammarError

__all__ = [
    "MAX_MATCH_CHARS",
    "MAX_WHITESPACE_RUN",
    "PIECE_CHARS",
    "EncodeLimitError",
    "check_whitespace_runs",
    "encode_bounded",
    "encode_ordinary_pieces",
    "safe_cuts",
]

#: The size pieces are cut to, in characters.
PIECE_CHARS = 1 << 16
#: The longest single pre-tokenizer match encoded (about 60 MB of tiktoken's memory).
MAX_MATCH_CHARS = 1 << 20
#: The longest run of whitespace encoded: tiktoken panics near a million (measured with
#: tiktoken 0.14: 900,000 spaces encode, 1,000,000 do not; 700,000 alternating spaces and
#: tabs do not either), so half a million leaves it a margin.
MAX_WHITESPACE_RUN = 1 << 19

_NEWLINE_CUT = re.compile(r"[\r\n](?=[^\s/])")


class EncodeLimitError(HarmonyGrammarError, ValueError):
    """Text holding one pre-tokenizer match longer than :data:`MAX_MATCH_CHARS`, or a run
    of whitespace longer than :data:`MAX_WHITESPACE_RUN` (``whitespace`` is then true)."""

    def __init__(self, offset: int, length: int, *, whitespace: bool = False) -> None:
        if whitespace:
            message = (
                f"{length} whitespace characters in a row at character {offset} (at most "
                f"{MAX_WHITESPACE_RUN}): tiktoken cannot encode so long a run; shorten it"
            )
        else:
            message = (
                f"{length} characters at character {offset} form one pre-tokenizer match (at "
                f"most {MAX_MATCH_CHARS}): tiktoken would need memory for all of them at once"
            )
        super().__init__(message)
        self.offset = offset
        self.length = length
        self.whitespace = whitespace


def check_whitespace_runs(text: str) -> None:
    """:class:`EncodeLimitError` for the first run of Unicode whitespace (the ``\\s`` of
    tiktoken's pattern) longer than :data:`MAX_WHITESPACE_RUN`; linear in the text."""
    if len(text) <= MAX_WHITESPACE_RUN:
        return
    for match in _pattern(r"\s+").finditer(text):
        if match.end() - match.start() > MAX_WHITESPACE_RUN:
            raise EncodeLimitError(match.start(), match.end() - match.start(), whitespace=True)


def encode_bounded(
    encoding: Any, text: str, *, allowed_special: Any = frozenset(), ordinary: bool = False
) -> list[int]:
    """``encoding.encode(text, allowed_special=..., disallowed_special=())`` (or
    ``encode_ordinary`` with ``ordinary``), after :func:`check_whitespace_runs`: the one
    call into tiktoken for text this package did not write."""
    check_whitespace_runs(text)
    if ordinary:  # in bounded pieces: tiktoken's memory follows its longest input
        return [i for part in encode_ordinary_pieces(encoding, text) for i in part]
    return list(encoding.encode(text, allowed_special=allowed_special, disallowed_special=()))


@functools.lru_cache(maxsize=4)
def _pattern(pattern: str) -> Any:
    import regex  # tiktoken's own dependency, for the \p{...} classes of its pattern

    return regex.compile(pattern)


def safe_cuts(text: str, pattern_text: str, piece: int = PIECE_CHARS) -> Iterator[int]:
    """Offsets that cut ``text`` into pieces of about ``piece`` characters, each where the
    pre-tokenizer ``pattern_text`` cuts anyway; the last offset is ``len(text)``.

    Raises :class:`EncodeLimitError` where one match is longer than :data:`MAX_MATCH_CHARS`,
    or a run of whitespace longer than :data:`MAX_WHITESPACE_RUN`.
    """
    check_whitespace_runs(text)
    start, size = 0, len(text)
    while size - start > piece:
        newline = _NEWLINE_CUT.search(text, start + piece // 2, start + piece)
        if newline is not None:
            cut = newline.end()
        else:
            # The pattern's own matches, over the whole text from a cut (a match boundary),
            # so none is truncated; the first one to reach the piece's size ends it.
            cut = size
            for match in _pattern(pattern_text).finditer(text, start):
                if match.end() - match.start() > MAX_MATCH_CHARS:
                    raise EncodeLimitError(match.start(), match.end() - match.start())
                if match.end() >= start + piece and not text[match.end() - 1].isspace():
                    cut = match.end()
                    break
        yield cut
        start = cut
    yield size


def encode_ordinary_pieces(
    encoding: Any, text: str, piece: int = PIECE_CHARS
) -> Iterator[list[int]]:
    """``encoding.encode_ordinary(text)`` in parts whose concatenation equals it.

    Raises :class:`EncodeLimitError` (before encoding that piece) for a match too long.
    """
    start = 0
    for cut in safe_cuts(text, encoding._pat_str, piece):
        yield encoding.encode_ordinary(text[start:cut])
        start = cut
