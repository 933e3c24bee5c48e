"""``harmony-grammar validate``: exit codes, compiler-style output, JSONL datasets, JSON."""

from __future__ import annotations

import io
import json
import sys

import pytest

from harmony_grammar.cli.display import in_cli_words

from ..support.cli_helpers import run_cli

GOOD = "<|start|>user<|message|>hi<|end|><|start|>assistant<|channel|>final<|message|>Hello.<|end|>"
NO_CHANNEL = "<|start|>user<|message|>hi<|end|>\n<|start|>assistant<|message|>Hello.<|end|>"
CALL = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{}<|call|>"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "required": ["city"]},
        },
    }
]


def run(capsys, *argv):
    return run_cli(capsys, "validate", *argv)


def test_a_valid_file_exits_0(capsys, write):
    status, out, err = run(capsys, write("good.harmony", GOOD))
    assert status == 0 and err == ""
    assert out.strip() == "1 file checked: 1 valid, 0 with errors (0 errors, 0 warnings)"


def test_errors_exit_1_with_compiler_style_lines_and_a_summary(capsys, write):
    bad = write("bad.harmony", NO_CHANNEL)
    status, out, _ = run(capsys, bad, write("good.harmony", GOOD))
    assert status == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"{bad}:2:1: HG200 error: ")
    assert lines[1].split() == ["HG200", "missing-channel", "error", "1"]
    assert lines[2] == "2 files checked: 1 valid, 1 with errors (1 error, 0 warnings)"


def test_warnings_alone_exit_0(capsys, write):
    text = "<|start|>user<|message|>a <|endoftext|> b<|end|>"
    status, out, _ = run(capsys, write("w.harmony", text))
    assert status == 0
    assert "HG209 warning:" in out and "(0 errors, 1 warning)" in out


CUT = "<|start|>assistant<|channel|>final<|message|>cut short"


def test_the_summary_names_each_likely_cause_once_per_run(capsys, write):
    from harmony_grammar.format.causes import CAUSES

    paths = [write(f"cut{n}.harmony", CUT) for n in range(3)]
    status, out, _ = run(capsys, *paths, write("good.harmony", GOOD), "--lenient")
    assert status == 0
    hints = [line for line in out.splitlines() if " cause: " in line]
    cause = CAUSES["HG159"]
    assert hints == [f"  HG159 cause: {cause.summary}; fix: {in_cli_words(cause.fix)}"]
    assert out.count("HG159 warning:") == 3


def test_the_json_summary_lists_the_causes(capsys, write):
    from harmony_grammar.format.causes import CAUSES

    status, out, _ = run(capsys, write("cut.harmony", CUT), "--format", "json")
    assert status == 1
    summary = json.loads(out.splitlines()[-1])["summary"]
    assert summary["by_code"] == {"HG102": 1}
    assert summary["causes"] == [
        {
            "codes": ["HG102"],
            "cause": CAUSES["HG102"].summary,
            "fix": in_cli_words(CAUSES["HG102"].fix),
        }
    ]
    assert "--completion" in summary["causes"][0]["fix"]  # the CLI's flag, not the keyword
    assert 'start="completion"' not in out


def test_missing_file_exits_2_before_any_output(capsys, write):
    status, out, err = run(capsys, write("good.harmony", GOOD), "/nonexistent/x.harmony")
    assert status == 2 and out == ""
    assert err.strip() == "harmony-grammar: error: /nonexistent/x.harmony: no such file"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--jobs", "-1"], "--jobs must be 0 or more"),
        (["--tokens", "--jsonl", "text"], "--tokens applies to plain files"),
    ],
)
def test_usage_errors_exit_2(capsys, write, argv, message):
    status, out, err = run(capsys, write("g.harmony", GOOD), *argv)
    assert status == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_tools_file(capsys, write):
    call = write("call.harmony", CALL)
    status, out, _ = run(
        capsys, call, "--completion", "--tools", write("t.json", json.dumps(TOOLS))
    )
    assert status == 1
    assert "HG180 error: the arguments do not match the tool's schema: at /: 'city'" in out
    request = write("req.json", json.dumps({"model": "gpt-oss", "tools": TOOLS}))
    renamed = write("other.harmony", CALL.replace("get_weather", "get_time"))
    status, out, _ = run(capsys, renamed, "--completion", "--tools", request)
    assert status == 1 and "HG181 error" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON"),
        ('"tools"', "expected a list of tools"),
        ('[{"x": 1}]', "without a name"),
    ],
)
def test_bad_tools_file_exits_2(capsys, write, content, message):
    status, out, err = run(capsys, write("g.harmony", GOOD), "--tools", write("t.json", content))
    assert status == 2 and out == "" and message in err


