"""``harmony-grammar tokens``: the o200k_harmony token ids of a Harmony text."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..format.lexer import split_text
from ..format.vocabulary import load_encoding
from .inputs import read_text

__all__ = ["encode_harmony", "register"]


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
    print(json.dumps(encode_harmony(read_text(args.file))))
    return 0
