"""The conformance suite (conformance/*.json) is the project's truth: every case runs here.

Each case runs against our parser from text and from token ids, strict and (where it has a
lenient expectation) lenient, through the streaming parser whole and, for the streaming topic
and the real outputs, in the case's chunks, one character at a time and one id at a time; each
rendering case against our renderer. A case edited without a change to the parser fails.
The suite must cover every parser diagnostic and every deviation kind of the real-output
corpus; every case openai-harmony answers differently must say why, and no other may.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from harmony_grammar.cli.main import main
from harmony_grammar.conformance import (
    Case,
    CaseFormatError,
    Unsupported,
    cases_path,
    load_adapter,
    load_cases,
    run_case,
    run_suite,
)
from harmony_grammar.conformance.adapters import harmony_grammar_adapter
from harmony_grammar.conformance.runner import comparison_table, requests_for
from harmony_grammar.format.diagnostics import CATALOGUE
from tests.support.wild_corpus import KINDS, classify

ROOT = Path(__file__).resolve().parents[2]
CASES = load_cases()
BY_ID = {case.id: case for case in CASES}
TEXT = harmony_grammar_adapter("text")
TOKENS = harmony_grammar_adapter("tokens")
STREAM = harmony_grammar_adapter("stream")
#: Topics whose cases also stream character by character and id by id.
FINE_STREAMING = ("streaming", "real_output", "lenient", "utf8")


def _passes(adapter, case):
    result = run_case(adapter, case)
    assert result.status == "passed", f"{case.id} ({result.check}): {result.reason}"


def test_the_suite_is_large_and_well_formed():
    assert len(CASES) >= 300
    assert cases_path() == ROOT / "conformance"
    topics = {case.topic for case in CASES}
    assert {"envelope", "streaming", "lenient", "real_output", "rendering"} <= topics
    for case in CASES:
        assert case.id.startswith(case.topic + "/"), case.id
        assert case.description[-1] in ".)", f"{case.id}: a description is a sentence"


@pytest.mark.parametrize("case_id", sorted(BY_ID))
def test_case_holds_for_harmony_grammar(case_id):
    case = BY_ID[case_id]
    _passes(TEXT, case)
    if case.is_render:
        return
    _passes(TOKENS, case)
    _passes(STREAM, case)
    if "lenient" not in case.data and case.data["expected"]["valid"]:
        # Valid with no lenient expectation: the lenient parser reads it as the strict one.
        data = {**case.data, "lenient": case.data["expected"]}
        _passes(TEXT, Case(case.topic, case.id, data))


def _stream_one_by_one(case):
    """The case's input fed one character (or one id) at a time, as a request variant."""
    data = dict(case.data)
    for key in ("chunks", "token_chunks"):
        data.pop(key, None)
    variants = []
    if "text" in data:
        variants.append({**data, "chunks": list(data["text"])})
    if "tokens" in data:
        variants.append({**data, "token_chunks": [[t] for t in data["tokens"]]})
    return [Case(case.topic, case.id, variant) for variant in variants]


@pytest.mark.parametrize(
    "case_id", sorted(c.id for c in CASES if c.topic in FINE_STREAMING and not c.is_render)
)
def test_case_holds_streamed_one_piece_at_a_time(case_id):
    for variant in _stream_one_by_one(BY_ID[case_id]):
        _passes(STREAM, variant)


def test_every_parser_diagnostic_is_exercised():
    seen = {
        code
        for case in CASES
        for key in ("expected", "lenient")
        for code in case.data.get(key, {}).get("codes", [])
    }
    parser_codes = {code for code in CATALOGUE if code.startswith("HG1")}
    # HG184 (a lone surrogate in call arguments) exists only in text: token ids always decode
    # to Unicode text, so no case could hold it in both forms; tests/integration/test_hostile.py pins it.
    assert parser_codes - seen == {"HG184"}


def test_every_deviation_kind_of_the_real_output_corpus_is_represented():
    real = [case for case in CASES if case.topic == "real_output"]
    assert {classify({"text": c.data["text"], "mode": c.data["mode"]}) for c in real} == set(KINDS)
    assert all(case.data.get("source") and "lenient" in case.data for case in real)


