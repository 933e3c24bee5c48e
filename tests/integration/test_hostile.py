"""Hostile input (issue 14): nothing raises, hangs or aborts; memory stays bounded.

One section per class of failure the issue found. Each fails on the code before the change
(see NOTES-issue-14.md): Python's json decided deep or long arguments by exception, token ids
of the wrong type raised from the lexer, one bad record stopped a dataset run, and so on.
"""

from __future__ import annotations

import json
import os
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harmony_grammar import (
    Conversation,
    Message,
    RenderError,
    Role,
    StreamParser,
    parse,
    render,
    to_chat_completion,
    user_message,
    validate,
)
from harmony_grammar.cli.main import main
from harmony_grammar.data.pool import worker_count
from harmony_grammar.format.bounded_encode import EncodeLimitError, encode_ordinary_pieces
from harmony_grammar.format.diagnostics import MAX_DIAGNOSTICS
from harmony_grammar.rendering import ChatCompletionError
from harmony_grammar.tools.json_limits import (
    MAX_JSON_DEPTH,
    MAX_NUMBER_DIGITS,
    DepthTracker,
    JsonLimitError,
    json_limit,
    loads_bounded,
)

TOOLS = [{"name": "f", "parameters": {"type": "object"}}]
# A third of the profile's budget: each example parses, repairs and validates a long text.
SETTINGS = settings(max_examples=settings.default.max_examples // 3)


def completion_call(body: str) -> str:
    return f"<|channel|>commentary to=functions.f <|constrain|>json<|message|>{body}<|call|>"


def conversation_call(body: str) -> str:
    return "<|start|>assistant" + completion_call(body)


def codes(diagnostics) -> list[str]:
    return [d.code for d in diagnostics]


# -- call arguments Python's json cannot read -----------------------------------------------

deep_bodies = st.integers(MAX_JSON_DEPTH + 1, 5000).map(
    lambda n: ("HG182", '{"a": ' + "[" * n + "]" * n + "}")
)
long_numbers = st.integers(MAX_NUMBER_DIGITS + 1, 12000).map(
    lambda n: ("HG183", '{"a": ' + "7" * n + "}")
)
surrogates = st.integers(0xD800, 0xDFFF).map(lambda c: ("HG184", '{"a": "x' + chr(c) + '"}'))
hostile_arguments = st.one_of(deep_bodies, long_numbers, surrogates)


@SETTINGS
@given(hostile_arguments)
def test_arguments_beyond_the_limits_are_diagnostics_everywhere(case):
    code, body = case
    assert code in codes(validate(conversation_call(body)).diagnostics)
    assert code in codes(parse(conversation_call(body), tools=TOOLS).diagnostics)
    stream = StreamParser(start="conversation", tools=TOOLS)
    for i in range(0, len(conversation_call(body)), 997):
        stream.feed(conversation_call(body)[i : i + 997])
    stream.close()
    result = stream.result()
    assert result == parse(conversation_call(body), tools=TOOLS)
    with pytest.raises(ChatCompletionError, match=code):
        to_chat_completion(completion_call(body), tools=TOOLS, lenient=False)


def test_arguments_within_the_limits_are_read():
    depth = MAX_JSON_DEPTH - 1
    body = '{"a": ' + "[" * depth + "]" * depth + ', "n": ' + "9" * MAX_NUMBER_DIGITS + "}"
    assert validate(conversation_call(body)).ok
    assert to_chat_completion(completion_call(body), tools=TOOLS)["finish_reason"] == "tool_calls"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=30,
)


@SETTINGS
@given(json_values, st.integers(0, 400))
def test_loads_bounded_agrees_with_json_within_limits_and_refuses_beyond(value, wrap):
    document = "[" * wrap + json.dumps(value) + "]" * wrap
    if json_limit(document) is None:
        assert loads_bounded(document) == json.loads(document)
    else:
        with pytest.raises(JsonLimitError):
            loads_bounded(document)


json_pieces = st.lists(
    st.sampled_from(["[", "]", "{", "}", '"', "\\", '\\"', "a", ",", ":", "1", "[" * 60]),
    max_size=80,
).map("".join)


@SETTINGS
@given(json_pieces, st.integers(1, 7))
def test_depth_tracked_in_pieces_agrees_with_the_whole_document(document, chunk):
    tracker = DepthTracker()
    found = None
    for i in range(0, len(document), chunk):
        found = tracker.feed(document[i : i + chunk])
        if found is not None:
            break
    limit = json_limit(document)
    assert found == (limit.offset if limit is not None else None)


# -- token ids of the wrong type ----------------------------------------------------------

bad_ids = st.one_of(
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
)
ids_or_junk = st.lists(
    st.one_of(
        st.sampled_from([200006, 1428, 200008, 24912, 200007, 200005, 200003]),
        st.integers(-(2**70), 2**70),
        bad_ids,
    ),
    max_size=40,
)


