"""The one check for tool and namespace names, and the one header-length limit.

A tool's name is written in three places: the TypeScript declaration the model reads
(``type NAME = …``), the recipient of a call (``to=functions.NAME``) and every grammar that
constrains the model to write that recipient. A name that is fine in one and not another is
a hole: ``"a b"`` is declared as written, the grammar lets the model write ``to=functions.a b``
and the parser then drops the call (HG101); ``"a<|call|>b"`` lets the model spell a control
token in ordinary text; ``"x = () => any;\\ntype delete_all"`` declares a tool nobody
declared. So every place a name enters (rendering, ``completion_grammar``,
``xgrammar_structural_tag``, ``to_outlines``, ``parse(tools=)``, ``validate``, the gateway)
asks :func:`name_problem`, through :func:`check_tool_name` or :func:`~.arguments.tool_schemas`.

The rule: letters and digits (any script), ``_``, ``$``, ``-`` and ``.``, at most
:data:`MAX_NAME_LENGTH` characters. That is every name the OpenAI function-calling API and
MCP allow, every name is a single word of the recipient terminal (never whitespace, ``<``,
``|`` or ``>``), and none can close or open TypeScript structure (no quote, bracket, ``=``,
``;``, ``/``, ``:`` or line break).

The length limit is the parser's: a header's text between two control tokens is read up to
:data:`MAX_HEADER_LENGTH` characters (HG104 beyond), the renderer refuses a longer header,
and a namespace and a name of :data:`MAX_NAME_LENGTH` each always fit in a call's header.
"""

from __future__ import annotations

import re

from ..base.errors import HarmonyGrammarError

__all__ = [
    "MAX_HEADER_LENGTH",
    "MAX_NAME_LENGTH",
    "ToolNameError",
    "check_tool_name",
    "name_problem",
]

#: The most characters of header text between two control tokens that the parser reads
#: (longer is HG104) and that the renderer writes. One limit for both, so a call that
#: renders always parses back.
MAX_HEADER_LENGTH = 4096
#: The longest tool or namespace name: ``assistant to=NAMESPACE.NAME`` with both at this
#: length, a channel and a content type still fit in :data:`MAX_HEADER_LENGTH`.
MAX_NAME_LENGTH = 1024

_NAME = re.compile(r"[\w$.\-]+")
# Room for "assistant", " to=", ".", "commentary" and a content type, with both names at most.
assert 2 * MAX_NAME_LENGTH + 256 <= MAX_HEADER_LENGTH


class ToolNameError(HarmonyGrammarError, ValueError):
    """A tool or namespace name that cannot be declared, called and read back safely."""


def _shown(name: str) -> str:
    return repr(name if len(name) <= 40 else name[:37] + "...")


def name_problem(name: object, *, what: str = "tool") -> str | None:
    """Why ``name`` cannot be a tool (or namespace) name, in one line; None when it can."""
    if not isinstance(name, str):
        return f"a {what} name must be a string, not {type(name).__name__}"
    if not name:
        return f"a {what} name must not be empty"
    if len(name) > MAX_NAME_LENGTH:
        return (
            f"{what} name {_shown(name)} is {len(name)} characters; the limit is "
            f"{MAX_NAME_LENGTH} (a call's header must fit the parser's {MAX_HEADER_LENGTH})"
        )
    if _NAME.fullmatch(name) is None:
        bad = next(c for c in name if _NAME.fullmatch(c) is None)
        return (
            f"{what} name {_shown(name)} holds {bad!r}: a name is letters, digits, _ $ - and . "
            "only (anything else could change the declarations or the call's header)"
        )
    return None


def check_tool_name(name: object, *, what: str = "tool") -> str:
    """``name`` when it is a safe tool (or namespace) name; else :class:`ToolNameError`."""
    problem = name_problem(name, what=what)
    if problem is not None:
        raise ToolNameError(problem)
    assert isinstance(name, str)
    return name
