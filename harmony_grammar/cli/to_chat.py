"""``harmony-grammar to-chat``: a completion as a Chat Completions response message."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..bridges.chat import ChatCompletionStream, to_chat_completion
from ..rendering.chat import ChatCompletionError
from .errors import CliError
from .inputs import add_input_options, read_tools
from .streams import add_truncated_option, read_completion, stream_json_lines

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``to-chat`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "to-chat",
        help="print a completion as a Chat Completions response message",
        description="Read model output (after '<|start|>assistant') and print "
        '{"message": {...}, "finish_reason": ...} as JSON. Exit 1 when the completion has '
        "errors, 2 on usage or I/O errors.",
    )
    parser.add_argument("file", metavar="FILE", help="completion file, or - for stdin")
    add_input_options(parser, completion=False)
    parser.add_argument(
        "--tools",
        metavar="JSON",
        help="a request body or tools list: calls must name these tools and fit their schemas",
    )
    parser.add_argument(
        "--stream",
        action="store_true",
        help="print the chat.completion.chunk objects a server would stream, one per line",
    )
    add_truncated_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Convert the completion and print the response JSON."""
    tools = read_tools(args.tools) if args.tools else None
    source = read_completion(
        args.file, tokens=args.tokens, command="to-chat", lenient=args.lenient, fix="--lenient"
    )
    if args.stream:
        return _stream(args, tools, source)
    try:
        response = to_chat_completion(
            source, tools=tools, lenient=args.lenient, truncated=args.truncated
        )
    except ChatCompletionError as exc:
        print(f"harmony-grammar: error: {args.file}: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # a malformed tools list
        raise CliError(f"{args.tools}: {exc}") from None
    print(json.dumps(response, ensure_ascii=False, indent=2))
    # Lenient: the response is printed, and an error it could not repair still fails the
    # command, as with --stream.
    return _errors(args.file, response.get("diagnostics", []))


def _errors(path: str, diagnostics: list[dict[str, Any]]) -> int:
    """1 (and the first error as one line) when ``diagnostics`` hold an error, else 0."""
    errors = [d for d in diagnostics if d["severity"] == "error"]
    if not errors:
        return 0
    print(
        f"harmony-grammar: error: {path}: {errors[0]['code']}: {errors[0]['message']}",
        file=sys.stderr,
    )
    return 1


def _stream(args: argparse.Namespace, tools: Any, source: str | list[int]) -> int:
    try:
        stream = ChatCompletionStream(tools=tools, lenient=args.lenient)
    except ValueError as exc:  # a malformed tools list
        raise CliError(f"{args.tools}: {exc}") from None
    stream_json_lines(stream, source, args.truncated)
    return _errors(args.file, stream.diagnostics)
