"""Detecting Harmony markup that leaked into visible text or into tool-call arguments.

Theory of operation
-------------------
A leak shows itself through *signals*, each found by one small bounded pattern
(:data:`SIGNAL_PATTERNS`):

====  ==============================================================================
H     a reserved special-token spelling (``<|end|>``, ``<|reserved_200100|>``, ...)
M     a recipient marker, ``to=functions.x`` (also ``browser.``, ``container.``, python)
C     a channel word glued to markup: ``assistantfinal``, ``analysis<|message|>``,
      ``analysisThe user...`` (what a detokenizer that drops special tokens leaves)
G     a malformed or foreign control spelling: ``<|end>``, ``<｜end｜>``, ``<|im_start|>``
S     a word mixing scripts that do not mix (Latin+Cyrillic, Cyrillic+Han, ...)
B     a body cascade: a marker running straight into a call body
      (``to=functions.f json{``) or a body running into the next header (``}<|call|>``)
R     fake tool-result framing: ``functions.f to=assistant``, ``<|start|>functions.``
T     on the ``tool_arg`` surface, an H or M after the end of the argument's JSON value
====  ==============================================================================

Fusion: H triggers alone, and so does T; M triggers only with a corroborating C, G, S, B or
R span within :data:`PROXIMITY` characters, because documentation and tests legitimately
write ``to=functions.x``.

Where signals count: on the ``text`` surface, text that *quotes* Harmony is ignored: Markdown
code (fenced blocks, inline code spans, which end at the line's end when unclosed), Python
triple-quoted strings, and quoted literals on one line whose opening quote follows a space,
the line's start or one of ``([{,=:`` (so ``weather."<|end|>`` still counts). On the
``tool_arg`` surface only the text after the argument's leading JSON value counts, and only
when that value is valid JSON: a marker inside a JSON string is data.

Streaming: :class:`LeakDetector` is the only implementation; :func:`detect_leak` feeds it the
whole text at once. Every pattern has a bounded length and the quoting state depends only on
text to the left, so the detector holds back a fixed tail (:data:`HOLD`) and otherwise
decides exactly as the batch does: the spans and the report are the same for any chunking.
"""

from __future__ import annotations

import bisect
import enum
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from .escaping import RESERVED_SPELLINGS
from .model import Span
from .tokens import ControlToken

__all__ = [
    "HOLD",
    "LOOKBACK",
    "PROXIMITY",
    "SIGNAL_PATTERNS",
    "LeakDetector",
    "LeakReport",
    "LeakSignal",
    "LeakSpan",
    "LeakSurface",
    "SignalPattern",
    "detect_leak",
    "mention_spans",
]


class LeakSignal(str, enum.Enum):
    """One kind of leak evidence; the value is its one-letter code."""

    CONTROL_TOKEN = "H"
    MARKER = "M"
    CHANNEL_WORD = "C"
    GLITCH = "G"
    MIXED_SCRIPT = "S"
    BODY_CASCADE = "B"
    FAKE_RESULT = "R"
    AFTER_BOUNDARY = "T"

    def __str__(self) -> str:
        return self.value


class LeakSurface(str, enum.Enum):
    """What the text is: visible model output, or the arguments of a tool call."""

    TEXT = "text"
    TOOL_ARG = "tool_arg"

    def __str__(self) -> str:
        return self.value


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


# ---------------------------------------------------------------------------------- patterns
#: A pattern's accept hook: given the match, the (start, end) of the span to report, relative
#: to the match's string, or None to drop the match.
Accept = Callable[[re.Match[str]], tuple[int, int] | None]


@dataclass(frozen=True, slots=True)
class SignalPattern:
    """A signal's pattern: ``regex`` finds candidates, ``accept`` confirms them.

    ``needles``: the pattern cannot match a text containing none of these (a fast pre-check);
    empty means no pre-check. ``ascii_free``: the pattern needs a non-ASCII character.
    """

    signal: LeakSignal
    regex: re.Pattern[str]
    accept: Accept
    needles: tuple[str, ...] = ()
    ascii_free: bool = False


