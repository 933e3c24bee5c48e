"""Other engines' gpt-oss test strings, read by our lenient parser (issue 30: unseen inputs).

Each string is copied from a public test suite of another serving stack's Harmony parser
(vLLM, llama.cpp, SGLang), with its source. Each is read as text and as token ids; both
readings must pass the ledger (``conservation_problems``) and the independent field check
(``tests/support/field_check.py``), and give the reading written here: the other engine's
intended one, in our terms (a reasoning section is the ``analysis`` channel; prose before a
header is a message of its own, on the channel round 3's rules give it). Where our reading
and the intended one part, the case is an ``xfail(lenient=False)`` naming why.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from harmony_grammar import parse
from harmony_grammar.format.accounting import conservation_problems
from harmony_grammar.format.harmony_ids import encode_harmony

from ..support.field_check import field_check

VLLM_REASONING = (
    "https://github.com/vllm-project/vllm/blob/main/tests/reasoning/test_gptoss_reasoning_parser.py"
)
LLAMA_CPP = "https://github.com/ggml-org/llama.cpp/blob/master/tests/test-chat.cpp"
SGLANG_HARMONY = "https://github.com/sgl-project/sglang/blob/main/test/srt/test_harmony_parser.py"
SGLANG_DETECTOR = "https://github.com/sgl-project/sglang (GptOssDetector unit tests)"

#: A message as ``(author, channel, recipient, content type, content)``.
Read = tuple[str, str | None, str | None, str | None, str]
A = "assistant"
THINKING = "<|channel|>analysis<|message|>I'm\nthinking<|end|>"
REASONING = "<|end|><|start|>assistant<|channel|>analysis<|message|>This is reasoning"


class Case(NamedTuple):
    name: str
    source: str
    text: str
    start: str
    want: list[Read]
    #: False for stripped text: its token ids are ordinary text, read as content unless the
    #: caller opts into ``stripped_dialect`` (docs/parser.md), so only the text reads ``want``.
    same_in_ids: bool = True


CASES = [
    Case(
        "vllm-stray-end-before-reasoning",
        VLLM_REASONING,
        REASONING + "<|end|><|start|>assistant<|channel|>final<|message|>This is the rest",
        "completion",
        # The prompt's own <|end|> left at the start: an empty message ended by it.
        [(A, None, None, None, ""), (A, "analysis", None, None, "This is reasoning"),
         (A, "final", None, None, "This is the rest")],
    ),
    Case(
        "vllm-constrain-spaced-upper-case",
        VLLM_REASONING,
        REASONING + "<|end|><|start|>assistant<|channel|>final<|constrain|> JSON <|message|>This is the rest",
        "completion",
        [(A, None, None, None, ""), (A, "analysis", None, None, "This is reasoning"),
         (A, "final", None, "<|constrain|>JSON", "This is the rest")],
    ),
    Case(
        "vllm-constrain-custom-type",
        VLLM_REASONING,
        REASONING + "<|end|><|start|>assistant<|channel|>final<|constrain|>ReplyAction <|message|>This is the rest",
        "completion",
        [(A, None, None, None, ""), (A, "analysis", None, None, "This is reasoning"),
         (A, "final", None, "<|constrain|>ReplyAction", "This is the rest")],
    ),
    Case(
        "vllm-channel-without-start-after-user",
        VLLM_REASONING,
        "<|start|>user<|message|>This is a user message<|end|><|channel|>final",
        "conversation",
        [("user", None, None, None, "This is a user message"), (A, "final", None, None, "")],
    ),
    Case(
        "llama-cpp-call-on-analysis-no-stop",
        LLAMA_CPP,
        THINKING + "<|start|>assistant<|channel|>analysis to=functions.special_function"
        ' <|constrain|>json<|message|>{"arg1": 1}',
        "completion",
        [(A, "analysis", None, None, "I'm\nthinking"),
         (A, "analysis", "functions.special_function", "<|constrain|>json", '{"arg1": 1}')],
    ),
    Case(
        "llama-cpp-recipient-first-spaced",
        LLAMA_CPP,
        ' to=functions.special_function<|channel|>commentary <|constrain|>json<|message|>{"arg1": 1}',
        "completion",
        [(A, "commentary", "functions.special_function", "<|constrain|>json", '{"arg1": 1}')],
    ),
    Case(
        "llama-cpp-role-recipient-on-analysis",
        LLAMA_CPP,
        THINKING + "<|start|>assistant to=functions.special_function<|channel|>analysis"
        ' <|constrain|>json<|message|>{"arg1": 1}',
        "completion",
        [(A, "analysis", None, None, "I'm\nthinking"),
         (A, "analysis", "functions.special_function", "<|constrain|>json", '{"arg1": 1}')],
    ),
    Case(
        "llama-cpp-cut-call-no-content-type",
        LLAMA_CPP,
        THINKING + '<|start|>assistant<|channel|>commentary to=functions.special_function<|message|>{"arg1',
        "completion",
        [(A, "analysis", None, None, "I'm\nthinking"),
         (A, "commentary", "functions.special_function", None, '{"arg1')],
    ),
    Case(
        "sglang-prose-space-before-start",
        SGLANG_DETECTOR,
        "I'll look that up. <|start|>assistant<|channel|>commentary to=functions.get_weather"
        '<|constrain|>json<|message|>{"city":"Beijing", "unit":"celsius"}<|call|>',
        "completion",
        [(A, "analysis", None, None, "I'll look that up."),
         (A, "commentary", "functions.get_weather", "<|constrain|>json",
          '{"city":"Beijing", "unit":"celsius"}')],
    ),
    Case(
        "sglang-text-between-and-after-messages",
        SGLANG_HARMONY,
        "Some text <|channel|>analysis<|message|>reasoning<|end|> more text "
        "<|start|>assistant<|channel|>final<|message|>answer<|return|> trailing text",
        "completion",
        [(A, "analysis", None, None, "Some text"), (A, "analysis", None, None, "reasoning"),
         (A, "analysis", None, None, "more text"), (A, "final", None, None, "answer"),
         (A, "final", None, None, "trailing text")],
    ),
    Case(
        "sglang-unknown-token-spelling",
        SGLANG_HARMONY,
        "text <|weird|> more <|start|>",
        "completion",
        [(A, "analysis", None, None, "text <|weird|> more"), (A, None, None, None, "")],
    ),
    Case(
        "sglang-builtin-call-on-analysis",
        SGLANG_HARMONY,
        '<|channel|>analysis to=browser.search<|message|>{"query": "SGLang"}<|call|>',
        "completion",
        [(A, "analysis", "browser.search", None, '{"query": "SGLang"}')],
    ),
    Case(
        "sglang-stripped-glued",
        SGLANG_HARMONY,
        "analysisThe user typed random strings. We should respond politely.assistantfinal"
        "It looks like you're testing. How can I help?",
        "completion",
        [(A, "analysis", None, None, "The user typed random strings. We should respond politely."),
         (A, "final", None, None, "It looks like you're testing. How can I help?")],
        same_in_ids=False,
    ),
]  # fmt: skip


def _read(text: str, start: str, *, same_in_ids: bool = True) -> list[Read]:
    readings = []
    for source in (text, encode_harmony(text)):
        result = parse(source, start=start, lenient=True)
        assert conservation_problems(source, result) == [], source
        check = field_check(source, result)
        assert check.ok, (source, check.problems())
        readings.append(
            [(m.author, m.channel, m.recipient, m.content_type, m.content) for m in result.messages]
        )
    assert readings[0] == readings[1] or not same_in_ids, text
    return readings[0]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_other_engines_strings_read_as_intended(case: Case) -> None:
    assert _read(case.text, case.start, same_in_ids=case.same_in_ids) == case.want


@pytest.mark.parametrize(
    "text",
    [
        "analysis I need to think about this. assistantfinal The answer is 42.",
        "commentary User-visible preamble. assistantfinal The answer is 42.",
    ],
)
def test_spaced_stripped_headers_split_into_their_messages(text: str) -> None:  # SGLANG_HARMONY
    read = _read(text, "completion", same_in_ids=False)
    got = [(channel, content.strip()) for _, channel, _, _, content in read]
    assert got[-1] == ("final", "The answer is 42.")
    assert len(got) == 2 and got[0][0] in ("analysis", "commentary")


@pytest.mark.parametrize(
    "text",
    [
        "<|channel|>analysis to=assistant<|message|>x<|end|>",
        THINKING.replace("analysis", "commentary to=assistant<|channel|>analysis", 1)
        + "<|start|>assistant<|channel|>final<|message|>Hello, world!\nWhat's up?",  # LLAMA_CPP
    ],
)
def test_a_stray_recipient_word_stays_in_a_field(text: str) -> None:
    """HG167's ``to=assistant`` is no recipient, and its word is kept: in
    ``Message.superseded``, whose slice the ledger names (round 5 dropped it)."""
    result = parse(text, start="completion", lenient=True)
    message = result.messages[0]
    assert message.recipient is None and "assistant" in message.superseded.split()
    assert conservation_problems(text, result) == []
    assert field_check(text, result).ok
    for name, span in result.accounting.fields[0]:
        if span is not None and name == "superseded":
            assert text[span.start : span.end] in message.superseded.split()
