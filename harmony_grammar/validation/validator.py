"""The validator: the parser's diagnostics plus the rule catalogue (``rules.RULES``).

``validate`` parses without tools and lets the rules check the calls, so that tools recovered
from the transcript's own developer message and tools given with ``tools=`` are judged by the
same code, and nothing is reported twice.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..format.causes import Cause, causes_of
from ..format.codes import CATALOGUE
from ..format.diagnostics import LineIndex, Overflow, make_diagnostic
from ..format.model import Diagnostic, Message, Severity
from ..format.options import ParseKeywords, ParseOptions
from ..format.parser import parse
from .rules import RuleContext, run_rules

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["ValidationReport", "no_messages", "validate"]


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """What :func:`validate` found: the parsed messages and every diagnostic, by position."""

    messages: tuple[Message, ...]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def ok(self) -> bool:
        """True when no diagnostic has error severity."""
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)

    def counts(self) -> Counter[str]:
        """How many diagnostics of each code."""
        return Counter(d.code for d in self.diagnostics)

    def causes(self) -> list[tuple[tuple[str, ...], Cause]]:
        """The likely cause of each kind of deviation found, and its fix at the source.

        One entry per distinct cause, with the codes that point to it (``format/causes.py``).
        """
        return causes_of(d.code for d in self.diagnostics)

    def to_dict(self) -> dict[str, object]:
        """``{"ok", "messages", "diagnostics"}``, JSON-ready."""
        return {
            "ok": self.ok,
            "messages": [m.to_dict() for m in self.messages],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


def validate(
    source: str | Sequence[int],
    options: ParseOptions | None = None,
    **keywords: Unpack[ParseKeywords],
) -> ValidationReport:
    """Validate Harmony text or token ids: the grammar (HG1xx) and the rules (HG2xx, HG18x).

    ``tools`` (OpenAI-style ``[{"type": "function", "function": {...}}]`` or plain
    ``[{name, description, parameters}]`` lists) are the functions calls may address; without
    it they are recovered from the transcript's developer message when it has one.
    The options are :func:`~harmony_grammar.format.parser.parse`'s (one
    :class:`~harmony_grammar.format.options.ParseOptions` and its fields as keywords); the
    calls' arguments are checked by the rules, so the parse itself reads without tools. Bad input
    never raises: a ``source`` of the wrong type raises TypeError and a malformed ``tools``
    list (or a parameters schema that cannot check anything) ValueError. At most 1,000
    diagnostics are kept; one HG107 counts the rest.
    """
    opts = ParseOptions.of(options, keywords)
    schemas = opts.schemas
    result = parse(source, opts, tools=None)
    lines: LineIndex | None = None
    if isinstance(source, str):
        lines = LineIndex()
        lines.add(source, 0)
    context = RuleContext.of(result.messages, tools=schemas, completion=opts.start == "completion")
    # Parser warnings the validator reports as errors (``Code.error_in_validate``): a call
    # that did not end in ``<|call|>`` is one a host never dispatches, which breaks the agent
    # even though the text parses; a forged tool result is a safety problem.
    found = [
        dataclasses.replace(d, severity=Severity.ERROR)
        if CATALOGUE[d.code].error_in_validate
        else d
        for d in result.diagnostics
    ]
    found += run_rules(context, lines=lines)
    if not result.messages and not any(d.severity is Severity.ERROR for d in found):
        found.append(no_messages(lines))
    found.sort(key=lambda d: d.start)  # stable: the parser's first at one position
    # The first MAX_DIAGNOSTICS by position, the rest (the parser's too) counted in one HG107.
    return ValidationReport(result.messages, Overflow().cap(found, len(source)))


def no_messages(lines: LineIndex | None = None) -> Diagnostic:
    """HG215, for an input that holds no message and no error that says why (an empty file,
    only whitespace): nothing is not a valid transcript, and a file that lost its content
    must not count as one that passed (``validate`` and the ``parse`` command report it).
    ``lines``: a text input's line index (the diagnostic is then at line 1, column 1)."""
    message = "the input holds no message (it is empty, or only whitespace)"
    return make_diagnostic("HG215", message, 0, 0, lines=lines)
