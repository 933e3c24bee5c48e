"""``harmony-grammar parse``: parse a Harmony text or token ids and report."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from ..format.diagnostics import LineIndex
from ..format.model import Message, ParseResult
from ..format.parser import parse
from ..validation.validator import no_messages
from .display import shown, shown_path
from .input_kind import check_harmony
from .inputs import add_input_options, read_text, read_token_ids

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``parse`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "parse",
        help="parse Harmony text or token ids",
        description="Parse a Harmony conversation or completion. Exit 0 when it is well "
        "formed, 1 when it has errors, 2 on usage or I/O errors.",
    )
    parser.add_argument("file", metavar="FILE", help="input file, or - for stdin")
    add_input_options(parser)
    parser.add_argument(
        "--json", action="store_true", help="print JSON {ok, messages, diagnostics}"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Parse the input and print messages and diagnostics."""
    source = read_token_ids(args.file) if args.tokens else read_text(args.file)
    if isinstance(source, str):
        check_harmony(args.file, source, completion=args.completion, lenient=args.lenient)
    result = parse(
        source,
        start="completion" if args.completion else "conversation",
        lenient=args.lenient,
    )
    if not result.messages and result.ok:  # an empty input is not "ok: 0 messages"
        lines = None
        if isinstance(source, str):
            lines = LineIndex()
            lines.add(source, 0)
        empty = no_messages(lines)
        result = dataclasses.replace(result, diagnostics=(*result.diagnostics, empty))
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        print_result(result, shown_path(args.file))
    return 0 if result.ok else 1


def _describe(message: Message) -> str:
    # Every header field escaped as the content is (cli/display.shown): an author or a
    # recipient holding ESC or BEL must not write to the terminal (clipboard, hidden text).
    parts = [shown(message.author)]
    if message.recipient:
        parts.append(f"to={shown(message.recipient)}")
    if message.channel:
        parts.append(f"[{shown(message.channel)}]")
    if message.content_type:
        parts.append(shown(message.content_type))
    end = message.terminator.value if message.terminator else "open"
    preview = message.content if len(message.content) <= 60 else message.content[:57] + "..."
    line = f"{' '.join(parts)} ({end}): {json.dumps(preview, ensure_ascii=False)}"
    # What a lenient reading kept outside the fields above is shown too: header text no field
    # reads, and header words the message's own fields replaced (nothing read is hidden).
    for name in ("unread", "superseded"):
        kept = getattr(message, name)
        if kept:
            line += f" {name}={json.dumps(kept, ensure_ascii=False)}"
    return line


def print_result(result: ParseResult, filename: str) -> None:
    """Messages one per line, then compiler-style diagnostics and a summary."""
    for index, message in enumerate(result.messages):
        print(f"{index:>3}  {_describe(message)}")
    for diagnostic in result.diagnostics:
        print(diagnostic.format(filename))
    errors = sum(1 for d in result.diagnostics if d.severity.value == "error")
    warnings = len(result.diagnostics) - errors
    verdict = "ok" if result.ok else "not ok"
    print(
        f"{filename}: {verdict}: {len(result.messages)} messages, {errors} errors, "
        f"{warnings} warnings"
    )
