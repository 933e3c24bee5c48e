"""Tool declarations: what a host tells gpt-oss it may call.

``ToolSpec`` is openai-harmony's ``ToolDescription`` and ``ToolNamespace`` its
``ToolNamespaceConfig``: a name, a description and a JSON Schema for the single argument.
They are plain data, shared by the renderer (which writes them as TypeScript), the parser
(which checks call arguments against them) and the grammar export.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ToolNamespace", "ToolSpec"]


@dataclass(frozen=True)
class ToolSpec:
    """A function tool: name, description and a JSON Schema for its single argument.

    ``parameters=None`` renders ``type name = () => any;``. The schema is kept as given (key
    order matters: properties render in insertion order) and should not be mutated.
    """

    name: str
    description: str = ""
    parameters: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class ToolNamespace:
    """A ``## name`` block of tools: ``functions`` in the developer message, ``browser`` or
    ``python`` in the system message. A namespace without tools renders its description as
    plain text (that is how the python tool is described)."""

    name: str
    description: str | None = None
    tools: tuple[ToolSpec, ...] = ()

    @classmethod
    def browser(cls) -> ToolNamespace:
        """The built-in browser tool gpt-oss was trained with (openai-harmony's text)."""
        return cls("browser", _BROWSER_DESCRIPTION, _BROWSER_TOOLS)

    @classmethod
    def python(cls) -> ToolNamespace:
        """The built-in python tool gpt-oss was trained with (openai-harmony's text)."""
        return cls("python", _PYTHON_DESCRIPTION)


# The built-in tools, as openai-harmony 0.0.8 defines them (``ToolNamespaceConfig.browser()`` and
# ``.python()``). This is the text gpt-oss was trained on, so it is data, reproduced exactly;
# tests/test_render_builtin.py checks it against the package.
_BROWSER_DESCRIPTION = (
    "Tool for browsing.\n"
    "The `cursor` appears in brackets before each browsing display: `[{cursor}]`.\n"
    "Cite information from the tool using the following format:\n"
    "`【{cursor}†L{line_start}(-L{line_end})?】`, for example: `【6†L9-L11】` or `【8†L3】`.\n"
    "Do not quote more than 10 words directly from the tool output.\n"
    "sources=web (default: web)"
)
_BROWSER_TOOLS = (
    ToolSpec(
        "search",
        "Searches for information related to `query` and displays `topn` results.",
        {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "topn": {"type": "number", "default": 10},
                "source": {"type": "string"},
            },
            "required": ["query"],
        },
    ),
    ToolSpec(
        "open",
        "Opens the link `id` from the page indicated by `cursor` starting at line number `loc`, "
        "showing `num_lines` lines.\n"
        "Valid link ids are displayed with the formatting: `【{id}†.*】`.\n"
        "If `cursor` is not provided, the most recent page is implied.\n"
        "If `id` is a string, it is treated as a fully qualified URL associated with `source`.\n"
        "If `loc` is not provided, the viewport will be positioned at the beginning of the "
        "document or centered on the most relevant passage, if available.\n"
        "Use this function without `id` to scroll to a new location of an opened page.",
        {
            "type": "object",
            "properties": {
                "id": {"type": ["number", "string"], "default": -1},
                "cursor": {"type": "number", "default": -1},
                "loc": {"type": "number", "default": -1},
                "num_lines": {"type": "number", "default": -1},
                "view_source": {"type": "boolean", "default": False},
                "source": {"type": "string"},
            },
        },
    ),
    ToolSpec(
        "find",
        "Finds exact matches of `pattern` in the current page, or the page given by `cursor`.",
        {
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "cursor": {"type": "number", "default": -1},
            },
            "required": ["pattern"],
        },
    ),
)
_PYTHON_DESCRIPTION = (
    "Use this tool to execute Python code in your chain of thought. The code will not be shown "
    "to the user. This tool should be used for internal reasoning, but not for code that is "
    "intended to be visible to the user (e.g. when creating plots, tables, or files).\n\n"
    "When you send a message containing Python code to python, it will be executed in a "
    "stateful Jupyter notebook environment. python will respond with the output of the "
    "execution or time out after 120.0 seconds. The drive at '/mnt/data' can be used to save "
    "and persist user files. Internet access for this session is UNKNOWN. Depends on the "
    "cluster."
)
