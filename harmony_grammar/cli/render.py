"""``harmony-grammar render``: render a Chat Completions or Responses request as Harmony."""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from typing import Any

from ..rendering.chat import ChatCompletionError
from ..rendering.conversation import Conversation, SystemContent
from ..rendering.errors import RenderError
from ..rendering.profiles import DEFAULT_PROFILE, PROFILES
from ..rendering.renderer import DropRule, render
from ..rendering.request_body import read_request
from .display import shown, shown_path
from .errors import CliError
from .inputs import read_json

__all__ = ["add_profile_options", "read_conversation", "register"]


def _date(text: str) -> str:
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a date as YYYY-MM-DD, not {text!r}") from None
    return text


def add_profile_options(parser: argparse.ArgumentParser) -> None:
    """``--date``, shared by the commands that render a request."""
    parser.add_argument(
        "--date",
        type=_date,
        metavar="YYYY-MM-DD",
        help="the system message's current date (the HF template writes today's when unset)",
    )


def read_conversation(path: str, date: str | None) -> Conversation:
    """The conversation of a Chat Completions or Responses request body in a file (exit 2,
    one line, when it is not one)."""
    request = read_json(path, "the request")
    system = SystemContent(conversation_start_date=date) if date is not None else None
    try:
        reading = read_request(request, system=system)
    except ChatCompletionError as exc:  # ResponsesError is one too
        raise CliError(f"{path}: {exc}") from None
    if reading.ignored:
        # Accepted, never silently: the gateway reports the same fields in a header.
        print(
            f"harmony-grammar: warning: {shown_path(path)}: ignored unknown field"
            f"{'s' if len(reading.ignored) > 1 else ''}: {shown(', '.join(reading.ignored))}",
            file=sys.stderr,
        )
    return reading.conversation


def register(subparsers: Any) -> None:
    """Add the ``render`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "render",
        help="render a Chat Completions or Responses request as Harmony text or token ids",
        description="Render a Chat Completions request body (messages, tools, tool_choice, "
        "reasoning_effort) exactly as openai-harmony does, or a Responses API request body "
        "(instructions, input, tools, tool_choice, text.format, reasoning): one with 'input' "
        "and no 'messages'. The text is written as is, with no newline added; --tokens prints "
        "a JSON array of o200k_harmony ids.",
    )
    parser.add_argument("request", metavar="REQUEST.json", help="request body, or - for stdin")
    parser.add_argument(
        "--next-turn",
        metavar="ROLE",
        help="append <|start|>ROLE, as a prompt for the model does (usually: assistant)",
    )
    parser.add_argument("--tokens", action="store_true", help="print token ids, not text")
    parser.add_argument(
        "--training", action="store_true", help="end a last final answer with <|return|>"
    )
    parser.add_argument(
        "--keep-analysis", action="store_true", help="do not drop earlier chain of thought"
    )
    parser.add_argument(
        "--drop-rule",
        choices=[rule.value for rule in DropRule],
        help="which chain of thought to drop: openai-harmony's rule (default) or vLLM's",
    )
    parser.add_argument(
        "--profile",
        choices=list(PROFILES),
        default=DEFAULT_PROFILE,
        help="whose rendering: openai-harmony 0.0.8 (default), oss-harmony 0.0.11 (vLLM), the "
        "model repo's HF chat template, or oh-my-pi's in-band history (docs/rendering.md)",
    )
    add_profile_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Render the request and write it to stdout."""
    conversation = read_conversation(args.request, args.date)
    fixed = PROFILES[args.profile].fixed_options
    if "auto_drop_analysis" in fixed and (args.keep_analysis or args.drop_rule):
        raise CliError(
            f"--keep-analysis and --drop-rule do not apply to --profile {args.profile}: it "
            "drops chain of thought by its own rule"
        )
    try:
        output = render(
            conversation,
            profile=args.profile,
            next_turn=args.next_turn,
            training=args.training,
            auto_drop_analysis=False if args.keep_analysis else None,
            drop_rule=args.drop_rule,
            tokens=args.tokens,
        )
    except RenderError as exc:
        raise CliError(f"{args.request}: {exc}") from None
    except ValueError as exc:  # option combinations render() rejects
        raise CliError(str(exc)) from None
    if isinstance(output, list):
        print(json.dumps(output))
    else:
        sys.stdout.write(output)
        sys.stdout.flush()
    return 0
