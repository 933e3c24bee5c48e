"""The Harmony conformance suite: cases as data (``conformance/``), adapters and a scorecard.

Theory of operation
-------------------
:mod:`.cases` finds the topic files (installed with the package, or the checkout's
``conformance/``) and checks each against ``conformance/schema.json``. :mod:`.interface`
defines the adapter interface (a JSON-shaped request in, a JSON-shaped response out);
:mod:`.adapters` ships harmony-grammar's own adapters and loads ``module:function`` ones;
:mod:`.oracle` wraps openai-harmony, imported only when asked for. :mod:`.runner` turns each
case into requests, compares the responses with the expectations and keeps a
:class:`~.runner.Scorecard` by topic.

Imports: this package may use :mod:`harmony_grammar.rendering`, :mod:`harmony_grammar.format`
and everything below them; only :mod:`harmony_grammar.cli` stands above it.
"""

from __future__ import annotations

from .adapters import ADAPTERS, AdapterLoadError, load_adapter
from .cases import Case, CaseFormatError, cases_path, load_cases
from .interface import Adapter, Unsupported
from .runner import CaseResult, Scorecard, run_case, run_suite

__all__ = [
    "ADAPTERS",
    "Adapter",
    "AdapterLoadError",
    "Case",
    "CaseFormatError",
    "CaseResult",
    "Scorecard",
    "Unsupported",
    "cases_path",
    "load_adapter",
    "load_cases",
    "run_case",
    "run_suite",
]