@SETTINGS
@given(ids_or_junk, st.integers(1, 5))
def test_token_ids_of_any_type_never_raise(values, chunk):
    result = parse(values)
    not_ints = sum(type(v) is not int for v in values)
    assert codes(result.diagnostics).count("HG106") == not_ints
    stream = StreamParser(start="conversation")
    assert stream.result().messages == ()  # before any feed: no mode is locked in
    for i in range(0, len(values), chunk):
        stream.feed_tokens(values[i : i + chunk])
    stream.close()
    assert stream.result() == result


@pytest.mark.parametrize("source", [5, None, 1.5, {"a": 1}, b"<|start|>", iter([1, 2])])
def test_a_source_of_the_wrong_type_is_a_type_error(source):
    with pytest.raises(TypeError, match="parse"):
        parse(source)


def test_stream_kinds_of_feed_are_checked():
    stream = StreamParser()
    with pytest.raises(TypeError):
        stream.feed_tokens("200006")
    with pytest.raises(TypeError):
        stream.feed([200006])
    stream.result()
    stream.feed_tokens([200005, 1428, 200008, 24912, 200007])  # result() locked nothing
    assert stream.close() is not None


# -- bounded diagnostics ------------------------------------------------------------------


def test_diagnostics_are_capped_with_a_count_of_the_rest():
    text = "<|start|>user<|end|>" * (MAX_DIAGNOSTICS + 500)
    for diagnostics in (parse(text).diagnostics, validate(text).diagnostics):
        assert len(diagnostics) == MAX_DIAGNOSTICS + 1
        assert diagnostics[-1].code == "HG107"
        assert "500 more" in diagnostics[-1].message
    # The validator's own rules are capped too, and "ok" stays what it would have been.
    report = validate("<|start|>assistant<|message|>x<|end|>" * (MAX_DIAGNOSTICS + 10))
    assert len(report.diagnostics) == MAX_DIAGNOSTICS + 1 and not report.ok
    stream = StreamParser(start="conversation")
    stream.feed(text)
    stream.close()
    assert stream.result() == parse(text)


# -- tokens in bounded pieces -------------------------------------------------------------

alphabet = ["a", "B", " ", "  ", "\n", "\r\n", "/", "1", "²", "é", "'s", "\t", "!", "\0", "😀"]
texts = st.lists(st.sampled_from(alphabet), max_size=300).map("".join)


@given(texts, st.sampled_from([2, 3, 8, 32]))
def test_pieces_encode_to_the_same_ids_as_the_whole(encoding, text, piece):
    parts = list(encode_ordinary_pieces(encoding, text, piece))
    assert [i for part in parts for i in part] == encoding.encode_ordinary(text)


