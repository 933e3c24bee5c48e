"""The conservation ledger as a parse writes it: where every piece of input went.

The engine keeps one :class:`LedgerBook`. Each finished message closes its draft's ranges
into it (content, header fields, unread text, where its body began); what no message holds
is discarded into it, and a diagnostic names it. :meth:`LedgerBook.ledger` hands out a
snapshot (:class:`.model.Ledger`), which :mod:`.accounting` checks.
"""

from __future__ import annotations

from .draft import Draft
from .model import Ledger, Span

__all__ = ["LedgerBook"]


class LedgerBook:
    """The ledger's ranges so far: per finished message, and discarded."""

    __slots__ = ("_bodies", "_content", "_discarded", "_fields", "_unread", "next_turn")

    def __init__(self) -> None:
        self._content: list[list[int]] = []
        self._bodies: list[int] = []
        self._fields: list[list[tuple[str, int, int]]] = []
        self._unread: list[list[int]] = []
        self._discarded: list[int] = []  # flat [start, end, ...], adjacent ranges merged
        #: Where a prompt's trailing ``<|start|>{author}`` stood (None: there is none).
        self.next_turn: Span | None = None

    def close(self, draft: Draft) -> None:
        """Record a finished message's ranges (the draft is done with them)."""
        self._fields.append(draft.fields)
        self._unread.append(draft.unread_spans)
        self._content.append(draft.content_spans)
        self._bodies.append(draft.body_start)

    def discard(self, start: int, end: int) -> None:
        """Record ``[start, end)`` as held by no message (a diagnostic must name it)."""
        if end <= start:
            return
        spans = self._discarded
        if spans and start < spans[-2]:  # held text discarded after a later token: re-sort
            pairs = sorted([*zip(spans[::2], spans[1::2], strict=True), (start, end)])
            spans.clear()
            for first, last in pairs:
                self.discard(first, last)
        elif spans and spans[-1] >= start:
            spans[-1] = max(spans[-1], end)
        else:
            spans += (start, end)

    def ledger(self, length: int) -> Ledger:
        """The ledger so far (``length``: the input's length in its units); a snapshot:
        parsing on does not change it."""
        return Ledger(
            length,
            list(self._content),
            list(self._discarded),
            list(self._bodies),
            self.next_turn,
            list(self._fields),
            list(self._unread),
        )
