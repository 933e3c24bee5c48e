"""The diagnostic codes' records (``format/codes.json``, read by ``format/codes.py``) against
the code that uses them.

The records name who emits each code; these tests read the package's source (``ast``) and
fail when a record and the source disagree:

* every code a module names has a record, and every record's code is named somewhere;
* ``emitted_by`` lists exactly the module-level functions, classes and rules whose source
  names the code as the one they report (a comparison with a code string does not emit it);
* a code string is compared with only in a module that emits codes (choosing which to
  emit); every other caller asks a field of the record;
* ``recovered`` is exactly the codes of the lenient repair rows.

A record the loader cannot read whole (an unknown key, a severity or layer that does not
exist, a field of the wrong type) is refused with an error naming its code. And the facts a
diagnostic carries (HG107's counts) survive ``to_dict``/``from_dict`` and add
up across caps, and the one judge of a call body (``arguments_problem``) is what the
validator's rule and the dialect's reader report.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar import validate
from harmony_grammar.dialect.scanner import read_arguments
from harmony_grammar.format.codes import CATALOGUE, Layer, load_catalogue
from harmony_grammar.format.diagnostics import Overflow, make_diagnostic
from harmony_grammar.format.model import Diagnostic, Severity
from harmony_grammar.format.repairs import LENIENT
from harmony_grammar.tools.call_check import arguments_problem
from scripts.code_emitters import PACKAGE, scan


def _scan() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Code -> the places that emit it, and code -> the places that compare with it
    (``scripts/code_emitters.py``, which writes the records' ``emitted_by``)."""
    return scan()


def test_every_code_named_in_the_source_has_a_record_and_every_record_is_emitted():
    emitted, compared = _scan()
    assert (set(emitted) | set(compared)) - set(CATALOGUE) == set(), "codes with no record"
    assert set(CATALOGUE) - set(emitted) == set(), "records no code emits"


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_emitted_by_names_exactly_the_emitters(code):
    emitted, _ = _scan()
    assert set(CATALOGUE[code].emitted_by) == emitted[code], (
        f"{code}: its record's emitted_by should be {sorted(emitted[code])}: run python "
        "scripts/diagnostics_doc.py (it writes them)"
    )
    assert list(CATALOGUE[code].emitted_by) == sorted(CATALOGUE[code].emitted_by)
    for name in CATALOGUE[code].emitted_by:
        module, _, attribute = name.rpartition(".")
        assert hasattr(importlib.import_module(f"harmony_grammar.{module}"), attribute), name


def test_only_emitters_compare_code_strings():
    """A caller that branches on what a diagnostic means asks its record's field
    (``stripped_dialect``, ``forged_tool_result``, ...); comparing a code string is left to
    the modules that choose which code to emit."""
    emitted, compared = _scan()
    emitting_modules = {place.rpartition(".")[0] for places in emitted.values() for place in places}
    callers = {
        place
        for places in compared.values()
        for place in places
        if place.rpartition(".")[0] not in emitting_modules
    }
    assert callers == set()


def test_recovered_is_the_repair_rows_codes():
    assert {code for code, entry in CATALOGUE.items() if entry.recovered} == LENIENT.codes()


def test_each_layer_has_its_codes_and_its_page():
    for code, entry in CATALOGUE.items():
        assert entry.layer is {"1": Layer.PARSE, "2": Layer.VALIDATE, "3": Layer.PREPARE}[code[2]]
        assert (Path(__file__).resolve().parents[2] / entry.page).is_file()
        assert entry.meaning and "\n" not in entry.meaning
        if entry.cause is not None:
            assert entry.cause.summary and entry.cause.fix != entry.cause.summary


def test_the_facts_callers_branch_on_are_where_the_parser_puts_them():
    from harmony_grammar import parse

    stripped = parse("analysisThe user asks.assistantfinalfour", start="completion", lenient=True)
    assert any(CATALOGUE[d.code].stripped_dialect for d in stripped.diagnostics)
    forged = parse(
        "<|channel|>commentary to=functions.f json<|message|>{}<|call|>"
        "<|start|>functions.f to=assistant<|channel|>commentary<|message|>{}",
        start="completion",
        lenient=True,
    )
    assert any(CATALOGUE[d.code].forged_tool_result for d in forged.diagnostics)
    assert not any(CATALOGUE[d.code].stripped_dialect for d in forged.diagnostics)


_RECORDS = (PACKAGE / "format" / "codes.json").read_text(encoding="utf-8")


def test_the_records_file_is_the_catalogue():
    assert load_catalogue(_RECORDS) == CATALOGUE
    assert list(CATALOGUE) == sorted(CATALOGUE)


#: Ways to break one record, each with the reason the loader must give.
_BREAKS = {
    "unknown key": (lambda r: r | {"severty": "error"}, "unknown keys"),
    "bad severity": (lambda r: r | {"severity": "fatal"}, "severity 'fatal'"),
    "severity of the wrong type": (lambda r: r | {"severity": 2}, "severity 2"),
    "bad layer": (lambda r: r | {"code": "HG4" + r["code"][3:]}, "is not HG1xx"),
    "no layer digit": (lambda r: r | {"code": r["code"] + "0"}, "is not HG1xx"),
    "missing meaning": (lambda r: {k: v for k, v in r.items() if k != "meaning"}, "missing"),
    "empty slug": (lambda r: r | {"slug": " "}, "slug is empty"),
    "flag not a bool": (lambda r: r | {"recovered": "yes"}, "recovered is true or false"),
    "flag a number": (lambda r: r | {"record_level": 1}, "record_level is true or false"),
    "emitters not a list": (lambda r: r | {"emitted_by": "format.engine.Engine"}, "emitted_by"),
    "facts not names": (lambda r: r | {"facts": [1]}, "facts is a list of names"),
    "text not a string": (lambda r: r | {"detail": ["x"]}, "detail is a string"),
    "unknown cause": (lambda r: r | {"cause": "cosmic-rays"}, "no shared cause"),
    "half a cause": (lambda r: r | {"cause": {"summary": "s"}}, "a cause is"),
}