def test_one_huge_pretokenizer_match_is_refused(encoding, tmp_path, capsys):
    with pytest.raises(EncodeLimitError):
        list(encode_ordinary_pieces(encoding, "\0" * (3 << 20)))
    path = tmp_path / "nul"
    path.write_bytes(b"\0" * (3 << 20))
    assert main(["tokens", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1


def test_tokens_prints_the_ids_of_encoding_whole(encoding, tmp_path, capsys):
    text = ("word " * 30000 + "\n") * 3 + "<|start|>user<|message|>hi<|end|>"
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    assert main(["tokens", str(path)]) == 0
    ids = json.loads(capsys.readouterr().out)
    body = text.removesuffix("<|start|>user<|message|>hi<|end|>")
    assert ids[:-5] == encoding.encode_ordinary(body)


# -- validate --jsonl carries on ----------------------------------------------------------


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_record_that_cannot_be_handled_is_reported_and_the_run_goes_on(
    tmp_path, capsys, monkeypatch, jobs
):
    from harmony_grammar.validation import record

    real = record.validate

    def validate_or_fail(source, *args, **kwargs):
        if "BOOM" in source:
            raise RuntimeError("a bug")
        return real(source, *args, **kwargs)

    monkeypatch.setattr(record, "validate", validate_or_fail)
    good = "<|start|>user<|message|>hi<|end|>"
    lines = [
        json.dumps({"text": good}),
        '{"text": ' + "[" * 3000 + "]" * 3000 + "}",
        '{"text": ' + "1" * 6000 + "}",
        json.dumps({"text": "<|start|>user<|message|>BOOM<|end|>"}),
        json.dumps({"text": conversation_call('{"a": ' + "[" * 999 + "]" * 999 + "}")}),
        json.dumps({"text": good}),
    ]
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    status = main(["validate", "--jsonl", "text", "--jobs", jobs, str(path)])
    out, err = capsys.readouterr()
    assert status == 1 and err == ""
    assert f"{path}:2: HG290" in out and f"{path}:3: HG290" in out
    assert f"{path}:4: HG290" in out and "RuntimeError: a bug" in out
    assert f"{path}:5: HG182" in out
    assert "6 records checked: 2 valid, 4 with errors" in out


# -- the CLI answers in one line ----------------------------------------------------------


@pytest.mark.parametrize(
    "parameters, words",
    [
        (5, "not int"),
        ({"type": "bogus"}, "invalid at /type"),
        ({"$ref": "http://example.com/s.json"}, "refers outside itself"),
        ({"properties": {"a": {"$ref": "#/$defs/nope"}}}, "unresolvable"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "grammar"])
def test_bad_tool_schemas_are_one_line(tmp_path, capsys, parameters, words, command):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "weather", "parameters": parameters}]))
    call = tmp_path / "call.txt"
    call.write_text(conversation_call("{}"))
    argv = [command, "--tools", str(tools)]
    argv += [str(call)] if command == "validate" else ["--no-validate"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "'weather'" in err and words in err and "internal error" not in err


@pytest.mark.parametrize("ids", ["200006 " + "9" * 10000, "[" * 100000 + "]" * 100000, "[1.5]"])
def test_parse_tokens_of_hostile_ids_is_one_line(tmp_path, capsys, ids):
    path = tmp_path / "ids.txt"
    path.write_text(ids)
    assert main(["parse", "--tokens", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "internal error" not in err


def test_jobs_are_capped_at_cpus_and_inputs(tmp_path, capsys):
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert worker_count(99999999, 1) == 1
    assert worker_count(99999999) == cpus
    assert worker_count(0) == cpus
    path = tmp_path / "one.txt"
    path.write_text("<|start|>user<|message|>hi<|end|>")
    assert main(["validate", "--jobs", "99999999", str(path)]) == 0
    capsys.readouterr()


# -- every command reads /dev/null and FIFOs ----------------------------------------------

COMMANDS = [["parse"], ["validate"], ["tokens"], ["leaks"], ["to-chat"]]


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_reads_dev_null(capsys, command):
    status = main([*command, "/dev/null"])
    err = capsys.readouterr().err
    assert "no such file" not in err
    if command == ["to-chat"]:  # no completion to convert: a usage mistake (issue 35)
        assert status == 2 and "empty" in err
    else:
        assert status in (0, 1)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_reads_a_fifo(tmp_path, capsys, command):
    fifo = tmp_path / "in"
    os.mkfifo(fifo)
    text = "<|start|>user<|message|>hi<|end|>" if command != ["to-chat"] else "<|message|>x<|end|>"

    def feed() -> None:
        with open(fifo, "w", encoding="utf-8") as stream:
            stream.write(text)

    writer = threading.Thread(target=feed)
    writer.start()
    status = main([*command, str(fifo)])
    writer.join(timeout=10)
    out, err = capsys.readouterr()
    assert status in (0, 1), err
    assert "no such file" not in err and out


# -- render refuses what the parser cannot read back --------------------------------------

header_words = st.lists(
    st.sampled_from(["a", "b", ".", " ", "\n", "<|end|>", "<", "|", ">", "=", ":", "-", "\ud800"]),
    max_size=8,
).map("".join)


@SETTINGS
@given(header_words, st.sampled_from(["recipient", "channel", "name"]))
def test_render_refuses_or_round_trips_header_fields(word, field):
    fields = {"channel": "commentary", "recipient": "functions.f"}
    fields[field] = word
    message = Message(Role.ASSISTANT, "{}", **fields)
    conversation = Conversation.from_messages([user_message("hi"), message])
    try:
        text = render(conversation)
    except RenderError as exc:
        assert str(exc).startswith(f"messages[1].{field}: ")
        return
    for parsed in (parse(text), parse(render(conversation, tokens=True))):
        assert parsed.ok
        assert getattr(parsed.messages[1], field) == word


def test_render_error_names_the_path():
    for bad in ("functions.f g", "functions.f\n", "functions.<|end|>"):
        conversation = Conversation.from_messages(
            [user_message("hi"), Message(Role.ASSISTANT, "{}", channel="commentary", recipient=bad)]
        )
        with pytest.raises(RenderError, match=r"messages\[1\]\.recipient"):
            render(conversation)


# -- streaming equals batch on what the soak found ----------------------------------------


@SETTINGS
@given(st.integers(1, 60), st.sampled_from(["commentary", " json", " to=x"]))
def test_a_runaway_header_is_reported_alike_however_it_is_chunked(chunk, word):
    text = "<|start|>assistant<|channel|>" + word * 1000 + "<|message|>hi<|end|>"
    stream = StreamParser(start="conversation")
    for i in range(0, len(text), chunk):
        stream.feed(text[i : i + chunk])
    stream.close()
    assert "HG104" in codes(stream.result().diagnostics)
    assert stream.result() == parse(text)
