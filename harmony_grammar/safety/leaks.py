"""Detecting Harmony markup that leaked into visible text or into tool-call arguments.

Theory of operation
-------------------
This module owns the detector: it runs the signal patterns of :mod:`.signals` (the H, M,
C, G, S, B, R and T codes of :class:`~.signals.LeakSignal`) over the text, keeps the spans
that the surface's mask from :mod:`.masks` counts (quoted mentions of Harmony do not), and
fuses them into a :class:`LeakReport`. T has no pattern: on the ``tool_arg`` surface the first
counted H or M, which lies after the argument's JSON value, also becomes the T span.

Fusion: H triggers alone, and so does T; M triggers only with a corroborating C, G, S, B or
R span within :data:`PROXIMITY` characters, because documentation and tests legitimately
write ``to=functions.x``.

Streaming: :class:`LeakDetector` is the only implementation; :func:`detect_leak` feeds it the
whole text at once. Every pattern has a bounded length and the quoting state depends only on
text to the left, so the detector holds back a fixed tail (:data:`HOLD`) and otherwise
decides exactly as the batch does: the spans and the report are the same for any chunking.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base.enums import StrEnum
from ..format.model import Span
from .masks import JsonArgumentMask, ProseMask
from .signals import LOOKBACK, MAX_MATCH, SIGNAL_PATTERNS, LeakSignal, SignalPattern

__all__ = [
    "HOLD",
    "PROXIMITY",
    "LeakDetector",
    "LeakReport",
    "LeakSpan",
    "LeakSurface",
    "detect_leak",
    "mention_spans",
]


class LeakSurface(StrEnum):
    """What the text is: visible model output, or the arguments of a tool call."""

    TEXT = "text"
    TOOL_ARG = "tool_arg"


@dataclass(frozen=True, slots=True)
class LeakSpan:
    """One piece of evidence: ``text == source[start:end]``."""

    signal: LeakSignal
    start: int
    end: int
    text: str

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return {
            "signal": self.signal.value,
            "start": self.start,
            "end": self.end,
            "text": self.text,
        }


@dataclass(frozen=True, slots=True)
class LeakReport:
    """The verdict: ``triggered``, every signal seen, every span, and the spans that fired.

    ``spans`` are in text order; ``triggering`` is the subset that made the verdict (H and T
    spans, and each M with the corroborating spans near it).
    """

    triggered: bool
    signals: frozenset[LeakSignal]
    spans: tuple[LeakSpan, ...]
    triggering: tuple[LeakSpan, ...]

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict (signals sorted by code)."""
        return {
            "triggered": self.triggered,
            "signals": sorted(s.value for s in self.signals),
            "spans": [s.to_dict() for s in self.spans],
            "triggering": [s.to_dict() for s in self.triggering],
        }


#: Characters held back at the end of the buffer until more text (or ``close``) decides them.
HOLD = MAX_MATCH + 16
#: Characters kept before the earliest position still to scan (look-behind and look-back).
LEFT = LOOKBACK + 48
#: An M counts when a corroborating span lies within this many characters of it.
PROXIMITY = 256


# ---------------------------------------------------------------------------------- fusion
_CORROBORATING = frozenset(
    {
        LeakSignal.CHANNEL_WORD,
        LeakSignal.GLITCH,
        LeakSignal.MIXED_SCRIPT,
        LeakSignal.BODY_CASCADE,
        LeakSignal.FAKE_RESULT,
    }
)
_ALONE = frozenset({LeakSignal.CONTROL_TOKEN, LeakSignal.AFTER_BOUNDARY})


class _Fusion:
    """Decides ``triggered`` from spans that arrive in text order."""

    def __init__(self) -> None:
        self.triggering: dict[LeakSpan, None] = {}  # an ordered set
        self._markers: list[LeakSpan] = []
        self._corroborators: list[LeakSpan] = []

    def add(self, span: LeakSpan) -> None:
        if span.signal in _ALONE:
            self.triggering[span] = None
            return
        if span.signal is LeakSignal.MARKER:
            mine, theirs = self._markers, self._corroborators
        elif span.signal in _CORROBORATING:
            mine, theirs = self._corroborators, self._markers
        else:
            return
        horizon = span.start - PROXIMITY
        theirs[:] = [other for other in theirs if other.end >= horizon]
        mine[:] = [other for other in mine if other.end >= horizon]
        mine.append(span)
        if theirs:
            for other in theirs:
                self.triggering[other] = None
            self.triggering[span] = None


# ---------------------------------------------------------------------------------- detector
_INFINITY = float("inf")


def _sort_key(span: LeakSpan) -> tuple[int, int, str]:
    return span.start, span.end, span.signal.value


