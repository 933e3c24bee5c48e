"""Tool declarations: what a host tells gpt-oss it may call, and checking what it called.

Theory of operation
-------------------
A tool is a name, a description and a JSON Schema (:mod:`.spec`). The model reads tools as
TypeScript in the developer message: :mod:`.typescript` writes that text exactly as
openai-harmony does, and :mod:`.from_typescript` reads it back into JSON Schema, so a
conversation that only carries its rendered developer message still has tools to check
against. :mod:`.arguments` checks call arguments, as they stream (any JSON object) and when
they end (the schema, with jsonschema).

Imports: this package may use :mod:`harmony_grammar.schema` only. It knows nothing of the
Harmony envelope, so the format layer can use it.
"""

from __future__ import annotations

from .arguments import ArgumentChecker, ToolsArgument, tool_schemas
from .from_typescript import TypeScriptError, tools_from_typescript
from .spec import ToolNamespace, ToolSpec
from .typescript import schema_to_typescript

__all__ = [
    "ArgumentChecker",
    "ToolNamespace",
    "ToolSpec",
    "ToolsArgument",
    "TypeScriptError",
    "schema_to_typescript",
    "tool_schemas",
    "tools_from_typescript",
]
