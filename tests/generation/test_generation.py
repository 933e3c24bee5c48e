"""End to end on the CPU: outlines drives a tiny random Llama with ``to_outlines(tools)``.

The model is random, so every structural property of its output comes from the exported
grammar. Each generation is checked on its token ids (not the decoded text) by the same
independent checks as the torch-free sampler's (tests/generation/test_sampling.py).
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("torch", reason="the generate extra is not installed")
pytest.importorskip("transformers", reason="the generate extra is not installed")
pytest.importorskip("outlines", reason="the generate extra is not installed")

from harmony_grammar.format import ControlToken
from harmony_grammar.generation.hf import (
    generate_ids,
    hf_tokenizer,
    logits_processor,
    outlines_model,
)
from harmony_grammar.rendering.conversation import (
    Conversation,
    DeveloperContent,
    ResponseFormat,
    SystemContent,
    ToolSpec,
    user_message,
)
from harmony_grammar.rendering.renderer import render

from .test_sampling import ANSWER_SCHEMA, TOOL_SETS, _function_name, check_completion

SEEDS = (0, 1, 2)

#: (tool set, tool_choice, response_format); each runs with every seed.
CONFIGURATIONS = [
    ("weather", "auto", None),
    ("weather", "required", None),
    ("assistant", "required", None),
    ("assistant", "search", None),
    ("assistant", "none", ANSWER_SCHEMA),
    ("weather", "auto", ANSWER_SCHEMA),
]
_IDS = [f"{c[0]}-{_function_name(c[1]) or c[1]}-{'rf' if c[2] else 'text'}" for c in CONFIGURATIONS]


@pytest.fixture(scope="module")
def model():
    import torch

    # Two threads on two shared cores lose more to contention than they gain on a model this
    # small; restored after the module.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield outlines_model(seed=0)
    torch.set_num_threads(threads)


def prompt_ids(tools: list[dict[str, Any]], response_format: dict[str, Any] | None) -> list[int]:
    """The completion prompt a host would send: system, developer with tools, user, assistant."""
    specs = tuple(
        ToolSpec(
            t["function"]["name"], t["function"]["description"], t["function"].get("parameters")
        )
        for t in tools
    )
    formats = (ResponseFormat("answer", response_format),) if response_format else ()
    conversation = Conversation.from_messages(
        [
            SystemContent(),
            DeveloperContent(instructions="Be brief.", tools=specs, response_formats=formats),
            user_message("Plan my afternoon in Oslo."),
        ]
    )
    return render(conversation, next_turn="assistant", tokens=True)


def test_prompt_ends_with_the_assistant_turn():
    ids = prompt_ids(TOOL_SETS["weather"], None)
    tokenizer = hf_tokenizer()
    assert ids[-2] == ControlToken.START.id
    assert tokenizer.decode(ids[-1:]) == "assistant"


@pytest.mark.parametrize(("tool_set", "tool_choice", "response_format"), CONFIGURATIONS, ids=_IDS)
def test_outlines_generations_are_valid_turns(model, tool_set, tool_choice, response_format):
    outlines_export = pytest.importorskip(
        "harmony_grammar.generation.outlines_export",
        reason="harmony_grammar/generation/outlines_export.py is not importable",
    )
    import outlines

    tools = TOOL_SETS[tool_set]
    options: dict[str, Any] = {"tool_choice": tool_choice}
    if response_format is not None:
        options["response_format"] = response_format
    output_type = outlines_export.to_outlines(tools, **options)
    assert isinstance(output_type, outlines.types.CFG)
    processor = logits_processor(model, output_type)
    prompt = prompt_ids(tools, response_format)
    for seed in SEEDS:
        ids = generate_ids(model, prompt, processor, seed=seed, max_new_tokens=400)
        check_completion(ids, tools, tool_choice=tool_choice, response_format=response_format)


def test_seeds_give_different_generations(model):
    outlines_export = pytest.importorskip(
        "harmony_grammar.generation.outlines_export",
        reason="harmony_grammar/generation/outlines_export.py is not importable",
    )
    tools = TOOL_SETS["weather"]
    processor = logits_processor(model, outlines_export.to_outlines(tools, tool_choice="auto"))
    prompt = prompt_ids(tools, None)
    runs = [generate_ids(model, prompt, processor, seed=seed, max_new_tokens=400) for seed in SEEDS]
    again = generate_ids(model, prompt, processor, seed=SEEDS[0], max_new_tokens=400)
    assert again == runs[0]
    assert len({tuple(run) for run in runs}) == len(SEEDS)


def test_without_the_grammar_the_random_model_writes_no_turn(model):
    # The control experiment: the same model and prior, no grammar. Whatever it writes is not a
    # valid turn, so the guarantee above is the grammar's, not the model's or the prior's.
    from harmony_grammar.generation.hf import GumbelLogitsProcessor
    from harmony_grammar.generation.sampling import token_prior

    tools = TOOL_SETS["weather"]
    prompt = prompt_ids(tools, None)
    import torch
    from transformers import LogitsProcessorList

    failures = 0
    for seed in SEEDS:
        with torch.no_grad():
            output = model.model.generate(
                input_ids=torch.tensor([prompt]),
                attention_mask=torch.ones((1, len(prompt)), dtype=torch.long),
                logits_processor=LogitsProcessorList(
                    [GumbelLogitsProcessor(token_prior(), seed=seed)]
                ),
                do_sample=False,
                max_new_tokens=60,
            )
        ids = [int(t) for t in output[0, len(prompt) :]]
        try:
            check_completion(ids, tools)
        except AssertionError:
            failures += 1
    assert failures == len(SEEDS)