class LeakDetector:
    """The incremental leak detector: ``feed`` text as it arrives, then ``close``.

    ``feed`` and ``close`` return the spans that became certain, in text order; all of them
    together, and :attr:`report` after ``close``, equal :func:`detect_leak` on the whole text
    however it was split. :attr:`triggered` turns true as soon as the evidence is certain.
    """

    def __init__(self, *, surface: LeakSurface | str = LeakSurface.TEXT) -> None:
        self.surface = LeakSurface(surface)
        self._mask: ProseMask | JsonArgumentMask = (
            ProseMask() if self.surface is LeakSurface.TEXT else JsonArgumentMask()
        )
        self._buf = ""
        self._base = 0
        self._resume = [0] * len(SIGNAL_PATTERNS)
        self._pending: list[LeakSpan] = []
        self._spans: list[LeakSpan] = []
        self._fusion = _Fusion()
        self._boundary_marked = False
        self._closed = False

    @property
    def triggered(self) -> bool:
        """Whether the spans emitted so far trigger."""
        return bool(self._fusion.triggering)

    @property
    def report(self) -> LeakReport:
        """The report over the spans emitted so far (the final one after :meth:`close`)."""
        spans = tuple(self._spans)
        return LeakReport(
            triggered=self.triggered,
            signals=frozenset(span.signal for span in spans),
            spans=spans,
            triggering=tuple(sorted(self._fusion.triggering, key=_sort_key)),
        )

    def feed(self, chunk: str) -> list[LeakSpan]:
        """Add text; returns the spans that are now certain."""
        if self._closed:
            raise ValueError("feed() after close()")
        self._buf += chunk
        return self._advance(final=False)

    def close(self) -> list[LeakSpan]:
        """End of input; returns the last spans."""
        if self._closed:
            return []
        spans = self._advance(final=True)
        self._closed = True
        return spans

    def _advance(self, final: bool) -> list[LeakSpan]:
        buf, base, mask = self._buf, self._base, self._mask
        end = base + len(buf)
        mask.advance(buf, base, final)
        limit = end if final else end - HOLD
        for index, pattern in enumerate(SIGNAL_PATTERNS):
            self._resume[index] = self._scan(pattern, self._resume[index], limit, final)
        frontier = _INFINITY if final else min(self._resume) - LOOKBACK
        ready = sorted((s for s in self._pending if s.start < frontier), key=_sort_key)
        self._pending = [s for s in self._pending if s.start >= frontier]
        if self.surface is LeakSurface.TOOL_ARG and not self._boundary_marked:
            ready = self._mark_boundary(ready)
        for span in ready:
            self._fusion.add(span)
        self._spans.extend(ready)
        self._trim()
        return ready

    def _scan(self, pattern: SignalPattern, resume: int, limit: int, final: bool) -> int:
        """Accept the pattern's certain matches from ``resume``; returns the next resume."""
        if resume >= limit:
            return resume
        buf, base, mask = self._buf, self._base, self._mask
        window = buf[resume - base : limit - base + MAX_MATCH]
        if (pattern.ascii_free and window.isascii()) or (
            pattern.needles and not any(needle in window for needle in pattern.needles)
        ):
            return limit
        for match in pattern.regex.finditer(buf, resume - base):
            start = match.start() + base
            if start >= limit:
                break
            if match.end() + base > mask.done and not final:
                return start  # the quoting state there is not known yet
            resume = match.end() + base
            found = pattern.accept(match)
            if found is None:
                continue
            span_start, span_end = found[0] + base, found[1] + base
            if mask.counted(span_start, span_end):
                self._pending.append(
                    LeakSpan(pattern.signal, span_start, span_end, buf[found[0] : found[1]])
                )
        return max(resume, limit)

    def _mark_boundary(self, ready: list[LeakSpan]) -> list[LeakSpan]:
        """On ``tool_arg``, the first H or M (in text order) also becomes the T span."""
        for index, span in enumerate(ready):
            if span.signal in (LeakSignal.CONTROL_TOKEN, LeakSignal.MARKER):
                self._boundary_marked = True
                after = LeakSpan(LeakSignal.AFTER_BOUNDARY, span.start, span.end, span.text)
                return [*ready[: index + 1], after, *ready[index + 1 :]]
        return ready

    def _trim(self) -> None:
        keep = min(min(self._resume), self._mask.keep_from()) - LEFT
        self._mask.forget_before(min(self._resume) - LOOKBACK)
        cut = keep - self._base
        # Slicing copies the buffer: do it only when it frees a good share of it.
        if cut > 4096 and cut * 2 > len(self._buf):
            self._buf = self._buf[cut:]
            self._base = keep


def detect_leak(text: str, *, surface: LeakSurface | str = "text") -> LeakReport:
    """Find leaked Harmony markup in ``text`` and fuse the signals into a verdict.

    ``surface="text"`` is visible model output; ``surface="tool_arg"`` is a tool call's
    argument string. See :mod:`.signals` for the signals, :mod:`.masks` for what counts and
    the module documentation for the fusion rule.
    """
    detector = LeakDetector(surface=surface)
    detector.feed(text)
    detector.close()
    return detector.report


def mention_spans(text: str) -> tuple[Span, ...]:
    """The regions of ``text`` that quote Harmony rather than use it (code, literals)."""
    mask = ProseMask()
    mask.advance(text, 0, final=True)
    return tuple(Span(start, end) for start, end in mask.regions)
