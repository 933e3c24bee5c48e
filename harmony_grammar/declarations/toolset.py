"""Reading a tools list: the one reader, and what a tool must be to be declared.

A request's tools are read once, by :meth:`ToolSet.read`, into a typed, immutable
:class:`ToolSet`; everything below the reader takes that set and asks it (the parser's call
checks, the turn grammar, the bridges' namespaces and custom tools), so no layer walks the
list again. :func:`tool_schemas` and :func:`tool_targets` are its two views for callers that
hold a plain list (``parse(tools=...)``, ``validate --tools``).

A tool's name passes the one name check (:mod:`.names`). Whether its parameters are a JSON
Schema that can check arguments is not this layer's question (it would need jsonschema): the
argument check answers it (:meth:`ToolSet.check`, given
:func:`harmony_grammar.tools.parameters.schema_problem` or a parse's
:attr:`~harmony_grammar.format.options.ParseOptions.argument_check`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .custom import FUNCTIONS, CustomBody, chat_custom_entry, entry_body, namespace_entries
from .names import check_tool_name

__all__ = ["SchemaProblem", "ToolSet", "ToolsArgument", "tool_schemas", "tool_targets"]

#: Why a parameters schema cannot check a call's arguments (one line), or None when it can.
SchemaProblem = Callable[[Any], "str | None"]

#: The tool kinds a model can call; any other Responses tool type is hosted.
CALLABLE_KINDS = ("function", "custom", "namespace")


@dataclass(frozen=True, eq=False)
class ToolSet:
    """A tools list read once (:meth:`read`): what the model can call, and what it cannot.

    ``callables`` are the callable entries, OpenAI-style (``function``, ``custom``,
    ``namespace``; a Chat function named ``NAMESPACE.fn`` as the function ``fn`` of a
    ``NAMESPACE`` entry): what the turn grammar is written from. ``targets`` maps the
    recipient a call is written to (``functions.NAME``, ``NAMESPACE.NAME``) to the tool's
    parameters schema or its :class:`~.custom.CustomBody`. ``hosted`` names the hosted
    tools (``web_search``, ...), each once. Two sets are equal (and hash alike) when their
    callables and hosted tools are: a grammar written for one serves the other.
    """

    callables: tuple[Mapping[str, Any], ...] = ()
    targets: Mapping[str, Any] = field(default_factory=dict)
    hosted: tuple[str, ...] = ()
    #: The judges :meth:`check` asked that found nothing wrong: a set is read once and handed
    #: on (every parse option made from it asks again), so the same judge is asked once.
    _passed: list[SchemaProblem] = field(default_factory=list, init=False, repr=False)

    @classmethod
    def read(cls, tools: ToolsArgument, *, chat: bool = False, reading: bool = False) -> ToolSet:
        """The one reader of a tools list (a ``ToolSet`` is returned as it is).

        Takes OpenAI-style lists (Chat's ``{"type": "function", "function": {...}}``,
        Responses' flat entries, ``custom`` and ``namespace`` tools, hosted tools), plain
        ``{"name", "parameters"}`` entries, or a ``{name: schema}`` mapping. ``chat=True``
        reads a Chat custom tool (``{"type": "custom", "custom": {...}}``) as the Responses
        API's entry (:func:`~.custom.chat_custom_entry`), and a Chat tool named
        ``NAMESPACE.fn`` as ``fn`` of the namespace ``NAMESPACE``, as the renderer declares
        it. Raises ``ValueError`` with one line naming the tool for a malformed list, a name
        that fails the name check (:class:`~.names.ToolNameError`), or two tools with one
        recipient. The parameters are not judged here: :meth:`check` does that.
        ``reading=True`` (the parser's ``tools=``) also takes a function name that rendering
        refuses but a model's output may call (``Web Search``: LM Studio's names hold spaces),
        never one that spells a control token or breaks a line.
        """
        if isinstance(tools, ToolSet):
            return tools
        if tools is None:
            return cls()
        if isinstance(tools, Mapping):
            entries: list[Any] = [_mapping_entry(name, body) for name, body in tools.items()]
        else:
            entries = list(tools)
            if chat:
                entries = _chat_namespaces(entries)
        callables: list[Mapping[str, Any]] = []
        functions: dict[str, Any] = {}  # recipient -> body, in the functions namespace
        others: dict[str, Any] = {}  # ... in the other namespaces
        hosted: list[str] = []
        for tool in entries:
            if not isinstance(tool, Mapping):
                raise ValueError(f"a tool must be an object, not {type(tool).__name__}")
            kind = tool.get("type", "function")
            if kind == "namespace":
                found = [
                    (f"{namespace}.{check_tool_name(entry.get('name'))}", entry)
                    for namespace, entry in namespace_entries(tool)
                ]
            elif kind in ("function", "custom"):
                spec = tool.get("function", tool) if kind == "function" else tool
                name = spec.get("name") if isinstance(spec, Mapping) else None
                if not isinstance(name, str):
                    raise ValueError(f"a tool without a name: {_short(tool)}")
                checked = _read_name(name) if reading else check_tool_name(name)
                found = [(f"{FUNCTIONS}.{checked}", tool)]
            else:
                if isinstance(kind, str) and kind not in hosted:
                    hosted.append(kind)  # web_search, file_search, ...: named, not declared
                continue
            for recipient, entry in found:
                body = entry_body(entry)
                if recipient in functions or recipient in others:
                    raise ValueError(f"two tools are called as {recipient!r}")
                (others if kind == "namespace" else functions)[recipient] = body
            callables.append(tool)
        # The functions namespace first, as it is declared first (the grammar's order).
        return cls(tuple(callables), {**functions, **others}, tuple(hosted))

    def check(self, problem: SchemaProblem) -> ToolSet:
        """This set, once ``problem`` finds nothing wrong with any tool's parameters schema (a
        custom tool's body is raw text, not judged); else ``ValueError`` with one line naming
        the first tool, in declaration order."""
        if problem in self._passed:  # a bound method equals another of its object and function
            return self
        for recipient, body in self.targets.items():
            found = None if isinstance(body, CustomBody) else problem(body)
            if found is not None:
                raise ValueError(f"tool {_shown(recipient)!r}: the parameters {found}")
        self._passed.append(problem)
        return self

    @property
    def schemas(self) -> dict[str, Any]:
        """The ``functions`` namespace as ``{name: parameters schema or CustomBody}``."""
        prefix = f"{FUNCTIONS}."
        return {
            recipient[len(prefix) :]: body
            for recipient, body in self.targets.items()
            if recipient.startswith(prefix)
        }

    @property
    def namespaced(self) -> dict[str, Any]:
        """The tools of the ``namespace`` entries by recipient (``NAMESPACE.NAME``): the
        :attr:`targets` that :attr:`schemas` leaves out, for the parser's call check."""
        prefix = f"{FUNCTIONS}."
        return {r: body for r, body in self.targets.items() if not r.startswith(prefix)}

    @property
    def namespaces(self) -> tuple[str, ...]:
        """The namespaces besides ``functions`` (calls into them are tool calls)."""
        return tuple(str(t["name"]) for t in self.callables if t.get("type") == "namespace")

    @property
    def custom(self) -> frozenset[str]:
        """The recipients of the custom tools (raw-text input, not JSON)."""
        return frozenset(r for r, body in self.targets.items() if isinstance(body, CustomBody))

    def __bool__(self) -> bool:
        return bool(self.callables)

    def _key(self) -> str:
        return json.dumps([list(self.callables), list(self.hosted)], default=_json_default)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolSet) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


