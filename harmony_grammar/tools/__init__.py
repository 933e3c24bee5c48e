"""Checking tool calls: their arguments against the declared tools' JSON Schemas.

Theory of operation
-------------------
What a host declares (a tool's name, description and parameters schema, the tools list read
once) is the declarations layer's (:mod:`harmony_grammar.declarations`), below the Harmony
core. Whether a call's arguments fit a declaration is this package's, above the core, because
it takes jsonschema, llguidance and the schema compiler: :mod:`.arguments` checks arguments as
they stream (any JSON object, llguidance) and when they end (the schema, jsonschema);
:mod:`.parameters` judges whether a parameters schema can check anything; :mod:`.call_check` is
the parse's argument check (:data:`~.call_check.SCHEMA_CHECK`, the
:class:`~harmony_grammar.format.options.ArgumentCheck` the package's root installs, which every
parse's default asks) and the one judge of a complete body
(:func:`~.call_check.arguments_problem`); :mod:`.json_limits` reads untrusted JSON within
limits, before Python's ``json`` does.

Imports: this package may use :mod:`harmony_grammar.declarations`, :mod:`harmony_grammar.schema`
and :mod:`harmony_grammar.base`; it does not import the format layer (which calls it through
the protocol it declares).
"""

from __future__ import annotations

from .. import declarations as _declarations
from ..base.deprecation import moved_names
from .arguments import ArgumentChecker
from .call_check import SCHEMA_CHECK, arguments_problem
from .parameters import checked_tools, schema_problem

__all__ = [
    "SCHEMA_CHECK",
    "ArgumentChecker",
    "arguments_problem",
    "checked_tools",
    "schema_problem",
]

#: The tool declarations this package held before they became a layer of their own, below the
#: Harmony core: reading one here still works for one release, with a DeprecationWarning.
MOVED = (
    "MAX_HEADER_LENGTH",
    "MAX_NAME_LENGTH",
    "ToolNameError",
    "ToolNamespace",
    "ToolSet",
    "ToolSpec",
    "ToolsArgument",
    "check_tool_name",
    "name_problem",
    "tool_schemas",
)

__getattr__ = moved_names(
    __name__,
    {
        name: (f"harmony_grammar.declarations.{name}", getattr(_declarations, name))
        for name in MOVED
    },
)
