"""The parse options: one frozen object behind :func:`~.parser.parse`, the stream parser, the
engine and the bridges.

:func:`~.parser.parse`, :class:`~.stream.StreamParser` and :class:`~.engine.Engine` take one
:class:`ParseOptions` (``options``) and, beside it, keywords that are exactly its fields
(:class:`ParseKeywords`), applied over it by :meth:`~harmony_grammar.base.options.Options.of`
(the library's one options idiom). ``parse(s, lenient=True)`` and
``parse(s, ParseOptions(lenient=True))`` are the same call; a new parse option is a field here
and nowhere else.

Checking a call's arguments against its tool's JSON Schema takes jsonschema, llguidance and
the schema compiler, which this layer does not import: it declares what a check must do
(:class:`ArgumentCheck`, and :class:`CallArguments` for one call) and a parse carries one
(``argument_check``). Its default, :data:`INSTALLED_CHECK`, asks whichever check is installed
when a call is read; the package's root installs the library's own
(:data:`harmony_grammar.tools.call_check.SCHEMA_CHECK`, :func:`install_argument_check`), once,
so ``parse(text, tools=...)`` checks arguments wherever it is called from, options made at
import time included; ``argument_check=None`` reads the tools' names only.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict

from ..base.deprecation import renamed_fields
from ..base.options import Options
from ..declarations.names import MAX_HEADER_LENGTH
from ..declarations.toolset import ToolsArgument, ToolSet
from .model import Role

__all__ = [
    "DEFAULT_MAX_HEADER_LENGTH",
    "INSTALLED_CHECK",
    "START_RULES",
    "ArgumentCheck",
    "CallArguments",
    "Diagnose",
    "ParseKeywords",
    "ParseOptions",
    "install_argument_check",
    "installed_argument_check",
]

#: Longest header (characters of header text) accepted before it is an error: the limit the
#: renderer also keeps (declarations/names.py), so what renders parses back.
DEFAULT_MAX_HEADER_LENGTH = MAX_HEADER_LENGTH

#: What a parse may start on: complete messages, model output after ``<|start|>{role}``, or a
#: conversation rendered for completion.
START_RULES = ("conversation", "completion", "prompt")

#: The engine's ``diagnose(code, message, start, end)``: how a check reports what it found.
Diagnose = Callable[[str, str, int, int], None]


class CallArguments(Protocol):
    """The check of one call's arguments, open while the engine reads the call's body."""

    def feed(self, text: str, start: int, end: int) -> None:
        """A piece of the body at ``[start, end)``; report the first bad character."""
        ...

    def close(self, content: str, start: int, end: int) -> None:
        """The body ``content`` ended at ``end``; report what is wrong with it, if anything."""
        ...


class ArgumentCheck(Protocol):
    """How a parse checks call arguments against the declared tools' parameters schemas.

    The engine resolves a call's recipient to its declared tool itself (HG181 when there is
    none; a custom tool's raw-text body is not checked) and asks this object only about
    JSON Schemas: whether each declared one can check anything (:meth:`schema_problem`, when
    the options are made) and, for each call, a :class:`CallArguments` (:meth:`open`).
    """

    def schema_problem(self, schema: Any) -> str | None:
        """Why ``schema`` cannot check a call's arguments (one line), or None when it can."""
        ...

    def open(self, schema: Mapping[str, Any], diagnose: Diagnose, *, exact: bool) -> CallArguments:
        """The check of one call to a tool with parameters ``schema``; it reports through
        ``diagnose``, at character offsets when ``exact`` (text input), else at the piece."""
        ...


_installed: ArgumentCheck | None = None


def install_argument_check(check: ArgumentCheck | None) -> None:
    """Make ``check`` the one :data:`INSTALLED_CHECK` asks. The package's root calls this
    once (``harmony_grammar/__init__.py``: the library's schema check)."""
    global _installed
    _installed = check


def installed_argument_check() -> ArgumentCheck | None:
    """The check :data:`INSTALLED_CHECK` asks now (None: none installed)."""
    return _installed


class _NoCheck:
    """One call's check when no check is installed: it finds nothing."""

    def feed(self, text: str, start: int, end: int) -> None:
        """Nothing to check."""

    def close(self, content: str, start: int, end: int) -> None:
        """Nothing to check."""


class _InstalledCheck:
    """The default ``argument_check``: the installed check, asked when a schema is judged or
    a call opened (not when the options are made, so options made before the package's root
    installed it, at import time, check too); with none installed it finds nothing."""

    def schema_problem(self, schema: Any) -> str | None:
        return None if _installed is None else _installed.schema_problem(schema)

    def open(self, schema: Mapping[str, Any], diagnose: Diagnose, *, exact: bool) -> CallArguments:
        if _installed is None:
            return _NoCheck()
        return _installed.open(schema, diagnose, exact=exact)

    def __reduce__(self) -> str:
        return "INSTALLED_CHECK"  # one object: options that carry it pickle by reference

    def __repr__(self) -> str:
        return "INSTALLED_CHECK"


