"""Constrained generation on the CPU: the tiny random model with and without the grammar.

    python benchmarks/bench_generation.py

Reports, for the tiny Llama (hidden 32, one layer, the full 201,088-token vocabulary) driven
through outlines: tokens per second without a grammar and with ``to_outlines(tools)``, the
overhead as a ratio (unconstrained over constrained throughput), and the time outlines'
llguidance processor takes per token (mask computation plus applying it to the logits). Then
the torch-free sampler (``harmony_grammar.generation.sampling``) on the same turn grammar: tokens per
second and llguidance's mask time per token. Both runs use one torch thread (the model is too
small to gain from more) and the same seeds.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

SEEDS = range(8)
ROUNDS = 3
MAX_NEW_TOKENS = 300

#: Two tools in OpenAI's form, one with nested and optional arguments.
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Web search.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "max_results": {"type": "integer", "minimum": 1, "maximum": 20},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "create_event",
            "description": "Add a calendar event.",
            "parameters": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "attendees": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                    "place": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                        "additionalProperties": False,
                    },
                },
                "required": ["title"],
                "additionalProperties": False,
            },
        },
    },
]


class Timed:
    """Wraps a logits processor and adds up the seconds spent in it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.calls = 0

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        start = time.perf_counter()
        result = self.inner(input_ids, scores)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return result


class Clock:
    """A pass-through logits processor that notes when each decoding step reaches it."""

    def __init__(self) -> None:
        self.stamps: list[float] = []

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        self.stamps.append(time.perf_counter())
        return scores

    def steps(self) -> tuple[int, float]:
        """Decoding steps between the first and last stamp, and their seconds (the prompt's
        prefill and the first step fall outside)."""
        return len(self.stamps) - 1, self.stamps[-1] - self.stamps[0]


def _ban_stop_tokens(input_ids: Any, scores: Any) -> Any:
    from harmony_grammar.generation.hf import stop_token_ids

    scores[:, stop_token_ids()] = float("-inf")
    return scores


def run(
    model: Any, prompt: list[int], processors: list[Any], *, max_new_tokens: int, ban_stops: bool
) -> Clock:
    """One greedy generation after the given processors; returns its clock."""
    import torch
    from transformers import LogitsProcessorList

    clock = Clock()
    if ban_stops:
        # Unconstrained, a stop token would end the run early. (transformers' min_new_tokens
        # costs more per step than the model, so the ids are banned directly.)
        processors = [*processors, _ban_stop_tokens]
    with torch.no_grad():
        model.model.generate(
            input_ids=torch.tensor([prompt]),
            attention_mask=torch.ones((1, len(prompt)), dtype=torch.long),
            logits_processor=LogitsProcessorList([clock, *processors]),
            do_sample=False,
            max_new_tokens=max_new_tokens,
        )
    return clock


def one_round(model: Any, prompt: list[int], processor: Any, prior: Any) -> tuple[float, ...]:
    """(unconstrained tokens/s, constrained tokens/s, processor seconds per token, steps)."""
    from harmony_grammar.generation.hf import GumbelLogitsProcessor

    free_steps = steps_with = 0
    free_seconds = seconds_with = processor_seconds = 0.0
    for seed in SEEDS:
        # The constrained run first; the unconstrained one then decodes as many tokens, so
        # both pay for the same sequence lengths.
        processor.reset()
        timed = Timed(processor)
        noise = GumbelLogitsProcessor(prior, seed=seed)
        clock = run(model, prompt, [noise, timed], max_new_tokens=MAX_NEW_TOKENS, ban_stops=False)
        steps, seconds = clock.steps()
        steps_with += steps
        seconds_with += seconds
        processor_seconds += timed.seconds * steps / timed.calls
        noise = GumbelLogitsProcessor(prior, seed=seed)
        clock = run(model, prompt, [noise], max_new_tokens=steps + 1, ban_stops=True)
        steps, seconds = clock.steps()
        free_steps += steps
        free_seconds += seconds
    return (
        free_steps / free_seconds,
        steps_with / seconds_with,
        processor_seconds / steps_with,
        steps_with,
    )


def main() -> None:
    import numpy as np
    import torch

    from harmony_grammar.generation.hf import logits_processor, outlines_model
    from harmony_grammar.generation.outlines_export import to_outlines
    from harmony_grammar.generation.sampling import Sampler, token_prior
    from harmony_grammar.generation.turn_grammar import completion_grammar
    from harmony_grammar.rendering.chat import from_chat_completions
    from harmony_grammar.rendering.renderer import render

    torch.set_num_threads(1)
    request = {"messages": [{"role": "user", "content": "Book lunch in Oslo."}], "tools": TOOLS}
    prompt = render(from_chat_completions(request), next_turn="assistant", tokens=True)
    model = outlines_model(seed=0)
    prior = token_prior()
    processor = logits_processor(model, to_outlines(TOOLS, tool_choice="auto"))
    # Warm-up: the first constrained call compiles llguidance's torch kernel.
    run(model, prompt, [processor], max_new_tokens=20, ban_stops=False)
    rounds = sorted(one_round(model, prompt, processor, prior) for _ in range(ROUNDS))
    free_rate, rate_with, per_token, steps = rounds[len(rounds) // 2]
    print(f"tiny model (hidden 32, 1 layer), CPU, 1 thread; prompt {len(prompt)} tokens")
    print(f"  {len(SEEDS)} seeds, median of {ROUNDS} rounds, {steps:.0f} decoding steps a round")
    print(f"  without grammar: {free_rate:7.1f} tokens/s")
    print(f"  with grammar:    {rate_with:7.1f} tokens/s")
    print(f"  overhead: x{free_rate / rate_with:.2f} (unconstrained / constrained tokens/s)")
    print(f"  outlines' llguidance processor: {per_token * 1e3:.3f} ms per token (mask + apply)")

    sampler = Sampler(completion_grammar(TOOLS, target="llguidance", tool_choice="auto"))
    rng = np.random.default_rng(0)
    sampler.sample(rng)
    tokens, mask, lengths = 0, 0.0, []
    start = time.perf_counter()
    for _ in range(300):
        drawn = sampler.sample(rng)
        tokens += len(drawn.ids)
        mask += drawn.mask_seconds
        lengths.append(len(drawn.ids))
    seconds = time.perf_counter() - start
    print(
        f"torch-free sampler, 300 turns: {tokens / seconds:,.0f} tokens/s, "
        f"mask {mask / tokens * 1e6:.0f} us per token, median turn {statistics.median(lengths)} "
        "tokens"
    )


if __name__ == "__main__":
    main()