def test_streaming_cases_carry_their_chunks():
    for case in (c for c in CASES if c.topic == "streaming"):
        data = case.data
        assert "chunks" in data or "token_chunks" in data, case.id
        if "chunks" in data:
            assert "".join(data["chunks"]) == data["text"], case.id
        if "token_chunks" in data:
            assert [t for chunk in data["token_chunks"] for t in chunk] == data["tokens"]


# -- a case cannot drift from what the parser does -------------------------------------------


def _mutations(case):
    """Edits a person could make to a case by mistake, each of which must fail."""
    data = case.data
    if case.is_render:
        yield "text", lambda d: d["expected"].__setitem__("text", d["expected"]["text"] + " ")
        yield "tokens", lambda d: d["expected"]["tokens"].append(13)
        return
    expected = data["expected"]
    yield "validity", lambda d: d["expected"].__setitem__("valid", not expected["valid"])
    if expected["valid"] and expected.get("messages"):
        yield "content", lambda d: d["expected"]["messages"][0].__setitem__("content", "changed")
        yield "channel", lambda d: d["expected"]["messages"][-1].__setitem__("channel", "other")
        yield "dropped", lambda d: d["expected"]["messages"].pop()
    if "offset" in expected.get("error", {}):
        yield "offset", lambda d: d["expected"]["error"].__setitem__("offset", 10**6)
    yield "codes", lambda d: d["expected"].__setitem__("codes", ["HG999"])
    if "lenient" in data and data["lenient"]["messages"]:
        yield "lenient", lambda d: d["lenient"]["messages"][0].__setitem__("role", "system")


SAMPLED = [
    cases[0]
    for cases in ([c for c in CASES if c.topic == t] for t in sorted({c.topic for c in CASES}))
]
SAMPLED += [BY_ID["lenient/stripped-tokens"], BY_ID["content_types/constrain-upper-case"]]


@pytest.mark.parametrize("case", SAMPLED, ids=lambda c: c.id)
def test_an_edited_case_fails(case):
    for label, mutate in _mutations(case):
        data = copy.deepcopy(dict(case.data))
        mutate(data)
        result = run_case(TEXT, Case(case.topic, case.id, data))
        assert result.status == "failed", f"{case.id}: editing the {label} went unnoticed"


# -- the runner ------------------------------------------------------------------------------


def test_unsupported_requests_are_skipped_and_exceptions_errored():
    parse_case, render_case = BY_ID["envelope/user-message"], BY_ID["rendering/user-only"]

    def parse_only(request):
        if request["kind"] == "render":
            raise Unsupported("no renderer")
        return TEXT(request)

    assert run_case(parse_only, render_case).status == "skipped"
    assert run_case(parse_only, parse_case).status == "passed"
    assert run_case(lambda request: 1 / 0, parse_case).status == "errored"
    assert run_case(lambda request: ["not", "an", "object"], parse_case).status == "errored"
    malformed = run_case(lambda request: {**TEXT(request), "codes": 5}, parse_case)
    assert (malformed.status, malformed.reason[:18]) == ("errored", "malformed response")


def test_strict_only_leaves_the_lenient_check_out():
    case = BY_ID["lenient/stripped-tokens"]
    assert [c.name for c in requests_for(case)] == ["strict", "lenient"]
    assert [c.name for c in requests_for(case, strict_only=True)] == ["strict"]


def test_a_wrong_error_position_fails_only_when_the_units_match():
    case = BY_ID["envelope/text-between-messages"]
    want = case.data["expected"]["error"]
    answer = {"valid": False, "messages": []}
    check = requests_for(case)[0]
    from harmony_grammar.conformance.runner import compare

    assert compare(check, answer) is None  # no position given: only validity is judged
    assert compare(check, {**answer, "error": {"offset": want["offset"]}}) is None
    assert compare(check, {**answer, "error": {"offset": want["offset"] + 1}})
    assert compare(check, {**answer, "error": {"token": want["token"] + 1}})