def test_completion_and_lenient(capsys, write):
    completion = write("c.harmony", "<|channel|>final<|message|>Hi<|return|>")
    assert run(capsys, completion, "--completion")[0] == 0
    assert run(capsys, completion)[0] == 2  # a usage mistake: "add --completion"
    assert run(capsys, completion, "--lenient")[0] == 0  # read as HG151, repaired
    messy = write("m.harmony", "<|channel|>final<|message|>Hi<|return|>junk")
    status, out, _ = run(capsys, messy, "--completion", "--lenient")
    # The text after the stop is kept (lossless), so the <|return|> no longer ends the turn.
    assert status == 1 and "HG152 warning" in out and "HG211 error" in out


def test_token_id_files(capsys, write, encoding):
    from harmony_grammar.format.harmony_ids import encode_harmony

    ids = write("ids.json", json.dumps(encode_harmony(NO_CHANNEL)))
    status, out, _ = run(capsys, ids, "--tokens")
    assert status == 1
    assert f"{ids}:@" in out and "HG200 error" in out


def test_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(NO_CHANNEL.encode())))
    status, out, _ = run(capsys, "-")
    assert status == 1 and out.startswith("<stdin>:2:1: HG200 error")


JSONL = "\n".join(
    [
        json.dumps({"id": 1, "text": GOOD}),
        '{"id": 2, "text": ',
        json.dumps({"id": 3, "text": NO_CHANNEL}),
        "",
        json.dumps({"id": 5, "text": "<|start|>user<|message|>x <|endoftext|><|end|>"}),
    ]
)


def test_jsonl_text_output(capsys, write):
    status, out, _ = run(capsys, write("d.jsonl", JSONL), "--jsonl", "text")
    assert status == 1
    lines = out.splitlines()
    path = lines[0].split(":")[0]
    assert lines[0].startswith(f"{path}:2: HG290 error: not JSON")
    assert lines[1].startswith(f"{path}:3: HG200 error: ")
    assert lines[1].endswith("(in text at 2:1)")
    assert lines[2].startswith(f"{path}:5: HG209 warning: ")
    assert lines[2].endswith("(in text at 1:27)")
    assert lines[-1] == "4 records checked: 2 valid, 2 with errors (2 errors, 1 warning)"


def test_jsonl_json_output(capsys, write):
    status, out, _ = run(capsys, write("d.jsonl", JSONL), "--jsonl", "text", "--format", "json")
    assert status == 1
    objects = [json.loads(line) for line in out.splitlines()]
    assert [o.get("record") for o in objects[:-1]] == [2, 3, 5]
    assert objects[1]["ok"] is False and objects[1]["diagnostics"][0]["code"] == "HG200"
    assert objects[-1] == {
        "summary": {
            "records": 4,
            "with_errors": 2,
            "errors": 2,
            "warnings": 1,
            "by_code": {"HG200": 1, "HG209": 1, "HG290": 1},
            "causes": [],
        },
        "ok": False,
    }


def test_jsonl_token_ids_and_jobs(capsys, write, encoding):
    from harmony_grammar.format.harmony_ids import encode_harmony

    records = [{"ids": encode_harmony(NO_CHANNEL if n % 5 == 0 else GOOD)} for n in range(200)]
    path = write("ids.jsonl", "\n".join(json.dumps(r) for r in records) + "\n")
    serial = run(capsys, path, "--jsonl", "ids")
    parallel = run(capsys, path, "--jsonl", "ids", "--jobs", "2")
    assert serial == parallel
    status, out, _ = serial
    assert status == 1
    assert out.count("HG200 error") == 40
    assert f"{path}:1: HG200 error" in out and "(in ids at token " in out


def test_a_file_of_json_lines_without_the_field(capsys, write):
    # a usage mistake (issue 35): one line naming the fields the record has, exit 2
    status, out, err = run(capsys, write("d.jsonl", '{"a": 1}\n'), "--jsonl", "text")
    assert status == 2 and out == "" and "no field 'text'" in err and "(it has: a)" in err
    # a later record without it is that record's error, as before
    path = write("e.jsonl", '{"text": "<|start|>user<|message|>hi<|end|>"}\n{"a": 1}\n')
    status, out, _ = run(capsys, path, "--jsonl", "text")
    assert status == 1 and "e.jsonl:2: HG290 error: the record has no field 'text'" in out
