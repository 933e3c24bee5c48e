"""The cause table (``format/causes.py``) and where it surfaces: ``ValidationReport.causes``."""

from __future__ import annotations

import re

from harmony_grammar import validate
from harmony_grammar.format.causes import CAUSES, Cause, cause_of, causes_of
from harmony_grammar.format.diagnostics import CATALOGUE
from harmony_grammar.format.model import Severity


def test_every_row_names_a_catalogued_code():
    assert set(CAUSES) <= set(CATALOGUE)


def test_every_lenient_repair_has_a_cause_with_a_fix():
    repairs = [
        c.code
        for c in CATALOGUE.values()
        if re.fullmatch(r"HG1[5-7]\d", c.code) and c.severity is Severity.WARNING
    ]
    assert repairs
    for code in repairs:
        cause = cause_of(code)
        assert isinstance(cause, Cause), code
        assert cause.summary and cause.fix and cause.fix != cause.summary


def test_unknown_codes_and_rule_codes_have_none():
    assert cause_of("HG999") is None
    assert cause_of("HG201") is None


def test_causes_of_lists_each_cause_once_with_its_codes_in_first_seen_order():
    shared = [code for code, cause in CAUSES.items() if cause == CAUSES["HG156"]]
    assert len(shared) > 1
    grouped = causes_of(["HG201", *shared, "HG153", shared[0], "HG153"])
    assert grouped == [(tuple(shared), CAUSES["HG156"]), (("HG153",), CAUSES["HG153"])]
    assert causes_of([]) == []


def test_stripped_stop_token_names_the_fix_at_the_source():
    assert "skip_special_tokens=False" in CAUSES["HG159"].fix
    assert 'start="completion"' in CAUSES["HG159"].fix
    assert "skip_special_tokens=False" in CAUSES["HG160"].fix


def test_validation_report_names_the_causes_of_what_it_found():
    report = validate("<|start|>assistant<|channel|>final<|message|>cut", lenient=True)
    assert [d.code for d in report.diagnostics] == ["HG159"]
    assert report.causes() == [(("HG159",), CAUSES["HG159"])]
    clean = validate("<|start|>assistant<|channel|>final<|message|>ok<|end|>")
    assert clean.causes() == []
