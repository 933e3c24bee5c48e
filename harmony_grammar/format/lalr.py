"""Running the LALR table that Lark builds from ``harmony.lark``, token by token.

Lark's own interactive parser (``Lark.parse_interactive``) runs this same table but also
builds a parse tree, creating a ``Token`` per terminal and a ``Tree`` per reduction. The
engine never reads that tree (it acts on each terminal as it is accepted), and building it
costs about four times the parsing itself. So the engine drives Lark's table directly: a
stack of state numbers, Lark's shift/reduce actions, nothing else. The grammar, the
tables and their conflicts are all Lark's.
"""

from __future__ import annotations

import functools
from typing import Any

import lark
from lark.parsers.lalr_analysis import Shift

__all__ = ["LalrDriver", "LalrTable", "parse_table"]


@functools.lru_cache(maxsize=8)
def parse_table(parser: lark.Lark) -> LalrTable:
    """Lark's LALR parse table of ``parser`` (built with ``parser="lalr"``), as plain data.

    Converted once per parser: every engine shares it (the drivers only read it).
    """
    state = parser.parse_interactive(start=parser.options.start[0]).parser_state
    return LalrTable.from_lark(state.parse_conf.parse_table)


class LalrTable:
    """Lark's table with plain ``str`` keys and tuples: ``(True, state)`` for a shift,
    ``(False, size, rule name)`` for a reduction; ``goto[state][rule name]`` after one."""

    __slots__ = ("actions", "end_states", "goto", "start_states")

    def __init__(
        self,
        actions: dict[int, dict[str, tuple[Any, ...]]],
        goto: dict[int, dict[str, int]],
        start_states: dict[str, int],
        end_states: dict[str, int],
    ) -> None:
        self.actions, self.goto = actions, goto
        self.start_states, self.end_states = start_states, end_states

    @classmethod
    def from_lark(cls, table: Any) -> LalrTable:
        """Convert a ``lark.parsers.lalr_analysis.IntParseTable``."""
        actions: dict[int, dict[str, tuple[Any, ...]]] = {}
        goto: dict[int, dict[str, int]] = {}
        for state, row in table.states.items():
            actions[state], goto[state] = {}, {}
            for symbol, (kind, arg) in row.items():
                name = str(symbol)
                if kind is Shift:
                    if name.isupper() or (name.startswith(("$", "_")) and name[1:2].isupper()):
                        actions[state][name] = (True, arg)
                    goto[state][name] = arg
                else:
                    actions[state][name] = (False, len(arg.expansion), str(arg.origin.name))
        return cls(actions, goto, dict(table.start_states), dict(table.end_states))


class LalrDriver:
    """Feeds terminals to Lark's LALR table; a rejected terminal leaves it unchanged."""

    __slots__ = ("_actions", "_end_state", "_goto", "_stack")

    def __init__(self, table: LalrTable, start: str) -> None:
        self._actions = table.actions
        self._goto = table.goto
        self._stack: list[int] = [table.start_states[start]]
        self._end_state: int = table.end_states[start]

    def copy(self) -> LalrDriver:
        """An independent driver in the same state (for trying input without feeding it)."""
        twin = object.__new__(LalrDriver)
        twin._actions, twin._goto, twin._end_state = self._actions, self._goto, self._end_state
        twin._stack = self._stack[:]
        return twin

    @property
    def at_start(self) -> bool:
        """True before any terminal was shifted."""
        return len(self._stack) == 1

    @property
    def position(self) -> int:
        """The current LALR state (the top of the stack)."""
        return self._stack[-1]

    def choices(self) -> dict[str, tuple[Any, ...]]:
        """The actions of the current state: their keys are the acceptable terminals."""
        return self._actions[self._stack[-1]]

    def feed(self, terminal: str) -> bool:
        """Shift ``terminal`` after any reductions; False (stack untouched) if rejected."""
        actions, stack = self._actions, self._stack
        action = actions[stack[-1]].get(terminal)
        if action is None:
            return False
        if action[0]:
            stack.append(action[1])
            return True
        saved = stack[:]
        goto = self._goto
        while not action[0]:
            size = action[1]
            if size:
                del stack[-size:]
            stack.append(goto[stack[-1]][action[2]])
            action = actions[stack[-1]].get(terminal)
            if action is None:
                # LALR may reduce on a lookahead it then rejects: undo those reductions.
                stack[:] = saved
                return False
        stack.append(action[1])
        return True

    def feed_eof(self) -> bool:
        """Reduce to the start symbol at the end of input; False if input is incomplete."""
        actions, goto, stack = self._actions, self._goto, self._stack
        saved = stack[:]
        while stack[-1] != self._end_state:
            action = actions[stack[-1]].get("$END")
            if action is None or action[0]:
                stack[:] = saved
                return False
            if action[1]:
                del stack[-action[1] :]
            stack.append(goto[stack[-1]][action[2]])
        return True
