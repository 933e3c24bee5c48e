"""Making untrusted text inert before it reaches a Harmony model or server.

Two defences, for the two ways a prompt travels:

* As token ids: :func:`encode_untrusted` encodes text as ordinary BPE tokens only, so a
  spelled ``<|start|>`` becomes the inert tokens ``<|``, ``start``, ``|>`` and never the special
  id. This is lossless: decoding the ids gives the text back byte for byte.
* As text (a server re-tokenizes the prompt, or rejects reserved spellings with
  ``invalid_prompt``): :func:`escape_control_tokens` rewrites every reserved spelling into an
  inert backslash form, ``<|start|>`` -> ``<\\|start\\|>``. Inside a JSON document,
  :func:`escape_control_tokens_in_json` does the same to the decoded strings so the document
  stays valid JSON.

Only the transport copy is escaped; stored records keep the original text.

Why the escape is invertible: a *reserved shape* is ``<`` + n backslashes + ``|`` + a reserved
name + m backslashes + ``|>`` for any n, m >= 0. Escaping adds one backslash to both runs of
every reserved shape, unescaping removes one from shapes whose runs are both non-empty. Text
that already looked escaped is therefore escaped once more rather than left alone, and
``unescape_control_tokens(escape_control_tokens(s)) == s`` for every string ``s``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import tiktoken

from ..format.bounded_encode import encode_bounded
from ..format.tokens import FIRST_SPECIAL_ID, LAST_SPECIAL_ID, ControlToken, special_token_spelling
from ..format.vocabulary import load_encoding

__all__ = [
    "RESERVED_SPELLINGS",
    "encode_untrusted",
    "escape_control_tokens",
    "escape_control_tokens_in_json",
    "unescape_control_tokens",
    "unescape_control_tokens_in_json",
]

# tiktoken's reserved block follows o200k_base's <|startoftext|> and <|endoftext|>; it names
# every id there <|reserved_N|> unless Harmony gave it a structural name, even the id that
# o200k_base already calls <|endofprompt|> (200018): both of its spellings encode to it.
_RESERVED_BLOCK = range(FIRST_SPECIAL_ID + 2, LAST_SPECIAL_ID + 1)

#: Every special-token spelling of o200k_harmony: the seven structural tokens, the named
#: specials (``<|endoftext|>``, ``<|startoftext|>``, ``<|endofprompt|>``) and every
#: ``<|reserved_N|>``. Derived from :mod:`tokens`, never typed out; equal to tiktoken's
#: ``special_tokens_set`` (tested).
RESERVED_SPELLINGS: frozenset[str] = frozenset(
    special_token_spelling(token_id) for token_id in range(FIRST_SPECIAL_ID, LAST_SPECIAL_ID + 1)
) | frozenset(
    f"<|reserved_{token_id}|>"
    for token_id in _RESERVED_BLOCK
    if ControlToken.from_id(token_id) is None
)
_RESERVED_NAMES = frozenset(spelling[2:-2] for spelling in RESERVED_SPELLINGS)
_NAME = r"[A-Za-z0-9_]{1,32}"

# Text: the backslash runs are made of single backslashes.
_TEXT_ESCAPE_RE = re.compile(rf"<(\\*)\|({_NAME})(\\*)\|>")
_TEXT_UNESCAPE_RE = re.compile(rf"<(\\+)\|({_NAME})(\\+)\|>")
# Raw JSON string literals: a decoded backslash is written ``\\``, so the runs are pairs.
_JSON_ESCAPE_RE = re.compile(rf"<((?:\\\\)*)\|({_NAME})((?:\\\\)*)\|>")
_JSON_UNESCAPE_RE = re.compile(rf"<((?:\\\\)+)\|({_NAME})((?:\\\\)+)\|>")
_JSON_STRING_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


def _rewriter(pattern: re.Pattern[str], unit: str, add: bool) -> Callable[[str], str]:
    """A function adding (or removing) one ``unit`` to both backslash runs of reserved shapes."""

    def replace(match: re.Match[str]) -> str:
        left, name, right = match.groups()
        if name not in _RESERVED_NAMES:
            return match.group()
        if add:
            return f"<{left}{unit}|{name}{right}{unit}|>"
        return f"<{left[len(unit) :]}|{name}{right[len(unit) :]}|>"

    def rewrite(text: str) -> str:
        # Every reserved shape contains "|": most text is returned without running the regex.
        return pattern.sub(replace, text) if "|" in text else text

    return rewrite


_escape_text = _rewriter(_TEXT_ESCAPE_RE, "\\", add=True)
_unescape_text = _rewriter(_TEXT_UNESCAPE_RE, "\\", add=False)
_escape_raw_json = _rewriter(_JSON_ESCAPE_RE, "\\\\", add=True)
_unescape_raw_json = _rewriter(_JSON_UNESCAPE_RE, "\\\\", add=False)


def escape_control_tokens(text: str) -> str:
    """Rewrite every reserved special-token spelling into its inert backslash form.

    ``<|start|>`` becomes ``<\\|start\\|>``; a spelling that already has backslashes gets one
    more on each side, so :func:`unescape_control_tokens` restores the input exactly. The
    result contains no reserved spelling.
    """
    return _escape_text(text)


def unescape_control_tokens(text: str) -> str:
    """Invert :func:`escape_control_tokens` (one backslash fewer on each side)."""
    return _unescape_text(text)


def _rewrite_json(
    document: str, on_value: Callable[[str], str], on_raw: Callable[[str], str]
) -> str:
    json.loads(document)  # raises json.JSONDecodeError (a ValueError) with the position

    def literal(match: re.Match[str]) -> str:
        raw = match.group()
        if "|" not in raw and "\\u" not in raw:
            return raw
        value = json.loads(raw)
        wanted = on_value(value)
        if wanted == value:
            return raw
        # Edit the raw literal in place, which keeps the rest of its spelling; if a \uXXXX
        # escape hid part of a spelling the edit misses it, and the literal is re-encoded.
        edited = on_raw(raw)
        if json.loads(edited) == wanted:
            return edited
        return json.dumps(wanted, ensure_ascii=raw.isascii())

    # In valid JSON every '"' outside a string starts one, so this finds exactly the strings
    # (object keys included).
    return _JSON_STRING_RE.sub(literal, document)


def escape_control_tokens_in_json(document: str) -> str:
    """Escape reserved spellings inside every string (keys too) of a JSON document.

    The result is valid JSON; decoding it and applying :func:`unescape_control_tokens` to
    every string gives back the decoded input. Literals without a reserved spelling keep
    their exact spelling. Raises :class:`json.JSONDecodeError` if ``document`` is not JSON.
    """
    return _rewrite_json(document, _escape_text, _escape_raw_json)


def unescape_control_tokens_in_json(document: str) -> str:
    """Invert :func:`escape_control_tokens_in_json` on the strings of a JSON document."""
    return _rewrite_json(document, _unescape_text, _unescape_raw_json)


def encode_untrusted(text: str, encoding: tiktoken.Encoding | None = None) -> list[int]:
    """Encode untrusted text as ordinary tokens only: the result never holds a special id.

    Reserved spellings in ``text`` become ordinary BPE tokens, exactly as openai-harmony
    encodes message content; ``encoding.decode`` of the result gives ``text`` back. The
    default encoding is :func:`~harmony_grammar.format.vocabulary.load_encoding`'s o200k_harmony.
    Raises :class:`~harmony_grammar.format.bounded_encode.EncodeLimitError` (a ``ValueError``)
    for text past tiktoken's limits (a whitespace run too long for it).
    """
    chosen = encoding if encoding is not None else load_encoding()
    return encode_bounded(chosen, text, ordinary=True)
