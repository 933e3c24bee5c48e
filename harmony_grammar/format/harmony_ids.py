"""Harmony text to o200k_harmony token ids: the ids a model would see for the same text."""

from __future__ import annotations

from .lexer import split_text
from .vocabulary import load_encoding

__all__ = ["encode_harmony"]


def encode_harmony(text: str) -> list[int]:
    """Token ids of Harmony text: control-token spellings as their special ids, the rest as
    ordinary text (so ``<|endoftext|>`` or ``<|reserved_200010|>`` stay text)."""
    encoding = load_encoding()
    ids: list[int] = []
    for control, piece, _start, _end in split_text(text):
        if control is not None:
            ids.append(control.id)
        else:
            ids.extend(encoding.encode_ordinary(piece))
    return ids
