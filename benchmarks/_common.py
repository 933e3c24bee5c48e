"""Shared set-up for the benchmarks: workloads and openai-harmony loaded offline."""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.vocabulary import find_vocabulary


def openai_harmony_encoding() -> Any:
    """openai-harmony's HARMONY_GPT_OSS encoding, given the vocabulary offline."""
    vocab_dir = Path(tempfile.mkdtemp(prefix="hg-vocab-"))
    (vocab_dir / "o200k_base.tiktoken").write_bytes(find_vocabulary(allow_download=False).data)
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(vocab_dir)
    import openai_harmony

    return openai_harmony.load_harmony_encoding(openai_harmony.HarmonyEncodingName.HARMONY_GPT_OSS)


def long_analysis_and_call() -> str:
    """A completion: a long chain of thought, then a tool call (after <|start|>assistant)."""
    thought = "The user wants the weather in Paris. I should call get_weather with the city. " * 40
    return (
        f"<|channel|>analysis<|message|>{thought}<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"city": "Paris", "unit": "celsius"}<|call|>'
    )


def many_short_messages(count: int = 200) -> str:
    """A conversation of short user/assistant exchanges."""
    return "".join(
        f"<|start|>user<|message|>Question {i}?<|end|>"
        f"<|start|>assistant<|channel|>final<|message|>Answer {i}.<|end|>"
        for i in range(count // 2)
    )


def ids_of(text: str) -> list[int]:
    """Token ids with control tokens as special ids."""
    return encode_harmony(text)


def best_of(func: Callable[[], object], *, repeat: int = 7, number: int = 0) -> float:
    """Median seconds per call over ``repeat`` rounds of ``number`` calls (auto-sized)."""
    if number <= 0:
        number, elapsed = 1, 0.0
        while elapsed < 0.05:
            start = time.perf_counter()
            for _ in range(number):
                func()
            elapsed = time.perf_counter() - start
            if elapsed < 0.05:
                number *= 2
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            func()
        rounds.append((time.perf_counter() - start) / number)
    return statistics.median(rounds)
