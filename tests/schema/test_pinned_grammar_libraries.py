"""The grammar exports on the libraries vLLM 0.34 pins: llguidance 1.7.x and xgrammar 0.2.8.

Every grammar is built once, here, and compiled and matched twice by tests/support/grammar_verdicts.py:
in this process on today's versions, and in ``.venv-pinned-grammar`` (made by
``scripts/pinned-grammar-venv.sh``; ``.ci/run`` makes it) on the pinned ones. Both must
compile the same grammars and give the same verdict on every sample: schema grammars (the
llguidance, Lark and xgrammar targets, on hand-picked schemas and on the JSON-Schema-Test-Suite
with its valid and invalid instances), the whole-turn grammar (llguidance) and the xgrammar
structural tag (token by token over o200k_harmony), on well-formed and malformed turns.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.generation.turn_grammar import completion_grammar
from harmony_grammar.schema import UnsupportedSchemaError, canonical_json, schema_to_grammar

from ..conftest import SHARED_DATA
from ..generation.test_turn_grammar import (
    ANALYSIS,
    MALFORMED,
    PREAMBLE,
    TOOLS,
    WELL_FORMED,
    call_text,
)

pytest.importorskip("llguidance")
pytest.importorskip("xgrammar")
from ..support import grammar_verdicts

ROOT = Path(__file__).resolve().parents[2]
SIDE_PYTHON = ROOT / ".venv-pinned-grammar" / "bin" / "python"
#: The versions vLLM 0.34 pins, as given to the exports' ``target_version``.
PINNED = {"llguidance": "1.7", "xgrammar": "0.2.8"}
LIBRARY = {"llguidance": "llguidance", "lark": "llguidance", "xgrammar": "xgrammar"}
Job = dict[str, Any]

#: Hand-picked schemas with samples on both sides of each keyword (strings as JSON texts).
SCHEMAS: list[tuple[dict[str, Any], list[str]]] = [
    ({"type": "string", "maxLength": 3}, ['""', '"abc"', '"abcd"', '"é😀x"', '"\\n\\n\\n"', "1"]),
    ({"type": "string", "minLength": 2, "pattern": "^a{2,4}b$"}, ['"ab"', '"aab"', '"aaaaab"']),
    ({"type": "string", "format": "date"}, ['"2026-12-03"', '"2026-13-03"', '"x"']),
    ({"enum": ["USD", "EUR", 'x"y', 3, None]}, ['"USD"', '"EU"', '"x\\"y"', "3", "null", "4"]),
    ({"type": "integer", "minimum": -5, "maximum": 120}, ["-5", "-6", "0", "120", "121", "1.0"]),
    ({"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5}, ["0", "0.5", "7", "0.3", "-1"]),
    (
        {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"enum": ["celsius", "fahrenheit"]},
                "days": {"type": "array", "items": {"type": "integer"}, "maxItems": 2},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
        [
            '{"city":"Paris"}',
            '{"city":"Paris","unit":"celsius","days":[1,2]}',
            '{"city":"Paris","days":[1,2,3]}',
            '{"unit":"celsius"}',
            '{"city":"Paris","town":"x"}',
        ],
    ),
    (
        {"type": "object", "properties": {"a": {"type": "integer"}}, "minProperties": 1},
        ["{}", '{"a":1}', '{"b":[true,null]}', '{"a":"x"}'],
    ),
    (
        {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "array", "minItems": 1}]},
        ['"ab"', '"abc"', "[]", "[1]", '[{"x":{}}]'],
    ),
    (
        {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 10}]},
        ["1", "10", "10.5", "12", "-0.5"],
    ),
    (
        {
            "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
            "$ref": "#/$defs/node",
        },
        ["{}", '{"next":{}}', '{"next":{"next":{}}}', '{"next":1}'],
    ),
    (
        {"type": "array", "prefixItems": [{"type": "boolean"}, {"const": "x"}], "items": False},
        ["[true]", '[false,"x"]', '[true,"x",1]', '["x"]'],
    ),
]

#: Each target with the options an engine would be given (generation) and the exact language.
TARGETS = [
    ("llguidance", {}),
    ("llguidance", {"closed_objects": True, "escaped_ascii": False}),
    ("lark", {}),
    ("xgrammar", {}),
    ("xgrammar", {"closed_objects": True, "escaped_ascii": False}),
]
ENGINE = {"llguidance": "llguidance-bytes", "lark": "llguidance-bytes", "xgrammar": "xgrammar-ebnf"}

SUITE = SHARED_DATA / "json-schema-test-suite" / "tests" / "draft2020-12"
#: The suite's files for the keywords the compiler turns into grammar (others are refused or
#: annotation-only); a whole file per keyword, valid and invalid instances alike.
SUITE_FILES = [
    "additionalProperties", "allOf", "anyOf", "const", "enum", "exclusiveMaximum",
    "exclusiveMinimum", "format", "items", "maxItems", "maxLength", "maxProperties", "maximum",
    "minItems", "minLength", "minProperties", "minimum", "multipleOf", "oneOf", "pattern",
    "patternProperties", "prefixItems", "properties", "ref", "required", "type", "uniqueItems",
]  # fmt: skip


def _suite_schemas() -> list[tuple[dict[str, Any], list[str]]]:
    if not SUITE.is_dir():  # third-party data, read from ../shared when it is there
        return []
    out = []
    for name in SUITE_FILES:
        for group in json.loads((SUITE / f"{name}.json").read_text(encoding="utf-8")):
            schema = group["schema"]
            if not isinstance(schema, dict):
                continue
            schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
            try:
                samples = [canonical_json(test["data"], schema) for test in group["tests"]]
            except (UnsupportedSchemaError, TypeError, ValueError):
                continue
            out.append((schema, samples))
    return out


def _schema_jobs() -> tuple[list[Job], list[Job]]:
    """(jobs, refused): each job with today's grammar and the pinned versions' export; the
    Lark grammars the pinned export refuses, as today writes them (llguidance 1.7 must fail)."""
    jobs, refused = [], []
    for schema, samples in SCHEMAS + _suite_schemas():
        for target, options in TARGETS:
            try:
                grammar = schema_to_grammar(schema, target=target, **options)  # type: ignore[arg-type]
            except UnsupportedSchemaError:
                continue  # refused the same way whatever the library (no library is asked)
            job = {"engine": ENGINE[target], "grammar": grammar, "samples": samples}
            try:
                pinned = schema_to_grammar(
                    schema, target=target, target_version=PINNED[LIBRARY[target]], **options
                )  # type: ignore[arg-type]
            except UnsupportedSchemaError as exc:
                assert target == "lark" and f"llguidance {PINNED['llguidance']} " in str(exc)
                refused.append(job)
                continue
            jobs.append(job | {"pinned": pinned})
    return jobs, refused


#: Turn options that change the grammar's shape, each with the well-formed and malformed turns.
TURN_OPTIONS: list[Job] = [
    {},
    {"tool_choice": "required"},
    {"tool_choice": "get_location", "allow_analysis": False},
    {"recipient_position": "either", "content_type": None},
    {"whitespace": "flexible", "undeclared_properties": True},
    {
        "tool_choice": "none",
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "answer",
                "schema": {
                    "type": "object",
                    "properties": {"temp": {"type": "integer"}},
                    "required": ["temp"],
                    "additionalProperties": False,
                },
            },
        },
    },
]
TURNS = [
    *WELL_FORMED,
    *MALFORMED,
    call_text(position="role"),
    call_text(content_type=""),
    call_text(tool="get_location", body="{}"),
    call_text(body='{ "city": "Paris",\n "unit": "celsius", "extra": 1 }'),
    PREAMBLE + call_text(),
    '<|channel|>final <|constrain|>json<|message|>{"temp":20}<|return|>',
    '<|channel|>final<|message|>{"temp":"x"}<|return|>',
    ANALYSIS + "<|channel|>final<|message|>Ünïcode 😀<|return|>",
]


#: Turns ended by the other stop token: today's tag rejects them; xgrammar 0.2.8 cannot tell
#: the stop ids apart inside a grammar, so its tag leaves the choice to the engine.
WRONG_STOP = [
    call_text().replace("<|call|>", "<|return|>"),
    ANALYSIS + "<|channel|>final<|message|>It is sunny.<|call|>",
]


def _turn_jobs() -> list[Job]:
    samples = [encode_harmony(text) for text in TURNS + WRONG_STOP]
    jobs = []
    for options in TURN_OPTIONS:
        for target, engine in (("llguidance", "llguidance-harmony"), ("xgrammar", "xgrammar-tag")):
            grammar = completion_grammar(TOOLS, target=target, **options)
            version = PINNED["llguidance" if target == "llguidance" else "xgrammar"]
            pinned = completion_grammar(TOOLS, target=target, target_version=version, **options)
            jobs.append(
                {"engine": engine, "grammar": grammar, "samples": samples, "pinned": pinned}
            )
    return jobs


@pytest.fixture(scope="module")
def built() -> tuple[list[Job], list[Job]]:
    schema_jobs, refused = _schema_jobs()
    return schema_jobs + _turn_jobs(), refused


@pytest.fixture(scope="module")
def jobs(built: tuple[list[Job], list[Job]]) -> list[Job]:
    return built[0]


@pytest.fixture(scope="module")
def pinned(built: tuple[list[Job], list[Job]]) -> dict[str, Any]:
    """The pinned environment's answers: ``results`` for every job's pinned export,
    ``refused`` for today's form of every grammar the pinned export refuses."""
    if not SIDE_PYTHON.exists():
        pytest.skip(
            f"{SIDE_PYTHON.parent.parent.name} is absent: run scripts/pinned-grammar-venv.sh"
        )
    jobs, refused = built
    side = [job | {"grammar": job["pinned"]} for job in jobs] + refused
    done = subprocess.run(
        [str(SIDE_PYTHON), "-m", "tests.support.grammar_verdicts"],
        input=json.dumps(side),
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    answer: dict[str, Any] = json.loads(done.stdout)
    results = answer.pop("results")
    return answer | {"results": results[: len(jobs)], "refused": results[len(jobs) :]}


def test_the_side_environment_has_the_pinned_versions(pinned: dict[str, Any]) -> None:
    for name, prefix in PINNED.items():
        assert pinned["versions"][name].startswith(prefix), pinned["versions"]
    assert grammar_verdicts.versions() != pinned["versions"]  # two versions are compared


def test_every_export_compiles_and_matches_the_same_on_the_pinned_versions(
    jobs: list[Job], pinned: dict[str, Any]
) -> None:
    """Today's grammar on today's libraries against the pinned export on the pinned ones; the
    one allowed difference: the pinned tag takes either stop token (WRONG_STOP)."""
    wrong_stop = [encode_harmony(text) for text in WRONG_STOP]
    differ, loose_seen = [], 0
    for job, theirs in zip(jobs, pinned["results"], strict=True):
        ours = grammar_verdicts.run_job(job)
        if job["engine"] == "xgrammar-tag" and "verdicts" in theirs:
            pairs = list(zip(job["samples"], ours["verdicts"], theirs["verdicts"], strict=True))
            loose = [s in wrong_stop and not a and b for s, a, b in pairs]
            loose_seen += sum(loose)
            theirs = {"verdicts": [a if lo else b for lo, (_, a, b) in zip(loose, pairs)]}
        assert "error" not in ours, (job["engine"], ours["error"], job["grammar"][:400])
        if ours != theirs:
            bad = theirs.get("error") or [
                s for s, a, b in zip(job["samples"], ours["verdicts"], theirs["verdicts"]) if a != b
            ]
            differ.append(f"{job['engine']}: {str(bad)[:300]} in {job['grammar'][:200]!r}")
    assert not differ, f"{len(differ)} of {len(jobs)} differ:\n" + "\n".join(differ[:20])
    assert loose_seen, "the 0.2.8 tag was expected to leave the stop token to the engine"


def test_what_the_pinned_export_refuses_the_pinned_library_cannot_read(
    built: tuple[list[Job], list[Job]], pinned: dict[str, Any]
) -> None:
    """Each refusal is real: today's Lark grammar for it fails to load in llguidance 1.7."""
    refused = built[1]
    assert refused, "no suite schema needs a bounded repetition: the check would be empty"
    for job, result in zip(refused, pinned["refused"], strict=True):
        assert "error parsing signed integer" in result.get("error", ""), (
            result,
            job["grammar"][:300],
        )
        today = grammar_verdicts.run_job(job)
        # Today's llguidance reads it, or fails on something no version reads (a lookahead
        # the Lark target writes for a few string formats), never on the bounded range.
        assert "verdicts" in today or "signed integer" not in today.get("error", ""), today


def test_the_samples_exercise_both_verdicts_on_every_kind_of_grammar(
    jobs: list[Job], pinned: dict[str, Any]
) -> None:
    """Each engine sees accepted and rejected samples, and the suite is in the set."""
    seen: dict[str, set[bool]] = {}
    for job, result in zip(jobs, pinned["results"], strict=True):
        seen.setdefault(job["engine"], set()).update(result.get("verdicts", []))
    assert seen == {engine: {True, False} for engine in seen}
    assert set(seen) == {"llguidance-bytes", "llguidance-harmony", "xgrammar-ebnf", "xgrammar-tag"}
    if SUITE.is_dir():
        assert len(jobs) > 400, len(jobs)


# -- the option itself, without the side environment ------------------------------------


def test_target_version_names_the_version_it_cannot_serve() -> None:
    bounded = {"type": "string", "maxLength": 2}
    with pytest.raises(UnsupportedSchemaError, match=r"llguidance 1\.8\.0 cannot read"):
        schema_to_grammar(bounded, target="lark", target_version="1.8.0")
    for version in (None, "1.9.1", "2.0"):
        assert "~ 0..2" in schema_to_grammar(bounded, target="lark", target_version=version)
    # The llguidance target writes {m,n}, which 1.7 reads: no refusal there.
    assert "{0,2}" in schema_to_grammar(bounded, target="llguidance", target_version="1.7.6")
    with pytest.raises(ValueError, match="target_version must be a version"):
        schema_to_grammar(bounded, target="xgrammar", target_version="latest")


def test_the_older_xgrammar_tag_leaves_only_the_stop_ids_out() -> None:
    today = completion_grammar(TOOLS, target="xgrammar")
    older = completion_grammar(TOOLS, target="xgrammar", target_version="0.2.8")
    stops = ('{"type": "token", "token": 200002}', '{"type": "token", "token": 200012}')
    assert all(stop in today for stop in stops)
    assert not any(stop in older for stop in stops)
    for stop in stops:
        today = today.replace(", " + stop, "")
    assert today == older
