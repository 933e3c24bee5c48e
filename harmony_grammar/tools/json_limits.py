"""Reading untrusted JSON within documented limits, before Python's ``json`` sees it.

Python's ``json`` decides some inputs by exception: a document nested about a thousand deep
raises ``RecursionError``, an integer of more than 4,300 digits raises ``ValueError`` (the
integer-string limit), and a lone surrogate in a ``str`` raises ``UnicodeEncodeError`` as soon
as anything encodes it. Which of these fires depends on the interpreter's settings and on how
deep the caller's stack already is, so this module checks the text first, against limits of
its own, and reports what is over them as a :class:`JsonLimit` (a code and a message) that the
callers turn into diagnostics:

* ``HG182`` deeper than :data:`MAX_JSON_DEPTH` arrays and objects;
* ``HG183`` a number of more than :data:`MAX_NUMBER_DIGITS` digits;
* ``HG184`` a lone surrogate (a ``str`` that is not Unicode text and has no UTF-8 form).

The checks are linear; the common case (a small document) costs a few ``str`` scans in C.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..base.errors import HarmonyGrammarError

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_NUMBER_DIGITS",
    "DepthTracker",
    "JsonLimit",
    "JsonLimitError",
    "json_limit",
    "json_message",
    "loads_bounded",
    "too_deep",
]


def json_message(exc: json.JSONDecodeError) -> str:
    """``exc.msg`` ready for an `` at POSITION`` after it: Python's "Unterminated string
    starting at" ends in "at" itself, and the position added after it read "at at"."""
    return exc.msg.removesuffix(" at")

#: The deepest nesting of arrays and objects read. Deep enough for any real arguments, and
#: shallow enough that jsonschema's recursive validation (a few frames per level) stays far
#: from Python's recursion limit.
MAX_JSON_DEPTH = 128

#: The most digits in one number (Python's default integer-string limit).
MAX_NUMBER_DIGITS = 4300

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONG_DIGITS = re.compile(rf"\d{{{MAX_NUMBER_DIGITS + 1}}}")
# Strings (unrolled, so no backtracking), brackets, and numbers; everything else is skipped.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[{]|[\]}]|-?\d[\d.eE+-]*', re.DOTALL)


@dataclass(frozen=True, slots=True)
class JsonLimit:
    """A document over a limit: the diagnostic ``code``, a message and the character offset."""

    code: str
    message: str
    offset: int


class JsonLimitError(HarmonyGrammarError, ValueError):
    """Raised by :func:`loads_bounded` for a document over a limit; ``limit`` says which."""

    def __init__(self, limit: JsonLimit) -> None:
        super().__init__(limit.message)
        self.limit = limit


def json_limit(document: str) -> JsonLimit | None:
    """The first limit ``document`` exceeds, or None (it may still be invalid JSON)."""
    surrogate = _SURROGATE.search(document)
    if surrogate is not None:
        return JsonLimit(
            "HG184",
            f"a lone surrogate (U+{ord(surrogate.group()):04X}) at character"
            f" {surrogate.start()}: the text has no UTF-8 form",
            surrogate.start(),
        )
    deep_possible = document.count("[") + document.count("{") > MAX_JSON_DEPTH
    if not deep_possible and _LONG_DIGITS.search(document) is None:
        return None  # the fast path: no check below can fail
    depth = 0
    for match in _TOKEN.finditer(document):
        token = match.group()
        first = token[0]
        if first in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return JsonLimit(
                    "HG182",
                    f"arrays and objects nest deeper than {MAX_JSON_DEPTH} at character"
                    f" {match.start()}",
                    match.start(),
                )
        elif first in "]}":
            depth = max(depth - 1, 0)
        elif first != '"':
            digits = sum(c.isdigit() for c in token) if len(token) > MAX_NUMBER_DIGITS else 0
            if digits > MAX_NUMBER_DIGITS:
                return JsonLimit(
                    "HG183",
                    f"a number of {digits} digits at character {match.start()} (at most"
                    f" {MAX_NUMBER_DIGITS})",
                    match.start(),
                )
    return None


_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
_OUTSIDE = re.compile(r'[^"\[\]{}]*')


class DepthTracker:
    """The nesting depth of a JSON text fed in pieces, for a check while it streams.

    :meth:`feed` returns the offset (in the whole text) of the first ``[`` or ``{`` beyond
    :data:`MAX_JSON_DEPTH`, as :func:`json_limit` would report it, so a streaming check can
    stop there instead of handing a matcher a thousand levels first. Strings are skipped with
    a regular expression, so the cost is one step per bracket or quote.
    """

    def __init__(self) -> None:
        self.depth = 0
        self._in_string = False
        self._escaped = False  # the last piece ended on a backslash inside a string
        self._offset = 0

    def feed(self, text: str) -> int | None:
        """Track ``text``; the whole text's offset of the first bracket too deep, if any."""
        i, n = 0, len(text)
        if self._escaped and n:
            i, self._escaped = 1, False
        while i < n:
            if self._in_string:
                i = _STRING_REST.match(text, i).end()  # type: ignore[union-attr]
                if i >= n:
                    break
                if text[i] == "\\":  # a backslash at the piece's end escapes the next piece
                    self._escaped = True
                    break
                self._in_string = False
            else:
                i = _OUTSIDE.match(text, i).end()  # type: ignore[union-attr]
                if i >= n:
                    break
                char = text[i]
                if char == '"':
                    self._in_string = True
                elif char in "[{":
                    self.depth += 1
                    if self.depth > MAX_JSON_DEPTH:
                        return self._offset + i
                else:
                    self.depth = max(self.depth - 1, 0)
            i += 1
        self._offset += n
        return None


def loads_bounded(document: str) -> Any:
    """``json.loads(document)`` within the limits.

    Raises :class:`JsonLimitError` for a document over a limit and ``json.JSONDecodeError``
    for one that is not JSON; both are ``ValueError``.
    """
    limit = json_limit(document)
    if limit is not None:
        raise JsonLimitError(limit)
    try:
        value = json.loads(document)
    except (RecursionError, ValueError) as exc:
        if isinstance(exc, json.JSONDecodeError):
            raise
        # Only reachable when the interpreter's own limits are lower than ours (a host that
        # lowered sys.setrecursionlimit or sys.set_int_max_str_digits): still a diagnostic.
        code = "HG182" if isinstance(exc, RecursionError) else "HG183"
        raise JsonLimitError(
            JsonLimit(code, f"beyond this interpreter's limits: {exc}", 0)
        ) from exc
    if _SURROGATE_ESCAPE.search(document) is not None:
        # An escape such as "\\ud800" spells a surrogate; only a pair makes a character.
        # Rare (emoji are usually written as UTF-8), so the whole value is checked only then.
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            code_point = ord(exc.object[exc.start])
            raise JsonLimitError(
                JsonLimit(
                    "HG184",
                    f"a lone surrogate (\\u{code_point:04x}, written as an escape): "
                    "the text has no UTF-8 form",
                    0,
                )
            ) from None
    return value


def too_deep(value: Any) -> bool:
    """Whether a decoded value (a caller's dicts, a tool's schema) nests arrays and objects
    deeper than :data:`MAX_JSON_DEPTH`: the limit a JSON text has here, for values that
    never were text. Found without recursion, so a walk that recurses may follow it."""
    # Imported here: the schema package loads its compiler, which a parse never needs
    # (``import harmony_grammar.format`` loads no schema code: tests/integration/test_layering.py).
    from ..schema.nesting import nesting_exceeds

    return nesting_exceeds(value, MAX_JSON_DEPTH)