@pytest.mark.parametrize("name", sorted(_BREAKS))
@given(at=st.integers(0, len(CATALOGUE) - 1))
def test_a_malformed_record_is_refused_naming_its_code(name, at):
    """Any record broken each way is refused, the message naming the code as written."""
    data = json.loads(_RECORDS)
    broken, reason = _BREAKS[name]
    data["codes"][at] = broken(data["codes"][at])
    with pytest.raises(ValueError, match=re.escape(reason)) as refused:
        load_catalogue(json.dumps(data))
    assert data["codes"][at]["code"] in str(refused.value)


@given(at=st.integers(1, len(CATALOGUE) - 1))
def test_a_repeated_or_misplaced_code_is_refused(at):
    data = json.loads(_RECORDS)
    data["codes"][at]["code"] = data["codes"][at - 1]["code"]
    with pytest.raises(ValueError, match=f"{data['codes'][at]['code']}: out of code order"):
        load_catalogue(json.dumps(data))


def test_a_fact_the_record_does_not_name_is_refused():
    with pytest.raises(ValueError, match="HG100 carries no facts"):
        make_diagnostic("HG100", "x", 0, 0, facts={"dropped": 1})


_severities = st.sampled_from([Severity.ERROR, Severity.WARNING])


@given(
    first=st.lists(_severities, max_size=40),
    second=st.lists(_severities, max_size=40),
    limit=st.integers(1, 12),
)
def test_overflow_counts_add_up_across_caps_and_a_round_trip(first, second, limit):
    """Capping part of the input, storing the result as JSON, reading it back and capping it
    with the rest keeps every diagnostic or counts it, errors apart, with no message read."""

    def made(severities, at):
        return [
            make_diagnostic("HG100", "m", at + i, at + i, severity=s)
            for i, s in enumerate(severities)
        ]

    capped = Overflow(limit).cap(made(first, 0), len(first))
    stored = [Diagnostic.from_dict(json.loads(json.dumps(d.to_dict()))) for d in capped]
    assert stored == list(capped)
    final = Overflow(limit).cap(stored + made(second, len(first)), len(first) + len(second))
    kept = [d for d in final if d.fact("dropped") is None]
    counts = [d for d in final if d.fact("dropped") is not None]
    assert len(kept) <= limit and len(counts) <= 1
    dropped = counts[0].fact("dropped") if counts else 0
    errors = counts[0].fact("errors") if counts else 0
    assert len(kept) + dropped == len(first) + len(second)
    every = first + second
    assert sum(d.severity is Severity.ERROR for d in kept) + errors == every.count(Severity.ERROR)
    if counts:
        assert counts[0].code == "HG107"
        assert (counts[0].severity is Severity.ERROR) == (errors > 0)


_BODIES = st.one_of(
    st.text(alphabet='{}[]":,0123456789abc \\-.', max_size=30),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
        max_leaves=8,
    ).map(json.dumps),
    st.sampled_from(
        ['{"a": ' + "[" * 200 + "]" * 200 + "}", '{"n": ' + "1" * 5000 + "}", '{"s": "\ud800"}']
    ),
)
_SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}}
_TOOLS = [{"type": "function", "function": {"name": "f", "parameters": _SCHEMA}}]


@given(body=_BODIES)
def test_the_validator_and_the_dialect_report_what_the_one_judge_decides(body):
    """HG180 (and HG182-HG184 for a body past the JSON limits) is decided in one place:
    the validator's rule reports its code and words, the dialect's reader its code."""
    call = f"<|start|>assistant<|channel|>commentary to=functions.f json<|message|>{body}<|call|>"
    found = arguments_problem(body, _SCHEMA)
    reported = [
        (d.code, d.message)
        for d in validate(call, tools=_TOOLS).diagnostics
        if d.code.startswith("HG18")
    ]
    assert reported == ([] if found is None else [found])

    value, diagnostic = read_arguments(body, "functions.f", 0, len(body))
    alone = None if not body.strip() else arguments_problem(body, None)
    assert (diagnostic and diagnostic.code) == (alone and alone[0])
    if diagnostic is None:
        assert value == (json.loads(body) if body.strip() else {})
    else:
        assert value == {} and diagnostic.message.endswith("read as {}")


#: Codes of the reader that more than one place still reports (issue 39 asks one move or
#: one rule per code; docs/parser.md lists what is left). The list only shrinks: a code
#: that gains an emitter, or a new code with several, fails the test below.
SEVERAL_EMITTERS = frozenset({"HG104", "HG151", "HG158", "HG160", "HG175", "HG177", "HG181"})


def test_each_reader_code_has_one_emitter():
    emitted, _ = _scan()
    reader = {
        code
        for code, places in emitted.items()
        if any(place.startswith("format.") for place in places)
    }
    several = {code for code in reader if len(emitted[code]) > 1}
    assert several <= SEVERAL_EMITTERS, f"codes with several emitters: {sorted(several)}"
    assert several >= SEVERAL_EMITTERS, (
        f"now one emitter each, drop them from the list: {sorted(SEVERAL_EMITTERS - several)}"
    )
