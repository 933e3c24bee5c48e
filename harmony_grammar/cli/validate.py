"""``harmony-grammar validate``: check Harmony files or a JSON Lines dataset against the rules.

Text output is a compiler's, one line per diagnostic, then a count per rule::

    chat.harmony:3:12: HG201 error: channel 'thoughts' is not declared (...)
    data.jsonl:17: HG202 warning: the call to ... (in text at 1:45)

A JSONL diagnostic names the record's line; the position inside the record's Harmony field
follows in parentheses (``at L:C`` for text, ``at token N`` for token ids). ``--format json``
prints JSON Lines: one object per input that has diagnostics, then one summary object.
``--field`` reads datasets (Parquet, shards, ``save_to_disk``, JSONL) on an engine, with
``--output`` and ``--report``: see :mod:`.dataset_run` and docs/datasets.md.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from ..data.pool import ordered_map, worker_count
from ..data.progress import Progress
from ..data.read import PIECE_PREFIX
from ..format.causes import causes_of
from ..format.codes import CATALOGUE
from ..format.model import Diagnostic, Severity
from ..format.options import ParseOptions
from ..format.stripped import stripped_evidence
from ..tools.parameters import checked_tools
from ..validation.batch import BatchOptions
from ..validation.record import validate_record
from ..validation.results import ItemResult
from .dataset_run import add_dataset_options, is_dataset_run, run_dataset
from .display import cause_line, in_cli_words, shown_path
from .errors import CliError
from .input_kind import check_harmony, check_jsonl_field
from .inputs import add_input_options, check_readable, read_text, read_token_ids, read_tools

__all__ = ["register"]


def _tool_schemas(path: str) -> dict[str, Any]:
    try:
        return checked_tools(read_tools(path)).schemas
    except ValueError as exc:
        raise CliError(f"{path}: {exc}") from None


def register(subparsers: Any) -> None:
    """Add the ``validate`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "validate",
        help="validate Harmony files or a JSONL dataset against the format's rules",
        description="Check Harmony text (or token ids) against the grammar and the rule "
        "catalogue (docs/rules.md). Exit 0 when every input is valid, 1 when errors were "
        "found, 2 on usage or I/O errors.",
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="input files (datasets with --field), or -"
    )
    add_input_options(parser)
    parser.add_argument(
        "--tools",
        metavar="TOOLS.json",
        help="the functions calls may address: an OpenAI-style or plain tool list, or a "
        "request object with 'tools' (default: the developer message's namespace functions)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--jsonl",
        metavar="FIELD",
        help="FILEs are JSON Lines whose FIELD (a dotted path reaches nested objects) holds "
        "Harmony text or a list of token ids",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="validate in N processes (0: one per CPU; at most one per CPU and per input)",
    )
    add_dataset_options(parser)
    parser.set_defaults(func=run)


def _display(path: str) -> str:
    return "<stdin>" if path == "-" else path


def _line_path(path: str) -> str:
    return shown_path(path)  # escaped: a diagnostic line must not be forged by a file name


def _file_items(
    paths: list[str], args: argparse.Namespace, stripped: set[str]
) -> Iterator[tuple[str, str | list[int]]]:
    """Each file's text (or ids); the paths of strict runs' texts whose control tokens look
    stripped are added to ``stripped``."""
    for path in paths:
        if args.tokens:
            yield path, read_token_ids(path)
            continue
        text = read_text(path)
        check_harmony(path, text, completion=args.completion, lenient=args.lenient, jsonl=True)
        if not args.lenient and stripped_evidence(text, at_start=True, closed=False):
            stripped.add(path)
        yield path, text


def _stripped_hint(stripped: list[str]) -> None:
    """Once per run, on stderr: strict reading fails on stripped text; name what reads it."""
    example = shown_path(stripped[0])
    more = f" and {len(stripped) - 1} more" if len(stripped) > 1 else ""
    print(
        f"hint: {example}{more}: control tokens look stripped (skip_special_tokens=True): "
        f"read with --lenient, or print the repaired text with `harmony-grammar repair "
        f"{example}`",
        file=sys.stderr,
    )


def _check_file(options: BatchOptions, item: tuple[str, str | list[int]]) -> ItemResult:
    """One plain file's diagnostics (a worker runs this; one file never stops the run)."""
    path, source = item
    checked = validate_record(source, None, options.parse)
    if isinstance(checked, Diagnostic):
        return ItemResult(path, (checked,))
    return ItemResult(path, checked.diagnostics)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


