"""Real gpt-oss output as engines deliver it (issue 13): the corpus targets and the negatives.

Lenient ``parse`` must recover what the model meant in at least 90% of each corpus file, and
must recover nothing from ordinary answers: they stay one message whose content is the whole
text, never read as the stripped dialect (HG160).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harmony_grammar import parse
from harmony_grammar.format.stream import StreamParser
from harmony_grammar.format.tokens import CONTROL_SPELLING_RE
from tests.conftest import shared_data_dir
from tests.support.wild_corpus import load_records, match

DATA = Path(__file__).parents[1] / "fixtures"
COLLECTED = DATA / "wild" / "collected.jsonl"
TARGET = 0.9


def _exact_share(path: Path) -> tuple[float, list[str]]:
    records = load_records([path])
    assert records, f"{path} holds no records"
    failures = []
    for record in records:
        result = parse(
            record["text"], start=record["mode"], lenient=True, tools=record.get("tools")
        )
        verdict = match(record["intended"], result.messages)
        if verdict != "exact":
            failures.append(f"{record['id']} ({verdict}): {[d.code for d in result.diagnostics]}")
    return 1 - len(failures) / len(records), failures


def test_dev_corpus_recovered():
    path = shared_data_dir("wild-gptoss") / "dev.jsonl"
    share, failures = _exact_share(path)
    assert not failures, f"{share:.0%} exact on {path.name}; not exact: {failures}"


def test_collected_corpus_recovered():
    share, failures = _exact_share(COLLECTED)
    assert share >= TARGET, f"{share:.0%} exact on {COLLECTED.name}; not exact: {failures}"


def test_no_analysis_in_final_and_no_lost_call():
    """Across the corpus: analysis text never lands in a final message; every call is kept."""
    for record in load_records([COLLECTED]):
        result = parse(record["text"], start=record["mode"], lenient=True)
        finals = "".join(m.content for m in result.messages if m.channel == "final")
        for want in record["intended"]:
            if want["channel"] == "analysis" and want["content"] and finals:
                assert want["content"] not in finals, record["id"]
        calls = [w for w in record["intended"] if w["recipient"] and w["role"] == "assistant"]
        got = [m for m in result.messages if m.is_tool_call]
        assert len(got) >= len(calls), record["id"]


@pytest.mark.parametrize("chunk", [1, 7])
def test_corpus_streamed_equals_batch(chunk):
    for record in load_records([COLLECTED]):
        text, start = record["text"], record["mode"]
        parser = StreamParser(start=start, lenient=True)
        for at in range(0, len(text), chunk):
            parser.feed(text[at : at + chunk])
        parser.close()
        assert parser.result() == parse(text, start=start, lenient=True), record["id"]


def _negatives() -> list[tuple[str, str]]:
    texts = [
        (json.loads(line)["id"], json.loads(line)["text"])
        for line in (DATA / "wild" / "prose.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    leaks = sorted(p for p in (DATA / "leaks" / "negative").rglob("*") if p.is_file())
    texts += [(p.name, p.read_text(encoding="utf-8")) for p in leaks]
    return texts


NEGATIVES = _negatives()


def test_negatives_are_many():
    assert len(NEGATIVES) >= 300


def test_ordinary_answers_are_not_recovered():
    wrong = []
    for name, text in NEGATIVES:
        result = parse(text, start="completion", lenient=True)
        codes = {d.code for d in result.diagnostics}
        if "HG160" in codes:
            wrong.append(f"{name}: read as stripped Harmony")
        elif CONTROL_SPELLING_RE.search(text) is None and (
            [m.content for m in result.messages] != [text] or not result.ok
        ):
            # text that spells no control token stays one message, its content the whole text
            wrong.append(f"{name}: {[m.content[:30] for m in result.messages]} {sorted(codes)}")
    assert not wrong, wrong


@pytest.mark.parametrize("start", ["completion", "conversation"])
def test_well_formed_output_needs_no_repair(start):
    text = (
        "<|channel|>analysis<|message|>Analysis of the final answer.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>assistantfinal is a word here.<|return|>"
    )
    if start == "conversation":
        text = "<|start|>assistant" + text
    result = parse(text, start=start, lenient=True)
    assert result.diagnostics == () and len(result.messages) == 2
