"""The real gpt-oss outputs corpus (issue 13): loading, scoring a reading, deviation kinds.

Shared by the corpus tests and ``benchmarks/bench_wild.py`` so that "exact" means one thing.

Records (one JSON object per line) live in ``../shared/data/wild-gptoss/dev.jsonl`` (kept
beside the checkout, may be absent) and ``tests/fixtures/wild/collected.jsonl``: ``id``,
``source``, ``engine``, ``mode`` (``completion`` or ``conversation``), ``text`` as posted,
``intended`` (the messages the model meant: ``role``, ``channel``, ``recipient``,
``content_type``, ``content``; null = cannot be told) and an optional ``note``.

Scoring (:func:`match`)
-----------------------
A recovered message *agrees* with an intended one when every non-null field of the intended
one equals the recovered field: ``role`` against the author as written in the header
(``assistant``, ``functions.get_weather`` for a tool's reply), ``channel``, ``recipient`` and
``content`` exactly, ``content_type`` ignoring case (the parser reads ``<|constrain|>JSON`` as
``<|constrain|>json``, HG155; the case carries no meaning). The recovered messages are
aligned with the intended ones in order (longest common subsequence of agreeing pairs):

* ``exact``: every intended message agrees with one recovered message, in order, and nothing
  was recovered beside them;
* ``partial``: at least one intended message agrees, but not all, or something extra was
  recovered;
* ``failed``: none agrees (or the parser raised).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "CORPUS_FILES",
    "KINDS",
    "agrees",
    "classify",
    "load_records",
    "match",
    "reading",
]

_ROOT = Path(__file__).resolve().parents[2]

#: The corpus files, development half first; a missing file is skipped by :func:`load_records`.
CORPUS_FILES: tuple[Path, ...] = (
    _ROOT.parent / "shared" / "data" / "wild-gptoss" / "dev.jsonl",
    _ROOT / "tests" / "fixtures" / "wild" / "collected.jsonl",
)

_FIELDS = ("role", "channel", "recipient", "content_type", "content")


def load_records(files: Iterable[Path] = CORPUS_FILES) -> list[dict[str, Any]]:
    """Every record of the corpus files that exist, each with ``file`` (the file's name)."""
    records: list[dict[str, Any]] = []
    for path in files:
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                record["file"] = path.name
                records.append(record)
    return records


def reading(message: Any) -> dict[str, Any]:
    """The fields :func:`match` compares, from a parsed ``Message`` or a mapping of them.

    A ``Message`` gives its author as written (``message.author``) for ``role``; a mapping is
    taken as it is (the benchmark builds one from openai-harmony's messages).
    """
    if isinstance(message, Mapping):
        return {field: message.get(field) for field in _FIELDS}
    return {
        "role": message.author,
        "channel": message.channel,
        "recipient": message.recipient,
        "content_type": message.content_type,
        "content": message.content,
    }


def agrees(intended: Mapping[str, Any], recovered: Mapping[str, Any]) -> bool:
    """True when every non-null field of ``intended`` matches ``recovered`` (see module doc)."""
    for field in _FIELDS:
        want = intended.get(field)
        if want is None:
            continue
        got = recovered.get(field)
        if field == "content_type":
            if not isinstance(got, str) or got.lower() != want.lower():
                return False
        elif got != want:
            return False
    return True


def match(intended: Sequence[Mapping[str, Any]], messages: Sequence[Any]) -> str:
    """``"exact"``, ``"partial"`` or ``"failed"``: how well ``messages`` recover ``intended``."""
    got = [reading(m) for m in messages]
    # Longest common subsequence of agreeing pairs: order matters, extras are allowed here.
    rows = [[0] * (len(got) + 1) for _ in range(len(intended) + 1)]
    for i, want in enumerate(intended):
        for j, have in enumerate(got):
            rows[i + 1][j + 1] = (
                rows[i][j] + 1 if agrees(want, have) else max(rows[i][j + 1], rows[i + 1][j])
            )
    matched = rows[len(intended)][len(got)]
    if matched == len(intended) == len(got):
        return "exact"
    return "partial" if matched else "failed"


# -- deviation kinds -----------------------------------------------------------------------

#: The issue's deviation kinds, in the order :func:`classify` tries them (most specific first).
KINDS: tuple[str, ...] = (
    "stripped-tokens",  # 2: the detokenizer dropped the control tokens
    "text-in-header",  # 3: free text where a header should be, or no header at all
    "tool-reply-header",  # 4: stray to=assistant, a header shaped like a tool's reply
    "junk-or-glued",  # 6: junk before the first header, duplicated channel, bare recipient
    "call-not-ended",  # 5: a call not ended by <|call|>
    "no-terminator",  # 1: no terminator at the end
    "well-formed",  # none of the above
)

_CONTROL = re.compile(r"<\|[a-z]+\|>")
_CHANNEL_WORD = r"(?:analysis|commentary|final)"
# The glued forms only a stripped detokenizer produces: a channel word at the very start of a
# completion, or the author glued to a channel word.
_STRIPPED = re.compile(rf"^\s*{_CHANNEL_WORD}(?![a-z])|assistant{_CHANNEL_WORD}")
_TERMINATORS = ("<|end|>", "<|return|>", "<|call|>")
_TYPES = frozenset({"json", "code", "<|constrain|>json"})


def _pieces(text: str) -> list[tuple[str, str]]:
    """``(control token or "", text)`` pairs: each control token and the text after it."""
    out: list[tuple[str, str]] = []
    pos, token = 0, ""
    for found in _CONTROL.finditer(text):
        out.append((token, text[pos : found.start()]))
        token, pos = found.group(), found.end()
    out.append((token, text[pos:]))
    return out


def _forged_reply(text: str, completion: bool) -> bool:
    """A header shaped like a tool's reply where the model should have written a call.

    In a completion any ``to=assistant`` or ``<|start|>functions.`` is one; in a conversation
    a tool's reply is normal after its call, so only a reply from a tool never called counts.
    """
    if completion:
        return "to=assistant" in text or "<|start|>functions." in text
    for found in re.finditer(r"<\|start\|>(functions\.[\w.]+)", text):
        if f"to={found.group(1)}" not in text[: found.start()]:
            return True
    return False


def classify(record: Mapping[str, Any]) -> str:
    """The record's main deviation kind (one of :data:`KINDS`), read from its text alone.

    A record often shows several deviations; the first kind of :data:`KINDS` that applies is
    its kind, so a table row counts records whose hardest deviation is of that kind.
    """
    text: str = record["text"]
    pieces = _pieces(text)
    tokens = [token for token, _ in pieces]
    if _STRIPPED.search(text):
        return "stripped-tokens"
    for (token, header), (following, _) in zip(pieces, [*pieces[1:], ("", "")]):
        # A channel header followed by prose rather than <|message|>.
        words = [w for w in header.split() if not w.startswith("to=") and w not in _TYPES]
        if token == "<|channel|>" and following != "<|message|>" and len(words) >= 3:
            return "text-in-header"
    if not any(t in ("<|channel|>", "<|message|>") for t in tokens):
        return "text-in-header"  # no header at all
    if _forged_reply(text, record.get("mode") == "completion"):
        return "tool-reply-header"
    first_text = pieces[0][1]
    headers = [h for t, h in pieces if t in ("<|start|>", "<|channel|>")]
    duplicated = any(a == b == "<|channel|>" for a, b in zip(tokens, tokens[1:])) or any(
        h.count("to=") > 1 for h in headers
    )
    bare_recipient = any(
        re.search(r"\bto=(?!functions\.|browser\.|python\b|assistant\b)", h) for h in headers
    )
    if first_text.strip() or duplicated or bare_recipient:
        return "junk-or-glued"
    for i, token in enumerate(tokens):
        if token != "<|message|>":
            continue
        opened = i
        while opened > 0 and tokens[opened - 1] not in (*_TERMINATORS, "<|message|>"):
            opened -= 1
        header = " ".join(h for _, h in pieces[opened:i])
        ending = tokens[i + 1] if i + 1 < len(tokens) else ""
        if re.search(r"(?:^|\s)to=(?!assistant\b)", header) and ending != "<|call|>":
            return "call-not-ended"
    if not text.rstrip().endswith(_TERMINATORS):
        return "no-terminator"
    return "well-formed"
