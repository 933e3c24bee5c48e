"""``harmony-grammar leaks``: report Harmony markup leaked into a text or a tool argument."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..format.diagnostics import LineIndex
from ..safety.leaks import LeakReport, LeakSurface, detect_leak
from ..safety.signals import LeakSignal
from .inputs import read_text

__all__ = ["register"]

_WHAT = {
    LeakSignal.CONTROL_TOKEN: "control-token spelling",
    LeakSignal.MARKER: "recipient marker",
    LeakSignal.CHANNEL_WORD: "channel word glued to markup",
    LeakSignal.GLITCH: "malformed or foreign control spelling",
    LeakSignal.MIXED_SCRIPT: "mixed scripts in one word",
    LeakSignal.BODY_CASCADE: "call body glued to markup",
    LeakSignal.FAKE_RESULT: "fake tool-result framing",
    LeakSignal.AFTER_BOUNDARY: "marker after the argument's JSON value",
}


def register(subparsers: Any) -> None:
    """Add the ``leaks`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "leaks",
        help="detect Harmony markup leaked into text or tool arguments",
        description="Detect Harmony markup leaked into visible text (or, with --surface "
        "tool_arg, into a tool call's arguments). Exit 0 when nothing triggered, 1 when a "
        "leak triggered, 2 on usage or I/O errors.",
    )
    parser.add_argument("file", metavar="FILE", help="input file, or - for stdin")
    parser.add_argument(
        "--surface",
        choices=[surface.value for surface in LeakSurface],
        default=LeakSurface.TEXT.value,
        help="what the input is (default: text)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Detect leaks in the file and print the triggering spans."""
    text = read_text(args.file)
    report = detect_leak(text, surface=args.surface)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
    else:
        print_report(report, text, "<stdin>" if args.file == "-" else args.file)
    return 1 if report.triggered else 0


def print_report(report: LeakReport, text: str, filename: str) -> None:
    """One compiler-style line per triggering span, then a verdict."""
    lines = LineIndex()
    lines.add(text, 0)
    for span in report.triggering:
        line, column = lines.locate(span.start)
        print(
            f"{filename}:{line}:{column}: {span.signal.value} {_WHAT[span.signal]}: "
            f"{json.dumps(span.text, ensure_ascii=False)}"
        )
    seen = ", ".join(sorted(signal.value for signal in report.signals)) or "none"
    verdict = "leak detected" if report.triggered else "no leak"
    print(f"{filename}: {verdict} (signals: {seen})")
