"""``harmony-grammar audit-masks DATA --ids COLUMN --mask COLUMN``: which tokens a loss mask
trains, by segment, against the exact mask of ``render_training``.

Text output is a table of segments (tokens, trained, exact) and one line per finding with
the records it applies to, then the first records with findings::

    segment       tokens   trained     exact
    analysis         214       214       214
    header           420       220       180   +40
    ...
    generation-start-trained  20 records  the <|start|>assistant a host writes ... is trained

``--format json`` prints one object: ``{"records", "audited", "segments": {NAME: {"tokens",
"trained", "expected"}}, "findings": [{"code", "records"}]}``. ``--report`` writes the HTML
page, ``--output`` one JSON line per record. The records are read and audited on the data
layer (:class:`~harmony_grammar.audit.task.AuditTask`): here in ``--jobs`` processes, or on
Ray Data with ``--engine ray``; either way the results arrive in input order. Exit 0 when no
record has a finding, 1 when some have, 2 on usage or I/O errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from ..audit.batch import AuditOptions
from ..audit.findings import FINDINGS
from ..audit.report import render_audit_html
from ..audit.summary import AuditSummary
from ..audit.task import AuditBatch, AuditTask
from ..data.engines import ENGINES, run_task
from ..rendering.options import DropRule, RenderOptions
from ..training.render import TrainOn
from .dataset_run import plan_inputs, run_failures
from .errors import CliError
from .input_kind import check_dataset

__all__ = ["register"]

#: Records with findings listed by the text output (--output and --report have more).
_SHOWN = 10


def register(subparsers: Any) -> None:
    """Add the ``audit-masks`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "audit-masks",
        help="show which tokens a training dataset's loss mask trains, by segment",
        description="Read token ids and a 0/1 loss mask per record (JSONL, Parquet, a "
        "directory of shards or a datasets save_to_disk directory) and report, per segment "
        "(system, developer, user, tool_result, analysis, preamble, call, final, header, end, "
        "return, call_token), how many tokens the mask trains against the exact mask of "
        "render_training, with findings per record (docs/training.md). Exit 0 when no record "
        "has a finding, 1 when some have, 2 on usage or I/O errors.",
    )
    parser.add_argument("data", metavar="DATA", help="the dataset (a file or a directory)")
    parser.add_argument(
        "--ids", default="input_ids", metavar="COLUMN", help="the token-id column (input_ids)"
    )
    parser.add_argument(
        "--mask",
        default="assistant_masks",
        metavar="COLUMN",
        help="the 0/1 loss-mask column (assistant_masks, as TRL and prepare write it)",
    )
    parser.add_argument(
        "--train-on",
        choices=[t.value for t in TrainOn],
        default=TrainOn.ALL.value,
        help="the policy of the exact mask: every generation (all, the default), the last "
        "turn's (last, prepare's default) or final messages only (final)",
    )
    parser.add_argument(
        "--drop-rule",
        choices=[r.value for r in DropRule],
        default=DropRule.HARMONY.value,
        help="the host's rule for dropping earlier analysis, which decides "
        "analysis-trained-unseen (harmony: openai-harmony's, the default; every-final: vLLM's "
        "and the HF template's)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--report", metavar="REPORT.html", help="also write the HTML report")
    parser.add_argument(
        "--output", metavar="AUDIT.jsonl", help="also write one JSON line per record"
    )
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="local",
        help="audit here (--jobs processes) or on Ray Data (default: local)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="processes (local) or CPUs of a local Ray (ray); 0: one per CPU (default 1)",
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="with --engine ray: a running Ray cluster (default: start a local Ray instance)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Audit the dataset; print the summary; 1 when any record has a finding."""
    check_dataset(args.data, command="audit-masks", ids=args.ids)
    if args.jobs < 0:
        raise CliError("--jobs must be 0 or more")
    if args.ray_address is not None and args.engine != "ray":
        raise CliError("--ray-address needs --engine ray")
    task = AuditTask(
        AuditOptions(
            ids=args.ids,
            mask=args.mask,
            train_on=TrainOn(args.train_on),
            render=RenderOptions(drop_rule=DropRule(args.drop_rule)),
        )
    )
    pieces = plan_inputs([args.data], list(task.columns))
    summary = AuditSummary()
    with ExitStack() as stack:
        output = None
        if args.output:
            try:
                output = stack.enter_context(open(args.output, "w", encoding="utf-8"))
            except OSError as exc:
                raise CliError(f"{args.output}: {exc.strerror or exc}") from None
        batches = run_task(
            pieces,
            task,
            engine=args.engine,
            jobs=args.jobs,
            address=args.ray_address,
            progress=bool(sys.stderr.isatty()),
        )
        with run_failures(args.engine, args.data):
            for batch in batches:
                summary.add(batch)
                if output is not None:
                    _write_records(output, batch)
    if args.report:
        try:
            Path(args.report).write_text(render_audit_html(summary), encoding="utf-8")
        except OSError as exc:
            raise CliError(f"{args.report}: {exc.strerror or exc}") from None
    if args.format == "json":
        print(json.dumps(summary.to_json()))
    else:
        _print_text(summary)
    return 1 if summary.findings else 0


def _write_records(out: Any, batch: AuditBatch) -> None:
    for record, audit in zip(batch.records, batch.audits, strict=True):
        row = {"file": batch.file, "record": record, **audit.to_json()}
        out.write(json.dumps(row) + "\n")


def _print_text(summary: AuditSummary) -> None:
    data = summary.to_json()
    write = sys.stdout.write
    write(f"{data['records']:,} records, {data['audited']:,} audited\n")
    write(f"{'segment':<12}{'tokens':>10}{'trained':>10}{'exact':>10}\n")
    for name, s in data["segments"].items():
        off = s["trained"] - s["expected"]
        shown = f"{off:+,}" if off else ""
        line = f"{name:<12}{s['tokens']:>10,}{s['trained']:>10,}{s['expected']:>10,}  {shown}"
        write(line.rstrip() + "\n")
    meaning = {f.code: f.summary for f in FINDINGS}
    for row in data["findings"]:
        write(f"{row['code']:<26}{row['records']:>8,} records  {meaning[row['code']]}\n")
    if not data["findings"]:
        write("no findings: every mask is the exact mask\n")
    for s in summary.samples[:_SHOWN]:
        why = f" ({s['error']})" if s["error"] else ""
        write(f"{s['file']}:{s['record']}: {', '.join(s['findings'])}{why}\n")
    flagged = data["records"] - summary.clean
    if flagged > _SHOWN:
        write(f"... {flagged - _SHOWN:,} more records with findings (--output lists all)\n")
