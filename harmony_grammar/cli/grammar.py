"""``harmony-grammar grammar``: the constrained-decoding grammar of an assistant turn."""

from __future__ import annotations

import argparse
from typing import Any

from .errors import CliError
from .inputs import read_json, read_tools

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``grammar`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "grammar",
        help="print the llguidance grammar (or xgrammar structural tag) of an assistant turn",
        description="Print the grammar of the model's output after '<|start|>assistant': "
        "optional analysis, optional preambles, then a schema-bound tool call or a final "
        "answer. llguidance grammars are validated by llguidance against the o200k_harmony "
        "tokenizer first; --target xgrammar prints the structural tag's JSON (compiled by "
        "xgrammar first, when it is installed).",
    )
    parser.add_argument("--tools", required=True, metavar="TOOLS.json", help="the tools")
    parser.add_argument("--target", default="llguidance", choices=("llguidance", "xgrammar"))
    parser.add_argument(
        "--tool-choice", default="auto", metavar="auto|required|none|NAME", help="default auto"
    )
    parser.add_argument("--no-analysis", action="store_true", help="no analysis message")
    parser.add_argument("--no-preamble", action="store_true", help="no commentary preambles")
    parser.add_argument(
        "--recipient-position", default="channel", choices=("channel", "role", "either")
    )
    parser.add_argument(
        "--content-type", default="<|constrain|>json", choices=("<|constrain|>json", "json")
    )
    parser.add_argument(
        "--response-format", metavar="SCHEMA.json", help="bind the final answer to a schema"
    )
    parser.add_argument("--whitespace", default="compact", choices=("compact", "flexible"))
    parser.add_argument(
        "--no-validate", action="store_true", help="skip llguidance's check (no tokenizer)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the grammar."""
    from ..generation.outlines_export import validated_grammar
    from ..generation.turn_grammar import TurnGrammarError, completion_grammar
    from ..schema import UnsupportedSchemaError

    options = {
        "target": args.target,
        "tool_choice": args.tool_choice,
        "allow_analysis": not args.no_analysis,
        "allow_preamble": not args.no_preamble,
        "recipient_position": args.recipient_position,
        "content_type": args.content_type,
        "response_format": (
            read_json(args.response_format, "the response format") if args.response_format else None
        ),
        "whitespace": args.whitespace,
    }
    tools = read_tools(args.tools)
    build = completion_grammar if args.no_validate else validated_grammar
    if args.target == "xgrammar":
        build = completion_grammar if args.no_validate else _validated_tag
    try:
        print(build(tools, **options), end="")
    except (TurnGrammarError, UnsupportedSchemaError) as exc:
        raise CliError(str(exc)) from None
    except ValueError as exc:  # a malformed tool list
        raise CliError(f"{args.tools}: {exc}") from None
    return 0


def _validated_tag(tools: Any, **options: Any) -> str:
    """The structural tag's JSON and a newline, after xgrammar compiled it (if installed)."""
    from ..generation.turn_grammar import TurnGrammarError, completion_grammar

    tag = completion_grammar(tools, **options)
    try:
        import xgrammar
    except ImportError:
        return tag + "\n"
    try:
        xgrammar.Grammar.from_structural_tag(tag)
    except Exception as exc:  # xgrammar raises its own error types
        raise TurnGrammarError(f"xgrammar rejected the structural tag: {exc}") from None
    return tag + "\n"
