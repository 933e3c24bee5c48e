"""The CLI's outputs and exit codes (0 ok, 1 input has errors, 2 usage or I/O error)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..support.cli_helpers import run_cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "weather.harmony"


run = run_cli


def test_parse_example_ok(capsys):
    status, out, err = run(capsys, "parse", str(EXAMPLE))
    assert status == 0 and err == ""
    assert out.splitlines()[-1].endswith("ok: 7 messages, 0 errors, 0 warnings")


def test_parse_json(capsys):
    status, out, _ = run(capsys, "parse", "--json", str(EXAMPLE))
    document = json.loads(out)
    assert status == 0 and document["ok"] is True and document["diagnostics"] == []
    assert document["messages"][4]["recipient"] == "functions.get_current_weather"


def test_parse_errors_exit_1_with_compiler_style_lines(capsys, tmp_path):
    bad = tmp_path / "bad.harmony"
    bad.write_text("<|start|>user<|message|>hi<|end|>\n<|start|>assistant<|channel|>final<|end|>")
    status, out, _ = run(capsys, "parse", str(bad))
    assert status == 1
    assert f"{bad}:2:35: HG100 error: unexpected <|end|>" in out
    status, out, _ = run(capsys, "parse", "--lenient", str(bad))
    assert status == 0 and "HG150 warning" in out


def test_tokens_round_trip_through_parse(capsys, tmp_path):
    status, out, _ = run(capsys, "tokens", str(EXAMPLE))
    ids = json.loads(out)
    assert status == 0 and 200006 in ids
    for text in (out, " ".join(map(str, ids)), ",".join(map(str, ids))):
        path = tmp_path / "ids.txt"
        path.write_text(text)
        status, out2, _ = run(capsys, "parse", "--tokens", "--json", str(path))
        assert status == 0 and len(json.loads(out2)["messages"]) == 7


def test_completion_flag(capsys, tmp_path):
    path = tmp_path / "c.harmony"
    path.write_text("<|channel|>final<|message|>Hello")
    # a completion read as a conversation is a usage mistake naming the flag (issue 35)
    status, _, err = run(capsys, "parse", str(path))
    assert status == 2 and "add --completion" in err and err.count("\n") == 1
    assert run(capsys, "parse", "--completion", str(path))[0] == 0


@pytest.mark.parametrize("word", ["analysis", "commentary"])
def test_parse_lists_what_a_lenient_reading_kept_outside_the_fields(capsys, tmp_path, word):
    """A header written over keeps its words in ``superseded``: the text listing shows them
    as the JSON does, so no word of the input is only in a field nobody prints."""
    path = tmp_path / "c.harmony"
    path.write_text(f"<|channel|>{word}<|start|>assistant<|channel|>final<|message|>Hi<|return|>")
    status, out, _ = run(capsys, "parse", "--completion", "--lenient", str(path))
    (listed,) = [line for line in out.splitlines() if line.startswith("  0  ")]
    assert status == 0 and json.loads(listed.split(" superseded=", 1)[1]) == word
    as_json = json.loads(run(capsys, "parse", "--completion", "--lenient", "--json", str(path))[1])
    assert as_json["messages"][0]["superseded"] == word


@pytest.mark.parametrize(
    ("argv", "content", "message"),
    [
        (["parse", "{path}"], b"\xff\xfe", "invalid UTF-8 at byte 0"),
        (["parse", "--tokens", "{path}"], b"1 2 x", "not token ids"),
        (["parse", "--tokens", "{path}"], b"[1, 2.5]", "integers only"),
        (["parse", "--tokens", "{path}"], b"[1, 2", "not a JSON array"),
        (["parse", "{missing}"], None, "no such file"),
        (["parse", "{dir}"], None, "is a directory"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, argv, content, message):
    path = tmp_path / "input"
    if content is not None:
        path.write_bytes(content)
    names = {"path": str(path), "missing": str(tmp_path / "missing"), "dir": str(tmp_path)}
    status, out, err = run(capsys, *[a.format(**names) for a in argv])
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err


def test_usage_error_exit_2(capsys):
    assert run(capsys, "parse")[0] == 2
    assert run(capsys, "frobnicate")[0] == 2


def test_console_script_and_module_entry_point():
    completed = subprocess.run(
        [sys.executable, "-m", "harmony_grammar", "parse", "-", "--json"],
        input="<|start|>user<|message|>hi<|end|>",
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0 and json.loads(completed.stdout)["ok"] is True
