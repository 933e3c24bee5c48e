"""``validate DATA --field FIELD``: datasets (JSONL, Parquet, shard and ``save_to_disk``
directories) on the local engine or on Ray, with ``--output`` and ``--report``.

``validate`` hands over here when ``--field`` is given (or ``--jsonl`` with one of this
module's options). Results from either engine stream through the same consumers: the
command's summary (diagnostic lines and counts, as for ``--jsonl``), the ``--output`` Parquet
writer and the report's accumulator; none of them keeps records, so the driver's memory does
not grow with the dataset.

With ``--engine ray`` and an ``--output`` that is not a ``.parquet`` file name, the results
never reach the driver: Ray's workers write them into that directory
(:mod:`..validation.ray_output`) and the driver gets aggregates only, so the summary has the
counts and causes but no line per record (those are in the directory).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Protocol

from ..data.pieces import DataSourceError, Piece, count_records, display_name, first_line, plan
from ..data.progress import Progress
from ..data.ray_engine import RayUnavailableError
from ..validation.batch import BatchOptions
from ..validation.engine import validate_local, validate_ray
from ..validation.html_report import ReportData, render_html
from ..validation.ray_output import write_results_ray
from ..validation.results import ItemResult, ResultBatch, output_schema
from .errors import CliError
from .inputs import note_skipped

__all__ = ["add_dataset_options", "is_dataset_run", "plan_inputs", "run_dataset", "run_failures"]


class Summary(Protocol):
    """What ``validate``'s report offers: a result per record, and its progress bar."""

    progress: Progress

    def add(self, path: str, result: ItemResult) -> None: ...

    def add_totals(
        self, records: int, failing: int, by_code: Mapping[str, int], severity_of: Mapping[str, str]
    ) -> None: ...


def add_dataset_options(parser: argparse.ArgumentParser) -> None:
    """The dataset options: ``--field``, ``--tools-field``, ``--engine``, ``--ray-address``,
    ``--output``, ``--report``."""
    group = parser.add_argument_group("datasets (docs/datasets.md)")
    group.add_argument(
        "--field",
        metavar="FIELD",
        help="FILEs are datasets (.jsonl, .parquet, a directory of Parquet shards or a "
        "datasets save_to_disk directory) whose column FIELD holds Harmony text or token ids",
    )
    group.add_argument(
        "--tools-field",
        metavar="COLUMN",
        help="a Parquet/Arrow column of per-record tools (a tool list or its JSON text)",
    )
    group.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="validate here (--jobs processes) or on Ray Data (default: local)",
    )
    group.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="a running Ray cluster (default: start a local Ray instance)",
    )
    group.add_argument(
        "--output",
        metavar="RESULTS.parquet",
        help="write every record's results with its file and record number; with --engine "
        "ray, a name not ending in .parquet is a directory the workers write shards into",
    )
    group.add_argument(
        "--report",
        metavar="REPORT.html",
        help="write a self-contained HTML report (charts, causes, samples)",
    )


def is_dataset_run(args: argparse.Namespace) -> bool:
    """Whether the arguments ask for this module (else ``validate`` checks plain files).

    ``--jsonl FIELD`` is ``--field FIELD``: one reader and one engine for every dataset."""
    extras = (args.output, args.report, args.tools_field, args.ray_address)
    wants = any(x is not None for x in extras) or args.engine != "local"
    if args.field is None and args.jsonl is None and wants:
        raise CliError("--output, --report, --engine and --tools-field need --field")
    if args.field is not None and args.jsonl is not None and args.field != args.jsonl:
        raise CliError("--field and --jsonl name different fields; give one")
    return args.field is not None or args.jsonl is not None


def plan_inputs(paths: list[str], columns: list[str]) -> list[Piece]:
    """Every path's pieces (one directory rule for every command, docs/datasets.md); the
    metadata files a directory held are named on stderr, never skipped silently."""
    pieces: list[Piece] = []
    for path in paths:
        try:
            found = plan(path, columns)
        except DataSourceError as exc:
            raise CliError(str(exc)) from None
        pieces += found.pieces
        if found.skipped:
            note_skipped(path, found.skipped)
    return pieces


class _Output:
    """``--output``: results appended to one Parquet file as they arrive."""

    def __init__(self, path: str, stack: ExitStack) -> None:
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise CliError("--output needs pyarrow: pip install 'harmony-grammar[scale]'") from None

        try:
            self._writer = stack.enter_context(pq.ParquetWriter(path, output_schema()))
        except OSError as exc:
            raise CliError(f"{path}: {exc}") from None

    @staticmethod
    def check(path: str) -> None:
        """Fail now, not after the run, when ``--output`` cannot be written."""
        try:
            import pyarrow.parquet  # noqa: F401
        except ImportError:
            raise CliError("--output needs pyarrow: pip install 'harmony-grammar[scale]'") from None

    def write(self, batch: ResultBatch) -> None:
        self._writer.write_table(batch.to_arrow())


