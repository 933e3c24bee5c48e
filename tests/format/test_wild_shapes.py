"""The shapes of real output that issue 39 names, each generated with varied words.

Each property draws the shape with other words than the issue's examples and checks what
docs/parser.md ("Restarted headers, junk, Harmony words, spaced names") says it reads as:

* a header written over before any content (a second ``<|channel|>``, a looping model's
  repeats, or a new header right after ``<|message|>``, the body still empty) is one
  message: the later channel stands, the earlier word is kept in ``Message.superseded``
  (HG157 within one header, HG185 across ``<|start|>`` or an empty body), never an empty
  message of its own;
* punctuation glued to a channel word in a header that lost ``<|message|>`` is ``unread``
  and the content starts after it, as is a number with closing punctuation right after the
  channel word (``commentary 7) We should…``); prose in such a ``commentary`` header with
  no recipient is reasoning (channel ``analysis``, ``commentary`` kept in ``superseded``);
* Harmony's words are header fields wherever a header can hold them: a completion's role
  before its first header is its author, a stray ``to=assistant`` after a tool's name is a
  superseded word (never the call's arguments), and a bare ``json``/``code`` after it is the
  content type;
* a stripped call on a line of its own after prose (``Checking.`` newline
  ``assistantcommentary to=functions.xjson{…}``) is a call, its glued ``json`` the type;
  a content type gpt-oss writes after ``<|constrain|>`` (``json``, ``response``) glued to
  the tool's name or spaced from it is the content type, never part of the name;
* a declared tool name with spaces is the recipient, the longest declared name winning.

Every input is also checked by the ledger and by the independent field check.
"""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harmony_grammar import parse
from harmony_grammar.format.accounting import conservation_problems
from harmony_grammar.format.model import ParseResult

from ..support.field_check import field_check

