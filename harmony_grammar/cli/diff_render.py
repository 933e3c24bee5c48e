"""``harmony-grammar diff-render``: one request rendered by several profiles, side by side.

Exit 0 when every rendering is the same token for token, 1 when any differs (or a profile
cannot express the conversation), 2 on usage or input errors.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..data.progress import working
from ..format.vocabulary import load_encoding
from ..rendering.diff import Comparison, RenderDiff, diff_renderings
from ..rendering.options import RenderOptions
from ..rendering.profiles import PROFILES
from .errors import CliError
from .render import add_profile_options, read_conversation

__all__ = ["register"]

#: The width of a column of tokens.
_WIDTH = 38
#: Tokens of the same text shown either side of a difference, decoded, for context.
_CONTEXT = 4


def _profiles(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in PROFILES]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown profile {unknown[0]!r}: use {', '.join(PROFILES)}"
        )
    if len(names) < 2:
        raise argparse.ArgumentTypeError("name at least two profiles, separated by commas")
    return names


def register(subparsers: Any) -> None:
    """Add the ``diff-render`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "diff-render",
        help="render a request with several profiles and show where the tokens differ",
        description="Render a Chat Completions or Responses request body with each profile "
        "and compare each rendering with the first, token by token: the differing tokens are "
        "shown side by side, decoded, and a summary line says 'same' or 'N differences'. Exit "
        "0 when all are the same, 1 when any differs.",
    )
    parser.add_argument("request", metavar="REQUEST.json", help="request body, or - for stdin")
    parser.add_argument(
        "--profiles",
        type=_profiles,
        required=True,
        metavar="A,B[,C]",
        help=f"profiles to compare, the first against the others ({', '.join(PROFILES)})",
    )
    parser.add_argument(
        "--next-turn", metavar="ROLE", help="render as a prompt: append <|start|>ROLE"
    )
    parser.add_argument(
        "--training", action="store_true", help="end a last final answer with <|return|>"
    )
    add_profile_options(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(func=run)


def _decoded(encoding: Any, ids: Any) -> list[dict[str, Any]]:
    return [
        {"id": i, "text": encoding.decode_single_token_bytes(i).decode("utf-8", "backslashreplace")}
        for i in ids
    ]


def _as_json(diff: RenderDiff, encoding: Any) -> dict[str, Any]:
    by_name = {r.profile: r for r in diff.renderings}

    def span(ids: Any, start: int, end: int) -> dict[str, Any]:
        around = ids[max(0, start - _CONTEXT) : end + _CONTEXT]
        return {
            "start": start,
            "end": end,
            "tokens": _decoded(encoding, ids[start:end]),
            "context": "".join(t["text"] for t in _decoded(encoding, around)),
        }

    def side(comparison: Comparison) -> list[dict[str, Any]]:
        a, b = by_name[comparison.a].tokens, by_name[comparison.b].tokens
        return [
            {"a": span(a, d.a_start, d.a_end), "b": span(b, d.b_start, d.b_end)}
            for d in comparison.differences
        ]

    return {
        "renderings": [
            {"profile": r.profile, "tokens": list(r.tokens), "error": r.error}
            for r in diff.renderings
        ],
        "comparisons": [
            {"a": c.a, "b": c.b, "differences": side(c), "count": c.count}
            for c in diff.comparisons
        ],
        "differences": diff.count,
        "summary": diff.summary,
    }


def _cell(token: dict[str, Any] | None) -> str:
    if token is None:
        return ""
    text = f"{token['id']:>6} {json.dumps(token['text'], ensure_ascii=False)}"
    return text if len(text) <= _WIDTH else text[: _WIDTH - 3] + "..."


def _as_text(report: dict[str, Any]) -> str:
    lines = [
        f"{r['profile']}: "
        + (f"cannot render: {r['error']}" if r["error"] else f"{len(r['tokens'])} tokens")
        for r in report["renderings"]
    ]
    for comparison in report["comparisons"]:
        lines.append("")
        n = comparison["count"]
        counted = "same" if n == 0 else f"{n} difference{'s' if n != 1 else ''}"
        lines.append(f"{comparison['a']} vs {comparison['b']}: {counted}")
        for difference in comparison["differences"]:
            a, b = difference["a"], difference["b"]
            lines.append(
                f"@ {comparison['a']} [{a['start']}:{a['end']}]  "
                f"{comparison['b']} [{b['start']}:{b['end']}]"
            )
            for name, side in ((comparison["a"], a), (comparison["b"], b)):
                lines.append(f"  {name}: ...{json.dumps(side['context'], ensure_ascii=False)}...")
            rows = max(len(a["tokens"]), len(b["tokens"]))
            for row in range(rows):
                left = a["tokens"][row] if row < len(a["tokens"]) else None
                right = b["tokens"][row] if row < len(b["tokens"]) else None
                lines.append(f"  {_cell(left):<{_WIDTH}} | {_cell(right)}".rstrip())
    lines.append("")
    lines.append(report["summary"])
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Render with each profile, print the comparison; 0 same, 1 different."""
    conversation = read_conversation(args.request, args.date)
    try:
        options = RenderOptions(next_turn=args.next_turn, training=args.training)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    with working("harmony-grammar diff-render: loading the vocabulary and rendering"):
        encoding = load_encoding()
        diff = diff_renderings(conversation, args.profiles, options, encoding=encoding)
    report = _as_json(diff, encoding)
    print(json.dumps(report, ensure_ascii=False) if args.format == "json" else _as_text(report))
    return 0 if diff.count == 0 else 1
