"""The ``harmony-grammar`` command line.

Each subcommand lives in ``harmony_grammar/cli/<name>.py`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a callable
``(args) -> int``. Commands report bad input by raising :class:`CliError`; ``main`` turns it
into a one-line message on stderr and exit status 2. Exit status 1 means "the input has
errors" and is returned by the commands themselves.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import io
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from ..format.vocabulary import VocabularyNotFoundError
from .display import shown
from .errors import NO_VOCABULARY, CliError, needs_extra

__all__ = ["main"]

#: Subcommand modules, in the order ``--help`` lists them.
COMMAND_MODULES = (
    "parse",
    "tokens",
    "validate",
    "repair",
    "render",
    "diff_render",
    "prepare",
    "audit_masks",
    "to_chat",
    "to_responses",
    "grammar",
    "schema_grammar",
    "leaks",
    "conformance",
    "serve",
)


def package_version() -> str:
    """The installed distribution's version (``unknown`` when run from a bare checkout)."""
    try:
        return importlib.metadata.version("harmony-grammar")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


class _OneLineParser(argparse.ArgumentParser):
    """argparse's parser with its usage errors as one line naming the help (exit 2), like
    every other usage error of this CLI; ``--help`` prints the whole usage as before.

    No option is abbreviated: argparse's prefix matching read ``validate --json FILE`` as
    ``--jsonl FILE``, another command than the one asked for; an unknown option is an error
    that names the option meant where one takes the word as a value (``--format json``).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {shown(message)} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = _OneLineParser(
        prog="harmony-grammar",
        description="Parse, validate, render and constrain OpenAI Harmony (gpt-oss) text.",
    )
    parser.add_argument(
        "--version", action="version", version=f"harmony-grammar {package_version()}"
    )
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=_OneLineParser
    )
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"harmony_grammar.cli.{name}")
        module.register(subparsers)
    return parser


def _discard_stdout() -> None:
    """Point stdout at the null device: Python flushes it at exit, and a flush into the closed
    pipe would print "Exception ignored ... BrokenPipeError" and exit 120."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # not a file descriptor (a test's capture): nothing will be flushed into a pipe


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 1 input has errors, 2 usage or I/O error)."""
    parser = build_parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown:  # as parse_args would, with the option meant where one is clear
            meant = _meant(parser, args.command, unknown)
            parser.error(f"unrecognized arguments: {' '.join(unknown)}{meant}")
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    try:
        status: int = args.func(args)
    except CliError as exc:
        print(f"harmony-grammar: error: {shown(str(exc))}", file=sys.stderr)
        return 2
    except VocabularyNotFoundError:  # any command that needs token ids, one line with the fix
        print(f"harmony-grammar: error: {NO_VOCABULARY}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (| head): quiet, as other Unix tools are
        _discard_stdout()
        return 0
    except Exception as exc:  # a bug of ours: still one line, never a traceback
        if isinstance(exc, ModuleNotFoundError) and not _ours(exc.name):
            # An optional dependency this command needs: the extra to install, whichever
            # command imports it (serve, prepare, validate and audit-masks on Parquet...).
            print(f"harmony-grammar: error: {needs_extra(args.command, exc)}", file=sys.stderr)
            return 2
        print(
            f"harmony-grammar: internal error: {type(exc).__name__}: {shown(str(exc))}"
            " (please report it with the input)",
            file=sys.stderr,
        )
        return 2
    return status


def _meant(parser: argparse.ArgumentParser, command: str, unknown: Sequence[str]) -> str:
    """``; did you mean --format json?`` for an unknown ``--json`` that is a value of one of
    the command's options; empty when none takes it."""
    commands = next(
        (a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None
    )
    sub = commands.choices.get(command) if commands is not None else None
    if sub is None:
        return ""
    for word in unknown:
        value = word[2:] if word.startswith("--") else None
        for action in sub._actions:
            if value and action.option_strings and value in (action.choices or ()):
                return f"; did you mean {action.option_strings[-1]} {value}?"
    return ""


def _ours(module: str | None) -> bool:
    return module is None or module.split(".")[0] == "harmony_grammar"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
