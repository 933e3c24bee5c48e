"""An alphabet fuzzer for lenient reading, independent of ``tests/mangler.py``.

The mangler starts from well-formed Harmony and breaks it the way serving stacks do; this
generator starts from nothing and strings together pieces of Harmony's alphabet at random:
control tokens, partial spellings of them, roles, channel names, ``to=``, tool names,
content types, prose, JSON, digits, emoji, symbols and whitespace. Such mixes make the
cascades the mangler never does (a header that takes a word, then refuses the next token,
then sends everything after it somewhere nobody sees).

An input is a list of :data:`Piece` s. :func:`as_text` spells it as text (control tokens
spelled literally); :func:`as_ids` gives the o200k_harmony ids a model would have written:
control tokens and the other special ids as their ids, everything else as ordinary text,
so ordinary ids that spell ``<|channel|>`` are text there, as they must be.

The property tests draw pieces with Hypothesis (``tests/format/test_field_conservation.py``, which
shrinks to the smallest failing mix); the benchmark draws them with :func:`random_pieces`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.tokens import ControlToken
from harmony_grammar.format.vocabulary import load_encoding

__all__ = ["ALPHABET", "KINDS", "Piece", "as_ids", "as_text", "random_pieces"]

#: ``(kind, text)``: one piece of an input.
Piece = tuple[str, str]

_CONTROLS = tuple(token.value for token in ControlToken)
#: Special ids that are no Harmony control token: debris in ids, ordinary text in text.
_OTHER_SPECIALS = {
    "<|endoftext|>": 199999,
    "<|reserved_200010|>": 200010,
    "<|endofprompt|>": 200018,
}

#: The alphabet, by kind. Kinds are drawn evenly, then a piece of the kind.
ALPHABET: dict[str, tuple[str, ...]] = {
    "control": _CONTROLS,
    "special": tuple(_OTHER_SPECIALS),
    # Control spellings that are ordinary ids in the ids form (text that went through a
    # detokenizer and back): structure in text, text in ids.
    "literal": ("<|channel|>", "<|message|>", "<|start|>", "<|call|>"),
    "partial": (
        "<|", "|>", "<|cha", "<|channel|", "<|call|", "<|call", "<|sta", "<|start|", "<|end",
        "<|mess", "<|message|", "<|constrain", "<|ret", "rt|>", "nel|>", "<|return|",
    ),
    "role": ("assistant", "user", "system", "developer", "tool", "Assistant", "assistant:bob"),
    "channel": (
        "analysis", "commentary", "final", "Final", "ANALYSIS", "análisis", "thinking",
        "analysis-free", "finally", "commentary?",
    ),
    "to": ("to=", " to=", "to= ", " to=functions.", "to=assistant", " to=functions.lookup"),
    "name": ("functions.lookup", "functions.get_weather", "functions.x", "python", "browser.search", "functions.f_2"),
    "ctype": ("json", " json", "<|constrain|>json", " <|constrain|>json", "code", "JSON", "<|constrain|>"),
    "prose": (
        "Let me check.", "The answer is", "ok so", "Sure", "Réponse rapide", "東京の天気",
        "We need to call the tool", "done", "I think", "The user wants tides",
    ),
    "json": ('{"q":"tides"}', '{"a": 1}', "[1, 2]", '{"city": "Zürich"}', "{", "}", '"x"', "null"),
    "digit": ("42", "3", "0", "3.14", "$3", "-1", "2026"),
    "emoji": ("🙂", "🎉", "👍🏽", "😀"),
    "symbol": ("?", "??", "«", "»", "(", ")", "-", ":", "=", ".", ",", "!", "—", "…", "*", "#", "`", "'", '"', "<", ">", "|", "/", "\\"),
    "space": (" ", "\n", "\t", "  ", "\r\n", "\n\n", "\u00a0"),
}  # fmt: skip
KINDS = tuple(ALPHABET)


def random_pieces(rng: random.Random, size: int = 24) -> list[Piece]:
    """Between 1 and ``size`` pieces, kinds drawn evenly."""
    pieces = []
    for _ in range(rng.randint(1, size)):
        kind = rng.choice(KINDS)
        pieces.append((kind, rng.choice(ALPHABET[kind])))
    return pieces


def as_text(pieces: Sequence[Piece]) -> str:
    """The pieces spelled as text."""
    return "".join(text for _, text in pieces)


def as_ids(pieces: Sequence[Piece]) -> list[int]:
    """The pieces as o200k_harmony ids: control tokens and other specials as their special
    ids; adjacent text pieces encoded together (as a model's tokenizer would have split
    them), a complete control spelling among them as its special id; a ``literal`` piece
    as ordinary text."""
    encoding = load_encoding()
    ids: list[int] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            ids.extend(encode_harmony("".join(run)))
            run.clear()

    for kind, text in pieces:
        if kind == "literal":
            flush()
            ids += encoding.encode_ordinary(text)
        elif kind == "special":
            flush()
            ids.append(_OTHER_SPECIALS[text])
        else:
            run.append(text)
    flush()
    return ids
