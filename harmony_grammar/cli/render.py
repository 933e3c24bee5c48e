"""``harmony-grammar render``: render a Chat Completions or Responses request as Harmony."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..rendering.chat import ChatCompletionError, from_chat_completions
from ..rendering.renderer import DropRule, RenderError, render
from ..rendering.responses import from_responses
from .errors import CliError
from .inputs import read_json

__all__ = ["register"]


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
        default=DropRule.HARMONY.value,
        help="which chain of thought to drop: openai-harmony's rule (default) or vLLM's",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Render the request and write it to stdout."""
    request = read_json(args.request, "the request")
    try:
        responses = isinstance(request, dict) and "input" in request and "messages" not in request
        conversation = from_responses(request) if responses else from_chat_completions(request)
        output = render(
            conversation,
            next_turn=args.next_turn,
            training=args.training,
            auto_drop_analysis=not args.keep_analysis,
            drop_rule=args.drop_rule,
            tokens=args.tokens,
        )
    except (ChatCompletionError, RenderError) as exc:
        raise CliError(f"{args.request}: {exc}") from None
    except ValueError as exc:  # option combinations render() rejects
        raise CliError(str(exc)) from None
    if isinstance(output, list):
        print(json.dumps(output))
    else:
        sys.stdout.write(output)
        sys.stdout.flush()
    return 0
