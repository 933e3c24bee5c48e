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

__all__ = ["MAX_STEPS", "LalrDriver", "LalrTable", "parse_table"]


@functools.lru_cache(maxsize=8)
def parse_table(parser: lark.Lark) -> LalrTable:
    """Lark's LALR parse table of ``parser`` (built with ``parser="lalr"``), as plain data.

    Converted once per parser: every engine shares it (the drivers only read it).
    """
    state = parser.parse_interactive(start=parser.options.start[0]).parser_state
    return LalrTable.from_lark(state.parse_conf.parse_table)


#: The most memoised steps a table keeps (``LalrTable.steps``); past it the memo starts over.
#: The grammars' stacks are bounded (their repetitions are left-recursive), so in practice
#: the memo fills once with every step there is and stays.
MAX_STEPS = 1 << 16


class LalrTable:
    """Lark's table with plain ``str`` keys and tuples: ``(True, state)`` for a shift,
    ``(False, size, rule name)`` for a reduction; ``goto[state][rule name]`` after one.

    ``steps`` memoises the drivers' work: ``(stack, terminal)`` to the stack after the
    terminal's reductions and shift (``()`` when the table rejects it; ``$END`` reduces to
    the start symbol's end state). A stack is a tuple of states, so every driver shares it.
    """

    __slots__ = ("actions", "end_states", "goto", "start_states", "steps")

    def __init__(
        self,
        actions: dict[int, dict[str, tuple[Any, ...]]],
        goto: dict[int, dict[str, int]],
        start_states: dict[str, int],
        end_states: dict[str, int],
    ) -> None:
        self.actions, self.goto = actions, goto
        self.start_states, self.end_states = start_states, end_states
        self.steps: dict[tuple[tuple[int, ...], str], tuple[int, ...]] = {}

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

    def step(self, stack: tuple[int, ...], terminal: str) -> tuple[int, ...]:
        """The stack after ``terminal`` (its reductions, then its shift), ``()`` if rejected.

        LALR may reduce on a lookahead it then rejects: such reductions are not kept.
        """
        key = (stack, terminal)
        after = self.steps.get(key)
        if after is None:
            after = self._step(list(stack), terminal)
            if len(self.steps) >= MAX_STEPS:
                self.steps.clear()
            self.steps[key] = after
        return after

    def _step(self, stack: list[int], terminal: str) -> tuple[int, ...]:
        actions, goto = self.actions, self.goto
        action = actions[stack[-1]].get(terminal)
        while action is not None and not action[0]:
            size = action[1]
            if size:
                del stack[-size:]
            stack.append(goto[stack[-1]][action[2]])
            action = actions[stack[-1]].get(terminal)
        if action is None:
            return ()
        stack.append(action[1])
        return tuple(stack)

    def end(self, stack: tuple[int, ...], end_state: int) -> tuple[int, ...]:
        """The stack reduced to ``end_state`` at the end of input, ``()`` if it cannot be."""
        key = (stack, "$END")
        after = self.steps.get(key)
        if after is None:
            actions, goto, work = self.actions, self.goto, list(stack)
            while work[-1] != end_state:
                action = actions[work[-1]].get("$END")
                if action is None or action[0]:
                    work = []
                    break
                if action[1]:
                    del work[-action[1] :]
                work.append(goto[work[-1]][action[2]])
            after = tuple(work)
            if len(self.steps) >= MAX_STEPS:
                self.steps.clear()
            self.steps[key] = after
        return after


class LalrDriver:
    """Feeds terminals to Lark's LALR table; a rejected terminal leaves it unchanged.

    The stack is a tuple (a driver's copy is free) and each step is memoised by the table.
    """

    __slots__ = ("_end_state", "_table", "stack")

    def __init__(self, table: LalrTable, start: str) -> None:
        self._table = table
        #: The stack of LALR states (a tuple: replaced, never changed in place).
        self.stack: tuple[int, ...] = (table.start_states[start],)
        self._end_state: int = table.end_states[start]

    def copy(self) -> LalrDriver:
        """An independent driver in the same state (for trying input without feeding it)."""
        twin = object.__new__(LalrDriver)
        twin._table, twin._end_state, twin.stack = self._table, self._end_state, self.stack
        return twin

    @property
    def at_start(self) -> bool:
        """True before any terminal was shifted."""
        return len(self.stack) == 1

    @property
    def position(self) -> int:
        """The current LALR state (the top of the stack)."""
        return self.stack[-1]

    def choices(self) -> dict[str, tuple[Any, ...]]:
        """The actions of the current state: their keys are the acceptable terminals."""
        return self._table.actions[self.stack[-1]]

    def feed(self, terminal: str) -> bool:
        """Shift ``terminal`` after any reductions; False (stack untouched) if rejected."""
        table = self._table
        after = table.steps.get((self.stack, terminal))
        if after is None:
            after = table.step(self.stack, terminal)
        if after:
            self.stack = after
            return True
        return False

    def feed_eof(self) -> bool:
        """Reduce to the start symbol at the end of input; False if input is incomplete."""
        after = self._table.end(self.stack, self._end_state)
        if after:
            self.stack = after
            return True
        return False
