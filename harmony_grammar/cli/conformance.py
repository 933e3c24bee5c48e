"""``harmony-grammar conformance``: run the conformance suite against an implementation."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..conformance.adapters import ADAPTERS, AdapterLoadError, load_adapter
from ..conformance.cases import CaseFormatError, load_cases
from ..conformance.runner import DEFAULT_CASE_TIMEOUT, Scorecard, run_suite
from ..data.progress import working
from ..format.vocabulary import VocabularyNotFoundError, load_encoding
from .errors import NO_VOCABULARY, CliError

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``conformance`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "conformance",
        help="score an implementation on the Harmony conformance suite",
        description="Run the conformance cases (conformance/*.json) through an implementation "
        "and print a scorecard by topic: passed, failed, errored and skipped, with each "
        "failed or errored case's name. Exit 0 when nothing failed or errored, 1 otherwise, "
        "2 on usage errors.",
    )
    parser.add_argument(
        "--impl",
        action="append",
        metavar="NAME",
        help=f"a shipped adapter ({', '.join(ADAPTERS)}) or module:function; repeat it to "
        "score several (default: harmony-grammar)",
    )
    parser.add_argument("--strict-only", action="store_true", help="skip the lenient expectations")
    parser.add_argument(
        "--topic", action="append", metavar="TOPIC", help="run only this topic (repeatable)"
    )
    parser.add_argument(
        "--cases", metavar="DIR", help="the folder of topic files (default: the shipped suite)"
    )
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_CASE_TIMEOUT,
        metavar="SECONDS",
        help="the most one case may take before it is scored as errored; 0 for no limit "
        f"(default: {DEFAULT_CASE_TIMEOUT:g}). Each implementation runs in a worker process, "
        "so a hanging or exiting adapter costs only its case",
    )
    parser.set_defaults(func=run)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"use a number of seconds >= 0, not {text!r}")
    return value


def _scorecard(spec: str, cases: Any, strict_only: bool, timeout: float) -> Scorecard:
    try:
        adapter = load_adapter(spec)
    except AdapterLoadError as exc:
        raise CliError(str(exc)) from None
    except ImportError as exc:  # a shipped adapter whose package is not installed
        raise CliError(f"{spec}: {exc} (install it to score this implementation)") from None
    if spec.startswith("harmony-grammar"):
        # Our adapters encode and decode ids: without the vocabulary every such case would
        # error with the same long message. Say it once, before any case runs.
        try:
            load_encoding()
        except VocabularyNotFoundError:
            raise CliError(f"{spec}: {NO_VOCABULARY}") from None
    return run_suite(
        adapter, cases, implementation=spec, strict_only=strict_only, timeout=timeout or None
    )


def run(args: argparse.Namespace) -> int:
    """Score each implementation and print the scorecards."""
    if args.cases and not Path(args.cases).exists():
        raise CliError(f"{args.cases}: no such directory (--cases takes the folder of topic files)")
    if args.cases and not Path(args.cases).is_dir():
        raise CliError(
            f"{args.cases}: not a directory: --cases takes the folder of topic files "
            "(conformance/ holds the shipped suite: schema.json and one JSON file per topic)"
        )
    try:
        cases = load_cases(Path(args.cases) if args.cases else None, args.topic or ())
    except (CaseFormatError, FileNotFoundError) as exc:
        raise CliError(str(exc)) from None
    specs = args.impl or ["harmony-grammar"]
    with working(f"harmony-grammar conformance: running {len(cases)} cases"):
        cards = [_scorecard(spec, cases, args.strict_only, args.timeout) for spec in specs]
    if args.format == "json":
        document = {"cases": len(cases), "scorecards": [card.to_dict() for card in cards]}
        print(json.dumps(document, ensure_ascii=False, indent=2))
    else:
        print("\n\n".join(card.to_text() for card in cards))
    return 0 if all(card.ok for card in cards) else 1
