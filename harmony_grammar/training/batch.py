"""Turning a batch of dataset records into training rows: the one function every engine runs.

:func:`prepare_batch` imports each record (:mod:`.importers`), renders it with its mask
(:func:`.render.render_training`) and applies the length limit. It takes and returns plain
lists and dicts, so the local engine's worker processes and Ray Data's ``map_batches`` can
both call it unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..base.deprecation import moved_fields, moved_names
from ..base.options import Options
from ..format.bounded_encode import EncodeLimitError
from ..format.diagnostics import make_diagnostic
from ..format.model import Diagnostic, Severity
from ..rendering.errors import RenderError
from ..rendering.options import RenderOptions
from .importers import RecordFormat, import_record, unimportable
from .render import DropScope, TrainingExample, TrainOn, render_training

__all__ = ["COLUMNS", "BatchResult", "PrepareOptions", "RecordProblem", "prepare_batch"]

#: The output columns, in order. ``input_ids``, ``assistant_masks`` and ``labels`` are the
#: names TRL's ``SFTTrainer`` reads from a pre-tokenized dataset (``labels`` is used as is;
#: without it, labels are built from ``assistant_masks``); ``text`` is the rendered Harmony,
#: ``file`` and ``record`` the record's identity in the input (1-based, docs/datasets.md).
COLUMNS = ("input_ids", "assistant_masks", "labels", "text", "file", "record")


@moved_fields(
    "render",
    {"auto_drop_analysis": "auto_drop_analysis", "drop_rule": "drop_rule", "profile": "profile"},
)
@dataclass(frozen=True, kw_only=True)
class PrepareOptions(Options):
    """How records become training examples (the ``prepare`` command's options).

    ``render`` is how they are rendered (:class:`~harmony_grammar.rendering.options.RenderOptions`:
    the profile, whether and by which rule earlier analysis is dropped, ...; ``training`` is
    always on); the other fields are :func:`~.render.render_training`'s own (``train_on``,
    ``drop_scope``), the importer's (``input_format``, ``field``, ``lenient``) and the length
    limit's. ``PrepareOptions(profile=...)`` (and ``auto_drop_analysis``, ``drop_rule``) still
    work for one release, with a ``DeprecationWarning``: they are ``render``'s fields now.
    """

    train_on: TrainOn = TrainOn.LAST
    drop_scope: DropScope = DropScope.EARLIER_TURNS
    render: RenderOptions = field(default_factory=RenderOptions)
    max_length: int | None = None
    truncate: bool = False
    input_format: RecordFormat = "auto"
    field: str | None = None
    lenient: bool = False


@dataclass(frozen=True)
class RecordProblem:
    """A diagnostic about record ``record`` (1-based) of ``file``; ``skipped`` when the record
    was left out. ``count`` is how many records it stands for (an unreadable piece's).
    Formerly ``Problem``."""

    file: str
    record: int
    diagnostic: Diagnostic
    count: int = 1

    @property
    def skipped(self) -> bool:
        """Errors leave the record out; warnings (HG302 truncated) keep it."""
        return self.diagnostic.severity is Severity.ERROR


@dataclass
class BatchResult:
    """The rows of a batch as columns (see :data:`COLUMNS`), its problems, and how many input
    records it covers (``records``: written, left out or unreadable)."""

    columns: dict[str, list[Any]] = field(default_factory=lambda: {name: [] for name in COLUMNS})
    problems: list[RecordProblem] = field(default_factory=list)
    tokens: int = 0
    trained_tokens: int = 0
    records: int = 0

    def __len__(self) -> int:
        return len(self.columns["record"])

    def add(self, file: str, record: int, example: TrainingExample) -> None:
        """Append one example."""
        self.columns["input_ids"].append(example.input_ids)
        self.columns["assistant_masks"].append(example.assistant_masks)
        self.columns["labels"].append(example.labels)
        self.columns["text"].append(example.text)
        self.columns["file"].append(file)
        self.columns["record"].append(record)
        self.tokens += len(example)
        self.trained_tokens += example.trained_tokens


def _example(
    where: tuple[str, int],
    record: Any,
    error: str | None,
    options: PrepareOptions,
    encoding: Any,
    out: BatchResult,
) -> None:
    def _problem(code: str, message: str) -> RecordProblem:
        return RecordProblem(*where, make_diagnostic(code, message, 0, 0))

    if error is not None:
        out.problems.append(RecordProblem(*where, unimportable(error)))
        return
    imported = import_record(
        record,
        row=where[1],
        format=options.input_format,
        field=options.field,
        lenient=options.lenient,
    )
    out.problems += [RecordProblem(*where, d) for d in imported.diagnostics]
    if imported.conversation is None:
        return
    try:
        example = render_training(
            imported.conversation,
            options.render,
            train_on=options.train_on,
            drop_scope=options.drop_scope,
            encoding=encoding,
        )
    except (RenderError, UnicodeEncodeError, EncodeLimitError) as exc:
        # EncodeLimitError: text past tiktoken's limits (a whitespace run too long for it).
        out.problems.append(_problem("HG304", str(exc)[:500]))
        return
    limit = options.max_length
    if limit is not None and len(example) > limit:
        if not options.truncate:
            message = f"{len(example)} tokens, over --max-length {limit}; skipped"
            out.problems.append(_problem("HG301", message))
            return
        out.problems.append(
            _problem("HG302", f"cut from {len(example)} to {limit} tokens (--truncate)")
        )
        example = example.truncated(limit, encoding)
    if not example.trained_tokens:
        after = " after truncation" if limit is not None and options.truncate else ""
        message = f"no token is masked in{after} (train_on={options.train_on.value}); skipped"
        out.problems.append(_problem("HG303", message))
        return
    out.add(*where, example)


def prepare_batch(
    records: Sequence[Any],
    numbers: Sequence[int],
    options: PrepareOptions,
    encoding: Any = None,
    *,
    file: str = "<input>",
    errors: Sequence[str | None] | None = None,
) -> BatchResult:
    """Training rows for ``records`` (records ``numbers`` of ``file``, 1-based), with a
    problem per record left out; ``errors[i]``, when set, says why record ``i`` could not be
    read (its HG300).

    Never raises for a bad record: each becomes a :class:`RecordProblem` (HG300 to HG304).
    """
    if encoding is None:
        from ..format.vocabulary import load_encoding

        encoding = load_encoding()
    out = BatchResult(records=len(records))
    for i, (number, record) in enumerate(zip(numbers, records, strict=True)):
        error = errors[i] if errors is not None else None
        try:
            _example((file, number), record, error, options, encoding, out)
        except RecursionError:  # a record nested past the interpreter's stack: its problem
            why = "the record is nested too deeply to import"
            out.problems.append(RecordProblem(file, number, unimportable(why)))
    return out


__getattr__ = moved_names(
    __name__, {"Problem": ("harmony_grammar.training.batch.RecordProblem", RecordProblem)}
)
