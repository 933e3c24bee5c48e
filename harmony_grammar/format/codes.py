"""One record per diagnostic code: what it means, why it happens, who reports it, its facts.

Codes are stable: ``HG1xx`` come from parsing (the grammar and its recoveries), ``HG2xx`` from
the validator's rules, ``HG3xx`` from preparing fine-tuning data (docs/training.md). A code
keeps its meaning forever; retired codes are not reused.

Everything the library says about a code is a field of its :class:`Code` here, and nothing
else describes it: the severity a diagnostic starts with, the one-line meaning, the longer
text and example of docs/diagnostics.md (generated from these records by
``python scripts/diagnostics_doc.py``), the most likely cause and the fix at the source (what
``validate`` and ``repair`` print), the functions that emit it, and the facts callers branch
on (:attr:`Code.stripped_dialect`, :attr:`Code.forged_tool_result`, ...). A caller asks a
field, never compares a code string: ``CATALOGUE[d.code].stripped_dialect``.

The records are data, in ``codes.json`` beside this module (shipped in the wheel with the
package): the causes several codes share, by name, then one object per code, in code order,
with a :class:`Code`'s fields (those left out take their defaults; ``cause`` is a shared
cause's name or a ``{"summary", "fix"}`` object of its own). They are read once, at import,
by :func:`load_catalogue`, which refuses a record it cannot read whole (an unknown key, a
severity or layer that does not exist, a field of the wrong type) with an error naming the
code. Lenient recoveries (HG15x-HG17x) are warnings: the input was repaired. HG170 is a
warning from the parser (the messages parsed) and an error from the validator: a model
forging a tool's result is a safety problem, not a syntax one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ..base.enums import StrEnum
from .model import Severity

__all__ = ["CATALOGUE", "Cause", "Code", "Layer", "load_catalogue"]


class Layer(StrEnum):
    """Which step of the library reports a code: reading the input, judging the messages,
    or preparing training data."""

    PARSE = "parse"
    VALIDATE = "validate"
    PREPARE = "prepare"


#: Where each layer's codes are documented for a reader (HG2xx have their examples there).
_PAGES = {
    Layer.PARSE: "docs/diagnostics.md",
    Layer.VALIDATE: "docs/rules.md",
    Layer.PREPARE: "docs/training.md",
}


@dataclass(frozen=True, slots=True)
class Cause:
    """The most likely cause of a deviation (``summary``) and the fix at its source (``fix``).

    The serving stack behind broken output is usually one of a few (harmony-format.md §5): a
    detokenizer that drops special tokens, a server that strips the stop token, a client that
    joins streamed deltas, a model that drifted. A cause names that, and the fix is where the
    output is produced, so that a user who brings broken output learns how to stop getting it.
    """

    summary: str
    fix: str


@dataclass(frozen=True, slots=True)
class Code:
    """Everything about one diagnostic code.

    ``meaning`` is one line; ``detail`` and ``example`` (parser codes) are what
    docs/diagnostics.md shows, ``detail`` defaulting to the meaning. ``emitted_by`` names,
    relative to the package, the functions, classes or rules whose code reports it
    (tests/format/test_codes.py checks the names against the source). The facts:

    * ``recovered``: a lenient repair reports it (a row of ``format/repairs.py``): the input
      deviated and was read anyway;
    * ``stripped_dialect``: the input was read in the stripped-token dialect (a detokenizer
      dropped the control tokens), so a missing terminator says nothing about a cut;
    * ``forged_tool_result``: the model began writing a tool's result itself; the stream stops;
    * ``argument_problem``: a call's arguments, judged against its tool (the schema check and
      the JSON limits), not the envelope;
    * ``error_in_validate``: a parser warning that ``validate`` reports as an error;
    * ``record_level``: about a whole dataset record, not a place in it (no position);
    * ``facts``: the names of the counts a diagnostic of this code carries
      (:meth:`Diagnostic.fact`).
    """

    code: str
    slug: str
    severity: Severity
    meaning: str
    emitted_by: tuple[str, ...]
    cause: Cause | None = None
    detail: str = ""
    example: str = ""
    recovered: bool = False
    stripped_dialect: bool = False
    forged_tool_result: bool = False
    argument_problem: bool = False
    error_in_validate: bool = False
    record_level: bool = False
    facts: tuple[str, ...] = ()

    @property
    def layer(self) -> Layer:
        """The step that reports the code, read from its hundreds digit."""
        return {"1": Layer.PARSE, "2": Layer.VALIDATE, "3": Layer.PREPARE}[self.code[2]]

    @property
    def page(self) -> str:
        """The page that documents the code and how to avoid it."""
        return _PAGES[self.layer]


#: A code's form: its hundreds digit names the layer that reports it (:attr:`Code.layer`).
_CODE_FORM = re.compile(r"HG[123]\d\d")
_REQUIRED = ("code", "slug", "severity", "meaning", "emitted_by")
_TEXTS = ("slug", "meaning", "detail", "example")
_FLAGS = (
    "recovered",
    "stripped_dialect",
    "forged_tool_result",
    "argument_problem",
    "error_in_validate",
    "record_level",
)
_NAME_LISTS = ("emitted_by", "facts")
_FIELDS = {f.name for f in fields(Code)}


def _cause(value: object, shared: dict[str, Cause], where: str) -> Cause:
    """A record's ``cause``: a shared cause's name, or an object with its own summary and fix."""
    if isinstance(value, str):
        if value not in shared:
            raise ValueError(f"{where}: no shared cause named {value!r} (known: {sorted(shared)})")
        return shared[value]
    if not isinstance(value, dict) or set(value) != {"summary", "fix"}:
        raise ValueError(f'{where}: a cause is a shared cause\'s name or {{"summary", "fix"}}')
    if not all(isinstance(text, str) and text for text in value.values()):
        raise ValueError(f"{where}: a cause's summary and fix are non-empty strings")
    return Cause(value["summary"], value["fix"])


def _code(record: object, shared: dict[str, Cause], at: int) -> Code:
    """One record as a :class:`Code`, every field checked; errors name the code."""
    if not isinstance(record, dict):
        raise ValueError(f"codes[{at}]: a record is an object, not {type(record).__name__}")
    code = record.get("code")
    if not isinstance(code, str) or not _CODE_FORM.fullmatch(code):
        raise ValueError(
            f"codes[{at}]: code {code!r} is not HG1xx (parse), HG2xx (validate) or HG3xx (prepare)"
        )
    unknown = sorted(set(record) - _FIELDS)
    if unknown:
        raise ValueError(f"{code}: unknown keys {unknown} (a record's keys: {sorted(_FIELDS)})")
    missing = [key for key in _REQUIRED if key not in record]
    if missing:
        raise ValueError(f"{code}: missing {missing}")
    values: dict[str, Any] = {"code": code}
    for key in _TEXTS:
        if key in record:
            if not isinstance(record[key], str):
                raise ValueError(f"{code}: {key} is a string, not {record[key]!r}")
            if key in _REQUIRED and not record[key].strip():
                raise ValueError(f"{code}: {key} is empty")
            values[key] = record[key]
    for key in _FLAGS:
        if key in record:
            if not isinstance(record[key], bool):
                raise ValueError(f"{code}: {key} is true or false, not {record[key]!r}")
            values[key] = record[key]
    for key in _NAME_LISTS:
        if key in record:
            names = record[key]
            if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
                raise ValueError(f"{code}: {key} is a list of names, not {names!r}")
            values[key] = tuple(names)
    try:
        values["severity"] = Severity(record["severity"])
    except ValueError:
        known = [s.value for s in Severity]
        raise ValueError(f"{code}: severity {record['severity']!r} is none of {known}") from None
    if "cause" in record:
        values["cause"] = _cause(record["cause"], shared, code)
    return Code(**values)


def load_catalogue(text: str) -> dict[str, Code]:
    """The records in ``text`` (the JSON of ``codes.json``), by code, in code order.

    A record that cannot be read whole is refused, not half-read: :class:`ValueError` naming
    the code (or the record's place when it has no code) and what is wrong.
    """
    data = json.loads(text)
    if not isinstance(data, dict) or set(data) != {"causes", "codes"}:
        raise ValueError('the catalogue is an object with "causes" and "codes"')
    if not isinstance(data["causes"], dict) or not isinstance(data["codes"], list):
        raise ValueError('the catalogue\'s "causes" is an object and its "codes" a list')
    shared = {name: _cause(value, {}, f"cause {name!r}") for name, value in data["causes"].items()}
    catalogue: dict[str, Code] = {}
    previous = ""
    for at, record in enumerate(data["codes"]):
        entry = _code(record, shared, at)
        if entry.code <= previous:
            raise ValueError(f"{entry.code}: out of code order (or repeated) after {previous}")
        catalogue[entry.code] = entry
        previous = entry.code
    return catalogue


#: Every code, in code order (docs/diagnostics.md lists them so), read from ``codes.json``.
CATALOGUE: dict[str, Code] = load_catalogue(
    Path(__file__).with_name("codes.json").read_text(encoding="utf-8")
)
