"""``harmony-grammar tokens``: the o200k_harmony token ids of a Harmony text.

Memory stays bounded: the input is at most :data:`MAX_INPUT_BYTES`, it is encoded in pieces
cut where tiktoken's pre-tokenizer cuts anyway (:mod:`harmony_grammar.format.bounded_encode`,
so the ids are those of encoding it whole), and the ids are written piece by piece. Text that
tiktoken could only encode as one pre-tokenizer match of more than a million characters (a
megabyte of NUL bytes) is refused with exit 2, before anything is written.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from typing import Any

from ..data.progress import working
from ..format.bounded_encode import EncodeLimitError
from ..format.harmony_ids import encode_plan, encode_planned
from .errors import CliError
from .inputs import read_text

__all__ = ["MAX_INPUT_BYTES", "register"]

#: The largest input ``tokens`` reads (64 MiB): with the text and one piece of tiktoken's
#: work, memory stays under a few hundred megabytes.
MAX_INPUT_BYTES = 64 * 1024 * 1024


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
        with working("harmony-grammar tokens: loading the vocabulary"):
            plan = encode_plan(text)  # before any output: a refusal leaves stdout empty
            pieces = encode_planned(text, plan)
            first = next(pieces, [])  # the vocabulary is loaded by the first piece
    except EncodeLimitError as exc:
        raise CliError(f"{args.file}: {exc}") from None
    # The JSON array, written a piece at a time: the ids are never all held at once.
    out = sys.stdout
    out.write("[")
    separator = ""
    for part in itertools.chain([first], pieces):
        if part:
            out.write(separator + ", ".join(map(str, part)))
            separator = ", "
    out.write("]\n")
    return 0
