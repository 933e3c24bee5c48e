"""Bounded memos of the readers' pure steps (the grammar's reading of a header text).

A reading of header text depends only on the parser's stack and the text, so the readers
keep it: headers recur (``assistant``, ``analysis``, `` to=functions.f``), and after the
first few a header costs a look-up. Hostile input must not grow memory without bound, so a
memo keeps at most :data:`MAX_ENTRIES` readings of texts of at most :data:`MAX_TEXT`
characters (about a megabyte in the worst case), and starts over when full.
"""

from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["MAX_ENTRIES", "MAX_TEXT", "Memo"]

#: The most readings one memo keeps.
MAX_ENTRIES = 4096
#: The longest text whose reading is kept (real headers are a few dozen characters).
MAX_TEXT = 256

_K = TypeVar("_K")
_V = TypeVar("_V")


class Memo(dict[_K, _V], Generic[_K, _V]):
    """A dict that keeps at most :data:`MAX_ENTRIES` entries (:meth:`keep`)."""

    def keep(self, key: _K, value: _V, size: int) -> None:
        """Keep ``value`` for ``key`` (the reading of ``size`` characters), if small enough."""
        if size <= MAX_TEXT:
            if len(self) >= MAX_ENTRIES:
                self.clear()
            self[key] = value