#: The default ``argument_check`` of every :class:`ParseOptions`: whichever check is installed.
INSTALLED_CHECK: ArgumentCheck = _InstalledCheck()


class ParseKeywords(TypedDict, total=False):
    """The keyword arguments of ``parse`` (and the stream parser, the engine) that are
    options: the fields of :class:`ParseOptions`."""

    start: str
    role: str | Role
    lenient: bool
    #: ``lenient``'s former spelling, negated: ``strict=False`` still works for one release,
    #: with a DeprecationWarning.
    strict: bool
    tools: ToolsArgument
    max_header_length: int
    stripped_dialect: bool | None
    call_id: Callable[[], str] | None
    argument_check: ArgumentCheck | None


@renamed_fields({"strict": ("lenient", operator.not_)})
@dataclass(frozen=True, kw_only=True)
class ParseOptions(Options):
    """How Harmony is read. Checked and normalised on creation.

    - ``start``: ``conversation`` (complete messages, the default), ``completion`` (model
      output after ``<|start|>{role}``) or ``prompt`` (a conversation rendered for
      completion, ending in ``<|start|>{role}``);
    - ``role``: the author of a completion (``assistant``); a :class:`~.model.Role` after
      creation;
    - ``lenient``: True repairs the deviations real models produce, each with its warning
      (the CLI's ``--lenient``). Its former spelling ``strict`` (negated: ``strict=False`` is
      ``lenient=True``) still works for one release, as a keyword and an attribute, with a
      ``DeprecationWarning``;
    - ``tools``: OpenAI-style or plain ``{name, parameters}`` lists, ``{name: schema}``, or
      a :class:`~harmony_grammar.declarations.ToolSet`: each ``functions.*`` call's arguments (and
      each call into a declared ``namespace``'s tool, ``to=NAMESPACE.fn``) are checked
      against its schema as they are read. Held as the ``ToolSet`` read once
      (:meth:`~harmony_grammar.declarations.ToolSet.read`) after creation (None: no tools given,
      no call checked); a malformed list raises ``ValueError`` naming the tool;
    - ``max_header_length``: longer header text is an error (HG104), read as content;
    - ``stripped_dialect``: whether ordinary text may spell stripped control tokens (lenient
      only; None: yes for text, no for token ids, which are authoritative);
    - ``call_id``: makes the ids of the call events the stream parser emits (default
      ``call_0``, ``call_1``, ...);
    - ``argument_check``: how call arguments are checked against ``tools``
      (:class:`ArgumentCheck`; default :data:`INSTALLED_CHECK`, the library's schema check
      once ``harmony_grammar`` is imported; None checks only that a call's function is
      declared, HG181). It judges each parameters schema on creation: ``ValueError`` naming
      the tool for one that cannot check anything.

    Raises ValueError for an unknown ``start`` or ``role``.
    """

    start: str = "conversation"
    role: str | Role = Role.ASSISTANT
    lenient: bool = False
    tools: ToolsArgument = None
    max_header_length: int = DEFAULT_MAX_HEADER_LENGTH
    stripped_dialect: bool | None = None
    call_id: Callable[[], str] | None = None
    argument_check: ArgumentCheck | None = INSTALLED_CHECK

    def __post_init__(self) -> None:
        # Normalise in place (the object is frozen to everyone else): one spelling per value.
        if self.start not in START_RULES:
            raise ValueError(f"start must be one of {', '.join(START_RULES)}, not {self.start!r}")
        object.__setattr__(self, "role", Role(self.role))
        if self.tools is not None:
            tools = ToolSet.read(self.tools, reading=True)
            if self.argument_check is not None:
                tools.check(self.argument_check.schema_problem)
            object.__setattr__(self, "tools", tools)

    @property
    def author(self) -> Role:
        """``role`` as the enum."""
        role = self.role
        return role if type(role) is Role else Role(role)  # made once per parse: no enum call

    @property
    def schemas(self) -> Mapping[str, Any] | None:
        """The ``functions`` namespace as ``{name: schema}`` (None when no tools were
        given)."""
        return None if self.tools is None else ToolSet.read(self.tools).schemas

    @property
    def namespaced(self) -> Mapping[str, Any]:
        """The declared namespaces' tools by recipient (``NAMESPACE.fn``), whose calls are
        checked too (empty when no tools were given)."""
        return {} if self.tools is None else ToolSet.read(self.tools).namespaced
