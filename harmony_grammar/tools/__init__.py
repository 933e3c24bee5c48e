"""Tool declarations: what a host tells gpt-oss it may call, and checking what it called.

Theory of operation
-------------------
A tool is a name, a description and a JSON Schema (:mod:`.spec`). The model reads tools as
TypeScript in the developer message: the renderer writes that text
(:mod:`harmony_grammar.rendering.typescript`) and the format layer reads it back
(:mod:`harmony_grammar.format.from_typescript`), each beside its users. :mod:`.toolset` is the
one reader of a tools list: :meth:`ToolSet.read` reads a request's tools once, and every layer
below takes the ``ToolSet`` it made. :mod:`.arguments` checks call arguments, as they stream
(any JSON object) and when they end (the schema, with jsonschema). :mod:`.names` is the one
check of a tool's name, used wherever names enter, and the one header-length limit render and
parse share. :mod:`.custom` reads the Responses API's custom tools (raw-text bodies) and
namespaces.

Imports: this package may use :mod:`harmony_grammar.schema` only. It knows nothing of the
Harmony envelope, so the format layer can use it.
"""

from __future__ import annotations

from .arguments import ArgumentChecker
from .names import MAX_HEADER_LENGTH, MAX_NAME_LENGTH, ToolNameError, check_tool_name, name_problem
from .spec import ToolNamespace, ToolSpec
from .toolset import ToolsArgument, ToolSet, tool_schemas

__all__ = [
    "MAX_HEADER_LENGTH",
    "MAX_NAME_LENGTH",
    "ArgumentChecker",
    "ToolNameError",
    "ToolNamespace",
    "ToolSet",
    "ToolSpec",
    "ToolsArgument",
    "check_tool_name",
    "name_problem",
    "tool_schemas",
]
