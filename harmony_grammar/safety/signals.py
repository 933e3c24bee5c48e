"""The leak signal catalogue: what counts as evidence that Harmony leaked, one pattern a row.

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

This module owns the :class:`LeakSignal` codes, the :class:`SignalPattern` rows (a regex
and an accept hook) and the bounds the streaming detector relies on: every regex has a
bounded width (:data:`MAX_MATCH`, tested) and no hook reads more than :data:`LOOKBACK`
characters before its match. T has no pattern: the detector derives it from the JSON
boundary. Where a match counts (quoting) is :mod:`.masks`'s business, and how signals
combine into a verdict is :mod:`.leaks`'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..base.enums import StrEnum
from ..format.tokens import CHANNEL_WORD, CHANNELS, ControlToken
from .escaping import RESERVED_SPELLINGS

__all__ = [
    "LOOKBACK",
    "MAX_MATCH",
    "SIGNAL_PATTERNS",
    "LeakSignal",
    "SignalPattern",
]


class LeakSignal(StrEnum):
    """One kind of leak evidence; the value is its one-letter code."""

    CONTROL_TOKEN = "H"
    MARKER = "M"
    CHANNEL_WORD = "C"
    GLITCH = "G"
    MIXED_SCRIPT = "S"
    BODY_CASCADE = "B"
    FAKE_RESULT = "R"
    AFTER_BOUNDARY = "T"


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
_CHANNEL_WORDS = CHANNELS
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
            rf"|{_SPELL[ControlToken.START]}|assistant{CHANNEL_WORD}"
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
