"""A new user's first hour (issue 35): the obvious ways of building a conversation work or
fail at once naming the fix, and every usage mistake of the CLI is exit 2 and one line."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harmony_grammar import Conversation, Message, from_chat_completions, render
from harmony_grammar.format.model import RecipientPosition, Role, Terminator

from ..support.cli_helpers import run_cli

# -- item 3: building a conversation -------------------------------------------------------


@given(role=st.sampled_from([r.value for r in Role]), content=st.text(max_size=20))
# Half the profile's budget: each example runs a CLI command in-process.
@settings(max_examples=settings.default.max_examples // 2)
def test_message_takes_a_role_as_a_string(role, content):
    message = Message(role=role, content=content)
    assert message.role is Role(role) and message == Message(Role(role), content)


@given(role=st.text(max_size=12).filter(lambda s: s not in {r.value for r in Role}))
# Half the profile's budget: each example runs a CLI command in-process.
@settings(max_examples=settings.default.max_examples // 2)
def test_message_refuses_an_unknown_role_when_made_listing_the_roles(role):
    with pytest.raises(ValueError) as caught:
        Message(role=role, content="hi")
    assert all(repr(r.value) in str(caught.value) for r in Role)


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"role": 1, "content": "hi"}, "role"),
        ({"role": None, "content": "hi"}, "role"),
        ({"role": "user", "content": None}, "content"),
        ({"role": "assistant", "content": {"city": "Paris"}}, "json.dumps"),
        ({"role": "user", "content": "hi", "channel": 3}, "channel"),
        ({"role": "user", "content": "hi", "recipient": ["x"]}, "recipient"),
        ({"role": "user", "content": "hi", "terminator": "stop"}, "'end', 'call', 'return'"),
        ({"role": "user", "content": "hi", "recipient_position": "header"}, "'role'"),
    ],
)
def test_message_checks_every_field_when_made(fields, named):
    with pytest.raises((TypeError, ValueError)) as caught:
        Message(**fields)
    assert named in str(caught.value)


def test_message_converts_enum_fields_given_as_strings():
    message = Message(
        "assistant",
        "{}",
        recipient="functions.f",
        channel="commentary",
        terminator="call",
        recipient_position="channel",
    )
    assert message.terminator is Terminator.CALL
    assert message.recipient_position is RecipientPosition.CHANNEL
    assert render(Conversation.from_messages([message])) == (
        "<|start|>assistant<|channel|>commentary to=functions.f<|message|>{}<|call|>"
    )


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "user", "content": "hi"}],
        [Message("user", "hi"), {"role": "assistant", "content": "hello"}],
    ],
)
def test_from_messages_with_chat_dicts_names_from_chat_completions(messages):
    with pytest.raises(TypeError) as caught:
        Conversation.from_messages(messages)
    assert "from_chat_completions" in str(caught.value)


@pytest.mark.parametrize("item", ["hi", 3, ("user", "hi"), None])
def test_from_messages_with_other_items_names_message(item):
    with pytest.raises(TypeError) as caught:
        Conversation.from_messages([item])
    assert "Message(role=" in str(caught.value)


@given(
    st.lists(
        st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant"]), "content": st.text(max_size=12)}
        ),
        min_size=1,
        max_size=4,
    )
)
# A third of the profile's budget: each example runs a CLI command in-process.
@settings(max_examples=settings.default.max_examples // 3)
def test_render_takes_a_request_dict_as_from_chat_completions_reads_it(messages):
    request = {"messages": messages}
    assert render(request) == render(from_chat_completions(request))
    assert render(request, next_turn="assistant", tokens=True) == render(
        from_chat_completions(request), next_turn="assistant", tokens=True
    )


def test_render_takes_a_responses_request_dict():
    from harmony_grammar import from_responses

    request = {"input": "Weather in Paris?", "instructions": "Be brief."}
    assert render(request) == render(from_responses(request))


@pytest.mark.parametrize("value", [[{"role": "user", "content": "hi"}], "hi", None])
def test_render_refuses_what_is_no_conversation_nor_request(value):
    with pytest.raises(TypeError) as caught:
        render(value)
    assert "Conversation.from_messages" in str(caught.value)


# -- item 4: every usage mistake is exit 2 and one line naming the fix -----------------------

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CONVERSATION = (EXAMPLES / "weather.harmony").read_text(encoding="utf-8")
COMPLETION = (EXAMPLES / "completion.harmony").read_text(encoding="utf-8")
CHATS = (EXAMPLES / "chat.jsonl").read_text(encoding="utf-8")
REQUEST = (EXAMPLES / "chat_request.json").read_text(encoding="utf-8")

# (argv, {file name: content}, what the one line must name). {name} in argv is the file.
MISTAKES = [
    # a whole conversation, or nothing, where a completion is wanted
    (["to-chat", "{conv}"], {"conv": CONVERSATION}, ["reads a completion", "<|start|>assistant"]),
    (["to-chat", "--lenient", "{conv}"], {"conv": CONVERSATION}, ["reads a completion"]),
    (["to-chat", "--stream", "{conv}"], {"conv": CONVERSATION}, ["reads a completion"]),
    (["to-responses", "{conv}"], {"conv": CONVERSATION}, ["reads a completion"]),
    (["to-responses", "--stream", "{conv}"], {"conv": "\n  " + CONVERSATION}, ["completion"]),
    (["to-responses", "{empty}"], {"empty": ""}, ["empty", "reads a completion"]),
    (["to-responses", "{empty}"], {"empty": " \n\r\n"}, ["empty"]),
    (["to-chat", "{empty}"], {"empty": ""}, ["empty", "reads a completion"]),
    (["to-chat", "{lead}"], {"lead": "<|start|>assistant" + COMPLETION}, ["--lenient"]),
    (
        ["to-responses", "--no-lenient", "{lead}"],
        {"lead": "<|start|>assistant" + COMPLETION},
        ["drop --no-lenient"],
    ),
    (["to-chat", "{req}"], {"req": REQUEST}, ["request body", "harmony-grammar render"]),
    (["to-responses", "{data}"], {"data": CHATS}, ["JSON Lines", "reads a completion"]),
    (["to-chat", "{ids}"], {"ids": "[200005, 35644, 200008]"}, ["add --tokens"]),
    (
        ["to-chat", "--tokens", "{ids}"],
        {"ids": "[200006, 1428, 200008, 3686, 200007]"},
        ["user", "reads a completion"],
    ),
    (["to-chat", "--tokens", "{ids}"], {"ids": "[]"}, ["no token ids"]),
    # Harmony text where a dataset is wanted
    (
        ["prepare", "{conv}", "-o", "out.parquet"],
        {"conv": CONVERSATION},
        ["Harmony text", "messages", "validate"],
    ),
    (["prepare", "{conv}", "-o", "out.parquet"], {"conv.jsonl": CONVERSATION}, ["Harmony text"]),
    (["prepare", "{comp}", "-o", "out.parquet"], {"comp": COMPLETION}, ["Harmony text"]),
    (["prepare", "{prose}", "-o", "out.parquet"], {"prose": "hello there\n"}, ["not JSON Lines"]),
    # a dataset where Harmony text is wanted
    (["validate", "{data}"], {"data.jsonl": CHATS}, ["--jsonl FIELD", "messages", "prepare"]),
    (
        ["validate", "{data}"],
        {"data.txt": '{"text": "hi"}\n{"text": "yo"}\n'},
        ["--jsonl FIELD", "text"],
    ),
    (["validate", "--completion", "{data}"], {"data": CHATS}, ["--jsonl FIELD"]),
    (["parse", "{data}"], {"data": CHATS}, ["--jsonl FIELD"]),
    (["repair", "{data}"], {"data": CHATS}, ["--jsonl FIELD"]),
    (["validate", "{req}"], {"req.json": REQUEST}, ["Chat Completions request", "render"]),
    (
        ["validate", "{req}"],
        {"req": '{"input": "hi", "model": "m"}'},
        ["Responses request", "render"],
    ),
    (["validate", "{tools}"], {"tools": (EXAMPLES / "tools.json").read_text("utf-8")}, ["--tools"]),
    (["validate", "{ids}"], {"ids": "200006 1428 200008"}, ["add --tokens"]),
    (["parse", "{ids}"], {"ids": "[200006, 1428]"}, ["add --tokens"]),
    (["validate", "{pq}"], {"pq": "PAR1\x00\x00"}, ["--field COLUMN"]),
    # a completion read as a conversation, and the reverse
    (["validate", "{comp}"], {"comp": COMPLETION}, ["add --completion"]),
    (["parse", "{comp}"], {"comp": "\n" + COMPLETION}, ["add --completion"]),
    (["validate", "--completion", "{conv}"], {"conv": CONVERSATION}, ["drop --completion"]),
    # a field no record has
    (
        ["validate", "--jsonl", "txt", "{data}"],
        {"data.jsonl": CHATS},
        ["'txt'", "messages", "prepare"],
    ),
    (["validate", "--field", "txt", "{data}"], {"data.jsonl": CHATS}, ["'txt'", "messages"]),
    (
        ["validate", "--jsonl", "out.text", "{data}"],
        {"data.jsonl": '{"out": {"txt": 1}}\n'},
        ["'out.text'", "out"],
    ),
    # unprepared data to audit-masks
    (["audit-masks", "{data}"], {"data.jsonl": CHATS}, ["prepare", "--ids COLUMN", "messages"]),
    (
        ["audit-masks", "--ids", "ids", "{data}"],
        {"data.jsonl": '{"input_ids": [1]}\n'},
        ["'ids'", "input_ids"],
    ),
    (["audit-masks", "{conv}"], {"conv": CONVERSATION}, ["Harmony text", "prepare"]),
    # JSON where Harmony is wanted, Harmony where JSON is wanted, Parquet where text is
    (["render", "{conv}"], {"conv": CONVERSATION}, ["Harmony text, not JSON", "parse"]),
    (
        ["diff-render", "{conv}", "--profiles", "openai-harmony-0.0.8,omp"],
        {"conv": COMPLETION},
        ["Harmony text"],
    ),
    (["render", "{data}"], {"data.jsonl": CHATS}, ["JSON Lines", "one JSON document"]),
    (["schema-grammar", "{data}"], {"data.jsonl": CHATS}, ["JSON Lines"]),
    (
        ["schema-grammar", "{tools}"],
        {"tools.json": (EXAMPLES / "tools.json").read_text("utf-8")},
        ["grammar --tools"],
    ),
    (["schema-grammar", "{req}"], {"req.json": REQUEST}, ["grammar --tools"]),
    (["parse", "--tokens", "{conv}"], {"conv": CONVERSATION}, ["drop --tokens"]),
    (["validate", "--tokens", "{comp}"], {"comp": COMPLETION}, ["drop --tokens"]),
    (["validate", "{pq}"], {"pq.parquet": "PAR1\udcff"}, ["--field COLUMN"]),
    # argparse's own mistakes: one line naming the help
    (["validate"], {}, ["required: FILE", "--help"]),
    (["prepare", "{data}"], {"data.jsonl": CHATS}, ["--output", "--help"]),
    (["grammar", "{tools}"], {"tools.json": "[]"}, ["--tools", "--help"]),
    (["diff-render", "{req}"], {"req.json": REQUEST}, ["--profiles", "--help"]),
    (["to-chat", "--no-such-flag", "x"], {}, ["--no-such-flag", "--help"]),
    (["schema-grammar", "x", "--target", "yaml"], {}, ["invalid choice", "--help"]),
    (["nonsense"], {}, ["invalid choice", "--help"]),
    # conformance --cases takes a folder
    (["conformance", "--cases", "{data}"], {"data.jsonl": CHATS}, ["not a directory", "--cases"]),
    (["conformance", "--cases", "no-such-folder"], {}, ["no such directory"]),
]


@pytest.mark.parametrize(("argv", "files", "named"), MISTAKES)
def test_each_usage_mistake_is_one_line_naming_the_fix(
    argv, files, named, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    paths = {}
    for name, content in files.items():
        (tmp_path / name).write_bytes(content.encode("utf-8", "surrogateescape"))
        paths[name.split(".")[0]] = name
    status, out, err = run_cli(capsys, *(a.format(**paths) for a in argv))
    assert status == 2, (status, out[:300], err)
    assert err.count("\n") == 1 and err.startswith("harmony-grammar"), err
    assert ": error: " in err and "usage:" not in err
    assert "internal error" not in err and "Traceback" not in err
    for word in named:
        assert word in err, (word, err)
    assert not (tmp_path / "out.parquet").exists()  # refused before any work


def test_a_mistake_on_stdin_is_named_too(monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(CONVERSATION.encode())))
    status, _, err = run_cli(capsys, "to-chat", "-")
    assert status == 2 and "reads a completion" in err and err.count("\n") == 1


_HARMONY_STARTS = st.sampled_from(["<|start|>", "<|channel|>", "<|message|>", "<|end|>", ""])


@given(start=_HARMONY_STARTS, rest=st.text(max_size=40))
def test_only_a_start_no_completion_can_have_is_refused(start, rest):
    """A completion is model output after <|start|>assistant: what it may start with is never
    refused, whatever follows (lenient: a leading <|start|>assistant is read too)."""
    from harmony_grammar.cli.errors import CliError
    from harmony_grammar.cli.input_kind import check_completion, sniff

    text = start + rest
    kind = sniff(text)
    try:
        check_completion("f", text, command="to-chat", lenient=True, fix="--lenient")
    except CliError as exc:
        assert kind.kind in {"empty", "conversation", "jsonl", "json", "parquet", "token-ids"}
        assert kind.kind != "conversation" or kind.role != "assistant", str(exc)
        assert "\n" not in str(exc)
    else:
        assert kind.kind not in {"empty", "jsonl", "parquet", "token-ids"}


@given(text=st.text(max_size=60))
def test_a_conversation_is_never_refused_by_the_harmony_readers(text):
    from harmony_grammar.cli.input_kind import check_harmony

    check_harmony("f", "<|start|>" + text, completion=False, lenient=False)
    check_harmony("f", " \n<|start|>user<|message|>" + text, completion=False, lenient=True)


# -- messages -------------------------------------------------------------------------------


def test_hints_in_cli_output_name_the_flag_not_the_keyword(tmp_path, capsys):
    path = tmp_path / "cut.harmony"
    path.write_text("<|start|>assistant<|channel|>final<|message|>cut short", encoding="utf-8")
    for argv in (["validate", str(path)], ["validate", "--format", "json", str(path)]):
        status, out, err = run_cli(capsys, *argv)
        assert status == 1 and "HG102" in out
        assert "--completion" in out and 'start="completion"' not in out + err


@pytest.mark.parametrize(
    "text",
    [
        (EXAMPLES / "completion_stripped.txt").read_text(encoding="utf-8"),
        "analysisWe need the weather.assistantfinalIt is sunny.",
        "analysisLet me think.assistantcommentary to=functions.f json{}",
    ],
)
def test_validate_hints_lenient_and_repair_when_control_tokens_look_stripped(
    text, tmp_path, capsys
):
    path = tmp_path / "out.txt"
    path.write_text(text, encoding="utf-8")
    for flags in ([], ["--completion"]):
        status, _, err = run_cli(capsys, "validate", *flags, str(path))
        assert status == 1
        (hint,) = err.splitlines()
        assert "--lenient" in hint and "harmony-grammar repair" in hint
    status, _, err = run_cli(capsys, "validate", "--lenient", "--completion", str(path))
    assert "hint" not in err  # read leniently: nothing to suggest


def test_no_stripped_hint_for_prose_or_for_valid_text(tmp_path, capsys):
    prose = tmp_path / "prose.txt"
    prose.write_text("The final analysis of the commentary is here.", encoding="utf-8")
    status, _, err = run_cli(capsys, "validate", "--completion", str(prose))
    assert "hint" not in err
    status, _, err = run_cli(capsys, "validate", str(EXAMPLES / "weather.harmony"))
    assert status == 0 and err == ""


_DOUBLED = re.compile(r"\b(\w+) \1\b")


@given(body=st.text(alphabet='{}[]":,0123456789abc xy', max_size=16))
def test_argument_diagnostics_say_each_word_once(body):
    from harmony_grammar import parse, validate

    tools = json.loads((EXAMPLES / "tools.json").read_text("utf-8"))
    text = (
        f"<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{body}<|call|>"
    )
    for diagnostics in (
        parse(text, start="completion", tools=tools).diagnostics,
        validate(text, start="completion", tools=tools).diagnostics,
    ):
        for diagnostic in diagnostics:
            assert not _DOUBLED.search(diagnostic.message), diagnostic.message


def test_a_broken_pipe_is_silent_and_exits_0(tmp_path):
    record = json.dumps({"text": "<|start|>user<|message|>x<|end|>stray"})
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_text((record + "\n") * 3000, encoding="utf-8")
    for argv in (["validate", "--jsonl", "text", "a.jsonl", "b.jsonl"], ["tokens", "a.jsonl"]):
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        process = subprocess.Popen(
            [sys.executable, "-m", "harmony_grammar", *argv],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()  # what `| head -1` does
        err = process.stderr.read()
        assert process.wait() == 0 and err == b"", (argv, err)


# -- item 5: serve checks its port first and says when it builds and when it is ready --------


def test_serve_on_a_taken_port_is_one_line_before_anything_is_built(monkeypatch, capsys):
    pytest.importorskip("uvicorn")
    import socket

    from harmony_grammar.gateway import server

    def never(*args, **kwargs):
        raise AssertionError("the backend was built before the port was checked")

    monkeypatch.setattr(server, "build_backend", never)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, out, err = run_cli(capsys, "serve", "--port", str(port))
    assert status == 2 and out == ""
    assert err == (
        f"harmony-grammar: error: 127.0.0.1:{port} is already in use: stop what listens "
        "there, or pick another --port\n"
    )


def test_serve_says_when_it_builds_and_when_it_is_ready(tmp_path):
    pytest.importorskip("uvicorn")
    import signal
    import threading
    import urllib.request

    process = subprocess.Popen(
        [sys.executable, "-m", "harmony_grammar", "serve", "--model", "prior", "--port", "0"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    # A guard, not a timing claim: a server that never says it is ready fails here.
    guard = threading.Timer(120, process.kill)
    guard.start()
    try:
        assert process.stderr is not None
        ours = []
        for line in process.stderr:
            if line.startswith("harmony-grammar serve: "):
                ours.append(line.rstrip("\n"))
            if "ready at" in line:
                break
        assert ours[0] == "harmony-grammar serve: building the embedded backend (model prior) ..."
        ready = re.fullmatch(
            r"harmony-grammar serve: ready at (http://127\.0\.0\.1:(\d+))/v1 "
            r"\(backend embedded, model prior\)",
            ours[-1],
        )
        assert ready is not None and len(ours) == 2, ours
        assert int(ready.group(2)) != 0  # the port it listens on, not the one asked for
        with urllib.request.urlopen(f"{ready.group(1)}/health", timeout=30) as answer:
            assert answer.status == 200
    finally:
        guard.cancel()
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    "argv",
    [
        ["tokens", "examples/completion.harmony"],
        ["grammar", "--tools", "examples/tools.json"],
        ["schema-grammar", "examples/weather_schema.json"],
        ["diff-render", "examples/chat_request.json", "--profiles", "openai-harmony-0.0.8,omp"],
        ["conformance", "--topic", "utf8"],
    ],
)
def test_slow_commands_say_what_they_do_on_a_terminal_only(argv, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    status, out, err = run_cli(capsys, *argv)
    assert status in (0, 1) and err == ""  # not a terminal: the output alone
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    status, again, _ = run_cli(capsys, *argv)
    shown = terminal.getvalue()
    assert again == out  # stdout is the same either way
    assert shown.startswith(f"harmony-grammar {argv[0]}: ") and shown.endswith(" ...\r\x1b[K")
    assert shown.count("\n") == 0
