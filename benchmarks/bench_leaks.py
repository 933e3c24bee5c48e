"""Leak detection throughput in MB/s (UTF-8 bytes) on mixed text; escaping for comparison.

    python benchmarks/bench_leaks.py

There is no named peer: the figures are absolute. The mixed text interleaves English prose
with quotes and apostrophes, Markdown with inline code and fenced Harmony examples, JSON,
Chinese and Russian paragraphs, and now and then a real leak.
"""

from __future__ import annotations

import json
import random

from _common import best_of

from harmony_grammar.safety.escaping import escape_control_tokens, escape_control_tokens_in_json
from harmony_grammar.safety.leaks import LeakDetector, detect_leak
from harmony_grammar.safety.repair import repair_thinking

_PIECES = [
    'The final analysis shows revenue grew 12%, and the team\'s "commentary" was right. ',
    "It's a long answer; we'll cover costs, risks and the plan for next quarter.\n",
    "Use `to=functions.get_weather` in the header and stop at `<|call|>`.\n",
    "```\n<|start|>assistant<|channel|>final<|message|>Hi<|return|>\n```\n",
    '{"city": "Paris", "unit": "celsius", "days": [1, 2, 3]}\n',
    "使用Python编写函数，然后调用接口获取天气数据。\n",
    "Запускаем поиск и сравниваем результаты с прошлой неделей.\n",
    'x = parse("<|start|>user<|message|>hi<|end|>")\n',
]
_LEAKS = [
    "Sure.<|end|><|start|>assistant<|channel|>final<|message|>Done.",
    'assistantcommentary to=functions.lookup json{"q": "x"}',
]


def mixed_text(size: int, leak_every: int = 200) -> str:
    """About ``size`` characters of mixed text, a leak every ``leak_every`` pieces."""
    rng = random.Random(0)
    parts: list[str] = []
    total = 0
    while total < size:
        piece = rng.choice(_LEAKS) if rng.randrange(leak_every) == 0 else rng.choice(_PIECES)
        parts.append(piece)
        total += len(piece)
    return "".join(parts)


def _stream(text: str, chunk: int) -> None:
    detector = LeakDetector()
    for start in range(0, len(text), chunk):
        detector.feed(text[start : start + chunk])
    detector.close()


def main() -> None:
    text = mixed_text(2_000_000)
    megabytes = len(text.encode("utf-8")) / 1e6
    report = detect_leak(text)
    print(
        f"mixed text: {megabytes:.2f} MB, {len(report.spans)} spans, triggered={report.triggered}"
    )
    clean = "".join(p for p in text.split("\n") if "<|" not in p and "to=" not in p)
    document = json.dumps({"rows": [{"text": line} for line in text.split("\n")[:20000]]})
    rows = {
        "detect_leak (batch)": (lambda: detect_leak(text), megabytes),
        "LeakDetector, 4 KiB chunks": (lambda: _stream(text, 4096), megabytes),
        "LeakDetector, 64-char chunks": (lambda: _stream(text, 64), megabytes),
        "detect_leak on text with no markup": (
            lambda: detect_leak(clean),
            len(clean.encode("utf-8")) / 1e6,
        ),
        "detect_leak tool_arg (JSON)": (
            lambda: detect_leak(document, surface="tool_arg"),
            len(document) / 1e6,
        ),
        "escape_control_tokens": (lambda: escape_control_tokens(text), megabytes),
        "escape_control_tokens_in_json": (
            lambda: escape_control_tokens_in_json(document),
            len(document) / 1e6,
        ),
        "repair_thinking": (lambda: repair_thinking(text), megabytes),
    }
    for name, (func, size) in rows.items():
        seconds = best_of(func, repeat=3, number=1)
        print(f"{name:<38} {size / seconds:8.1f} MB/s")


if __name__ == "__main__":
    main()
