"""``harmony-grammar tokens``: the o200k_harmony token ids of a Harmony text."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..format.harmony_ids import encode_harmony
from .inputs import read_text

__all__ = ["encode_harmony", "register"]


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
