"""What ``--stream`` shares: a completion fed as a server streams it, printed as JSON Lines."""

from __future__ import annotations

import argparse
import codecs
import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from ..format.harmony_ids import encode_harmony
from ..format.tokens import FIRST_SPECIAL_ID, ControlToken
from ..format.vocabulary import load_encoding, token_bytes_table
from .input_kind import check_completion, check_completion_ids
from .inputs import read_text, read_token_ids

__all__ = ["add_truncated_option", "read_completion", "stream_json_lines", "text_pieces"]


class _Stream(Protocol):
    def feed(self, text: str) -> list[dict[str, Any]]: ...

    def feed_tokens(self, token_ids: Sequence[int]) -> list[dict[str, Any]]: ...

    def close(self, *, truncated: bool = False) -> list[dict[str, Any]]: ...


def text_pieces(text: str) -> Iterator[str]:
    """``text`` cut where a server's detokenizer would send it: at the boundaries of its
    o200k_harmony tokens (control spellings as their special ids), a UTF-8 sequence split
    across tokens held until it is whole. The pieces join back to ``text``."""
    table = token_bytes_table(load_encoding())
    decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
    for token_id in encode_harmony(text):
        control = ControlToken.from_id(token_id) if token_id >= FIRST_SPECIAL_ID else None
        if control is not None:  # encode_harmony gives no other special id
            piece = decoder.decode(b"", final=True) + control.value
        else:
            piece = decoder.decode(table[token_id])
        if piece:
            yield piece
    rest = decoder.decode(b"", final=True)
    if rest:
        yield rest


def add_truncated_option(parser: argparse.ArgumentParser) -> None:
    """``--truncated``: the saved output stopped at the token limit, not at a stop token."""
    parser.add_argument(
        "--truncated",
        action="store_true",
        help="the output stopped at the token limit (max_tokens), not at a stop token: the "
        "turn is cut, a call it ends inside included",
    )


def read_completion(
    path: str, *, tokens: bool, command: str, lenient: bool, fix: str
) -> str | list[int]:
    """The completion at ``path`` (token ids with ``tokens``), refused with exit 2 and the
    fix when it is no completion: empty, a whole conversation, JSON (input_kind.py)."""
    if tokens:
        ids = read_token_ids(path)
        check_completion_ids(path, ids, command=command)
        return ids
    text = read_text(path)
    check_completion(path, text, command=command, lenient=lenient, fix=fix)
    return text


def stream_json_lines(stream: _Stream, source: str | list[int], truncated: bool = False) -> None:
    """Feed a completion to ``stream`` as a serving loop does, printing each payload as a
    line: token ids one at a time, or text one token's worth at a time, so that diagnostics
    keep the text's character offsets, lines and columns; then close it (``truncated``: the
    output stopped at the token limit)."""
    payloads: Iterator[list[dict[str, Any]]]
    if isinstance(source, list):
        payloads = (stream.feed_tokens([token_id]) for token_id in source)
    else:
        payloads = (stream.feed(piece) for piece in text_pieces(source))
    for batch in payloads:
        for payload in batch:
            print(json.dumps(payload, ensure_ascii=False))
    for payload in stream.close(truncated=truncated):
        print(json.dumps(payload, ensure_ascii=False))
    sys.stdout.flush()
