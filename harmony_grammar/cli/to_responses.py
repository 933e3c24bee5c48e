"""``harmony-grammar to-responses``: a completion as a Responses API response (or stream)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..bridges.responses import ResponsesStream, to_responses
from .errors import CliError
from .inputs import add_input_options, read_json
from .streams import add_truncated_option, read_completion, stream_json_lines

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``to-responses`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "to-responses",
        help="print a completion as a Responses API response object (or its event stream)",
        description="Read model output (after '<|start|>assistant') and print the Responses "
        "API response object as JSON, or with --stream the streaming events as JSON Lines. "
        "The usual model deviations are repaired (listed under 'diagnostics'); exit 1 when an "
        "error remains (status 'failed'), 2 on usage or I/O errors.",
    )
    parser.add_argument("file", metavar="FILE", help="completion file, or - for stdin")
    add_input_options(parser, completion=False, lenient=False)
    parser.add_argument(
        "--request",
        metavar="REQUEST.json",
        help="the Responses request: echoed (model, tools, ...); calls must fit its tools",
    )
    parser.add_argument(
        "--lenient",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="repair known model deviations, with warnings (the default here; --no-lenient "
        "repairs nothing)",
    )
    # --no-lenient's former spelling, kept one release (run() says so on stderr).
    parser.add_argument("--strict", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--stream", action="store_true", help="print the streaming events, one per line"
    )
    add_truncated_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Convert the completion and print the response (or the events)."""
    if args.strict:
        print(
            "harmony-grammar: note: --strict is --no-lenient now (--strict goes away in the next "
            "release)",
            file=sys.stderr,
        )
        args.lenient = False
    request = read_json(args.request, "the request") if args.request else None
    if request is not None and not isinstance(request, dict):
        raise CliError(f"{args.request}: the request must be a JSON object")
    source = read_completion(
        args.file,
        tokens=args.tokens,
        command="to-responses",
        lenient=args.lenient,
        fix="drop --no-lenient",
    )
    try:
        if args.stream:
            stream = ResponsesStream(request=request, lenient=args.lenient)
            stream_json_lines(stream, source, args.truncated)
            response = stream.response()
        else:
            response = to_responses(
                source, request=request, lenient=args.lenient, truncated=args.truncated
            )
            print(json.dumps(response, ensure_ascii=False, indent=2))
    except ValueError as exc:  # a malformed tools list in the request
        raise CliError(f"{args.request}: {exc}") from None
    if response["status"] == "failed":
        print(
            f"harmony-grammar: error: {args.file}: {response['error']['message']}", file=sys.stderr
        )
        return 1
    return 0
