"""``stop`` strings: text cut at the first match, entries kept with the text they spell."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["StopFilter"]


class StopFilter:
    """Cuts text at the first of the ``stop`` strings, holding back a possible partial match.

    Text arrives in pieces, each with the log-probability entries of the ids that wrote it
    (none where none were asked for); a piece is held or sent whole, so each text sent goes
    with exactly the entries that spell it. ``feed(text, entries)`` returns what is safe to
    send and its entries; ``stopped`` turns true at a match, and what is sent then ends
    where the stop string begins: the piece it begins inside is sent up to there without
    its entries (they spell the stop string too), and nothing after it is sent at all.
    ``flush()`` returns what was held back (the stream ended without a match).
    """

    def __init__(self, stops: Sequence[str]) -> None:
        self._stops = tuple(stops)
        self._hold = max((len(s) for s in stops), default=1) - 1
        self._pieces: list[tuple[str, list[Any]]] = []
        self.stopped = False

    def feed(self, text: str, entries: Sequence[Any] = ()) -> tuple[str, list[Any]]:
        """The part of the text so far that can go out now, and its entries."""
        if self.stopped:
            return "", []
        self._pieces.append((text, list(entries)))
        held = "".join(piece for piece, _ in self._pieces)
        hits = [i for i in (held.find(s) for s in self._stops) if i >= 0]
        if hits:
            self.stopped = True
            return self._take(min(hits), partial=True)
        return self._take(max(len(held) - self._hold, 0), partial=False)

    def _take(self, cut: int, *, partial: bool) -> tuple[str, list[Any]]:
        """The whole pieces before ``cut`` (and, when ``partial``, the text of the piece
        ``cut`` falls inside, without its entries); the rest stays held, or is dropped."""
        text: list[str] = []
        entries: list[Any] = []
        at = 0
        while self._pieces and at + len(self._pieces[0][0]) <= cut:
            piece, scores = self._pieces.pop(0)
            text.append(piece)
            entries.extend(scores)
            at += len(piece)
        if partial:
            if self._pieces and cut > at:
                text.append(self._pieces[0][0][: cut - at])
            self._pieces = []
        return "".join(text), entries

    def flush(self) -> tuple[str, list[Any]]:
        """What was held back, now that no more text comes, and its entries."""
        out = self._take(sum(len(piece) for piece, _ in self._pieces), partial=True)
        return out
