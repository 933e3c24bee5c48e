"""``harmony-grammar grammar``: the constrained-decoding grammar of an assistant turn."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..data.progress import working
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
    # imported here: the generation layer is not loaded for the other commands
    from ..generation.options import TurnGrammarError, TurnOptions
    from ..generation.outlines_export import validated_grammar
    from ..generation.turn_grammar import completion_grammar
    from ..generation.xgrammar_tag import xgrammar_structural_tag
    from ..schema import UnsupportedSchemaError

    try:
        options = TurnOptions(
            tool_choice=args.tool_choice,
            allow_analysis=not args.no_analysis,
            allow_preamble=not args.no_preamble,
            recipient_position=args.recipient_position,
            content_type=args.content_type,
            response_format=(
                read_json(args.response_format, "the response format")
                if args.response_format
                else None
            ),
            whitespace=args.whitespace,
        )
    except TurnGrammarError as exc:
        raise CliError(str(exc)) from None
    tools = read_tools(args.tools)
    try:
        with working("harmony-grammar grammar: compiling the turn grammar"):
            if args.target == "xgrammar":
                tag = xgrammar_structural_tag(tools, options)
                text = json.dumps(tag, ensure_ascii=False) + "\n"
                if not args.no_validate:
                    _check_tag(text)
            elif args.no_validate:
                text = completion_grammar(tools, options)
            else:
                text = validated_grammar(tools, options)
        print(text, end="")
    except (TurnGrammarError, UnsupportedSchemaError) as exc:
        raise CliError(str(exc)) from None
    except ValueError as exc:  # a malformed tool list
        raise CliError(f"{args.tools}: {exc}") from None
    return 0


def _check_tag(tag: str) -> None:
    """Have xgrammar compile the structural tag (when it is installed)."""
    from ..generation.options import TurnGrammarError

    try:
        import xgrammar
    except ImportError:
        return
    try:
        xgrammar.Grammar.from_structural_tag(tag)
    except Exception as exc:  # xgrammar raises its own error types
        raise TurnGrammarError(f"xgrammar rejected the structural tag: {exc}") from None
