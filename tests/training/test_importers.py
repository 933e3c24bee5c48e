"""import_record: chat datasets and Harmony into conversations, a diagnostic for every
record that cannot be imported."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harmony_grammar.format.model import Role, Severity
from harmony_grammar.rendering.chat import from_chat_completions
from harmony_grammar.rendering.conversation import Conversation
from harmony_grammar.rendering.renderer import render
from harmony_grammar.training.importers import import_record

TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}

#: The canonical Chat Completions form every dataset spelling below must import as.
CANONICAL = {
    "tools": [TOOL],
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "reasoning_content": "Call the tool.",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "assistant", "reasoning_content": "Answer.", "content": "Sunny."},
    ],
}


def _imported(record: Any, **options: Any) -> Conversation:
    result = import_record(record, **options)
    assert result.ok, result.diagnostics
    assert result.conversation is not None
    return result.conversation


def test_the_canonical_form_imports_as_chat_completions_maps_it() -> None:
    assert _imported(CANONICAL) == from_chat_completions(CANONICAL)


@pytest.mark.parametrize("reasoning_field", ["reasoning_content", "reasoning", "thinking"])
def test_dataset_spellings_import_like_the_canonical_form(reasoning_field: str) -> None:
    # Hugging Face style: thinking, arguments as an object, no call ids, tools as JSON text
    # in plain {name, description, parameters} form.
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            reasoning_field: "Call the tool.",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
                }
            ],
        },
        {"role": "tool", "content": "sunny"},
        {"role": "assistant", reasoning_field: "Answer.", "content": "Sunny."},
    ]
    record = {"messages": messages, "tools": json.dumps([TOOL["function"]])}
    assert render(_imported(record)) == render(from_chat_completions(CANONICAL))


def test_results_without_ids_answer_calls_in_order() -> None:
    calls = [
        {"function": {"name": "get_weather", "arguments": "{}"}},
        {"name": "other", "arguments": {"x": 1}},  # the flat form some datasets use
    ]
    record = {
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "tool_calls": calls},
            {"role": "tool", "content": "first"},
            {"role": "tool", "content": "second"},
        ]
    }
    conversation = _imported(record)
    results = [m for m in conversation.messages if getattr(m, "role", None) is Role.TOOL]
    assert [(m.name, m.content) for m in results] == [
        ("functions.get_weather", "first"),
        ("functions.other", "second"),
    ]
    call = next(
        m for m in conversation.messages if getattr(m, "recipient", None) == "functions.other"
    )
    assert json.loads(call.content) == {"x": 1}


def test_harmony_text_and_ids_import_and_render_back(encoding: Any) -> None:
    text = (
        "<|start|>user<|message|>hi<|end|>"
        "<|start|>assistant<|channel|>analysis<|message|>greet<|end|>"
        "<|start|>assistant<|channel|>final<|message|>hello<|return|>"
    )
    keep = {"auto_drop_analysis": False}
    assert render(_imported({"text": text}), **keep) == text
    ids = encoding.encode(text, allowed_special="all")
    assert render(_imported(ids), **keep) == text
    assert render(_imported({"harmony": text}, field="harmony"), **keep) == text


def test_lenient_harmony_imports_with_warnings() -> None:
    text = "<|start|>user<|message|>hi<|end|><|start|>assistant<|channel|>final hello<|end|>"
    strict = import_record(text, row=7)
    assert not strict.ok and strict.row == 7 and strict.diagnostics[0].code == "HG300"
    lenient = import_record(text, lenient=True)
    assert lenient.ok and lenient.diagnostics
    assert all(d.severity is Severity.WARNING for d in lenient.diagnostics)


@pytest.mark.parametrize(
    ("record", "needle"),
    [
        ([1.5], "neither"),
        ({"other": 1}, "no field"),
        ({"messages": "not a list"}, "no field"),
        ({"messages": [{"role": "robot", "content": "x"}]}, "robot"),
        ({"messages": [{"role": "tool", "tool_call_id": "zz", "content": "x"}]}, "zz"),
        ({"messages": [], "tools": "{not json"}, "tools: not JSON"),
        ({"messages": [{"role": "user", "content": [{"type": "image"}]}]}, "image"),
        ({"text": "<|start|>user<|message|>never ends"}, "HG102"),
        ({"text": ""}, "no message"),
        ({"messages": [], "tools": [{"type": "retrieval"}]}, "retrieval"),
    ],
)
def test_every_bad_record_gets_a_diagnostic_with_its_row(record: Any, needle: str) -> None:
    result = import_record(record, row=42)
    assert result.row == 42 and result.conversation is None
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "HG300" and diagnostic.severity is Severity.ERROR
    assert needle in diagnostic.message


def test_a_harmony_error_keeps_its_position() -> None:
    result = import_record({"text": "<|start|>user<|message|>a<|end|>\n<|start|>user<|end|>"})
    (diagnostic,) = result.diagnostics
    assert diagnostic.start > 0 and "line" in diagnostic.message


def test_an_unknown_format_is_a_usage_error() -> None:
    with pytest.raises(ValueError):
        import_record({}, format="csv")  # type: ignore[arg-type]