def _results(
    args: argparse.Namespace, pieces: list[Piece], options: BatchOptions, progress: Progress
) -> Iterator[ResultBatch]:
    if args.engine == "local":
        return validate_local(pieces, options, jobs=args.jobs)
    progress.enabled = False  # Ray draws its own bars: never both
    return validate_ray(
        pieces,
        options,
        address=args.ray_address,
        jobs=args.jobs,
        progress=bool(sys.stderr.isatty()),
    )


def _cluster_output(args: argparse.Namespace) -> bool:
    """Whether Ray's workers write ``--output`` (a directory) rather than the driver (a file)."""
    return bool(args.engine == "ray" and args.output and not args.output.endswith(".parquet"))


def _write_on_cluster(
    args: argparse.Namespace, pieces: list[Piece], options: BatchOptions, summary: Summary
) -> ReportData:
    """``--engine ray --output DIR``: the workers write; the summary gets the aggregates."""
    summary.progress.enabled = False  # Ray draws its own bars: never both
    local = "://" not in args.output  # a path: absolute, workers need not share our cwd
    data = write_results_ray(
        pieces,
        options,
        str(Path(args.output).absolute()) if local else args.output,
        address=args.ray_address,
        jobs=args.jobs,
        progress=bool(sys.stderr.isatty()),
    )
    summary.add_totals(data.records, data.failing, data.by_code, data.severity_of)
    return data


@contextmanager
def run_failures(engine: str, name: str) -> Iterator[None]:
    """A dataset run's failures as one-line :class:`CliError` s: Ray not installed, a file that
    turns unreadable part way through (named; else ``name``), a Ray task or cluster failure.
    On the local engine any other exception is a bug and stays one."""
    try:
        yield
    except RayUnavailableError as exc:  # raised when the results generator first runs
        raise CliError(str(exc)) from None
    except BrokenPipeError:  # the reader went away (| head): main ends quietly
        raise
    except (OSError, ValueError) as exc:
        raise CliError(f"{getattr(exc, 'filename', None) or name}: {first_line(exc)}") from None
    except Exception as exc:  # a Ray task or cluster failure: one line, not a traceback
        if engine != "ray":
            raise
        raise CliError(f"ray: {type(exc).__name__}: {first_line(exc)}") from None


def _not_empty(path: Path) -> bool:
    return path.is_file() or (path.is_dir() and any(path.iterdir()))


def run_dataset(args: argparse.Namespace, options: BatchOptions, summary: Summary) -> None:
    """Validate the datasets in ``args.files`` (``options.field`` of each record), feeding
    ``summary``, ``--output`` and ``--report``."""
    field = options.field
    if args.tokens:
        raise CliError("--tokens applies to plain files; a dataset field may hold token ids")
    if args.output and not _cluster_output(args):
        _Output.check(args.output)  # before any work: pyarrow is there, the name is usable
    pieces = plan_inputs(args.files, [field] + ([args.tools_field] if args.tools_field else []))
    batch_options = options
    summary.progress = Progress(count_records(pieces) or 0, "records")
    report = ReportData() if args.report else None
    if args.report and not Path(args.report).resolve().parent.is_dir():
        raise CliError(f"{args.report}: no such directory")  # found now, not after the run
    cluster = _cluster_output(args)
    if cluster and "://" not in args.output and _not_empty(Path(args.output)):
        # Ray would add its shards to what is there: old and new results mixed
        raise CliError(f"{args.output}: exists and is not an empty directory")
    with ExitStack() as stack:
        output = _Output(args.output, stack) if args.output and not cluster else None
        try:
            with run_failures(args.engine, field):
                if cluster:
                    report = _write_on_cluster(args, pieces, batch_options, summary)
                results = () if cluster else _results(args, pieces, batch_options, summary.progress)
                for batch in results:
                    for result in batch.item_results():
                        summary.add(batch.file, result)
                    if output is not None:
                        output.write(batch)
                    if report is not None:
                        report.add(batch)
        finally:
            summary.progress.clear()
    if args.report:
        assert report is not None
        try:
            page = render_html(report, inputs=[display_name(f) for f in args.files])
            Path(args.report).write_text(page, encoding="utf-8")
        except OSError as exc:
            raise CliError(f"{args.report}: {exc.strerror or exc}") from None