def _whole(match: re.Match[str]) -> tuple[int, int]:
    return match.span()


def _reserved(match: re.Match[str]) -> tuple[int, int] | None:
    return match.span() if match.group() in RESERVED_SPELLINGS else None


_NAMES = tuple(token.value[2:-2] for token in ControlToken)
_SPELL = {token: re.escape(token.value) for token in ControlToken}
_CHANNEL_WORDS = ("analysis", "commentary", "final")
_CHANNEL_LEFT = ("assistant", ControlToken.CHANNEL.value)
_CHANNEL_RIGHT = tuple(
    t.value for t in (ControlToken.MESSAGE, ControlToken.CONSTRAIN, ControlToken.CHANNEL)
)
_CAPITALISED = re.compile(r"[A-Z][a-z]")
_NAMESPACE = r"(?:functions|browser|container)\.[A-Za-z_][\w.\-]{0,63}"
_AUTHOR_BEFORE = re.compile(rf"(?:{_NAMESPACE}|python)[ \t]{{0,4}}\Z")
#: How far before its match a span may start (the R author look-back).
LOOKBACK = 80


def _channel_word(match: re.Match[str]) -> tuple[int, int] | None:
    text, start, end = match.string, match.start(), match.end()
    for left in _CHANNEL_LEFT:
        if start >= len(left) and text.startswith(left, start - len(left)):
            return start - len(left), end
    for right in _CHANNEL_RIGHT:
        if text.startswith(right, end):
            return start, end + len(right)
    word_start = start == 0 or not text[start - 1].isalpha()
    if word_start and _CAPITALISED.match(text, end):
        return start, end
    return None


def _tool_author_before(match: re.Match[str]) -> tuple[int, int] | None:
    text, start = match.string, match.start()
    window = max(0, start - LOOKBACK)
    author = _AUTHOR_BEFORE.search(text[window:start])
    return (window + author.start(), match.end()) if author else None


# Scripts whose letters never share a word. Latin beside CJK/Kana/Hangul is normal
# ("使用Python", "API를"), and so is Latin beside Greek in formulas ("2πr").
_SCRIPTS = {
    "latin": "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f",
    "greek": "\u0386-\u03ce",
    "cyrillic": "\u0400-\u04ff",
    "hebrew": "\u05d0-\u05ea",
    "arabic": "\u0620-\u064a",
    "devanagari": "\u0904-\u0939",
    "thai": "\u0e01-\u0e30",
    "east_asian": "\u3041-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af",
}
_COMPATIBLE = {frozenset({"latin", "east_asian"}), frozenset({"latin", "greek"})}


def _mixed_script_regex() -> re.Pattern[str]:
    """A letter next to a letter of a script it does not mix with.

    The match is one non-ASCII letter outside the East Asian block: followed by an
    incompatible letter, or preceded by an incompatible ASCII or East Asian one. Every pair
    has such a letter, and starting with one character class of them lets the regex engine
    skip ASCII and CJK text in its fast loop; the scripts are checked by look-arounds.
    """
    edges = {"latin": "A-Za-z", "east_asian": _SCRIPTS["east_asian"]}
    first, checks = [], []
    for name, chars in _SCRIPTS.items():
        if name == "east_asian":
            continue
        first.append("\u00c0-\u024f" if name == "latin" else chars)
        others = "".join(
            other_chars
            for other, other_chars in _SCRIPTS.items()
            if other != name and frozenset({name, other}) not in _COMPATIBLE
        )
        checks.append(f"(?<=[{chars}])(?=[{others}])")
        checks.extend(
            f"(?<=[{edge}][{chars}])"
            for edge_name, edge in edges.items()
            if edge_name != name and frozenset({name, edge_name}) not in _COMPATIBLE
        )
    return re.compile(f"[{''.join(first)}](?:{'|'.join(checks)})")


