"""The classes of character loss the alphabet fuzzer found after round 4, each as a property.

Each class is read at its principle (docs/parser.md, "Lenient reading"), and each property
draws many inputs of the class, not just the example the fuzzer shrank to:

* an author is a role or a tool's name: JSON or punctuation after ``<|start|>`` is no author
  (``<|start|>{"q":"tides"}<|end|>`` lost ``{"q":``);
* ``:NAME`` names a role, right after it: after a tool's name, or after another field, a
  ``:`` is no separator (``<|start|>c:b`` read author ``b`` and lost ``c:``);
* a ``:`` with no name after it is no field (it was fed to the grammar and dropped);
* a stripped ``analysis:`` keeps its ``:`` in ``Message.unread``;
* a completion's glued ``assistant`` (``assistantfinal``) is its author's field;
* the same recipient or channel written twice is one field, and the same channel word
  written twice makes no empty message of its own (``final<|channel|>final``).

Every input is also checked by the ledger and by the independent field check.
"""

from __future__ import annotations

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
ROLES = st.sampled_from(["user", "assistant", "system", "developer"])
TOOLS = st.sampled_from(["functions.lookup", "browser.search", "python", "c", "x2"])
CHANNELS = st.sampled_from(["analysis", "commentary", "final"])
STARTS = st.sampled_from(["completion", "conversation"])
#: Text that is no author: JSON, punctuation, symbols (never a letter or digit first).
NOT_AUTHOR = st.sampled_from(['{"q"', '"', "{", "«", "$", "(", "[1", "🙂", "-"])
WORD = st.text(alphabet="abcxyz019_", min_size=1, max_size=6)
BODY = st.text(alphabet="abc xyz19.?{}\"'", max_size=12)
CLOSERS = st.sampled_from(["<|message|>x<|end|>", "<|end|>", "<|message|>", ""])


def _conserved(text: str, start: str) -> ParseResult:
    result = parse(text, start=start, lenient=True)
    assert conservation_problems(text, result) == [], text
    check = field_check(text, result)
    assert check.ok, (text, check.problems(), [m.to_dict() for m in result.messages])
    return result


@PROPERTY
@given(lead=NOT_AUTHOR, rest=BODY, closer=CLOSERS, start=STARTS)
def test_json_or_punctuation_is_no_author(lead: str, rest: str, closer: str, start: str) -> None:
    text = f"<|start|>{lead}{rest}{closer}"
    result = _conserved(text, start)
    for message in result.messages:
        assert not message.author.startswith(lead), (text, message.author)


@PROPERTY
@given(role=ROLES, name=WORD, closer=CLOSERS, start=STARTS)
def test_name_after_a_role(role: str, name: str, closer: str, start: str) -> None:
    text = f"<|start|>{role}:{name}{closer}"
    result = _conserved(text, start)
    if start == "conversation" and closer.startswith("<|message|>"):
        assert result.messages[0].author == f"{role}:{name}", text


@PROPERTY
@given(tool=TOOLS, name=WORD, closer=CLOSERS)
def test_no_name_after_a_tool(tool: str, name: str, closer: str) -> None:
    text = f"<|start|>{tool}:{name}{closer}"
    result = _conserved(text, "conversation")
    first = result.messages[0]
    assert first.author == tool, text  # the tool's name, never overwritten by ``:NAME``
    assert f":{name}" in first.unread + first.content, text  # ``:_`` has no letter: unread


@PROPERTY
@given(
    author=st.one_of(ROLES, TOOLS),
    between=st.sampled_from(["<|channel|>", "<|constrain|>", " to=functions.f", ""]),
    closer=CLOSERS,
    start=STARTS,
)
def test_colon_with_no_name_or_after_another_field(
    author: str, between: str, closer: str, start: str
) -> None:
    # ``:`` at the end, or after a field other than the author: never a name separator.
    _conserved(f"<|start|>{author}{between}:{closer}", start)
    _conserved(f"<|start|>{author}{between}:b{closer}", start)


@PROPERTY
@given(channel=CHANNELS, sep=st.sampled_from([":", ": ", ":\t"]), body=WORD)
def test_stripped_channel_keeps_its_colon(channel: str, sep: str, body: str) -> None:
    text = f"{channel}{sep}{body}.assistantfinal done"
    result = _conserved(text, "completion")
    assert [m.channel for m in result.messages] == [channel, "final"], text
    assert result.messages[0].unread == ":", text


@PROPERTY
@given(channel=CHANNELS, body=WORD)
def test_glued_assistant_in_a_completion_is_the_author(channel: str, body: str) -> None:
    result = _conserved(f"assistant{channel} {body}", "completion")
    assert [m.channel for m in result.messages] == [channel], result.messages


@PROPERTY
@given(
    channel=CHANNELS,
    before=st.sampled_from(["", "<|channel|>analysis<|message|>x<|end|>"]),
    body=WORD,
)
def test_same_channel_twice_is_one_field(channel: str, before: str, body: str) -> None:
    for spelled in (f"{channel}<|channel|>{channel}", f"<|channel|>{channel}<|channel|>{channel}"):
        text = f"{before}{spelled}<|message|>{body}"
        result = _conserved(text, "completion")
        assert [(m.channel, m.content) for m in result.messages][-1] == (channel, body), text
        assert len(result.messages) == (2 if before else 1), text


@PROPERTY
@given(
    name=st.sampled_from(["functions.lookup", "functions.f_2", "browser.search"]),
    gap=st.sampled_from([" ", "<|channel|>commentary ", "<|constrain|>json "]),
    start=STARTS,
)
def test_same_recipient_twice_is_one_field(name: str, gap: str, start: str) -> None:
    header = "" if start == "completion" else "<|start|>assistant"
    text = f"{header} to={name}{gap}to={name}<|message|>{{}}<|call|>"
    result = _conserved(text, start)
    calls = [m for m in result.messages if m.recipient]
    assert [m.recipient for m in calls] == [name], text
    assert calls[0].content == "{}", text
