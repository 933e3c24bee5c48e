"""The ``vllm-0.34`` rendering profile against vLLM 0.34's own rendering, token by token.

The references (tests/fixtures/vllm_0_34_references.json) are vLLM 0.34's prompts for the
conversations of ``tests.support.profile_conversations.vllm_requests``, written by
scripts/vllm-0.34-references.py, which runs the Harmony rendering module of vLLM's wheel on
oss-harmony 0.0.11. They are committed, so this test needs neither vLLM nor the side venv.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from harmony_grammar.conformance.adapters import render_with_harmony_grammar
from harmony_grammar.format.model import Message, Role
from harmony_grammar.format.vocabulary import load_encoding
from harmony_grammar.rendering.conversation import Conversation, SystemContent, tool_call_message
from harmony_grammar.rendering.renderer import render
from tests.support.profile_conversations import vllm_requests

VLLM = "vllm-0.34"
REFERENCES = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "vllm_0_34_references.json").read_text(encoding="utf-8")
)
REQUESTS = vllm_requests(len(REFERENCES["tokens"]))
TEXTS = [load_encoding().decode(tokens) for tokens in REFERENCES["tokens"]]


def _render(request: dict[str, Any], profile: str = VLLM) -> dict[str, Any]:
    request = {**request, "profile": profile}
    request.pop("auto_drop_analysis", None)  # the profile's own rule, always
    return render_with_harmony_grammar(request)


def test_the_references_come_from_the_script_and_cover_every_request() -> None:
    assert REFERENCES["generator"] == "scripts/vllm-0.34-references.py"
    assert REFERENCES["source"].startswith("vllm 0.34.")
    assert len(REFERENCES["tokens"]) == len(REQUESTS) >= 100


def test_the_profile_is_token_exact_with_vllm() -> None:
    failures = []
    for index, (request, theirs) in enumerate(zip(REQUESTS, REFERENCES["tokens"], strict=True)):
        ours = _render(request)["tokens"]
        if ours != theirs:
            at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
            failures.append(f"#{index} at token {at}: ours {ours[at : at + 8]}, vLLM {theirs[at : at + 8]}")
    assert not failures, f"{len(failures)} of {len(REQUESTS)} differ; first: {failures[0]}"


def test_the_references_exercise_each_rule_and_oss_harmony_would_differ() -> None:
    """vLLM's three rules each occur in the references, counted on vLLM's own text, and the
    plain oss-harmony profile renders most of them differently (so the profile is needed)."""
    legacy = sum("<|start|>assistant to=functions." in text for text in TEXTS)
    text_first = sum(
        bool(re.search(r"<\|channel\|>commentary<\|message\|>[^<]*<\|end\|><\|start\|>assistant<\|channel\|>analysis", t))
        for t in TEXTS
    )
    thoughts = [
        (m["reasoning_content"], text)
        for request, text in zip(REQUESTS, TEXTS)
        for m in request["conversation"]["messages"]
        if "reasoning_content" in m
    ]
    dropped = sum(f"<|message|>{thought}<|end|>" not in text for thought, text in thoughts)
    kept = len(thoughts) - dropped
    assert min(legacy, text_first, dropped, kept) >= 10, (legacy, text_first, dropped, kept)
    differ = sum(_render(r, "oss-harmony-0.0.11")["tokens"] != t for r, t in zip(REQUESTS, REFERENCES["tokens"]))
    assert differ >= len(REQUESTS) // 2


def test_what_the_profile_writes_on_one_conversation() -> None:
    """The three rules on a conversation small enough to read (docs/rendering.md's column)."""
    conversation = Conversation(
        (
            SystemContent(conversation_start_date="2026-12-01"),
            Message(Role.USER, "hi"),
            Message(Role.ASSISTANT, "old thought", channel="analysis"),
            Message(Role.ASSISTANT, "Hello", channel="final"),
            Message(Role.USER, "weather?"),
            Message(Role.ASSISTANT, "new thought", channel="analysis"),
            Message(Role.ASSISTANT, "Checking.", channel="commentary"),
            tool_call_message("functions.get_weather", '{"city":"Paris"}'),
            Message(Role.TOOL, "sunny", name="functions.get_weather", recipient="assistant", channel="commentary"),
        )
    )
    text = render(conversation, profile=VLLM, next_turn="assistant")
    assert "old thought" not in text  # before the last final: dropped
    assert text.endswith(
        "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>"  # text first
        "<|start|>assistant<|channel|>analysis<|message|>new thought<|end|>"
        '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city":"Paris"}<|call|>'
        "<|start|>functions.get_weather<|channel|>commentary to=assistant<|message|>sunny<|end|>"
        "<|start|>assistant"
    )
