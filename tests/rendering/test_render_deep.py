"""``render()`` of a tool schema nested past the JSON depth limit is a ``RenderError`` naming
the tool, never a ``RecursionError`` (issue 40, item 8): a schema 500 levels deep, or a
``default`` 2,000 deep, reached the renderer's recursive walk unchecked.

Drawn: where the depth is (properties, items, ``anyOf``, a default, an example), how deep,
and the tool's name; the renderer answers within the limit and refuses past it.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.rendering.chat import from_chat_completions
from harmony_grammar.rendering.renderer import RenderError, render
from harmony_grammar.tools.json_limits import MAX_JSON_DEPTH


def _nested(shape: str, levels: int) -> dict[str, Any]:
    """A parameters schema whose deepest part is ``levels`` schema levels down."""
    if shape in ("default", "examples"):
        value: Any = 1
        for _ in range(levels):
            value = [value]
        leaf = {"default": value} if shape == "default" else {"examples": [value]}
        return {"type": "object", "properties": {"a": leaf}}
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        if shape == "properties":
            schema = {"type": "object", "properties": {"a": schema}}
        elif shape == "items":
            schema = {"type": "array", "items": schema}
        else:
            schema = {"anyOf": [schema, {"type": "null"}]}
    return schema


def _render(name: str, parameters: Any) -> list[int] | str:
    tool = {"type": "function", "function": {"name": name, "parameters": parameters}}
    request = {"messages": [{"role": "user", "content": "hi"}], "tools": [tool]}
    return render(from_chat_completions(request), next_turn="assistant")


_SHAPES = st.sampled_from(["properties", "items", "anyOf", "default", "examples"])
_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)


@given(shape=_SHAPES, levels=st.integers(MAX_JSON_DEPTH, 3000), name=_NAMES)
def test_a_schema_past_the_limit_is_a_render_error_naming_the_tool(
    shape: str, levels: int, name: str
) -> None:
    with pytest.raises(RenderError) as refused:
        _render(name, _nested(shape, levels))
    assert f"functions.{name}" in str(refused.value)
    assert str(MAX_JSON_DEPTH) in str(refused.value)


@given(shape=_SHAPES, levels=st.integers(1, 30), name=_NAMES)
def test_a_schema_within_the_limit_renders(shape: str, levels: int, name: str) -> None:
    assert f"type {name} =" in str(_render(name, _nested(shape, levels)))


@pytest.mark.parametrize(("shape", "levels"), [("properties", 500), ("default", 2000)])
def test_the_reported_shapes(shape: str, levels: int) -> None:
    with pytest.raises(RenderError, match=r"tool functions\.deep"):
        _render("deep", _nested(shape, levels))
