"""The argument-check layer above the core: a tools list read and every parameters schema
judged (``tools/parameters.py``), and the names that moved down to the declarations layer."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

import harmony_grammar.declarations as declarations
from harmony_grammar.tools.call_check import SCHEMA_CHECK
from harmony_grammar.tools.parameters import checked_tools, schema_problem


@pytest.mark.parametrize(
    ("parameters", "words"),
    [
        (5, "must be a JSON Schema object, not int"),
        ({"type": 3}, "schema is invalid at /type"),
        ({"$ref": "http://example.com/s.json"}, "refers outside itself"),
        ({"properties": {"a": {"$ref": "#/$defs/nope"}}}, "unresolvable"),
    ],
)
def test_a_schema_that_cannot_check_is_refused_naming_the_tool(parameters: Any, words: str):
    tools = [{"type": "function", "name": "ok"}, {"name": "f", "parameters": parameters}]
    assert words in (schema_problem(parameters) or "")
    assert SCHEMA_CHECK.schema_problem(parameters) == schema_problem(parameters)
    with pytest.raises(ValueError, match=f"^tool 'f': the parameters .*{words}"):
        checked_tools(tools)
    declarations.ToolSet.read(tools)  # the declarations alone do not judge schemas


def test_a_good_list_reads_as_the_declarations_read_it():
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    assert checked_tools(tools, chat=True) == declarations.ToolSet.read(tools, chat=True)
    assert schema_problem(True) is None and schema_problem({"type": "object"}) is None


@pytest.mark.parametrize(
    ("module", "name", "home"),
    [
        ("harmony_grammar.tools", "ToolSpec", declarations),
        ("harmony_grammar.tools", "ToolSet", declarations),
        ("harmony_grammar.tools", "name_problem", declarations),
        ("harmony_grammar.tools.arguments", "tool_schemas", declarations),
        ("harmony_grammar.format", "tools_from_typescript", declarations),
        ("harmony_grammar.format", "TypeScriptError", declarations),
    ],
)
def test_the_declarations_moved_down_and_still_answer_for_a_release(module, name, home):
    with pytest.warns(DeprecationWarning, match=f"{module}.{name} moved to {home.__name__}"):
        assert getattr(importlib.import_module(module), name) is getattr(home, name)