_FOREIGN = (
    "im_start",
    "im_end",
    "im_sep",
    "eot_id",
    "eom_id",
    "start_header_id",
    "end_header_id",
    "begin_of_text",
    "end_of_text",
    "python_tag",
    "assistant",
    "user",
    "system",
    "refusal",
    "untrusted",
    "end_untrusted",
    "meta_end",
)
_NAME_ALT = "|".join(_NAMES)

#: The signal table, one row a pattern. Every regex has a bounded width (tested).
SIGNAL_PATTERNS: tuple[SignalPattern, ...] = (
    SignalPattern(
        LeakSignal.CONTROL_TOKEN, re.compile(r"<\|[A-Za-z0-9_]{1,32}\|>"), _reserved, ("<|",)
    ),
    SignalPattern(
        LeakSignal.MARKER, re.compile(rf"to=(?:{_NAMESPACE}|python\b)"), _whole, ("to=",)
    ),
    SignalPattern(
        LeakSignal.CHANNEL_WORD, re.compile("|".join(_CHANNEL_WORDS)), _channel_word, _CHANNEL_WORDS
    ),
    SignalPattern(
        LeakSignal.GLITCH,
        re.compile(
            rf"<\|(?:{_NAME_ALT})>|<(?:{_NAME_ALT})\|>|<\uff5c[A-Za-z_\u2581]{{1,24}}\uff5c>"
            rf"|<\|(?:{'|'.join(_FOREIGN)})\|>|<(?:start|end)_of_turn>"
        ),
        _whole,
        ("<",),
    ),
    SignalPattern(LeakSignal.MIXED_SCRIPT, _mixed_script_regex(), _whole, ascii_free=True),
    SignalPattern(
        LeakSignal.BODY_CASCADE,
        re.compile(
            rf"to={_NAMESPACE}[ \t]{{0,4}}(?:{_SPELL[ControlToken.CONSTRAIN]})?[ \t]{{0,2}}"
            rf"(?:json|code)?[ \t]{{0,2}}(?:{_SPELL[ControlToken.MESSAGE]})?[ \t]{{0,2}}[{{\[]"
        ),
        _whole,
        ("to=",),
    ),
    SignalPattern(
        LeakSignal.BODY_CASCADE,
        re.compile(
            rf"[}}\]][ \t]{{0,4}}(?:{_SPELL[ControlToken.CALL]}|{_SPELL[ControlToken.END]}"
            rf"|{_SPELL[ControlToken.START]}|assistant(?:analysis|commentary|final)"
            rf"|(?:commentary|analysis)[ \t]?to=(?:functions|browser|container)\.)"
        ),
        _whole,
        ("}", "]"),
    ),
    SignalPattern(
        LeakSignal.FAKE_RESULT,
        re.compile(r"to=assistant\b"),
        _tool_author_before,
        ("to=assistant",),
    ),
    SignalPattern(
        LeakSignal.FAKE_RESULT,
        re.compile(rf"{_SPELL[ControlToken.START]}(?:(?:functions|browser|container)\.|python\b)"),
        _whole,
        (ControlToken.START.value,),
    ),
)

#: Upper bound on a match's width plus the characters an accept hook reads after it.
MAX_MATCH = 144
#: Characters held back at the end of the buffer until more text (or ``close``) decides them.
HOLD = MAX_MATCH + 16
#: Characters kept before the earliest position still to scan (look-behind and look-back).
LEFT = LOOKBACK + 48
#: An M counts when a corroborating span lies within this many characters of it.
PROXIMITY = 256

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
_INFINITY = float("inf")


