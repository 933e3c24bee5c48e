"""Tool declarations: what a host tells gpt-oss it may call, and checking what it called.

Theory of operation
-------------------
A tool is a name, a description and a JSON Schema (:mod:`.spec`). The model reads tools as
TypeScript in the developer message: :mod:`.typescript` writes that text exactly as
openai-harmony does, and :mod:`.from_typescript` reads it back into JSON Schema, so a
conversation that only carries its rendered developer message still has tools to check
against. :mod:`.arguments` checks call arguments, as they stream (any JSON object) and when
they end (the schema, with jsonschema). :mod:`.names` is the one check of a tool's name,
used wherever names enter, and the one header-length limit render and parse share.
:mod:`.custom` reads the Responses API's custom tools (raw-text bodies) and namespaces.

Imports: this package may use :mod:`harmony_grammar.schema` only. It knows nothing of the
Harmony envelope, so the format layer can use it.
"""

from __future__ import annotations

from .arguments import ArgumentChecker, ToolsArgument, tool_schemas
from .from_typescript import TypeScriptError, tools_from_typescript
from .names import MAX_HEADER_LENGTH, MAX_NAME_LENGTH, ToolNameError, check_tool_name, name_problem
from .spec import ToolNamespace, ToolSpec
from .typescript import RenderError, schema_to_typescript

__all__ = [
    "MAX_HEADER_LENGTH",
    "MAX_NAME_LENGTH",
    "ArgumentChecker",
    "RenderError",
    "ToolNameError",
    "ToolNamespace",
    "ToolSpec",
    "ToolsArgument",
    "TypeScriptError",
    "check_tool_name",
    "name_problem",
    "schema_to_typescript",
    "tool_schemas",
    "tools_from_typescript",
]
