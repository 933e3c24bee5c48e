"""The one reader of a tools list (``declarations/toolset.py``): what :meth:`ToolSet.read` makes of
each kind of entry, and that a set it made is handed on, never read again."""

from __future__ import annotations

from typing import Any

import pytest

from harmony_grammar.declarations.custom import CustomBody
from harmony_grammar.declarations.toolset import ToolSet, tool_schemas, tool_targets

OBJECT = {"type": "object", "properties": {"q": {"type": "string"}}}
RESPONSES: list[dict[str, Any]] = [
    {"type": "function", "name": "search", "parameters": OBJECT},
    {"type": "web_search"},
    {"type": "custom", "name": "apply_patch"},
    {"type": "namespace", "name": "agents", "tools": [{"type": "function", "name": "spawn"}]},
    {"type": "file_search", "vector_store_ids": []},
    {"type": "web_search", "external_web_access": True},
]
CHAT: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "search", "parameters": OBJECT}},
    {"type": "function", "function": {"name": "agents.spawn"}},
]


def test_each_kind_lands_where_its_calls_are_written() -> None:
    tools = ToolSet.read(RESPONSES)
    assert dict(tools.targets) == {
        "functions.search": OBJECT,
        "functions.apply_patch": CustomBody(),
        "agents.spawn": {"type": "object"},
    }
    assert tools.hosted == ("web_search", "file_search")  # each once, in order
    assert tools.namespaces == ("agents",)
    assert tools.custom == frozenset({"functions.apply_patch"})
    assert [t.get("type") for t in tools.callables] == ["function", "custom", "namespace"]


def test_a_chat_function_named_namespace_dot_fn_is_in_that_namespace() -> None:
    tools = ToolSet.read(CHAT, chat=True)
    assert list(tools.targets) == ["functions.search", "agents.spawn"]
    assert tools.namespaces == ("agents",)
    # Without chat=True the name is read as written, a function of the functions namespace.
    assert list(ToolSet.read(CHAT).targets) == ["functions.search", "functions.agents.spawn"]


def test_a_chat_custom_tool_reads_as_the_responses_entry() -> None:
    grammar = {"syntax": "regex", "definition": "[a-z]+"}
    chat = [
        {"type": "custom", "custom": {"name": "shell", "format": {"type": "text"}}},
        {
            "type": "custom",
            "custom": {"name": "agents.note", "format": {"type": "grammar", "grammar": grammar}},
        },
    ]
    responses = [
        {"type": "custom", "name": "shell", "format": {"type": "text"}},
        {
            "type": "namespace",
            "name": "agents",
            "tools": [{"type": "custom", "name": "note", "format": {"type": "grammar", **grammar}}],
        },
    ]
    read = ToolSet.read(chat, chat=True)
    assert read == ToolSet.read(responses)  # one path from here on: one grammar, one parse
    assert read.custom == frozenset({"functions.shell", "agents.note"})
    assert list(read.namespaced) == ["agents.note"]  # what the parser checks beyond functions.
    with pytest.raises(ValueError, match="'custom' object"):
        ToolSet.read([{"type": "custom", "name": "shell"}], chat=True)


@pytest.mark.parametrize("tools", [RESPONSES, {"search": OBJECT, "apply_patch": CustomBody()}])
def test_a_set_is_handed_on_and_its_views_are_the_lists(tools: Any) -> None:
    read = ToolSet.read(tools)
    assert ToolSet.read(read) is read
    assert tool_schemas(read) == tool_schemas(tools) == read.schemas
    assert tool_targets(read) == tool_targets(tools) == dict(read.targets)


def test_sets_of_the_same_entries_are_equal_and_hash_alike() -> None:
    a, b = ToolSet.read(RESPONSES), ToolSet.read([dict(t) for t in RESPONSES])
    assert a == b and hash(a) == hash(b)
    assert a != ToolSet.read(RESPONSES[:2])
    assert ToolSet() == ToolSet.read(None) == ToolSet.read([])
    assert not ToolSet.read([{"type": "web_search"}])  # nothing to call


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ([{"type": "function", "name": "f"}, {"type": "custom", "name": "f"}], "two tools"),
        ([{"type": "function"}], "without a name"),
        (["f"], "must be an object"),
        ([{"type": "namespace", "name": "ns", "tools": []}], "non-empty list"),
    ],
)
def test_a_malformed_list_is_one_line_naming_the_tool(tools: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ToolSet.read(tools)


def test_the_parameters_are_judged_by_the_check_handed_in() -> None:
    """The declarations layer knows no JSON Schema: ``read`` takes any parameters, and
    ``check`` asks the judge it is given, naming the first tool it refuses (custom tools'
    raw-text bodies are not asked about)."""
    tools = [
        {"type": "custom", "name": "patch"},
        {"type": "function", "name": "f", "parameters": {"type": 3}},
        {"type": "function", "name": "g", "parameters": {"type": "object"}},
    ]
    toolset = ToolSet.read(tools)
    asked: list[Any] = []

    def judge(schema: Any) -> str | None:
        asked.append(schema)
        return "is not a schema" if schema.get("type") == 3 else None

    with pytest.raises(ValueError, match=r"^tool .f.: the parameters is not a schema$"):
        toolset.check(judge)
    assert asked == [{"type": 3}]
    assert ToolSet.read(tools[::2]).check(judge) == ToolSet.read(tools[::2])
