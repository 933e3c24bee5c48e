"""Turning a batch of dataset records into training rows: the one function every engine runs.

:func:`prepare_batch` imports each record (:mod:`harmony_grammar.rendering.importers`),
renders it with its mask (:func:`~harmony_grammar.rendering.training.render_training`) and
applies the length limit. It takes and returns plain lists and dicts, so the local engine's
worker processes and Ray Data's ``map_batches`` can both call it unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..format.diagnostics import make_diagnostic
from ..format.model import Diagnostic, Severity
from ..rendering.importers import RecordFormat, import_record
from ..rendering.renderer import DropRule, RenderError
from ..rendering.training import DropScope, TrainingExample, TrainOn, render_training
from .readers import Unreadable

__all__ = ["COLUMNS", "BatchResult", "PrepareOptions", "Problem", "prepare_batch"]

#: The output columns, in order. ``input_ids``, ``assistant_masks`` and ``labels`` are the
#: names TRL's ``SFTTrainer`` reads from a pre-tokenized dataset (``labels`` is used as is;
#: without it, labels are built from ``assistant_masks``); ``text`` is the rendered Harmony,
#: ``row`` the record's row in the input.
COLUMNS = ("input_ids", "assistant_masks", "labels", "text", "row")


@dataclass(frozen=True)
class PrepareOptions:
    """How records become training examples (the ``prepare`` command's options)."""

    train_on: TrainOn = TrainOn.LAST
    auto_drop_analysis: bool = True
    drop_rule: DropRule = DropRule.HARMONY
    drop_scope: DropScope = DropScope.EARLIER_TURNS
    max_length: int | None = None
    truncate: bool = False
    input_format: RecordFormat = "auto"
    field: str | None = None
    lenient: bool = False
    #: Whose rendering (harmony_grammar.rendering.profiles); the default is openai-harmony's.
    profile: str = "openai-harmony-0.0.8"


@dataclass(frozen=True)
class Problem:
    """A diagnostic about the record at ``row``; ``skipped`` when the record was left out."""

    row: int
    diagnostic: Diagnostic

    @property
    def skipped(self) -> bool:
        """Errors leave the record out; warnings (HG302 truncated) keep it."""
        return self.diagnostic.severity is Severity.ERROR


@dataclass
class BatchResult:
    """The rows of a batch as columns (see :data:`COLUMNS`), and its problems."""

    columns: dict[str, list[Any]] = field(default_factory=lambda: {name: [] for name in COLUMNS})
    problems: list[Problem] = field(default_factory=list)
    tokens: int = 0
    trained_tokens: int = 0

    def __len__(self) -> int:
        return len(self.columns["row"])

    def add(self, row: int, example: TrainingExample) -> None:
        """Append one example."""
        self.columns["input_ids"].append(example.input_ids)
        self.columns["assistant_masks"].append(example.assistant_masks)
        self.columns["labels"].append(example.labels)
        self.columns["text"].append(example.text)
        self.columns["row"].append(row)
        self.tokens += len(example)
        self.trained_tokens += example.trained_tokens


def _problem(row: int, code: str, message: str) -> Problem:
    return Problem(row, make_diagnostic(code, message, 0, 0))


def _example(
    row: int, record: Any, options: PrepareOptions, encoding: Any, out: BatchResult
) -> None:
    if isinstance(record, Unreadable):
        out.problems.append(_problem(row, "HG300", record.reason))
        return
    imported = import_record(
        record, row=row, format=options.input_format, field=options.field, lenient=options.lenient
    )
    out.problems += [Problem(row, d) for d in imported.diagnostics]
    if imported.conversation is None:
        return
    try:
        example = render_training(
            imported.conversation,
            train_on=options.train_on,
            auto_drop_analysis=options.auto_drop_analysis,
            drop_rule=options.drop_rule,
            drop_scope=options.drop_scope,
            encoding=encoding,
            profile=options.profile,
        )
    except RenderError as exc:
        out.problems.append(_problem(row, "HG304", str(exc)))
        return
    limit = options.max_length
    if limit is not None and len(example) > limit:
        if not options.truncate:
            message = f"{len(example)} tokens, over --max-length {limit}; skipped"
            out.problems.append(_problem(row, "HG301", message))
            return
        out.problems.append(
            _problem(row, "HG302", f"cut from {len(example)} to {limit} tokens (--truncate)")
        )
        example = example.truncated(limit, encoding)
    if not example.trained_tokens:
        where = " after truncation" if limit is not None and options.truncate else ""
        message = f"no token is masked in{where} (train_on={options.train_on.value}); skipped"
        out.problems.append(_problem(row, "HG303", message))
        return
    out.add(row, example)


def prepare_batch(
    records: Sequence[Any], rows: Sequence[int], options: PrepareOptions, encoding: Any = None
) -> BatchResult:
    """Training rows for ``records`` (numbered ``rows``), with a problem per record left out.

    Never raises for a bad record: each becomes a :class:`Problem` (HG300 to HG304).
    """
    if encoding is None:
        from ..format.vocabulary import load_encoding

        encoding = load_encoding()
    out = BatchResult()
    for row, record in zip(rows, records, strict=True):
        _example(row, record, options, encoding, out)
    return out
