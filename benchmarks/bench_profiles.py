"""Render throughput per profile against its reference, in one run.

Run ``python benchmarks/bench_profiles.py [--count N] [--rounds R] [--json]`` from the
checkout's top. The workload is ``tests/support/profile_conversations.generated_requests(N)`` (tools
with nested schemas, tool loops, analysis, multi-byte text; the same as the profile tests),
rendered to token ids, each request in its own mode (conversation, prompt or training):

* ``openai-harmony-0.0.8``: ours against openai-harmony 0.0.8, in this process;
* ``oss-harmony-0.0.11``: ours against oss-harmony 0.0.11, timed inside its own environment
  (``.venv-oss-harmony``; a subprocess, so the process start is not in the figure);
* ``hf-chat-template``: ours against transformers' ``apply_chat_template`` on the template
  (text) plus o200k_harmony encoding of that text (ids), as a trainer pays it;
* ``omp``: ours only; its rules are written down (harmony-format.md §8), not shipped as code.

The references are given their own objects ready-made (openai-harmony's ``Conversation``, the
template's messages): converting into them is not timed. Each figure is the median over
``--rounds`` passes over the workload, as conversations per second.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harmony_grammar.conformance.references import (  # noqa: E402
    ReferenceUnavailable,
    hf_template_inputs,
    oss_harmony_python,
)
from harmony_grammar.conformance.requests import render_request  # noqa: E402
from harmony_grammar.format.vocabulary import load_encoding  # noqa: E402
from harmony_grammar.rendering.profiles import PROFILES, get_profile  # noqa: E402
from harmony_grammar.rendering.renderer import encode_text, render  # noqa: E402
from tests.support.profile_conversations import generated_requests  # noqa: E402

#: Timed inside oss-harmony's environment: the same workload, its own renderer.
_OSS_TIMER = r"""
import json, statistics, sys, time
from harmony_grammar.conformance.oracle import harmony_encoding, installed_renderer
from harmony_grammar.conformance.requests import render_request
from harmony_grammar.rendering.interop import to_openai_harmony
import openai_harmony as oh
requests, rounds = json.load(sys.stdin)
encoding = harmony_encoding()
jobs = []
for request in requests:
    conversation, options = render_request(request)
    config = oh.RenderConversationConfig(auto_drop_analysis=options.drops_analysis)
    jobs.append((request["mode"], to_openai_harmony(conversation), config))
def once():
    for mode, conversation, config in jobs:
        if mode == "prompt":
            encoding.render_conversation_for_completion(conversation, oh.Role.ASSISTANT, config)
        elif mode == "training":
            encoding.render_conversation_for_training(conversation, config)
        else:
            encoding.render_conversation(conversation, config)
once()
times = []
for _ in range(rounds):
    start = time.perf_counter(); once(); times.append(time.perf_counter() - start)