def test_a_broken_case_file_is_reported_with_its_place(tmp_path):
    (tmp_path / "schema.json").write_text((cases_path() / "schema.json").read_text())
    document = json.loads((cases_path() / "envelope.json").read_text())
    del document["cases"][2]["mode"]
    (tmp_path / "envelope.json").write_text(json.dumps(document))
    with pytest.raises(CaseFormatError, match=r"envelope\.json: /cases/2"):
        load_cases(tmp_path)
    with pytest.raises(CaseFormatError, match="no such topic"):
        load_cases(topics=["nope"])


# -- openai-harmony: every difference is explained --------------------------------------------


def test_every_difference_from_openai_harmony_is_explained():
    pytest.importorskip("openai_harmony")
    card = run_suite(load_adapter("openai-harmony"), CASES, implementation="openai-harmony")
    assert card.count("errored") == 0
    differs = {r.case.id for r in card.results if r.status not in ("passed", "skipped")}
    noted = {case.id for case in CASES if "openai_harmony" in case.data}
    assert differs - noted == set(), "openai-harmony differs here with no note saying why"
    assert noted - differs == set(), "a note says openai-harmony differs, but it agrees"
    for case_id in noted:
        note = BY_ID[case_id].data["openai_harmony"]
        assert re.search(r"harmony-format\.md §\d|OpenAI", note["spec"]), case_id


def test_readme_scorecard_is_a_fresh_run():
    pytest.importorskip("openai_harmony")
    cards = [
        run_suite(load_adapter("harmony-grammar"), CASES, implementation="harmony-grammar"),
        run_suite(load_adapter("openai-harmony"), CASES, implementation="openai-harmony"),
        run_suite(
            load_adapter("openai-harmony"), CASES, implementation="openai-harmony", strict_only=True
        ),
    ]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert comparison_table(cards) in readme, (
        "README.md's conformance scorecard is stale; paste this table:\n" + comparison_table(cards)
    )


# -- the command line ------------------------------------------------------------------------


def test_cli_scores_our_adapter_with_stable_json(capsys):
    assert main(["conformance", "--topic", "envelope", "--format", "json"]) == 0
    first = capsys.readouterr().out
    assert main(["conformance", "--topic", "envelope", "--format", "json"]) == 0
    assert capsys.readouterr().out == first
    document = json.loads(first)
    (card,) = document["scorecards"]
    assert card["implementation"] == "harmony-grammar"
    envelope = card["topics"]["envelope"]
    assert envelope["passed"] == document["cases"] == len(envelope["passed_cases"])
    assert envelope["failed_cases"] == [] and envelope["errored_cases"] == []


def test_cli_scores_openai_harmony_and_names_failures(capsys):
    pytest.importorskip("openai_harmony")
    status = main(["conformance", "--impl", "openai-harmony", "--topic", "headers"])
    out = capsys.readouterr().out
    assert status == 1
    assert "headers/author-user-with-name (strict)" in out
    assert main(["conformance", "--impl", "openai-harmony", "--topic", "rendering"]) == 0


def broken_adapter(request):
    """A plug-in for the CLI test: it raises on every request."""
    raise RuntimeError("not implemented")


def test_cli_plugs_in_module_function_and_reports_errors(capsys):
    impl = "tests.conformance.test_conformance_suite:broken_adapter"
    assert main(["conformance", "--impl", impl, "--topic", "utf8", "--format", "json"]) == 1
    (card,) = json.loads(capsys.readouterr().out)["scorecards"]
    assert card["totals"]["errored"] == card["topics"]["utf8"]["errored"] > 0
    assert card["topics"]["utf8"]["errored_cases"][0]["reason"] == "RuntimeError: not implemented"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--impl", "nope"], "unknown implementation 'nope'"),
        (["--impl", "no_such_module_x:f"], "cannot import"),
        (["--impl", "json:nothing_here"], "has no callable"),
        (["--topic", "nope"], "no such topic"),
    ],
)
def test_cli_usage_errors_are_one_line(argv, message, capsys):
    assert main(["conformance", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
