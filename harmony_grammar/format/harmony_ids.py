"""Harmony text to o200k_harmony token ids: the ids a model would see for the same text.

Ordinary text is encoded in bounded pieces (:mod:`.bounded_encode`), cut only where tiktoken's
pre-tokenizer cuts anyway, so the ids equal whole-text encoding while memory stays bounded
(tiktoken is quadratic on long runs of one character).
"""

from __future__ import annotations

from collections.abc import Iterator

from .bounded_encode import EncodeLimitError, safe_cuts
from .lexer import split_text
from .vocabulary import load_encoding

__all__ = ["EncodePlan", "encode_harmony", "encode_plan", "encode_planned"]

#: Where to encode a text from: ``(control id, end)`` for a control token and
#: ``(None, end)`` for each piece of ordinary text, in order.
EncodePlan = list[tuple[int | None, int]]


def encode_harmony(text: str) -> list[int]:
    """Token ids of Harmony text: control-token spellings as their special ids, the rest as
    ordinary text (so ``<|endoftext|>`` or ``<|reserved_200010|>`` stay text).

    Raises :class:`~harmony_grammar.format.bounded_encode.EncodeLimitError` for one
    pre-tokenizer match too long to encode in bounded memory.
    """
    return [token_id for part in encode_planned(text, encode_plan(text)) for token_id in part]


def encode_plan(text: str) -> EncodePlan:
    """The pieces ``text`` is encoded in; raises EncodeLimitError before any work is done."""
    pattern = load_encoding()._pat_str
    plan: EncodePlan = []
    for control, piece, start, end in split_text(text):
        if control is not None:
            plan.append((control.id, end))
            continue
        try:
            plan.extend((None, start + cut) for cut in safe_cuts(piece, pattern))
        except EncodeLimitError as exc:
            offset = start + exc.offset
            raise EncodeLimitError(offset, exc.length, whitespace=exc.whitespace) from None
    return plan


def encode_planned(text: str, plan: EncodePlan) -> Iterator[list[int]]:
    """The ids of ``text``, one list per piece of ``plan``."""
    encoding = load_encoding()
    start = 0
    for control_id, end in plan:
        if control_id is not None:
            yield [control_id]
        elif end > start:
            yield encoding.encode_ordinary(text[start:end])
        start = end
