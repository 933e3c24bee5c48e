"""Leak detection: the labelled corpus, the fusion rule, streaming equality and the CLI."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.cli.main import main
from harmony_grammar.safety.leaks import (
    HOLD,
    PROXIMITY,
    LeakDetector,
    LeakReport,
    LeakSpan,
    detect_leak,
    mention_spans,
)
from harmony_grammar.safety.signals import LOOKBACK, MAX_MATCH, SIGNAL_PATTERNS, LeakSignal

try:  # the regex parser is private; its width computation bounds the streaming hold-back
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # Python 3.10
    import sre_parse  # type: ignore[no-redef]

CORPUS = Path(__file__).parents[1] / "fixtures" / "leaks"
LABELS: dict[str, list[str]] = {
    key: value
    for key, value in json.loads((CORPUS / "labels.json").read_text(encoding="utf-8")).items()
    if not key.startswith("_")
}


def _corpus_case(key: str) -> tuple[str, str, bool]:
    path = CORPUS / key
    return path.read_text(encoding="utf-8"), path.parent.name, path.parts[-3] == "positive"


def _stream(text: str, cuts: list[int], surface: str) -> tuple[list[LeakSpan], LeakReport]:
    detector = LeakDetector(surface=surface)
    spans: list[LeakSpan] = []
    previous = 0
    for cut in [*cuts, len(text)]:
        spans += detector.feed(text[previous:cut])
        previous = cut
    spans += detector.close()
    return spans, detector.report


# ------------------------------------------------------------------------------ the corpus
def test_every_corpus_file_is_labelled():
    files = {
        p.relative_to(CORPUS).as_posix()
        for p in CORPUS.rglob("*")
        if p.is_file() and p.name != "labels.json"
    }
    assert files == set(LABELS)
    assert any(k.startswith("positive/") for k in LABELS)
    assert any(k.startswith("negative/") for k in LABELS)


@pytest.mark.parametrize("key", sorted(LABELS))
def test_corpus_verdict_and_signals(key):
    text, surface, positive = _corpus_case(key)
    report = detect_leak(text, surface=surface)
    assert report.triggered is positive
    assert {LeakSignal(s) for s in LABELS[key]} <= report.signals
    assert bool(report.triggering) is positive
    for span in report.spans:
        assert text[span.start : span.end] == span.text


@pytest.mark.parametrize("key", sorted(LABELS))
def test_corpus_split_at_every_position(key):
    text, surface, _positive = _corpus_case(key)
    batch = detect_leak(text, surface=surface)
    for cut in range(len(text) + 1):
        spans, report = _stream(text, [cut], surface)
        assert spans == list(batch.spans), cut
        assert report == batch, cut
    spans, report = _stream(text, list(range(1, len(text))), surface)
    assert report == batch and spans == list(batch.spans)


def test_spelling_split_across_chunks_still_triggers():
    detector = LeakDetector()
    assert detector.feed("The answer.<|en") == []
    detector.feed("d|>")
    assert not detector.triggered  # held back until more text or close()
    detector.close()
    assert detector.triggered
    assert [s.text for s in detector.report.triggering] == ["<|end|>"]


def test_triggered_turns_true_before_close_on_a_long_stream():
    detector = LeakDetector()
    # A span is certain once HOLD characters follow it, plus the R pattern's look-back.
    detector.feed("ok<|end|>" + "x" * (HOLD + LOOKBACK + 10))
    assert detector.triggered


# ------------------------------------------------------------------------------ fusion
def test_control_token_triggers_alone():
    report = detect_leak("fine<|call|>")
    assert report.triggered and report.signals == {LeakSignal.CONTROL_TOKEN}


def test_non_special_spellings_are_not_control_tokens():
    # <|reserved_199999|> is not a spelling tiktoken knows (199999 is <|endoftext|>).
    report = detect_leak("a <|reserved_199999|> b <|foo|> c <|START|>")
    assert LeakSignal.CONTROL_TOKEN not in report.signals
    assert detect_leak("x <|endofprompt|>").triggered
    assert detect_leak("x <|reserved_200018|>").triggered


def test_marker_alone_does_not_trigger_but_with_a_neighbour_does():
    alone = detect_leak("Call it as to=functions.lookup in the header.")
    assert not alone.triggered and alone.signals == {LeakSignal.MARKER}
    near = detect_leak("Call it as to=functions.lookup in the header.<|im_end|>")
    assert near.triggered
    assert {s.signal for s in near.triggering} == {LeakSignal.MARKER, LeakSignal.GLITCH}


@pytest.mark.parametrize("gap", [PROXIMITY - 1, PROXIMITY + 40])
def test_marker_corroboration_is_local(gap):
    text = "to=functions.lookup" + " " * gap + "<|im_end|>"
    assert detect_leak(text).triggered is (gap <= PROXIMITY)


@pytest.mark.parametrize(
    ("text", "signal"),
    [
        ("assistantfinalThe answer", LeakSignal.CHANNEL_WORD),
        ("analysisWe need to answer.", LeakSignal.CHANNEL_WORD),
        ("<|end>", LeakSignal.GLITCH),
        ("<\uff5cend\uff5c>", LeakSignal.GLITCH),
        ("<|im_start|>", LeakSignal.GLITCH),
        ("sеarch", LeakSignal.MIXED_SCRIPT),  # Latin s, Cyrillic е
        ('to=functions.f json{"a":1}', LeakSignal.BODY_CASCADE),
        ('{"a":1}<|call|>', LeakSignal.BODY_CASCADE),
        ("browser.search to=assistant", LeakSignal.FAKE_RESULT),
        ("<|start|>functions.f", LeakSignal.FAKE_RESULT),
    ],
)
def test_each_signal_has_a_pattern(text, signal):
    assert signal in detect_leak(text).signals


@pytest.mark.parametrize(
    "text",
    ["the final analysis", "semifinal", "finalize it", "使用Python", "2πr", "API를", "a<b|c>d"],
)
def test_ordinary_text_has_no_signals(text):
    assert detect_leak(text).spans == ()


# ------------------------------------------------------------------------------ quoting
@pytest.mark.parametrize(
    "text",
    [
        "Use `<|end|>` here.",
        "``a `<|end|>` b``",
        "```\n<|end|>\n```",
        "~~~\n<|end|>\n~~~",
        'x = "<|end|>"',
        "parse(f'<|start|>user')",
        '"""\n<|end|>\n"""',
        "an unclosed `code span <|end|>",
    ],
)
def test_quoted_harmony_is_not_a_leak(text):
    assert not detect_leak(text).triggered


@pytest.mark.parametrize(
    "text",
    [
        'I will check."<|end|>',  # a quote after a word does not open a literal
        "`code`<|end|>",  # the span closed before it
        "```\nx\n```\n<|end|>",  # the fence closed before it
        "an unclosed `span\n<|end|>",  # inline code ends with its line
        "it's <|end|> isn't it",  # apostrophes are not quotes
    ],
)
def test_spellings_outside_quotes_still_count(text):
    assert detect_leak(text).triggered


def test_mention_spans_cover_code_and_literals():
    text = 'a `b` c "d" e\n```\nf\n```\ng'
    quoted = {text[s.start : s.end] for s in mention_spans(text)}
    assert quoted == {"`b`", '"d"', "```\nf\n```"}


# ------------------------------------------------------------------------------ tool_arg
def test_tool_arg_counts_only_after_the_json_value():
    inside = '{"content": "<|end|> to=functions.x json{}"}'
    assert detect_leak(inside, surface="tool_arg").spans == ()
    # On the text surface the same bytes are not JSON data, but a quoted literal.
    after = inside + "<|call|>"
    report = detect_leak(after, surface="tool_arg")
    assert report.triggered
    assert [s.start for s in report.spans if s.signal is LeakSignal.AFTER_BOUNDARY] == [len(inside)]


def test_tool_arg_string_value_and_escaped_quotes():
    text = '"a \\" <|end|> b" to=functions.next'
    report = detect_leak(text, surface="tool_arg")
    assert report.triggered
    assert [s.text for s in report.spans if s.signal is LeakSignal.MARKER] == ["to=functions.next"]


# ------------------------------------------------------------------------------ streaming
_FRAGMENTS = [
    "<|",
    "|>",
    "<|end|>",
    "<|start|>",
    "<|channel|>",
    "<|message|>",
    "<|call|>",
    "<|reserved_200100|>",
    "<|im_end|>",
    "<|end>",
    "analysis",
    "final",
    "commentary",
    "assistant",
    "to=functions.f",
    "to=assistant",
    "functions.g ",
    "json",
    "The",
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    "`",
    "```",
    '"""',
    "\n",
    " ",
    "x",
    "е",
    "π",
    "\\",
    ",",
    "=",
]
_texts = st.lists(st.sampled_from(_FRAGMENTS), max_size=60).map("".join)


