"""The masks that tell a quoted mention of Harmony from a leak of it.

A signal counts only where the mask says the text *uses* Harmony rather than quotes it.

On the ``text`` surface (:class:`ProseMask`), text that quotes Harmony is ignored: Markdown
code (fenced blocks, inline code spans, which end at the line's end when unclosed), Python
triple-quoted strings, and quoted literals on one line whose opening quote follows a space,
the line's start or one of ``([{,=:`` (so ``weather."<|end|>`` still counts). On the
``tool_arg`` surface (:class:`JsonArgumentMask`) only the text after the argument's leading
JSON value counts, and only when that value is valid JSON: a marker inside a JSON string is
data.

Both masks stream: the quoting state depends only on text to the left, so each one reads the
buffer the detector holds (``buf``, starting at the absolute offset ``base``) as it grows,
and shares one interface: ``advance`` scans what arrived, ``done`` is the position up to
which the state is known, ``counted`` says whether a span counts, and ``keep_from`` /
``forget_before`` let the detector trim its buffer and the mask its regions.
"""

from __future__ import annotations

import bisect
import json
import re

__all__ = ["JsonArgumentMask", "ProseMask"]


# ---------------------------------------------------------------------------------- prose
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


class ProseMask:
    """Tracks where the text quotes Harmony (code, literals) rather than using it.

    The mask for the ``text`` surface. ``regions`` holds the closed quoting regions as
    ``(start, end)`` pairs, disjoint and in text order; ``done`` is the position up to which
    the quoting state is known. An unclosed construct runs to the end of the text.
    """

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
        """The earliest position the mask still needs to read."""
        return self._resume

    def advance(self, buf: str, base: int, final: bool) -> None:
        """Scan ``buf`` (which starts at position ``base``); ``final``: no more text comes."""
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
        """Whether ``[start, end)`` (which ends by :attr:`done`) overlaps no quotation."""
        if self._state != _PROSE and end > self._open_at:
            return False
        # Regions are disjoint and sorted: only the last one starting before ``end`` can
        # overlap [start, end).
        index = bisect.bisect_left(self._starts, end) - 1
        return index < 0 or self.regions[index][1] <= start

    def forget_before(self, position: int) -> None:
        """Drop the regions that end at or before ``position``: no span will ask about them."""
        count = bisect.bisect_right(self._ends, position)
        if count:
            del self.regions[:count], self._starts[:count], self._ends[:count]


# ---------------------------------------------------------------------------------- JSON
_JSON_TOKEN_RE = re.compile(r'\\.|["{}\[\]]', re.DOTALL)
_JSON_WHITESPACE = " \t\n\r"
_LEAD, _VALUE, _FOUND, _NONE = range(4)


class JsonArgumentMask:
    """Finds the end of a tool argument's leading JSON value; only what follows counts.

    The mask for the ``tool_arg`` surface. ``boundary`` is the position just after the
    leading object, array or string once it has closed and parsed as JSON; it stays None when
    the argument is a scalar, not JSON, or never closes, and then nothing counts.
    """

    def __init__(self) -> None:
        self._phase = _LEAD
        self._depth = 0
        self._in_string = False
        self._value_start = 0
        self._resume = 0
        self.boundary: int | None = None
        self.done = 0

    def keep_from(self) -> int:
        """The earliest position the mask still needs (the open value's start, to parse it)."""
        return self._value_start if self._phase == _VALUE else self._resume

    def advance(self, buf: str, base: int, final: bool) -> None:
        """Scan ``buf`` (which starts at position ``base``); ``final``: no more text comes."""
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
        """Whether a span ``[start, end)`` starts after the JSON value's end."""
        return self.boundary is not None and start >= self.boundary

    def forget_before(self, position: int) -> None:
        """Nothing to forget: the mask keeps no regions."""
