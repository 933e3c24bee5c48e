"""Render time: a 50-message conversation with 20 tools, harmony-grammar vs openai-harmony.

Run ``python benchmarks/bench_render.py``; it prints the median time per render for each and
the ratio. Both sides render to token ids; openai-harmony's time includes its own
serialisation of the conversation (that is what a caller pays), not our conversion into it.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harmony_grammar.format.vocabulary import find_vocabulary, load_encoding
from harmony_grammar.rendering.conversation import (
    Conversation,
    ConversationItem,
    DeveloperContent,
    SystemContent,
    ToolSpec,
    assistant_message,
    tool_call_message,
    tool_result_message,
    user_message,
)
from harmony_grammar.rendering.interop import to_openai_harmony
from harmony_grammar.rendering.renderer import render


def _tool(i: int) -> ToolSpec:
    return ToolSpec(
        f"tool_{i}",
        f"Tool number {i}: looks things up.\nReturns JSON.",
        {
            "type": "object",
            "description": "Arguments",
            "properties": {
                "query": {"type": "string", "description": "What to look for", "examples": ["x"]},
                "limit": {"type": "integer", "default": 10},
                "mode": {"type": "string", "enum": ["fast", "full"], "default": "fast"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "filter": {
                    "type": "object",
                    "properties": {"since": {"type": "string"}, "strict": {"type": "boolean"}},
                },
                "target": {"oneOf": [{"type": "string"}, {"type": "number"}]},
            },
            "required": ["query"],
        },
    )


def build() -> Conversation:
    """System, developer with 20 tools, then 48 messages of user turns and tool loops."""
    items: list[ConversationItem] = [
        SystemContent(conversation_start_date="2025-06-28"),
        DeveloperContent("Answer briefly.", tuple(_tool(i) for i in range(20))),
    ]
    turn = 0
    while len(items) < 50:
        items += [
            user_message(f"Question {turn}: what does tool {turn % 20} say about item {turn}?"),
            assistant_message(
                f"The user asks about item {turn}. Call tool_{turn % 20}.", channel="analysis"
            ),
            tool_call_message(f"functions.tool_{turn % 20}", json.dumps({"query": f"item {turn}"})),
            tool_result_message(f"functions.tool_{turn % 20}", json.dumps({"result": [turn] * 8})),
            assistant_message(f"Item {turn} is fine, according to the tool. " * 3),
            user_message("Thanks."),
        ]
        turn += 1
    return Conversation.from_messages(items[:50])


def _median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm up (caches, lazy imports)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(repeat: int = 200) -> None:
    import openai_harmony as oh

    with tempfile.TemporaryDirectory() as vocab_dir:
        (Path(vocab_dir) / "o200k_base.tiktoken").write_bytes(find_vocabulary().data)
        os.environ["TIKTOKEN_ENCODINGS_BASE"] = vocab_dir
        peer = oh.load_harmony_encoding(oh.HarmonyEncodingName.HARMONY_GPT_OSS)
    encoding = load_encoding()
    conversation = build()
    theirs_conversation = to_openai_harmony(conversation)
    assert render(conversation, tokens=True, encoding=encoding) == peer.render_conversation(
        theirs_conversation
    ), "the renderers disagree"

    ours_ids = _median_seconds(lambda: render(conversation, tokens=True, encoding=encoding), repeat)
    ours_text = _median_seconds(lambda: render(conversation), repeat)
    theirs = _median_seconds(lambda: peer.render_conversation(theirs_conversation), repeat)
    n_ids = len(render(conversation, tokens=True, encoding=encoding))
    print(f"conversation: {len(conversation)} messages, 20 tools, {n_ids} tokens")
    print(f"harmony-grammar render(tokens=True): {ours_ids * 1e3:8.3f} ms")
    print(f"harmony-grammar render() -> str:     {ours_text * 1e3:8.3f} ms")
    print(f"openai-harmony render_conversation:  {theirs * 1e3:8.3f} ms")
    print(f"ratio ids (ours / openai-harmony):   {ours_ids / theirs:8.2f}x")
    print(f"ratio str (ours / openai-harmony):   {ours_text / theirs:8.2f}x")


if __name__ == "__main__":
    main()