@given(data=st.data(), text=_texts, surface=st.sampled_from(["text", "tool_arg"]))
def test_streaming_equals_batch_for_any_chunking(data, text, surface):
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    batch = detect_leak(text, surface=surface)
    spans, report = _stream(text, cuts, surface)
    assert spans == list(batch.spans)
    assert report == batch


@pytest.mark.parametrize("surface", ["text", "tool_arg"])
def test_streaming_equals_batch_on_long_text(surface):
    # Long enough for the detector to drop consumed text from its buffer several times.
    rng = random.Random(8)
    body = "".join(rng.choice(_FRAGMENTS) for _ in range(12_000))
    text = ('{"a": "x"}' if surface == "tool_arg" else "") + body
    batch = detect_leak(text, surface=surface)
    assert batch.spans
    for size in (1, 7, 300, 5000):
        spans, report = _stream(text, list(range(size, len(text), size)), surface)
        assert report == batch and spans == list(batch.spans), size


def test_feed_after_close_is_an_error():
    detector = LeakDetector()
    detector.close()
    with pytest.raises(ValueError):
        detector.feed("x")


def _max_width(pattern: str) -> int:
    return int(sre_parse.parse(pattern).getwidth()[1])


def test_every_pattern_is_bounded_within_the_hold_back():
    # The accept hooks read at most 16 characters around a match (the channel-word check).
    for pattern in SIGNAL_PATTERNS:
        assert _max_width(pattern.regex.pattern) + 16 <= MAX_MATCH, pattern.signal
    assert HOLD > MAX_MATCH