# ---------------------------------------------------------------------------------- masks
# One token regex per quoting state, so that the loop only sees tokens that can change the
# state: in prose, fences (at a line's start), backtick runs, triple quotes and quotes that
# open a literal; inside a construct, only what closes it (and the newline that ends inline
# code and one-line literals).
_OPENER = r"(?:\A|(?<=[ \t\r\n(\[{,=:])|(?<=[ \t\r\n(\[{,=:][fFbBrRuU]))"
_FENCE_RE = r"^ {0,3}(?P<fence>`{3,}|~{3,})"
_PROSE_RE = re.compile(
    rf"(?m){_FENCE_RE}|(?P<ticks>`+)|(?P<triple>\"\"\"|''')|{_OPENER}(?P<quote>[\"'\u201c])"
)
_CLOSE_RE = {
    "fence": re.compile(f"(?m){_FENCE_RE}"),
    "ticks": re.compile(r"(?P<ticks>`+)|(?P<nl>\n)"),
    '"""': re.compile(r'(?P<triple>""")'),
    "'''": re.compile(r"(?P<triple>''')"),
    '"': re.compile(r'(?<!\\)(?P<quote>")|(?P<nl>\n)'),
    "\u201d": re.compile(r"(?P<quote>\u201d)|(?P<nl>\n)"),
    # A closing "'" is not followed by a letter or digit: "'it's'" closes at the last one.
    "'": re.compile(r"(?<!\\)(?P<quote>'(?![^\W_]))|(?P<nl>\n)"),
}
_PROSE, _FENCE, _TRIPLE, _INLINE, _QUOTE = range(5)
_CLOSERS = {'"': '"', "'": "'", "\u201c": "\u201d"}
# How far a token can extend past what the buffer holds: a fence may start up to three
# spaces before its backticks; a quote needs two more characters to tell it from a triple
# quote, and a closing "'" one more to tell it from an apostrophe.
_CONTEXT_HOLD = 3


class _ProseMask:
    """Tracks where the text quotes Harmony (code, literals) rather than using it."""

    def __init__(self) -> None:
        self.regions: list[tuple[int, int]] = []
        self._starts: list[int] = []  # the regions' starts and ends, for bisection
        self._ends: list[int] = []
        self._state = _PROSE
        self._closer = ""
        self._regex = _PROSE_RE
        self._open_at = 0
        self._resume = 0
        self.done = 0

    def keep_from(self) -> int:
        return self._resume

    def advance(self, buf: str, base: int, final: bool) -> None:
        end = base + len(buf)
        limit = end if final else end - _CONTEXT_HOLD
        local = self._resume - base
        while True:
            match = self._regex.search(buf, local)
            if match is None:
                break
            if match.end() + base > limit:
                self._resume = self.done = match.start() + base
                return
            self._step(match, base)
            local = match.end()
        self._resume = self.done = max(local + base, limit)
        if final and self._state != _PROSE:
            self._close(end)

    def _open(self, state: int, closer: str, at: int, regex_key: str) -> None:
        self._state, self._closer, self._open_at = state, closer, at
        self._regex = _CLOSE_RE[regex_key]

    def _close(self, at: int) -> None:
        self.regions.append((self._open_at, at))
        self._starts.append(self._open_at)
        self._ends.append(at)
        self._state, self._regex = _PROSE, _PROSE_RE

    def _step(self, match: re.Match[str], base: int) -> None:
        kind = match.lastgroup or ""
        value = match.group(kind)
        start, stop = match.start() + base, match.end() + base
        state = self._state
        if state == _PROSE:
            if kind == "fence":
                self._open(_FENCE, value, start, "fence")
            elif kind == "ticks":
                self._open(_INLINE, value, start, "ticks")
            elif kind == "triple":
                self._open(_TRIPLE, value, start, value)
            else:
                closer = _CLOSERS[value]
                self._open(_QUOTE, closer, start, closer)
        elif kind == "nl":  # inline code and one-line literals end with the line
            self._close(start)
        elif state == _FENCE:
            if value[0] == self._closer[0] and len(value) >= len(self._closer):
                self._close(stop)
        elif state != _INLINE or value == self._closer:
            self._close(stop)

    def counted(self, start: int, end: int) -> bool:
        if self._state != _PROSE and end > self._open_at:
            return False
        # Regions are disjoint and sorted: only the last one starting before ``end`` can
        # overlap [start, end).
        index = bisect.bisect_left(self._starts, end) - 1
        return index < 0 or self.regions[index][1] <= start

    def forget_before(self, position: int) -> None:
        count = bisect.bisect_right(self._ends, position)
        if count:
            del self.regions[:count], self._starts[:count], self._ends[:count]


