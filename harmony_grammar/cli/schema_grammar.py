"""``harmony-grammar schema-grammar SCHEMA.json``: print the grammar of a JSON Schema."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..data.progress import working
from ..schema import TARGETS, UnsupportedSchemaError, schema_to_grammar
from .errors import CliError
from .inputs import read_json

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``schema-grammar`` subcommand."""
    parser = subparsers.add_parser(
        "schema-grammar",
        help=f"compile a JSON Schema into a grammar ({', '.join(TARGETS)})",
        description="Print a grammar (start rule `start`) that accepts exactly the JSON texts "
        "valid under the schema. Exit status 1 when the schema uses something that cannot be "
        "expressed exactly.",
    )
    parser.add_argument("schema", help="JSON Schema file, or - for standard input")
    parser.add_argument("--target", choices=sorted(TARGETS), default="lark")
    parser.add_argument("--whitespace", choices=("compact", "flexible"), default="compact")
    parser.add_argument(
        "--generation",
        action="store_true",
        help="a grammar to generate with: objects that leave additionalProperties unset get "
        "only their declared properties, printable ASCII is spelled only as itself (a subset "
        "of the valid texts, smaller and faster to mask)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the grammar; 1 with a one-line reason when the schema is refused."""
    schema = read_json(args.schema, "the schema")
    if isinstance(schema, list) or (
        isinstance(schema, dict) and isinstance(schema.get("tools"), list)
    ):
        # a tools list (or a request) where a schema goes: JSON Schema has no array form
        raise CliError(
            f"{args.schema}: a tools list, not a JSON Schema: `harmony-grammar grammar --tools "
            f"{args.schema}` builds the turn grammar (a tool's 'parameters' is a schema)"
        )
    try:
        with working("harmony-grammar schema-grammar: compiling the schema"):
            grammar = schema_to_grammar(
                schema,
                target=args.target,
                whitespace=args.whitespace,
                closed_objects=args.generation,
                escaped_ascii=not args.generation,
            )
    except UnsupportedSchemaError as exc:
        print(f"harmony-grammar: {args.schema}: {exc}", file=sys.stderr)
        return 1
    except RecursionError:
        print(f"harmony-grammar: {args.schema}: schema is nested too deeply", file=sys.stderr)
        return 1
    sys.stdout.write(grammar)
    return 0
