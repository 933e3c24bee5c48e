"""Strict reading: the grammar alone, the fast path.

Strict mode is the empty repair table (:mod:`.repairs`), so it needs none of the lenient
engine's machinery: no header text held with its control tokens, no search, no rows asked
at any hook. :class:`StrictEngine` reads the pieces of the lexers (:mod:`.lexer`) with
Lark's LALR table of ``harmony.lark`` (:mod:`.lalr`) and Lark's contextual lexing of
header text (:class:`.grammar.HeaderLexer`), and every terminal the table takes goes to its
action (:mod:`.actions`, the one writer of message fields). Every deviation is an error
with its position, and everything up to the next ``<|start|>`` is skipped.

Why it is fast: header text is lexed once per parser state. How a text lexes depends only
on the parser's stack and the text (the scanners are chosen by the state; actions never
change either), and the stack is a tuple, so ``(stack, text)`` maps to the terminals read
and the stack after them (:meth:`.grammar.HeaderLexer.read`), memoised. Headers recur
(``assistant``, ``analysis``, `` to=functions.f``), so after the first few the header of a
message costs a dictionary look-up and its actions. Text that does not lex whole is read
terminal by terminal, as the grammar's lexer reads it, and its error is reported where it
stands.

The bookkeeping shared with the lenient reading is :class:`.engine.Engine`'s and the
modules it names: finishing a message (:func:`.actions.finish_message`), the ledger
(``engine.book``, :mod:`.ledger_book`), the diagnostics and their one emitter per code,
token-id facts and the end of input (:mod:`.engine_errors`). This class replaces each place
on the way of well-formed input where the lenient reading asks its table or holds header
text for it; an error reaches the shared emitter (HG100 :func:`.engine_errors.rejected_token`,
HG101, HG102, HG104), whose rows are the strict table's: none.
"""

from __future__ import annotations

from typing import Any

from .actions import ACTIONS
from .engine import Engine
from .engine_errors import rejected_token
from .grammar import header_lexer
from .header_reader import lex_header_text
from .lalr import LalrDriver
from .tokens import ControlToken

__all__ = ["StrictEngine"]

_TERMINAL_OF = {token: token.terminal for token in ControlToken}
_SPELLING_OF = {token: token.value for token in ControlToken}
_START = ControlToken.START.terminal


class StrictEngine(Engine):
    """The strict reading of pieces into messages and diagnostics (see the module docstring).

    Takes what :class:`.engine.Engine` takes; ``lenient`` must be False.
    """

    def __init__(self, *args: Any, **keywords: Any) -> None:
        super().__init__(*args, **keywords)
        if self.repairs:
            raise ValueError("StrictEngine reads strictly: lenient=True is Engine's")
        self._header_lexer = header_lexer()
        self._steps = self._table.steps

    def control(self, token: ControlToken, start: int, end: int) -> None:
        """A control token at ``[start, end)``: it ends any header text before it."""
        if self._pending.start >= 0:
            self._read_header_text()
        terminal = _TERMINAL_OF[token]
        if self.skipping:
            if terminal != _START:
                self.book.discard(start, end)
                return
            self.skipping = False
            self.parser = LalrDriver(self._table, self.resync_start)
        self.feed(terminal, _SPELLING_OF[token], start, end)

    def flush_pending(self, closer: str) -> None:
        """Read the pending header text (``closer``, the token that ends it, does not matter
        to the grammar's lexing)."""
        if self._pending.start >= 0:
            self._read_header_text()

    def _read_header_text(self) -> None:
        pending = self._pending
        # Strict mode holds no control token with header text: Engine.hold keeps one piece.
        _, text, start, end = pending.pieces.pop()
        pending.start = pending.end = -1
        pending.length = 0
        if self.skipping:
            return
        lexer = self._header_lexer
        try:  # HeaderLexer.read's memo, asked in place: the hot path
            reading = lexer.readings[(self.parser.stack, text)]
        except KeyError:
            reading = lexer.read(self.parser, text)
        if reading is None:
            lex_header_text(self, text, start, end)  # terminal by terminal, to the error
            return
        self.parser.stack, terminals = reading
        exact = self.exact_positions
        for name, value, offset in terminals:
            action = ACTIONS.get(name)
            if action is not None:
                if exact:
                    action(self, value, start + offset, start + offset + len(value))
                else:
                    action(self, value, start, end)

    def feed(self, terminal: str, value: str, start: int, end: int) -> None:
        """Feed one terminal; one the grammar refuses here is an error (HG100)."""
        parser = self.parser
        after = self._steps.get((parser.stack, terminal))  # LalrDriver.feed, inline
        if after is None:
            after = self._table.step(parser.stack, terminal)
        if not after:
            rejected_token(self, terminal, value, start, end)  # HG100 (no rows: strict)
            return
        parser.stack = after
        action = ACTIONS.get(terminal)
        if action is not None:
            action(self, value, start, end)
