"""Recovering tool schemas from the rendered ``namespace functions`` TypeScript.

Two properties: reading a rendering back and rendering it again gives the same text (the
recovery loses nothing the rendering kept), and a document valid against the original schema
is valid against the recovered one (the validator never cries wolf).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.declarations.typescript import (
    TypeScriptError,
    declared_namespaces,
    schema_from_typescript,
    tools_from_typescript,
)
from harmony_grammar.rendering.conversation import DeveloperContent, SystemContent, ToolSpec
from harmony_grammar.rendering.renderer import developer_text, system_text
from harmony_grammar.rendering.typescript import schema_to_typescript
from harmony_grammar.tools.arguments import first_schema_error

from ..conftest import shared_data_dir
from ..rendering.test_typescript import KITCHEN_SINK


def as_rendered(schema: Any) -> Any:
    """Undo the recovery's documented widenings so the renderer sees the original shape:
    ``anyOf`` was ``oneOf``; a nullable string enum was ``enum`` + ``nullable``."""
    if isinstance(schema, list):
        return [as_rendered(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.get("type") == ["string", "null"] and None in schema.get("enum", ()):
        values = [v for v in schema["enum"] if v is not None]
        schema = {**schema, "type": "string", "enum": values, "nullable": True}
    return {("oneOf" if k == "anyOf" else k): as_rendered(v) for k, v in schema.items()}


def round_trip(schema: Any) -> tuple[str, str]:
    text = schema_to_typescript(schema)
    return text, schema_to_typescript(as_rendered(schema_from_typescript(text)))


def test_kitchen_sink_round_trips():
    original, again = round_trip(KITCHEN_SINK)
    assert again == original


def test_kitchen_sink_recovered_values():
    schema = schema_from_typescript(schema_to_typescript(KITCHEN_SINK))
    props = schema["properties"]
    assert schema["description"] == "params object"
    assert schema["required"] == ["name"]  # "missing" is required but never rendered
    assert props["name"] == {
        "type": "string",
        "title": "Name",
        "description": "Who",
        "examples": ["Ann"],
    }
    assert props["count"] == {"type": "number", "default": 3}
    assert props["unit"] == {"type": "string", "enum": ["c", "f"], "default": "c"}
    assert props["label"]["default"] == "x"
    assert props["flags"]["default"] == {"b": [1, None]}
    assert props["maybe"] == {"type": ["number", "null"]}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["raw"] == {"type": "array"}
    assert props["id"] == {"type": ["number", "string"]}
    assert props["nested"]["required"] == ["a"]
    assert props["either"]["anyOf"][1] == {"type": "number", "default": 1}
    for name in ("ref", "union", "all", "fixed", "odd"):
        assert props[name] == {}


def test_a_top_level_one_of():
    schema = {"oneOf": [{"type": "string"}, {"type": "object", "properties": {"a": {}}}]}
    recovered = schema_from_typescript(schema_to_typescript(schema))
    assert recovered == {"anyOf": [{"type": "string"}, {"type": "object", "properties": {"a": {}}}]}


def test_bad_typescript_raises_with_a_position():
    with pytest.raises(TypeScriptError) as info:
        schema_from_typescript("{\nname string,\n}")
    assert info.value.pos == 2
    with pytest.raises(TypeScriptError):
        schema_from_typescript("string garbage")


def test_tools_from_a_developer_message():
    tools = (
        ToolSpec(
            "get_weather",
            "Current weather\nin a city",
            {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        ),
        ToolSpec("ping", "Ping."),
    )
    text = developer_text(DeveloperContent(instructions="Be terse.", tools=tools))
    recovered = tools_from_typescript(text)
    assert recovered is not None
    assert [t.name for t in recovered] == ["get_weather", "ping"]
    assert recovered[0].description == "Current weather\nin a city"
    assert recovered[0].parameters == tools[0].parameters
    assert recovered[1].parameters is None
    assert tools_from_typescript("# Instructions\n\nNo tools.") is None


def test_an_unreadable_tool_accepts_any_object():
    # openai-harmony writes a multi-line description inside a schema with "//" on its first
    # line only; that text (rendered elsewhere) does not read back.
    text = (
        "# Tools\n\n## functions\n\nnamespace functions {\n\ntype f = (_: {\n// x\ny\n"
        "a?: string,\n}) => any;\n\ntype g = () => any;\n\n} // namespace functions"
    )
    recovered = tools_from_typescript(text)
    assert recovered is not None
    assert [(t.name, t.parameters) for t in recovered] == [("f", {"type": "object"}), ("g", None)]


def test_a_multi_line_description_is_rendered_as_comments_and_reads_back():
    # Here every line of it is a comment (issue 27), so the tool reads back whole.
    schema = {"type": "object", "properties": {"a": {"type": "string", "description": "x\ny"}}}
    text = developer_text(DeveloperContent(tools=(ToolSpec("f", "", schema),)))
    assert "// x\n// y\na?: string," in text
    recovered = tools_from_typescript(text)
    assert recovered is not None and recovered[0].parameters == schema


def test_builtin_namespaces_from_the_system_message():
    system = SystemContent().with_browser_tool().with_python_tool()
    declared = {n.name: n.tools for n in declared_namespaces(system_text(system))}
    assert set(declared) == {"browser", "python"}
    assert declared["python"] is None
    browser = {t.name: t.parameters for t in declared["browser"] or ()}
    assert set(browser) == {"search", "open", "find"}
    assert browser["search"]["required"] == ["query"]
    assert browser["open"]["properties"]["id"] == {"type": ["number", "string"], "default": -1}


# ---------------------------------------------------------------------------------- properties

_words = st.text(alphabet="abcdefghij XYZ_", min_size=1, max_size=12).filter(
    lambda s: s.strip() == s and "default" not in s and s != "Examples:"
)
_keys = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
_simple = st.sampled_from(
    [
        {"type": "string"},
        {"type": "number"},
        {"type": "integer"},
        {"type": "boolean"},
        {"type": "array"},
        {},
        {"type": ["integer", "string"]},
        {"type": "string", "nullable": True},
    ]
)
_enum = st.lists(_words, min_size=1, max_size=3, unique=True).map(
    lambda values: {"type": "string", "enum": values}
)


def _annotated(schemas: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda s, d, t, default: {
            **s,
            **({"description": d} if d else {}),
            **({"title": t} if t else {}),
            **({"default": default} if default is not None and "type" in s else {}),
        },
        schemas,
        st.none() | _words,
        st.none() | _words,
        st.none() | st.integers(-5, 5) | _words,
    )


def _objects(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(_keys, children, max_size=4).flatmap(
        lambda props: st.builds(
            lambda required: {
                "type": "object",
                "properties": props,
                **({"required": required} if required else {}),
            },
            st.lists(st.sampled_from(sorted(props)), unique=True) if props else st.just([]),
        )
    )


def _array_items_readable(items: dict[str, Any]) -> bool:
    """An array of a oneOf whose last variant has a comment writes its "[]" inside the
    comment: that rendering cannot be read back (the tool then accepts any object)."""
    while items.get("type") == "array" and "items" in items:
        items = items["items"]
    if "oneOf" not in items:
        return True
    while "oneOf" in items:
        items = items["oneOf"][-1]
    return not ({"default", "description"} & set(items))


_schemas = st.recursive(
    _annotated(_simple | _enum),
    lambda children: (
        _objects(children)
        | children.filter(_array_items_readable).map(lambda s: {"type": "array", "items": s})
        | st.lists(children, min_size=2, max_size=3).map(lambda vs: {"oneOf": vs})
    ),
    max_leaves=8,
)


@given(_objects(_schemas))
def test_rendering_read_back_renders_the_same(schema):
    original, again = round_trip(schema)
    assert again == original


# ---------------------------------------------------------------------------------- conformance


def _maskbench_cases(limit: int = 400) -> list[tuple[str, dict[str, Any], list[Any]]]:
    directory = shared_data_dir("maskbench-dev")
    cases = []
    for path in sorted(Path(directory).glob("*.json"))[:limit]:
        data = json.loads(path.read_text(encoding="utf-8"))
        schema = data.get("schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            continue  # tool parameters are objects
        try:
            validator = jsonschema.validators.validator_for(schema)(schema)
            valid = [t["data"] for t in data.get("tests", []) if validator.is_valid(t["data"])]
        except (jsonschema.exceptions.SchemaError, jsonschema.exceptions.RefResolutionError):
            continue
        cases.append((path.name, schema, valid))
    return cases


def test_recovered_schemas_accept_what_the_originals_accept():
    """MaskBench's real-world schemas, rendered and read back: every document the original
    accepts, the recovered schema accepts too."""
    cases = _maskbench_cases()
    assert len(cases) > 100
    checked = 0
    for name, schema, documents in cases:
        text = developer_text(DeveloperContent(tools=(ToolSpec("t", "", schema),)))
        recovered = tools_from_typescript(text)
        assert recovered is not None and len(recovered) == 1, name
        parameters = recovered[0].parameters or {"type": "object"}
        for document in documents:
            problem = first_schema_error(parameters, json.dumps(document))
            assert problem is None, (name, problem)
            checked += 1
    assert checked > 100