class _Report:
    """Prints results as they arrive and keeps the counts for the summary."""

    def __init__(self, fmt: str, field: str | None, progress: Progress) -> None:
        self.fmt, self.field, self.progress = fmt, field, progress
        self.inputs = self.with_errors = 0
        self.by_code: Counter[str] = Counter()
        self.severity_of: dict[str, Severity] = {}
        self._last_piece: tuple[str, str | None] = ("", None)

    def add(self, path: str, result: ItemResult) -> None:
        self.inputs += 1
        self.with_errors += not result.ok
        for diagnostic in result.diagnostics:
            self.by_code[diagnostic.code] += 1
            self.severity_of[diagnostic.code] = diagnostic.severity
        if result.diagnostics and self._repeats_piece(path, result):
            pass  # the rest of an unreadable piece: counted, its one line already printed
        elif result.diagnostics:
            self.progress.clear()
            if self.fmt == "json":
                print(json.dumps(self._json(path, result), ensure_ascii=False))
            else:
                for diagnostic in result.diagnostics:
                    print(self._line(path, result, diagnostic))
        self.progress.advance(result.size)

    def _repeats_piece(self, path: str, result: ItemResult) -> bool:
        """Whether ``result`` is a further record of the unreadable piece last printed."""
        (first, *rest) = result.diagnostics
        piece = first.message if first.message.startswith(PIECE_PREFIX) and not rest else None
        repeated = piece is not None and (path, piece) == self._last_piece
        self._last_piece = (path, piece)
        return repeated

    def add_totals(
        self, records: int, failing: int, by_code: Mapping[str, int], severity_of: Mapping[str, str]
    ) -> None:
        """Counts aggregated elsewhere (a cluster's workers): the summary's figures, no line
        per record."""
        self.inputs += records
        self.with_errors += failing
        self.by_code.update(by_code)
        self.severity_of.update({code: Severity(value) for code, value in severity_of.items()})

    def _json(self, path: str, result: ItemResult) -> dict[str, Any]:
        return {
            "file": _display(path),
            "record": result.key if self.field is not None else None,
            "ok": result.ok,
            "diagnostics": [d.to_dict() for d in result.diagnostics],
        }

    def _line(self, path: str, result: ItemResult, diagnostic: Diagnostic) -> str:
        if self.field is None:
            return diagnostic.format(_line_path(path))
        head = f"{_line_path(path)}:{result.key}: {diagnostic.code} {diagnostic.severity.value}"
        text = f"{head}: {diagnostic.message}"
        if CATALOGUE[diagnostic.code].record_level:
            return text
        if diagnostic.line is not None:
            return f"{text} (in {self.field} at {diagnostic.line}:{diagnostic.column})"
        return f"{text} (in {self.field} at token {diagnostic.start})"

    def errors(self) -> int:
        return sum(n for c, n in self.by_code.items() if self.severity_of[c] is Severity.ERROR)

    def summary(self) -> None:
        errors = self.errors()
        warnings = sum(self.by_code.values()) - errors
        unit = "record" if self.field is not None else "file"
        # Each likely cause once per run, however many inputs showed it.
        causes = causes_of(sorted(self.by_code))
        if self.fmt == "json":
            summary = {
                f"{unit}s": self.inputs,
                "with_errors": self.with_errors,
                "errors": errors,
                "warnings": warnings,
                "by_code": dict(sorted(self.by_code.items())),
                "causes": [
                    {"codes": list(codes), "cause": cause.summary, "fix": in_cli_words(cause.fix)}
                    for codes, cause in causes
                ],
            }
            print(json.dumps({"summary": summary, "ok": errors == 0}))
            return
        for code, count in sorted(self.by_code.items()):
            slug = CATALOGUE[code].slug
            print(f"  {code} {slug:<26} {self.severity_of[code].value:<8} {count}")
        for codes, cause in causes:
            print(cause_line(codes, cause.summary, cause.fix))
        valid = self.inputs - self.with_errors
        print(
            f"{_plural(self.inputs, unit)} checked: {valid} valid, {self.with_errors} with errors "
            f"({_plural(errors, 'error')}, {_plural(warnings, 'warning')})"
        )


def run(args: argparse.Namespace) -> int:
    """Validate every input, print diagnostics and the summary."""
    if args.jobs < 0:
        raise CliError("--jobs must be 0 or more")
    if args.tokens and args.jsonl:
        raise CliError("--tokens applies to plain files; a JSONL field may hold token ids")
    paths: list[str] = args.files
    dataset = is_dataset_run(args)
    if not dataset:
        check_readable(paths)
    parse = ParseOptions(
        start="completion" if args.completion else "conversation",
        lenient=args.lenient,
        tools=_tool_schemas(args.tools) if args.tools else None,
    )
    options = BatchOptions(
        field=(args.field or args.jsonl or "") if dataset else "",
        parse=parse,
        tools_field=args.tools_field,
    )
    if dataset:  # --field / --jsonl: JSONL, Parquet and Arrow datasets (dataset_run.py)
        for path in paths:  # a field no record has: one line naming those it has, exit 2
            check_jsonl_field(path, options.field, option="--jsonl" if args.jsonl else "--field")
        report = _Report(args.format, options.field, Progress(0, "records"))
        run_dataset(args, options, report)
        report.summary()
        return 1 if report.errors() else 0
    progress = Progress(len(paths) if len(paths) > 1 else 0, "files")
    progress.enabled = progress.enabled and len(paths) > 1
    report = _Report(args.format, None, progress)
    jobs = worker_count(args.jobs, len(paths))
    stripped: set[str] = set()
    failed: list[str] = []
    try:
        check = functools.partial(_check_file, options)
        for result in ordered_map(check, _file_items(paths, args, stripped), jobs=jobs):
            report.add(str(result.key), result)
            if not result.ok and result.key in stripped:
                failed.append(str(result.key))
    finally:
        progress.clear()
    report.summary()
    if failed:
        _stripped_hint(failed)
    return 1 if report.errors() else 0
