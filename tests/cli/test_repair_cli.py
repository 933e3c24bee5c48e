"""``harmony-grammar repair``: canonical Harmony of what the model meant, diagnostics on stderr."""

from __future__ import annotations

import io
import json
import sys

import pytest

from harmony_grammar.format.causes import CAUSES
from harmony_grammar.format.parser import parse

from ..support.cli_helpers import run_cli
from ..support.wild_corpus import load_records

CLEAN = (
    "<|start|>user<|message|>What is 2+2?<|end|>"
    "<|start|>assistant<|channel|>analysis<|message|>Easy.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>4<|return|>"
)
STRIPPED = "analysisThe user wants a word. Answer four.assistantfinalfour"
GLUED = '<|channel|>commentary to=functions.message_agentresponse<|message|>{"s":"x"}<|call|>'


def run(capsys, *argv):
    return run_cli(capsys, "repair", *argv)


def test_clean_input_is_printed_unchanged_and_exits_0(capsys, write):
    status, out, err = run(capsys, write("clean.harmony", CLEAN))
    assert (status, out, err) == (0, CLEAN + "\n", "")  # one final newline, as parse prints


def test_a_stripped_completion_is_printed_as_the_completion_it_meant(capsys, write):
    path = write("stripped.txt", STRIPPED)
    status, out, err = run(capsys, path, "--completion")
    assert status == 1
    assert not out.startswith("<|start|>")  # the prompt's <|start|>assistant is not repeated
    clean = parse(out, start="completion")
    assert clean.diagnostics == ()
    assert [(m.channel, m.content) for m in clean.messages] == [
        ("analysis", "The user wants a word. Answer four."),
        ("final", "four"),
    ]
    assert out.endswith("<|return|>\n")  # the final answer gets the stop token it lost
    lines = err.splitlines()
    assert lines[0].startswith(f"{path}:1:1: HG160 warning: ")
    cause = CAUSES["HG160"]
    assert lines[-1] == f"  HG160 cause: {cause.summary}; fix: {cause.fix}"
    assert sum(" cause: " in line for line in lines) == 1


def test_a_call_without_its_stop_token_gets_call(capsys, write):
    text = '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a":1}'
    status, out, err = run(capsys, write("call.txt", text), "--completion")
    assert status == 1 and "HG153" in err
    assert out == text + "<|call|>\n"


def test_repairing_the_output_again_changes_nothing(capsys, write):
    status, out, _ = run(capsys, write("stripped.txt", STRIPPED), "--completion")
    assert status == 1
    again = run(capsys, write("again.txt", out), "--completion")
    assert again == (0, out, "")


def test_token_ids_in_harmony_text_out(capsys, write, encoding):
    ids = encoding.encode(CLEAN, allowed_special="all")
    status, out, err = run(capsys, write("clean.ids", json.dumps(ids)), "--tokens")
    assert (status, out, err) == (0, CLEAN + "\n", "")


def test_tools_split_a_glued_name(capsys, write):
    tools = write(
        "tools.json", json.dumps([{"type": "function", "function": {"name": "message_agent"}}])
    )
    path = write("glued.txt", GLUED)
    status, out, err = run(capsys, path, "--completion", "--tools", tools)
    assert status == 1 and "HG154" in err
    assert "to=functions.message_agent response<|message|>" in out
    # without tools too: ``response`` is a content type gpt-oss writes (``<|constrain|>``
    # stripped between it and the name), split off the same way
    status, out, err = run(capsys, path, "--completion")
    assert status == 1 and "HG154" in err
    assert "to=functions.message_agent response<|message|>" in out


@pytest.mark.parametrize(
    "text",
    [
        "<|start|>user<|message|>hi<|end|>",
        "<|start|>functions.lookup to=assistant<|channel|>commentary<|message|>{}<|end|>",
        "<|start|>system",
    ],
)
def test_a_completion_whose_first_author_is_not_the_assistant_is_refused(
    capsys, write, encoding, text
):
    """A completion is the assistant's by construction: one whose first message has
    another author is refused with the fix (repair it as a conversation), never printed as
    text that reads back otherwise."""
    for tokens in (False, True):  # text (the input's kind is checked first) and token ids
        source = json.dumps(encoding.encode(text, allowed_special="all")) if tokens else text
        path = write("other.json" if tokens else "other.txt", source)
        argv = [path, "--completion"] + (["--tokens"] if tokens else [])
        status, out, err = run(capsys, *argv)
        assert (status, out) == (2, ""), (tokens, err)
        last = err.splitlines()[-1]
        assert last.startswith(f"harmony-grammar: error: {path}: ") and "drop --completion" in last
        status, out, _ = run(capsys, *argv[:1], *argv[2:])  # as a conversation it is printed
        assert out and parse(out, start="conversation").ok


def test_stdin_and_an_empty_file(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(STRIPPED.encode())))
    status, out, err = run(capsys, "-", "--completion")
    assert status == 1 and err.startswith("<stdin>:1:1: HG160 warning: ")
    assert parse(out, start="completion").diagnostics == ()
    assert run(capsys, "/dev/null") == (0, "", "")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["/nonexistent/x.txt"], "/nonexistent/x.txt: no such file"),
        (["CLEAN", "--tools", "/nonexistent/t.json"], "/nonexistent/t.json: no such file"),
        (["CLEAN", "--tokens"], "not token ids"),
    ],
)
def test_usage_and_io_errors_exit_2_with_one_line(capsys, write, argv, message):
    argv = [write("clean.harmony", CLEAN) if a == "CLEAN" else a for a in argv]
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_no_file_is_a_usage_error(capsys):
    assert run(capsys)[0] == 2


@pytest.mark.parametrize("record", load_records(), ids=lambda r: r["id"])
def test_real_output_repairs_to_harmony_that_parses_clean(capsys, write, record):
    """Every corpus record: the output parses strictly with no diagnostic, to the same messages."""
    completion = record["mode"] == "completion"
    start = "completion" if completion else "conversation"
    flags = ["--completion"] if completion else []
    status, out, _ = run(capsys, write("in.txt", record["text"]), *flags)
    recovered = parse(record["text"], start=start, lenient=True)
    assert status == (1 if recovered.diagnostics else 0)
    clean = parse(out, start=start)
    assert clean.diagnostics == ()
    fields = [(m.author, m.channel, m.recipient, m.content_type, m.content) for m in clean.messages]
    assert fields == [
        (m.author, m.channel, m.recipient, m.content_type, m.content) for m in recovered.messages
    ]
