"""``harmony-grammar tokens``: the o200k_harmony token ids of a Harmony text.

Memory stays bounded: the input is at most :data:`MAX_INPUT_BYTES`, it is encoded in pieces
cut where tiktoken's pre-tokenizer cuts anyway (:mod:`harmony_grammar.format.bounded_encode`,
so the ids are those of encoding it whole), and the ids are written piece by piece. Text that
tiktoken could only encode as one pre-tokenizer match of more than a million characters (a
megabyte of NUL bytes) is refused with exit 2, before anything is written.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import Any

from ..format.bounded_encode import EncodeLimitError, safe_cuts
from ..format.lexer import split_text
from ..format.vocabulary import load_encoding
from .errors import CliError
from .inputs import read_text

__all__ = ["MAX_INPUT_BYTES", "encode_harmony", "register"]

#: The largest input ``tokens`` reads (64 MiB): with the text and one piece of tiktoken's
#: work, memory stays under a few hundred megabytes.
MAX_INPUT_BYTES = 64 * 1024 * 1024


def encode_harmony(text: str) -> list[int]:
    """Token ids of Harmony text: control-token spellings as their special ids, the rest as
    ordinary text (so ``<|endoftext|>`` or ``<|reserved_200010|>`` stay text).

    Raises :class:`~harmony_grammar.format.bounded_encode.EncodeLimitError` for one
    pre-tokenizer match too long to encode in bounded memory.
    """
    return [token_id for part in _encode_parts(text, _plan(text)) for token_id in part]


def _plan(text: str) -> list[tuple[int | None, int]]:
    """Where to encode ``text`` from: ``(control id, end)`` for a control token and
    ``(None, end)`` for each piece of ordinary text, in order; raises EncodeLimitError."""
    pattern = load_encoding()._pat_str
    plan: list[tuple[int | None, int]] = []
    for control, piece, start, end in split_text(text):
        if control is not None:
            plan.append((control.id, end))
            continue
        try:
            plan.extend((None, start + cut) for cut in safe_cuts(piece, pattern))
        except EncodeLimitError as exc:
            raise EncodeLimitError(start + exc.offset, exc.length) from None
    return plan


def _encode_parts(text: str, plan: list[tuple[int | None, int]]) -> Iterator[list[int]]:
    encoding = load_encoding()
    start = 0
    for control_id, end in plan:
        if control_id is not None:
            yield [control_id]
        elif end > start:
            yield encoding.encode_ordinary(text[start:end])
        start = end


def register(subparsers: Any) -> None:
    """Add the ``tokens`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "tokens",
        help="print the token ids of a Harmony text",
        description="Print the o200k_harmony token ids of a Harmony text as a JSON array; "
        "control-token spellings become their special ids.",
    )
    parser.add_argument("file", metavar="FILE", help="input file, or - for stdin")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the ids."""
    text = read_text(args.file, MAX_INPUT_BYTES)
    try:
        plan = _plan(text)  # before any output: a refusal leaves stdout empty
    except EncodeLimitError as exc:
        raise CliError(f"{args.file}: {exc}") from None
    # The JSON array, written a piece at a time: the ids are never all held at once.
    out = sys.stdout
    out.write("[")
    separator = ""
    for part in _encode_parts(text, plan):
        if part:
            out.write(separator + ", ".join(map(str, part)))
            separator = ", "
    out.write("]\n")
    return 0