print(json.dumps({"renderer": installed_renderer(), "seconds": statistics.median(times)}))
"""


def _median_seconds(once: Callable[[], object], rounds: int) -> float:
    once()  # warm caches (the vocabulary, the compiled template) outside the figure
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        once()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _requests(count: int, profile: str) -> list[dict[str, Any]]:
    out = []
    for request in generated_requests(count):
        request = {**request, "profile": profile}
        if "auto_drop_analysis" in get_profile(profile).fixed_options:
            request.pop("auto_drop_analysis", None)
        out.append(request)
    return out


def _ours(requests: list[dict[str, Any]], rounds: int) -> float:
    encoding = load_encoding()
    jobs = [render_request(r) for r in requests]
    return _median_seconds(
        lambda: [render(c, o, tokens=True, encoding=encoding) for c, o in jobs], rounds
    )


def _openai_harmony(requests: list[dict[str, Any]], rounds: int) -> tuple[str, float]:
    import openai_harmony as oh

    from harmony_grammar.conformance.oracle import harmony_encoding
    from harmony_grammar.rendering.interop import to_openai_harmony

    encoding = harmony_encoding()
    jobs = []
    for request in requests:
        conversation, options = render_request(request)
        config = oh.RenderConversationConfig(auto_drop_analysis=options.drops_analysis)
        jobs.append((request["mode"], to_openai_harmony(conversation), config))

    def once() -> None:
        for mode, conversation, config in jobs:
            if mode == "prompt":
                encoding.render_conversation_for_completion(conversation, oh.Role.ASSISTANT, config)
            elif mode == "training":
                encoding.render_conversation_for_training(conversation, config)
            else:
                encoding.render_conversation(conversation, config)

    return "openai-harmony 0.0.8", _median_seconds(once, rounds)


def _oss_harmony(requests: list[dict[str, Any]], rounds: int) -> tuple[str, float]:
    python = oss_harmony_python()
    done = subprocess.run(
        [str(python), "-c", _OSS_TIMER],
        input=json.dumps([requests, rounds]),
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    answer = json.loads(done.stdout)
    return f"{answer['renderer']} (own venv)", float(answer["seconds"])


def _hf_template(requests: list[dict[str, Any]], rounds: int) -> tuple[str, float]:
    from harmony_grammar.conformance.references import _template

    tokenizer, template = _template()
    encoding = load_encoding()
    jobs = []
    for request in requests:
        conversation, options = render_request(request)
        messages, kwargs = hf_template_inputs(conversation)
        kwargs.pop("date", None)
        jobs.append((messages, kwargs, options.turn is not None))

    def once() -> None:
        for messages, kwargs, prompt in jobs:
            text = tokenizer.apply_chat_template(
                messages, chat_template=template, tokenize=False, add_generation_prompt=prompt, **kwargs
            )
            encode_text(encoding, text, trusted=True)

    return "apply_chat_template + encode", _median_seconds(once, rounds)


REFERENCES: dict[str, Callable[[list[dict[str, Any]], int], tuple[str, float]] | None] = {
    "openai-harmony-0.0.8": _openai_harmony,
    "oss-harmony-0.0.11": _oss_harmony,
    "hf-chat-template": _hf_template,
    "omp": None,
    "vllm-0.34": None,
}
#: Why a profile has no reference code to time.
NO_REFERENCE = {
    "omp": "none (rules in harmony-format.md §8)",
    "vllm-0.34": "none (committed token references)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="conversations (200)")
    parser.add_argument("--rounds", type=int, default=5, help="timed passes (5)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    rows = []
    for profile in PROFILES:
        requests = _requests(args.count, profile)
        ours = _ours(requests, args.rounds)
        row: dict[str, Any] = {"profile": profile, "ours_per_s": args.count / ours}
        reference = REFERENCES[profile]
        if reference is None:
            row.update(reference=NO_REFERENCE[profile], reference_per_s=None)
        else:
            try:
                name, seconds = reference(requests, args.rounds)
            except (ReferenceUnavailable, ImportError, subprocess.CalledProcessError) as exc:
                row.update(reference=f"unavailable: {exc}", reference_per_s=None)
            else:
                row.update(reference=name, reference_per_s=args.count / seconds)
        if row["reference_per_s"]:
            row["ratio"] = row["ours_per_s"] / row["reference_per_s"]
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{args.count} generated conversations to token ids, median of {args.rounds} passes")
    print(f"{'profile':<22} {'ours conv/s':>12} {'reference':<34} {'ref conv/s':>11} {'ours/ref':>9}")
    for row in rows:
        ref = f"{row['reference_per_s']:.0f}" if row["reference_per_s"] else "-"
        ratio = f"{row['ratio']:.2f}x" if row.get("ratio") else "-"
        print(f"{row['profile']:<22} {row['ours_per_s']:>12.0f} {row['reference']:<34} {ref:>11} {ratio:>9}")


if __name__ == "__main__":
    main()
