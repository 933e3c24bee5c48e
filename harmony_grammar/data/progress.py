"""A one-line progress bar for long runs, and a one-line "working" note for commands that take
seconds before their first output, on a terminal's stderr only (a pipe or a log gets none)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

__all__ = ["Progress", "working"]


@contextmanager
def working(label: str, stream: IO[str] | None = None) -> Iterator[None]:
    """``label ...`` on a terminal's stderr while the block runs, erased when it ends (the
    output that follows starts on a clean line); nothing when stderr is not a TTY."""
    out = stream if stream is not None else sys.stderr
    shown = bool(getattr(out, "isatty", lambda: False)())
    if shown:
        out.write(f"{label} ...")
        out.flush()
    try:
        yield
    finally:
        if shown:
            out.write("\r\x1b[K")
            out.flush()


class Progress:
    """A one-line progress bar on a terminal's stderr; silent when stderr is not a TTY.

    ``total`` is the work in the unit of :meth:`advance` (bytes of a file, or files), or 0
    when unknown (then only counts and rate are shown).
    """

    #: Seconds between redraws: drawing per record would cost more than validating.
    INTERVAL = 0.2

    def __init__(self, total: int, label: str, stream: IO[str] | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self._stream, "isatty", lambda: False)())
        self._total, self._label = total, label
        self._done = self._count = 0
        self._started = self._drawn = time.monotonic()

    def advance(self, amount: int) -> None:
        """One more input done, ``amount`` units of the total."""
        self._done += amount
        self._count += 1
        if self.enabled and time.monotonic() - self._drawn >= self.INTERVAL:
            self._draw()

    def _draw(self) -> None:
        now = time.monotonic()
        self._drawn = now
        rate = self._count / max(now - self._started, 1e-9)
        text = f"{self._count:,} {self._label}, {rate:,.0f}/s"
        if self._total > 0:
            fraction = min(self._done / self._total, 1.0)
            filled = int(fraction * 30)
            text = f"[{'#' * filled}{'.' * (30 - filled)}] {fraction:4.0%} {text}"
        self._stream.write(f"\r{text}\x1b[K")
        self._stream.flush()

    def clear(self) -> None:
        """Erase the bar (the next :meth:`advance` draws it again)."""
        if self.enabled:
            self._stream.write("\r\x1b[K")
            self._stream.flush()