#: What ``tools=`` accepts: a :class:`ToolSet`, OpenAI-style or plain tool lists, or
#: ``{name: schema}``.
ToolsArgument = ToolSet | Iterable[Mapping[str, Any]] | Mapping[str, Any] | None


def tool_schemas(tools: ToolsArgument) -> dict[str, Any]:
    """``{name: parameters schema}`` of the ``functions`` namespace (a custom tool's value is
    its :class:`~.custom.CustomBody`): :attr:`ToolSet.schemas` of :meth:`ToolSet.read`."""
    return ToolSet.read(tools).schemas


def tool_targets(tools: ToolsArgument) -> dict[str, Any]:
    """Every callable tool by the recipient a call to it is written to (``functions.NAME``,
    ``NAMESPACE.NAME``): :attr:`ToolSet.targets` of :meth:`ToolSet.read`."""
    return dict(ToolSet.read(tools).targets)


def _mapping_entry(name: Any, body: Any) -> dict[str, Any]:
    """A ``{name: schema}`` item as a tool entry (a CustomBody as the custom tool it was)."""
    if isinstance(body, CustomBody):
        return {"type": "custom", "name": name, "format": body.to_json()}
    return {"type": "function", "name": name, "parameters": body}


def _chat_namespaces(tools: list[Any]) -> list[Any]:
    """Chat tools as the Responses API's entries: a custom tool's ``custom`` object read by
    :func:`~.custom.chat_custom_entry` (so both APIs' custom tools take one path from here
    on), and each tool named ``NAMESPACE.fn`` moved into a ``NAMESPACE`` entry (at its first
    tool's place), as the renderer declares it."""
    out: list[Any] = []
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for tool in tools:
        entry: Mapping[str, Any] | None = None
        if isinstance(tool, Mapping) and tool.get("type") == "custom":
            tool = entry = chat_custom_entry(tool)
        elif isinstance(tool, Mapping) and isinstance(tool.get("function"), Mapping):
            entry = {**tool["function"], "type": "function"}
        name = entry.get("name") if entry is not None else None
        namespace, dot, short = name.partition(".") if isinstance(name, str) else ("", "", "")
        if not dot or entry is None:
            out.append(tool)
            continue
        if namespace not in grouped:
            grouped[namespace] = []
            out.append({"type": "namespace", "name": namespace, "tools": grouped[namespace]})
        grouped[namespace].append({**entry, "name": short})
    return out


def _shown(recipient: str) -> str:
    """A recipient as errors name its tool: ``fn`` for ``functions.fn``."""
    prefix = f"{FUNCTIONS}."
    return recipient[len(prefix) :] if recipient.startswith(prefix) else recipient


def _json_default(value: Any) -> Any:
    if isinstance(value, CustomBody):
        return value.to_json()
    raise TypeError(type(value).__name__)


def _short(value: Any) -> str:
    try:
        return json.dumps(value)[:80]
    except (TypeError, ValueError, RecursionError):
        return type(value).__name__


def _read_name(name: str) -> str:
    """A function name as a model's output may call it: what rendering takes, or a name
    with spaces (never a control token's spelling, a line break or an empty name)."""
    if " " in name and name.strip() == name and "<|" not in name and name.isprintable():
        return check_tool_name(name.replace(" ", "_")) and name
    return check_tool_name(name)
