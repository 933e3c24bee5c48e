"""The grammar gate (schema/grammar_gate.py): one set of limits, read on a grammar's text.

The gate must measure what llguidance will recurse through, whatever the text around it
(comments, strings and regexes that spell rule syntax, continuation lines, attributes,
terminals, embedded ``%json``), and it must pass every grammar this package writes.
"""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harmony_grammar.generation.sampling import GrammarError, Sampler
from harmony_grammar.generation.turn_grammar import completion_grammar
from harmony_grammar.schema.emit_common import chain_depth
from harmony_grammar.schema.grammar_gate import (
    MAX_GRAMMAR_CHARS,
    MAX_GRAMMAR_NESTING,
    MAX_GRAMMAR_RULES,
    MAX_RULE_DEPTH,
    grammar_limit_problem,
)

# Text that looks like rule syntax but is not: never a definition, never a reference.
_NOISE = [
    '"x: y"',
    '"r0: r1 \\" r9"',
    "/a:b|c/",
    "// zz: r0 r1",
    "<|end|>",
    "<[1234]>",
    '%json {"type": "string", "description": "q: r0 { ["}',
]


def _chain_text(depth: int, names: str, noise: list[str], split: bool) -> str:
    """A chain of ``depth`` definitions (``start`` first), each with some noise."""
    name = (lambda i: f"r{i}") if names == "rules" else (lambda i: f"T{i}")
    lines = ["%llguidance {}", f"start: {name(0)}"]
    for i in range(depth):
        extra = noise[i % len(noise)] if noise else ""
        if split:
            lines += [f"{name(i)}: {extra}", f"    | {name(i + 1)}"]
        else:
            lines.append(f"{name(i)}[lazy]: ({name(i + 1)}) {extra}")
    lines.append(f'{name(depth)}: "end"')
    return "\n".join(lines) + "\n"


# Half the profile's budget: each example compiles a grammar near a limit.
@settings(max_examples=settings.default.max_examples // 2)
@given(
    depth=st.integers(0, 2 * MAX_RULE_DEPTH),
    names=st.sampled_from(["rules", "terminals"]),
    noise=st.lists(st.sampled_from(_NOISE), max_size=4),
    split=st.booleans(),
)
def test_the_gate_measures_the_chain_whatever_surrounds_it(
    depth: int, names: str, noise: list[str], split: bool
) -> None:
    text = _chain_text(depth, names, noise, split)
    chain = depth + 2  # start, the chain, the last definition
    problem = grammar_limit_problem(text)
    if chain > MAX_RULE_DEPTH:
        assert problem is not None and problem.limit == "rule_depth"
        assert str(chain) in str(problem)
    else:
        assert problem is None


def test_each_limit_is_named() -> None:
    wide = "%llguidance {}\nstart: r0\n" + "".join(
        f'r{i}: "a"\n' for i in range(MAX_GRAMMAR_RULES + 1)
    )
    assert grammar_limit_problem(wide).limit == "rule_count"  # type: ignore[union-attr]
    deep = "%llguidance {}\nstart: " + "(" * (MAX_GRAMMAR_NESTING + 1) + '"a"' + ")" * 300
    assert grammar_limit_problem(deep).limit == "nesting"  # type: ignore[union-attr]
    big = '%llguidance {}\nstart: "' + "a" * MAX_GRAMMAR_CHARS + '"\n'
    assert grammar_limit_problem(big).limit == "size"  # type: ignore[union-attr]
    schema = '%llguidance {}\nstart: %json ' + '{"items": ' * 300 + "{}" + "}" * 300
    assert grammar_limit_problem(schema).limit == "nesting"  # type: ignore[union-attr]


def test_the_json_form_is_gated_too() -> None:
    import json

    lark = _chain_text(3000, "rules", [], False)
    assert grammar_limit_problem(json.dumps({"grammars": [{"lark_grammar": lark}]})) is not None
    assert grammar_limit_problem("[" * 10000) is not None
    small = json.dumps({"grammars": [{"lark_grammar": _chain_text(10, "rules", [], False)}]})
    assert grammar_limit_problem(small) is None


def test_the_sampler_refuses_past_the_gate_naming_the_limit() -> None:
    with pytest.raises(GrammarError) as caught:
        Sampler(_chain_text(3000, "rules", [], False))
    assert caught.value.limit == "rule_depth"


def test_the_callers_stack_does_not_decide_whether_a_grammar_builds() -> None:
    """Built on a stack of its own: a thread with a 256 KiB stack builds a chain near the
    limit, which would overflow that stack if llguidance recursed on it."""
    outcome: list[object] = []

    def build() -> None:
        try:
            outcome.append(Sampler(_chain_text(MAX_RULE_DEPTH - 2, "rules", [], True)))
        except Exception as exc:  # pragma: no cover - reported below
            outcome.append(exc)

    previous = threading.stack_size(256 * 1024)
    try:
        thread = threading.Thread(target=build)
        thread.start()
    finally:
        threading.stack_size(previous)
    thread.join()
    assert isinstance(outcome[0], Sampler)


# A quarter of the profile's budget: each example compiles a grammar near a limit.
@settings(max_examples=settings.default.max_examples // 4)
@given(
    tools=st.dictionaries(
        st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
        st.sampled_from(
            [
                {"type": "object"},
                {"type": "object", "properties": {"a": {"type": "string"}}},
                {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(300)}},
                {"type": "object", "properties": {"x": {"anyOf": [{"type": "array"}, {"type": "null"}]}}},
            ]
        ),
        max_size=4,
    ),
    choice=st.sampled_from(["auto", "required", "none"]),
)
def test_every_turn_grammar_passes_the_gate(tools: dict[str, object], choice: str) -> None:
    if choice == "required" and not tools:
        choice = "auto"
    assert grammar_limit_problem(completion_grammar(tools, tool_choice=choice)) is None


def test_chain_depth_is_the_emitters_measure() -> None:
    refs = {"a": ["b", "c"], "b": ["c"], "c": ["a"]}  # recursion ends the chain
    assert chain_depth(["a"], lambda name: refs[name]) == 3
    assert chain_depth([], lambda name: []) == 0
