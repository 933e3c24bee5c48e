"""A text engine's output counted as the model's ids, so ``max_tokens`` holds for it too."""

from __future__ import annotations

import regex  # tiktoken's own dependency, for its pre-tokenizer's pattern

from ..format.harmony_ids import encode_harmony
from ..format.lexer import split_text
from ..format.tokens import CONTROL_SPELLINGS
from ..format.vocabulary import load_encoding

__all__ = ["TextCount"]


class TextCount:
    """A text engine's output counted as the model's ids (control tokens as one id each).

    Incremental and exact: the text before the last whole control token is counted once;
    the text after it (the message being written) is encoded again with each piece, since
    its ids can change as it grows. A control token's spelling split across pieces (``<|mes``
    now, ``sage|>`` next) would count as several ordinary ids for a moment, so its start is
    held back until the next piece (or :meth:`end`) says what it is. :meth:`take` returns
    the text that fits in ``limit`` ids; at exactly ``limit`` more text is still taken while
    the count stays there (the last id's text may come in two pieces), past it the rest is
    cut off (:attr:`full`).
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0
        #: Text past the limit arrived and was cut off: nothing more is taken.
        self.full = False
        self._fixed = 0  # ids of the text before the tail: final
        self._tail = ""  # counted and returned, after the last whole control token
        self._held = ""  # a control token's possible start: neither counted nor returned

    def take(self, text: str) -> str:
        """The part of what arrived (``text`` after any held start) within the limit."""
        if self.full:
            return ""
        current = self._tail + self._held + text
        start = current.rfind("<|")
        if start < 0 or not _control_prefix(current[start:]):
            start = len(current)
        # The last pre-tokenizer match can still grow (" worl" + "d" is one id, not two):
        # it waits too, so a count past the limit is never a word split across pieces.
        segment = 0
        for control, _, _, end in split_text(current[:start]):
            if control is not None:
                segment = end
        matches = regex.findall(load_encoding()._pat_str, current[segment:start])
        if matches:  # (never back into the tail: that text has been returned already)
            start = max(start - len(matches[-1]), len(self._tail))
        return self._count(current[:start], current[start:])

    def end(self) -> str:
        """The text is over: a held start is ordinary text after all; returns what of it fits."""
        if self.full or not self._held:
            return ""
        return self._count(self._tail + self._held, "")

    def _count(self, counted: str, held: str) -> str:
        old = self._tail
        ids = encode_harmony(counted)
        room = self.limit - self._fixed
        if len(ids) > room:
            kept = load_encoding().decode(ids[:room])
            self.count, self.full, self._held = self.limit, True, ""
            return kept[len(old) :] if kept.startswith(old) else ""
        self.count = self._fixed + len(ids)
        cut = 0
        for control, _, _, end in split_text(counted):
            if control is not None:
                cut = end  # a whole control token ends a run of text for the encoder
        if cut:
            self._fixed += len(encode_harmony(counted[:cut]))
        self._tail, self._held = counted[cut:], held
        return counted[len(old) :]


def _control_prefix(text: str) -> bool:
    """Whether ``text`` is a proper start of a control token's spelling."""
    return any(s.startswith(text) and s != text for s in CONTROL_SPELLINGS)
