"""One dataset record validated, where a failure is a diagnostic, never an exception.

The batch function (:mod:`.batch`, run by every dataset engine) and ``validate``'s plain
files check one record at a time; a record without input, or one whose validation raises,
must become that record's HG290 error so one bad record never stops a run. That rule lives
here once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..format.diagnostics import make_diagnostic
from ..format.model import Diagnostic
from ..format.options import ParseKeywords, ParseOptions
from .validator import ValidationReport, validate

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["failure", "validate_record"]


def failure(message: str) -> Diagnostic:
    """The HG290 error for a record that could not be validated (no position: at 0)."""
    return make_diagnostic("HG290", message, 0, 0)


def validate_record(
    source: str | Sequence[int] | None,
    error: str | None,
    options: ParseOptions,
    **keywords: Unpack[ParseKeywords],
) -> ValidationReport | Diagnostic:
    """The record's report, or the HG290 diagnostic that stands for it.

    ``source`` None means the record could not be read; ``error`` says why (default
    ``no input``); ``options`` and ``keywords`` are :func:`validate`'s. An exception from
    :func:`validate` is reported, with its type, not raised.
    """
    if source is None:
        return failure(error or "no input")
    try:
        return validate(source, options, **keywords)
    except Exception as exc:  # one record must never stop a dataset run: report it, go on
        return failure(f"the record could not be validated ({type(exc).__name__}: {exc})"[:500])
