"""File names in diagnostic lines are escaped, as compilers do (issue 27)."""

from __future__ import annotations

import json
import os

import pytest

from harmony_grammar.cli.display import shown, shown_path
from tests.support.cli_helpers import run_cli

FORGING = "a\nb.jsonl:1: HG000 ok\x1b[2J\u2028.txt"
BAD = "<|start|>assistant<|message|>hi<|end|>"  # no channel: HG200 from validate


def _lines_start_with_the_escaped_name(out: str, name: str) -> None:
    escaped = shown(name)
    assert "\n" not in escaped and "\x1b" not in escaped
    lines = out.splitlines()
    diagnostic_lines = [line for line in lines if " HG" in line and not line.startswith("  ")]
    assert diagnostic_lines
    for line in diagnostic_lines:
        assert line.startswith(escaped + ":"), line
    assert "\x1b" not in out
    assert not any(line.startswith("b.jsonl:1: HG000") for line in out.splitlines())


@pytest.mark.parametrize("command", ["parse", "validate"])
def test_a_forging_file_name_is_escaped_in_diagnostic_lines(tmp_path, capsys, command):
    path = tmp_path / FORGING
    path.write_text("<|start|>assistant<|channel|>final<|message|>hi", encoding="utf-8")
    _, out, _ = run_cli(capsys, command, str(path))
    _lines_start_with_the_escaped_name(out, str(path))


def test_a_forging_file_name_is_escaped_in_dataset_lines(tmp_path, capsys):
    path = tmp_path / (FORGING + ".jsonl")
    path.write_text(json.dumps({"text": BAD}) + "\n", encoding="utf-8")
    _, out, _ = run_cli(capsys, "validate", str(path), "--jsonl", "text")
    _lines_start_with_the_escaped_name(out, str(path))


def test_a_missing_file_with_a_newline_is_one_error_line(tmp_path, capsys):
    status, _, err = run_cli(capsys, "parse", str(tmp_path / "x\nharmony-grammar: ok"))
    assert status == 2
    assert err.count("\n") == 1 and "x\\nharmony-grammar: ok" in err


@pytest.mark.skipif(os.name != "posix", reason="a file name that is not UTF-8 needs POSIX")
def test_a_name_that_is_not_utf8_shows_its_bytes(tmp_path, capsys):
    raw = os.fsencode(tmp_path) + b"/bad\xff.txt"
    with open(raw, "wb") as handle:
        handle.write(b"<|start|>assistant<|channel|>final<|message|>hi")
    name = os.fsdecode(raw)
    _, out, _ = run_cli(capsys, "parse", name)
    assert "bad\\xff.txt:" in out


def test_plain_names_are_printed_as_given():
    assert shown_path("data/part-0001.jsonl") == "data/part-0001.jsonl"
    assert shown_path("C:\\data\\x.jsonl") == "C:\\data\\x.jsonl"
    assert shown_path("-") == "<stdin>"
    assert shown("tab\there") == "tab\\there"
    assert shown("日本語 ok") == "日本語 ok"
