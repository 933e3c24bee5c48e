"""Tool declarations: what a host tells gpt-oss it may call, and how a prompt declares it.

Theory of operation
-------------------
A tool is a name, a description and a JSON Schema (:mod:`.spec`). :mod:`.toolset` is the one
reader of a tools list: :meth:`ToolSet.read` reads a request's tools once, and every layer
takes the ``ToolSet`` it made. :mod:`.names` is the one check of a tool's name, used wherever
names enter, and the one header-length limit render and parse share. :mod:`.custom` reads the
Responses API's custom tools (raw-text bodies) and namespaces. :mod:`.typescript` reads back
the TypeScript a prompt declares its tools in (the renderer,
:mod:`harmony_grammar.rendering.typescript`, writes it), so a parse knows the declared names
when ``tools=`` is not given.

This layer knows declarations only, never whether a call's arguments fit them: that takes
jsonschema, llguidance and the schema compiler, and lives above the Harmony core
(:mod:`harmony_grammar.tools`, plugged into a parse through
:class:`~harmony_grammar.format.options.ArgumentCheck`).

Imports: this package may use :mod:`harmony_grammar.base` only, so the format layer can use it
without loading anything that compiles or checks schemas.
"""

from __future__ import annotations

from .names import MAX_HEADER_LENGTH, MAX_NAME_LENGTH, ToolNameError, check_tool_name, name_problem
from .spec import ToolNamespace, ToolSpec
from .toolset import ToolsArgument, ToolSet, tool_schemas, tool_targets
from .typescript import TypeScriptError, schema_from_typescript, tools_from_typescript

__all__ = [
    "MAX_HEADER_LENGTH",
    "MAX_NAME_LENGTH",
    "ToolNameError",
    "ToolNamespace",
    "ToolSet",
    "ToolSpec",
    "ToolsArgument",
    "TypeScriptError",
    "check_tool_name",
    "name_problem",
    "schema_from_typescript",
    "tool_schemas",
    "tool_targets",
    "tools_from_typescript",
]