# ------------------------------------------------------------------------------ CLI
def test_cli_reports_triggering_spans_and_exits_1(tmp_path, capsys):
    path = tmp_path / "out.txt"
    path.write_text("fine\nthen<|end|>", encoding="utf-8")
    assert main(["leaks", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f'{path}:2:5: H control-token spelling: "<|end|>"'
    assert out[-1] == f"{path}: leak detected (signals: H)"


def test_cli_json_and_clean_input(tmp_path, capsys):
    path = tmp_path / "doc.md"
    path.write_text("Use `<|end|>`; address to=functions.f.", encoding="utf-8")
    assert main(["leaks", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["triggered"] is False and report["signals"] == ["M"]


def test_cli_tool_arg_surface(tmp_path, capsys):
    path = tmp_path / "args.json"
    path.write_text('{"a": 1} to=functions.g', encoding="utf-8")
    assert main(["leaks", str(path)]) == 0
    assert main(["leaks", str(path), "--surface", "tool_arg"]) == 1
    assert "T marker after the argument's JSON value" in capsys.readouterr().out


def test_cli_io_errors_exit_2(tmp_path, capsys):
    assert main(["leaks", str(tmp_path / "missing.txt")]) == 2
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe")
    assert main(["leaks", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and "invalid UTF-8" in err
