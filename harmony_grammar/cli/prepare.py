"""``harmony-grammar prepare``: a chat dataset in, TRL-ready training rows out.

Each record left out (or truncated) is reported on stderr as ``FILE:RECORD: CODE
severity: message`` (RECORD 1-based, docs/datasets.md), then one summary line. Exit 0 when
every record was written, 1 when some were left out (the output holds the rest), 2 on usage
or I/O errors.
"""

from __future__ import annotations

import argparse
import functools
import sys
from typing import Any

from ..data.pieces import DataSourceError
from ..rendering.options import DropRule, RenderOptions
from ..rendering.profiles import DEFAULT_PROFILE, PROFILES
from ..training.batch import PrepareOptions, RecordProblem
from ..training.prepare import DEFAULT_BATCH_SIZE, ENGINES, prepare
from ..training.render import DropScope, TrainOn
from ..training.writers import OUTPUT_FORMATS
from .display import shown_path
from .errors import CliError, needs_extra
from .input_kind import check_dataset
from .inputs import note_skipped

__all__ = ["register"]


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text}")
    return value


def register(subparsers: Any) -> None:
    """Add the ``prepare`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "prepare",
        help="render a chat dataset as TRL-ready token ids with assistant masks",
        description="Import each record (OpenAI-style messages, a Hugging Face chat dataset, "
        "or Harmony text), render it token-exact with openai-harmony, and write input_ids, "
        "assistant_masks, labels, text, file and record as Parquet (or a saved Hugging Face "
        "dataset). Every record left out is reported with its file and record. See "
        "docs/training.md.",
    )
    parser.add_argument("source", metavar="IN", help=".jsonl, .json, .parquet or a dataset folder")
    parser.add_argument("--output", "-o", required=True, metavar="OUT", help="where to write")
    parser.add_argument(
        "--format", choices=OUTPUT_FORMATS, default="parquet", help="output format (parquet)"
    )
    parser.add_argument(
        "--train-on",
        choices=[t.value for t in TrainOn],
        default=TrainOn.LAST.value,
        help="which assistant tokens are masked in: the last turn (default), every turn, or "
        "final answers only",
    )
    parser.add_argument(
        "--keep-analysis", action="store_true", help="keep the analysis of earlier turns"
    )
    parser.add_argument(
        "--drop-rule",
        choices=[r.value for r in DropRule],
        default=DropRule.HARMONY.value,
        help="which earlier analysis is dropped: openai-harmony's rule (default) or vLLM's",
    )
    parser.add_argument(
        "--drop-scope",
        choices=[s.value for s in DropScope],
        default=DropScope.EARLIER_TURNS.value,
        help="drop only before the last turn (default) or over the whole conversation, as "
        "openai-harmony's render_conversation_for_training does",
    )
    parser.add_argument(
        "--profile",
        choices=list(PROFILES),
        default=DEFAULT_PROFILE,
        help="whose rendering (docs/rendering.md): openai-harmony 0.0.8 (default), "
        "oss-harmony 0.0.11, the HF chat template, or oh-my-pi's; the last two drop chain of "
        "thought by their own rule",
    )
    parser.add_argument(
        "--max-length", type=_positive, metavar="N", help="report and skip longer examples"
    )
    parser.add_argument(
        "--truncate", action="store_true", help="cut longer examples to --max-length instead"
    )
    parser.add_argument(
        "--input-format",
        choices=("auto", "messages", "harmony"),
        default="auto",
        help="how records are read (auto: a 'messages' list, else Harmony in 'text')",
    )
    parser.add_argument("--field", metavar="NAME", help="the field holding messages or Harmony")
    parser.add_argument(
        "--lenient", action="store_true", help="repair Harmony input, with warnings"
    )
    parser.add_argument("--engine", choices=ENGINES, default="local")
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="local engine: N processes (0: one per CPU)",
    )
    parser.add_argument(
        "--batch-size",
        type=_positive,
        default=DEFAULT_BATCH_SIZE,
        metavar="N",
        help="records per batch",
    )
    parser.set_defaults(func=run)


def _show(problem: RecordProblem) -> None:
    d = problem.diagnostic
    where = f"{shown_path(problem.file)}:{problem.record}"  # escaped: no forged lines
    print(f"{where}: {d.code} {d.severity.value}: {d.message}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Prepare the dataset; report problems and a summary on stderr."""
    if args.truncate and args.max_length is None:
        raise CliError("--truncate needs --max-length")
    check_dataset(args.source, command="prepare")
    own_rule = "auto_drop_analysis" in PROFILES[args.profile].fixed_options
    changed = (
        args.keep_analysis
        or args.drop_rule != DropRule.HARMONY.value
        or args.drop_scope != DropScope.EARLIER_TURNS.value
    )
    if own_rule and changed:
        raise CliError(
            f"--keep-analysis, --drop-rule and --drop-scope do not apply to --profile "
            f"{args.profile}: it drops chain of thought by its own rule"
        )
    # A profile with its own rule decides dropping: its render options leave the rule unset.
    render = RenderOptions(
        profile=args.profile,
        auto_drop_analysis=None if own_rule else not args.keep_analysis,
        drop_rule=None if own_rule else DropRule(args.drop_rule),
    )
    options = PrepareOptions(
        train_on=TrainOn(args.train_on),
        drop_scope=DropScope(args.drop_scope),
        render=render,
        max_length=args.max_length,
        truncate=args.truncate,
        input_format=args.input_format,
        field=args.field,
        lenient=args.lenient,
    )
    if args.jobs < 0:
        raise CliError("--jobs must be 0 or more")
    jobs = args.jobs
    try:
        report = prepare(
            args.source,
            args.output,
            options,
            engine=args.engine,
            output_format=args.format,
            jobs=jobs,
            batch_size=args.batch_size,
            on_problem=_show,
            on_skipped=functools.partial(note_skipped, args.source),
        )
    except DataSourceError as exc:
        raise CliError(str(exc)) from None
    except ImportError as exc:
        # The extra to install (cli/errors.needs_extra); an ImportError of our own making
        # (the ray engine's, no module name) already says which.
        raise (needs_extra("prepare", exc) if exc.name else CliError(str(exc))) from None
    except OSError as exc:
        raise CliError(f"{args.output}: {exc.strerror or exc}") from None
    rate = report.records / report.seconds if report.seconds else 0.0
    print(
        f"{report.records} records: {report.written} written, {report.skipped} skipped; "
        f"{report.tokens} tokens, {report.trained_tokens} trained, longest {report.longest}; "
        f"{report.seconds:.1f} s ({rate:,.0f} records/s)",
        file=sys.stderr,
    )
    return 1 if report.skipped else 0
