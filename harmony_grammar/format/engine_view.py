"""The engine as its actions and its header reader see it (a protocol, no code).

:mod:`.actions` and :mod:`.header_reader` work on the engine's state without importing
:mod:`.engine` (which imports them): this protocol is what they may use, on top of what
every repair may (:class:`.recoveries.Repairable`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .events import Event
from .options import ArgumentCheck, CallArguments
from .recoveries import Repairable
from .repairs import RepairTable
from .tokens import ControlToken

__all__ = ["EngineView"]


class EngineView(Repairable, Protocol):
    """The engine's state and operations beyond a repair's."""

    #: The repair table (strict mode: the empty one).
    repairs: RepairTable
    #: Where events go (None: nobody listens).
    events: list[Event] | None
    #: Makes the id of the next tool call.
    new_call_id: Callable[[], str]
    #: The tools a call's arguments are checked against (None: not checked).
    tools: Mapping[str, Any] | None
    #: The declared namespaces' tools by recipient (``NAMESPACE.fn``), checked as well.
    namespaced: Mapping[str, Any]
    #: How call arguments are checked (None: only that the function is declared, HG181).
    argument_check: ArgumentCheck | None
    #: The check of the call being read (None when none is open).
    call_check: CallArguments | None
    #: True after an error, until the next ``<|start|>`` (strict mode).
    skipping: bool

    @property
    def header_open(self) -> bool:
        """Whether a header is being read."""
        ...

    def act(self, terminal: str, value: str, start: int, end: int) -> None:
        """Run the action of a terminal the parser already took."""
        ...

    def control(self, token: ControlToken, start: int, end: int) -> None:
        """A control token at ``[start, end)`` (fed anew)."""
        ...

    def flush_pending(self, closer: str) -> None:
        """Read the pending header text, ended by ``closer``."""
        ...

    def stop(self, reason: str, position: int) -> None:
        """Generation must stop (``call``, ``return`` or ``abort``)."""
        ...

    def error(
        self, code: str, message: str, start: int, end: int, expected: tuple[str, ...] = ()
    ) -> None:
        """An unrecoverable error: report it and skip to the next ``<|start|>``."""
        ...

    def expected_terminals(self) -> tuple[str, ...]:
        """What the grammar would accept here, in readable form."""
        ...
