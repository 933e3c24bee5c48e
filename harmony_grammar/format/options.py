"""The parse options: one frozen object behind :func:`~.parser.parse`, the stream parser, the
engine and the bridges.

:func:`~.parser.parse`, :class:`~.stream.StreamParser` and :class:`~.engine.Engine` take one
:class:`ParseOptions` (``options``) and, beside it, keywords that are exactly its fields
(:class:`ParseKeywords`), applied over it by :meth:`~harmony_grammar.base.options.Options.of`
(the library's one options idiom). ``parse(s, strict=False)`` and
``parse(s, ParseOptions(strict=False))`` are the same call; a new parse option is a field here
and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from ..base.options import Options
from ..tools.names import MAX_HEADER_LENGTH
from ..tools.toolset import ToolsArgument, ToolSet
from .model import Role

__all__ = ["DEFAULT_MAX_HEADER_LENGTH", "START_RULES", "ParseKeywords", "ParseOptions"]

#: Longest header (characters of header text) accepted before it is an error: the limit the
#: renderer also keeps (tools/names.py), so what renders parses back.
DEFAULT_MAX_HEADER_LENGTH = MAX_HEADER_LENGTH

#: What a parse may start on: complete messages, model output after ``<|start|>{role}``, or a
#: conversation rendered for completion.
START_RULES = ("conversation", "completion", "prompt")


class ParseKeywords(TypedDict, total=False):
    """The keyword arguments of ``parse`` (and the stream parser, the engine) that are
    options: the fields of :class:`ParseOptions`."""

    start: str
    role: str | Role
    strict: bool
    tools: ToolsArgument
    max_header_length: int
    stripped_dialect: bool | None
    call_id: Callable[[], str] | None


@dataclass(frozen=True, kw_only=True)
class ParseOptions(Options):
    """How Harmony is read. Checked and normalised on creation.

    - ``start``: ``conversation`` (complete messages, the default), ``completion`` (model
      output after ``<|start|>{role}``) or ``prompt`` (a conversation rendered for
      completion, ending in ``<|start|>{role}``);
    - ``role``: the author of a completion (``assistant``); a :class:`~.model.Role` after
      creation;
    - ``strict``: False repairs the deviations real models produce, each with its warning;
    - ``tools``: OpenAI-style or plain ``{name, parameters}`` lists, ``{name: schema}``, or
      a :class:`~harmony_grammar.tools.ToolSet`: each ``functions.*`` call's arguments (and
      each call into a declared ``namespace``'s tool, ``to=NAMESPACE.fn``) are checked
      against its schema as they are read. Held as the ``ToolSet`` read once
      (:meth:`~harmony_grammar.tools.ToolSet.read`) after creation (None: no tools given,
      no call checked); a malformed list raises ``ValueError`` naming the tool;
    - ``max_header_length``: longer header text is an error (HG104), read as content;
    - ``stripped_dialect``: whether ordinary text may spell stripped control tokens (lenient
      only; None: yes for text, no for token ids, which are authoritative);
    - ``call_id``: makes the ids of the call events the stream parser emits (default
      ``call_0``, ``call_1``, ...).

    Raises ValueError for an unknown ``start`` or ``role``.
    """

    start: str = "conversation"
    role: str | Role = Role.ASSISTANT
    strict: bool = True
    tools: ToolsArgument = None
    max_header_length: int = DEFAULT_MAX_HEADER_LENGTH
    stripped_dialect: bool | None = None
    call_id: Callable[[], str] | None = None

    def __post_init__(self) -> None:
        # Normalise in place (the object is frozen to everyone else): one spelling per value.
        if self.start not in START_RULES:
            raise ValueError(f"start must be one of {', '.join(START_RULES)}, not {self.start!r}")
        object.__setattr__(self, "role", Role(self.role))
        if self.tools is not None:
            object.__setattr__(self, "tools", ToolSet.read(self.tools, reading=True))

    @property
    def author(self) -> Role:
        """``role`` as the enum."""
        return Role(self.role)

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