PROPERTY = settings(
    max_examples=int(os.environ.get("HG_FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
CHANNELS = ("analysis", "commentary", "final")
CHANNEL = st.sampled_from(CHANNELS)
#: Words of prose: none is a Harmony word, a content type or a recipient.
_WORDS = ("the", "user", "wants", "weather", "Paris", "so", "we", "check", "it", "now", "42")
SENTENCE = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6).map(
    lambda words: " ".join(words).capitalize() + "."
)
NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=2, max_size=10).filter(
    lambda name: not name.endswith(("json", "code", "response", "_")) and not name.startswith("_")
)
ARGS = st.dictionaries(st.sampled_from(["q", "id", "city"]), st.integers(0, 99), max_size=2).map(
    json.dumps
)
PUNCTUATION = st.text(alphabet="?!.,;", min_size=1, max_size=3)


def _conserved(text: str, start: str = "completion", **options: object) -> ParseResult:
    result = parse(text, start=start, lenient=True, **options)  # type: ignore[arg-type]
    assert conservation_problems(text, result) == [], text
    check = field_check(text, result)
    assert check.ok, (text, check.problems(), [m.to_dict() for m in result.messages])
    return result


def _codes(result: ParseResult) -> list[str]:
    return [d.code for d in result.diagnostics]


# ------------------------------------------------------------------ 1. restarted headers
@PROPERTY
@given(first=CHANNEL, second=CHANNEL, stray=st.booleans(), body=SENTENCE)
def test_a_header_written_over_is_one_message(
    first: str, second: str, stray: bool, body: str
) -> None:
    junk = " to=assistant" if stray else ""
    text = f"<|channel|>{first}{junk}<|channel|>{second}<|message|>{body}<|end|>"
    result = _conserved(text)
    (message,) = result.messages
    assert (message.channel, message.content, message.recipient) == (second, body, None)
    superseded = message.superseded.split()
    assert (first in superseded) == (first != second)
    assert ("assistant" in superseded) == stray
    assert "HG157" in _codes(result)


@PROPERTY
@given(
    role=st.sampled_from(["assistant", "user", "system"]),
    names=st.lists(NAME, min_size=1, max_size=3),
    lead=st.sampled_from(["", "<|message|>"]),
    body=SENTENCE,
)
def test_a_named_header_begun_again_keeps_its_name_with_its_colon(
    role: str, names: list[str], lead: str, body: str
) -> None:
    """``<|start|>assistant:bob<|start|>…``: the header written over is kept as it was
    written, ``assistant:bob``, the ':' included (found by bench_lossless's fuzz kind)."""
    headers = "".join(f"<|start|>{role}:{name}" for name in names)
    text = f"{lead}{headers}<|start|>{role}<|message|>{body}<|end|>"
    result = parse(text, lenient=True)
    assert conservation_problems(text, result) == [], text
    message = result.messages[-1]
    assert message.content == body
    for name in names:
        assert f"{role}:{name}" in message.superseded.split(" "), (text, message.superseded)
    assert "HG185" in _codes(result)


@PROPERTY
@given(channel=CHANNEL, times=st.integers(2, 4), body=SENTENCE, after_call=st.booleans())
def test_a_looping_header_is_one_message(
    channel: str, times: int, body: str, after_call: bool
) -> None:
    lead = '<|channel|>commentary to=functions.f<|message|>{"a":1}<|call|>' if after_call else ""
    text = lead + f"<|channel|>{channel}" * times + f"<|message|>{body}<|end|>"
    result = _conserved(text)
    assert [(m.channel, m.content) for m in result.messages][-1] == (channel, body)
    assert len(result.messages) == 1 + after_call


@PROPERTY
@given(first=CHANNEL, second=CHANNEL, body=SENTENCE)
def test_a_bare_channel_word_after_a_call_then_a_header_is_one_message(
    first: str, second: str, body: str
) -> None:
    text = f"<|channel|>commentary to=functions.f<|message|>{{}}<|call|>{first}<|channel|>{second}<|message|>{body}"
    result = _conserved(text)
    assert [(m.channel, m.content) for m in result.messages] == [
        ("commentary", "{}"),
        (second, body),
    ]


@PROPERTY
@given(
    first=st.sampled_from(["", "<|channel|>analysis", "<|channel|>commentary", "<|channel|>final"]),
    again=st.sampled_from(["<|channel|>", "<|start|>assistant<|channel|>"]),
    second=CHANNEL,
    start=st.sampled_from(["completion", "conversation"]),
    body=SENTENCE,
)
def test_a_header_begun_again_after_an_empty_body_is_one_message(
    first: str, again: str, second: str, start: str, body: str
) -> None:
    """``<|start|>assistant<|message|><|channel|>analysis<|message|>…``: ``<|message|>`` with
    nothing after it, then a new header, is one message; the earlier channel is kept in
    ``superseded`` (HG185), never an empty message of its own."""
    text = f"<|start|>assistant{first}<|message|>{again}{second}<|message|>{body}<|end|>"
    result = _conserved(text, start)
    (message,) = result.messages
    assert (message.author, message.channel, message.content) == ("assistant", second, body)
    earlier = first.removeprefix("<|channel|>")
    assert (earlier in message.superseded.split()) == bool(earlier)
    assert "HG185" in _codes(result) and "HG159" not in _codes(result)


@PROPERTY
@given(name=NAME, args=ARGS, body=SENTENCE)
def test_an_empty_call_body_then_a_header_keeps_the_call(name: str, args: str, body: str) -> None:
    text = f"<|channel|>commentary to=functions.{name}<|message|><|channel|>final<|message|>{body}"
    result = _conserved(text)
    assert [(m.recipient, m.content) for m in result.messages] == [
        (f"functions.{name}", ""),
        (None, body),
    ]


# ------------------------------------------------------------------ 2. junk glued to a channel word
@PROPERTY
@given(channel=CHANNEL, junk=PUNCTUATION, space=st.sampled_from(["", " "]), body=SENTENCE)
def test_punctuation_glued_to_a_channel_word_is_unread(
    channel: str, junk: str, space: str, body: str
) -> None:
    text = f"<|channel|>{channel}{junk}{space}{body}<|end|>"
    result = _conserved(text)
    (message,) = result.messages
    assert message.unread == junk and message.content == body
    reasoning = channel == "commentary"
    assert message.channel == ("analysis" if reasoning else channel)
    assert message.superseded == ("commentary" if reasoning else "")


@PROPERTY
@given(channel=CHANNEL, junk=st.text(alphabet="?!", min_size=1, max_size=2), body=SENTENCE)
def test_a_channel_word_repeated_with_junk_is_one_field(channel: str, junk: str, body: str) -> None:
    text = f"<|channel|>{channel}{junk}{channel}{junk}{body}<|end|>"
    result = _conserved(text)
    (message,) = result.messages
    assert (message.unread, message.content) == (junk + junk, body)
    assert message.channel == ("analysis" if channel == "commentary" else channel)


@PROPERTY
@given(
    channel=CHANNEL,
    number=st.integers(0, 999).map(str),
    junk=st.text(alphabet="?!.,;:)]", min_size=1, max_size=2),
    space=st.sampled_from([" ", "  ", "\n"]),
    body=SENTENCE,
    closer=st.sampled_from(["<|end|>", "", "<|start|>assistant<|channel|>final<|message|>Ok."]),
    glued=st.sampled_from(["", "??", "!", "..."]),
)
def test_a_number_with_punctuation_after_a_broken_headers_channel_is_unread(
    channel: str, number: str, junk: str, space: str, body: str, closer: str, glued: str
) -> None:
    """``<|channel|>commentary 7) We should…``, ``analysis?? 2) The…``: the number and its
    punctuation are unread (HG156) and the content is the prose after them."""
    text = f"<|channel|>{channel}{glued} {number}{junk}{space}{body}{closer}"
    result = _conserved(text)
    message = result.messages[0]
    assert (message.unread, message.content) == (glued + number + junk, body)
    assert message.channel == ("analysis" if channel == "commentary" else channel)
    assert "HG156" in _codes(result)


@PROPERTY
@given(channel=CHANNEL, number=st.integers(0, 999).map(str), body=SENTENCE)
def test_a_number_without_punctuation_or_after_message_is_content(
    channel: str, number: str, body: str
) -> None:
    """A bare number after a broken header's channel word, and any number in a body, is
    text: only a number with closing punctuation right after the channel word is junk."""
    broken = parse(f"<|channel|>{channel} {number} {body}<|end|>", start="completion", lenient=True)
    assert broken.messages[0].content == f"{number} {body}"
    kept = f"<|channel|>{channel}<|message|>{number}) {body}<|end|>"
    assert _conserved(kept).messages[0].content == f"{number}) {body}"


@PROPERTY
@given(body=SENTENCE, name=NAME)
def test_a_broken_commentary_header_with_a_recipient_stays_a_call(body: str, name: str) -> None:
    text = f"<|channel|>commentary to=functions.{name} {{}}<|call|>"
    (message,) = _conserved(text).messages
    assert (message.channel, message.recipient) == ("commentary", f"functions.{name}")


# ------------------------------------------------------------------ 3. Harmony words as fields
@PROPERTY
@given(channel=CHANNEL, space=st.sampled_from(["", " ", "\n"]), body=SENTENCE)
def test_a_completions_role_before_its_first_header_is_its_author(
    channel: str, space: str, body: str
) -> None:
    text = f"assistant{space}<|channel|>{channel}<|message|>{body}<|end|>"
    result = _conserved(text)
    assert [(m.author, m.channel, m.content) for m in result.messages] == [
        ("assistant", channel, body)
    ]


@PROPERTY
@given(name=NAME, ctype=st.sampled_from(["json", "code"]), closed=st.booleans())
def test_a_stray_to_assistant_after_a_tool_name_is_no_content(
    name: str, ctype: str, closed: bool
) -> None:
    end = '<|message|>{"a":1}<|call|>' if closed else ""
    text = f"<|channel|>commentary to=functions.{name} to=assistant {ctype}{end}"
    (message,) = _conserved(text).messages
    assert (message.recipient, message.content_type) == (f"functions.{name}", ctype)
    assert message.superseded == "assistant"
    assert message.content == ('{"a":1}' if closed else "")


# ------------------------------------------------------------------ 4. a stripped call after prose
@PROPERTY
@given(
    prose=SENTENCE,
    gap=st.sampled_from(["\n", "\n\n", "\r\n"]),
    name=NAME,
    ctype=st.sampled_from(["json", " json", ""]),
    args=ARGS,
)
def test_a_stripped_call_on_its_own_line_after_prose_is_a_call(
    prose: str, gap: str, name: str, ctype: str, args: str
) -> None:
    text = f"{prose}{gap}assistantcommentary to=functions.{name}{ctype}{args}"
    result = _conserved(text)
    calls = [m for m in result.messages if m.is_tool_call]
    assert [(m.recipient, m.content) for m in calls] == [(f"functions.{name}", args)]
    assert calls[0].content_type == (ctype.strip() or None)
    assert [m.content for m in result.messages if not m.is_tool_call] == [prose]
    assert "HG162" not in _codes(result)


@PROPERTY
@given(
    name=NAME,
    ctype=st.sampled_from(["json", "response"]),
    gap=st.sampled_from(["", " "]),
    args=ARGS,
    form=st.sampled_from(["stripped", "channel", "after-prose"]),
    declared=st.booleans(),
)
def test_a_content_type_glued_or_spaced_after_a_recipient_is_the_type(
    name: str, ctype: str, gap: str, args: str, form: str, declared: bool
) -> None:
    """``to=functions.message_agentresponse{…}``: ``<|constrain|>`` stripped between the
    name and gpt-oss's content type; the word is the type, with or without ``tools=``."""
    header = {
        "stripped": "assistantcommentary",
        "channel": "<|channel|>commentary",
        "after-prose": "Checking.\n\nassistantcommentary",
    }[form]
    text = f"{header} to=functions.{name}{gap}{ctype}{args}<|call|>"
    tools = [{"type": "function", "function": {"name": name}}] if declared else None
    result = _conserved(text, tools=tools)
    calls = [m for m in result.messages if m.is_tool_call]
    assert [(m.recipient, m.content_type, m.content) for m in calls] == [
        (f"functions.{name}", ctype, args)
    ]
    assert "HG162" not in _codes(result)


@PROPERTY
@given(prose=SENTENCE, name=NAME)
def test_a_marker_after_a_space_mid_line_stays_prose(prose: str, name: str) -> None:
    text = f"{prose} assistantfinal is the word {name}."
    (message,) = _conserved(text).messages
    assert message.content == text


# ------------------------------------------------------------------ 5. declared names with spaces
SPACED = st.lists(NAME, min_size=2, max_size=3).map(lambda words: " ".join(words).title())


@PROPERTY
@given(name=SPACED, args=ARGS, constrain=st.booleans(), spaced=st.booleans())
def test_a_declared_name_with_spaces_is_the_recipient(
    name: str, args: str, constrain: bool, spaced: bool
) -> None:
    shorter = name.split(" ")[0]
    tools = [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for n in (shorter, name)
    ]
    ctype = ("<|constrain|>json" if constrain else "json") if spaced else ""
    gap = " " if spaced else ""
    text = f"<|channel|>commentary to=functions.{name}{gap}{ctype}<|message|>{args}<|call|>"
    (message,) = _conserved(text, tools=tools).messages
    assert message.recipient == f"functions.{name}"  # the longest declared name wins
    assert message.content == args
    assert message.content_type == (ctype or None)
    undeclared = parse(text, start="completion", lenient=True)
    assert undeclared.messages[0].recipient != f"functions.{name}"


@PROPERTY
@given(
    first=st.sampled_from(["", "<|channel|>analysis", "<|channel|>commentary", " "]),
    second=CHANNEL,
    times=st.integers(1, 3),
    start=st.sampled_from(["completion", "conversation"]),
    body=SENTENCE,
)
def test_a_header_begun_again_with_start_is_one_message(
    first: str, second: str, times: int, start: str, body: str
) -> None:
    """``<|start|>assistant<|start|>assistant<|channel|>final<|message|>…``: a header with no
    recipient begun again before any content is one message (HG185)."""
    restarted = f"<|start|>assistant{first}" * times
    text = f"{restarted}<|start|>assistant<|channel|>{second}<|message|>{body}<|end|>"
    result = _conserved(text, start)
    assert [(m.channel, m.content) for m in result.messages] == [(second, body)]
    assert "HG185" in _codes(result) and "HG150" not in _codes(result)


@PROPERTY
@given(name=NAME, body=SENTENCE)
def test_a_call_header_begun_again_keeps_the_call(name: str, body: str) -> None:
    text = (
        f"<|start|>assistant to=functions.{name}<|start|>assistant<|channel|>final<|message|>{body}"
    )
    result = _conserved(text, "conversation")
    assert [m.recipient for m in result.messages] == [f"functions.{name}", None]