_JSON_TOKEN_RE = re.compile(r'\\.|["{}\[\]]', re.DOTALL)
_JSON_WHITESPACE = " \t\n\r"
_LEAD, _VALUE, _FOUND, _NONE = range(4)


class _JsonArgMask:
    """Finds the end of a tool argument's leading JSON value; only what follows counts."""

    def __init__(self) -> None:
        self._phase = _LEAD
        self._depth = 0
        self._in_string = False
        self._value_start = 0
        self._resume = 0
        self.boundary: int | None = None
        self.done = 0

    def keep_from(self) -> int:
        return self._value_start if self._phase == _VALUE else self._resume

    def advance(self, buf: str, base: int, final: bool) -> None:
        end = base + len(buf)
        if self._phase == _LEAD:
            local = self._resume - base
            rest = buf[local:]
            first = local + len(rest) - len(rest.lstrip(_JSON_WHITESPACE))
            if first == len(buf):
                self._resume = self.done = end
                if final:
                    self._phase = _NONE
                return
            if buf[first] in '{["':
                self._phase = _VALUE
                self._value_start = self._resume = base + first
            else:
                self._phase = _NONE  # a scalar, or not JSON: no boundary, nothing counts
        if self._phase == _VALUE:
            self._scan(buf, base, final)
        if self._phase in (_FOUND, _NONE):
            self.done = end

    def _scan(self, buf: str, base: int, final: bool) -> None:
        end = base + len(buf)
        for match in _JSON_TOKEN_RE.finditer(buf, self._resume - base):
            stop = match.end() + base
            self._resume = stop
            char = match.group()[0]
            if char == "\\":
                continue
            if char == '"':
                self._in_string = not self._in_string
                closed = not self._in_string and self._depth == 0
            elif self._in_string:
                continue
            else:
                self._depth += 1 if char in "{[" else -1
                closed = self._depth <= 0
            if closed:
                self._settle(buf, base, stop)
                return
        if final:
            self._phase = _NONE  # the value never ended
            return
        # A trailing backslash that no token consumed escapes the next chunk's first
        # character: scan it again then.
        unpaired = buf.endswith("\\") and self._resume < end
        self._resume = self.done = end - 1 if unpaired else end

    def _settle(self, buf: str, base: int, boundary: int) -> None:
        try:
            json.loads(buf[self._value_start - base : boundary - base])
        except ValueError:
            self._phase = _NONE
            return
        self._phase, self.boundary = _FOUND, boundary

    def counted(self, start: int, end: int) -> bool:
        return self.boundary is not None and start >= self.boundary

    def forget_before(self, position: int) -> None:
        pass


# ---------------------------------------------------------------------------------- fusion
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
        self._mask: _ProseMask | _JsonArgMask = (
            _ProseMask() if self.surface is LeakSurface.TEXT else _JsonArgMask()
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
    argument string. See the module documentation for the signals and the fusion rule.
    """
    detector = LeakDetector(surface=surface)
    detector.feed(text)
    detector.close()
    return detector.report


def mention_spans(text: str) -> tuple[Span, ...]:
    """The regions of ``text`` that quote Harmony rather than use it (code, literals)."""
    mask = _ProseMask()
    mask.advance(text, 0, final=True)
    return tuple(Span(start, end) for start, end in mask.regions)
