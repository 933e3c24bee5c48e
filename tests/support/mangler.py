"""A generator of engine manglings of well-formed Harmony, for the lossless-reading tests.

Well-formed completions and conversations are drawn from random tools, calls, analysis,
preambles, finals and multi-byte text (hypothesis strategies below); each mangling then
does to them what serving stacks do (harmony-format.md §5):

==================  =========================================================================
``strip_all``       every control token dropped (a detokenizer with skip_special_tokens=True)
``strip_some``      some control tokens dropped
``drop_message``    one ``<|message|>`` dropped
``prose_before``    prose put before a header (a completion's start, or between messages)
``prose_after``     prose put after a header, before its ``<|message|>``
``glue_prose``      every control token dropped and prose glued before a later header
``dup_terminator``  a terminator written twice
``drop_terminator`` a terminator dropped
``cut``             the input cut anywhere
``split_utf8``      (token ids) a multi-byte character's bytes as single-byte tokens, one lost
``prose_gap``       prose and whitespace put before a header
``symbol_body``     a ``<|message|>`` dropped where the body opens with a digit or a symbol
``glued_channel``   a channel word glued to its text (``<|channel|>analysisWe…``)
``word_after_stop`` ``<|start|>assistant<|channel|>`` stripped: a channel word after a stop
``junk_recipient``  junk between a role-section recipient and ``<|channel|>``
==================  =========================================================================

:func:`expected` says which manglings leave only one reading of the generated inputs, and
what the parser must then give back (docs/parser.md says why the others are ambiguous). The benchmark ``benchmarks/bench_lossless.py``
drives the same generator with a plain ``random.Random`` for large counts.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable
from dataclasses import dataclass

from harmony_grammar.format.lexer import split_text
from harmony_grammar.format.model import Message, RecipientPosition, Role, Terminator

__all__ = [
    "MANGLINGS",
    "Mangled",
    "Sample",
    "comparable",
    "expected",
    "mangle",
    "random_completion",
    "random_conversation",
]

# Words that never spell a channel word, "assistant" or a control token, so a stripped
# reading of generated text is never ambiguous by accident; some are multi-byte.
WORDS = (
    "the",
    "user",
    "wants",
    "weather",
    "in",
    "Paris",
    "so",
    "we",
    "call",
    "tool",
    "check",
    "result",
    "today",
    "is",
    "sunny",
    "café",
    "naïve",
    "Zürich",
    "東京",
    "天気",
    "😀",
    "données",
    "price",
    "of",
    "a",
    "ticket",
    "maybe",
    "then",
    "answer",
    "briefly",
    "°C",
    "—",
    "done",
)
CAPITALS = ("We", "The", "User", "Let", "It", "Σ", "Über", "東京")
TOOLS = ("get_weather", "search_docs", "fs_read", "send_message")
PROSE = ("Sure.", "Okay, let me check.", "Working on it…", "Réponse rapide.", "One moment please")


@dataclass(frozen=True)
class Sample:
    """A well-formed input: its text, its messages, and the mode to parse it in."""

    text: str
    messages: tuple[Message, ...]
    start: str  # "completion" or "conversation"


@dataclass(frozen=True)
class Mangled:
    """A mangled sample: the text, the mangling's name and what it did (for expectations)."""

    text: str
    kind: str
    sample: Sample
    detail: dict[str, object]


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(CAPITALS)] + [rng.choice(WORDS) for _ in range(rng.randint(1, 9))]
    return " ".join(words) + rng.choice((".", "!", "?", ""))


def _arguments(rng: random.Random) -> str:
    keys = rng.sample(("city", "query", "path", "unit", "days", "note"), rng.randint(1, 3))
    value = {k: rng.choice((rng.choice(WORDS), rng.randint(-5, 99), True, None)) for k in keys}
    return json.dumps(
        value, ensure_ascii=rng.random() < 0.3, separators=rng.choice(((",", ":"), (", ", ": ")))
    )


def _header(message: Message, *, completion_start: bool) -> str:
    head = "" if completion_start else f"<|start|>{message.author}"
    if message.recipient and message.recipient_position is RecipientPosition.ROLE:
        head += f" to={message.recipient}"
    if message.channel:
        head += f"<|channel|>{message.channel}"
    if message.recipient and message.recipient_position is RecipientPosition.CHANNEL:
        head += f" to={message.recipient}"
    if message.content_type:
        head += " " + message.content_type
    return head + "<|message|>"


def _text(messages: tuple[Message, ...], start: str) -> str:
    parts = []
    for index, message in enumerate(messages):
        parts.append(_header(message, completion_start=start == "completion" and index == 0))
        parts.append(message.content)
        parts.append(f"<|{message.terminator.value}|>" if message.terminator else "")
    return "".join(parts)


def _assistant_turn(rng: random.Random, *, last: bool, role_section: bool) -> list[Message]:
    a = Role.ASSISTANT
    turn: list[Message] = []
    if rng.random() < 0.8:
        turn.append(Message(a, _sentence(rng), channel="analysis", terminator=Terminator.END))
    if rng.random() < 0.3:
        turn.append(Message(a, _sentence(rng), channel="commentary", terminator=Terminator.END))
    if rng.random() < 0.6:
        position = (
            RecipientPosition.ROLE
            if role_section and rng.random() < 0.5
            else RecipientPosition.CHANNEL
        )
        turn.append(
            Message(
                a,
                _arguments(rng),
                recipient="functions." + rng.choice(TOOLS),
                channel="commentary",
                content_type=rng.choice(("<|constrain|>json", "json")),
                terminator=Terminator.CALL,
                recipient_position=position,
            )
        )
    else:
        end = Terminator.RETURN if last else Terminator.END
        turn.append(Message(a, _sentence(rng), channel="final", terminator=end))
    return turn


def random_completion(rng: random.Random) -> Sample:
    """A completion as gpt-oss writes it: analysis, a preamble, then a call or a final."""
    messages = tuple(_assistant_turn(rng, last=True, role_section=False))
    return Sample(_text(messages, "completion"), messages, "completion")


def random_conversation(rng: random.Random) -> Sample:
    """A stored conversation: system, user, then assistant turns with tool results."""
    messages: list[Message] = [
        Message(Role.SYSTEM, "You are ChatGPT.\nReasoning: medium", terminator=Terminator.END),
        Message(Role.USER, _sentence(rng), terminator=Terminator.END),
    ]
    for turn in range(rng.randint(1, 3)):
        for message in _assistant_turn(rng, last=False, role_section=True):
            if message.terminator is Terminator.CALL or message.channel != "final":
                messages.append(message)
            else:
                messages.append(dataclasses.replace(message, terminator=Terminator.END))
            if message.recipient:
                messages.append(
                    Message(
                        Role.TOOL,
                        json.dumps({"ok": rng.choice(WORDS)}, ensure_ascii=False),
                        name=message.recipient,
                        recipient="assistant",
                        channel="commentary",
                        terminator=Terminator.END,
                        recipient_position=RecipientPosition.ROLE,
                    )
                )
        if turn:
            messages.append(Message(Role.USER, _sentence(rng), terminator=Terminator.END))
    return Sample(_text(tuple(messages), "conversation"), tuple(messages), "conversation")


# ---------------------------------------------------------------------------- manglings
def _pieces(text: str) -> list[tuple[bool, str]]:
    return [(control is not None, piece) for control, piece, _, _ in split_text(text)]


def _strip_all(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    return "".join(p for is_control, p in _pieces(sample.text) if not is_control), {}


def _strip_some(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    kept = [p for is_control, p in _pieces(sample.text) if not is_control or rng.random() < 0.5]
    return "".join(kept), {}


def _control_indexes(sample: Sample, spelling: str | None = None) -> list[int]:
    return [
        i
        for i, (is_control, p) in enumerate(_pieces(sample.text))
        if is_control and (spelling is None or p == spelling)
    ]


def _drop_message(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    pieces = _pieces(sample.text)
    found = _control_indexes(sample, "<|message|>")
    index = rng.randrange(len(found))
    del pieces[found[index]]
    return "".join(p for _, p in pieces), {"message": index}


def _boundaries(sample: Sample) -> list[int]:
    """Offsets where a message begins or ends (between messages, or the very start)."""
    cuts, position = [0], 0
    for is_control, piece in _pieces(sample.text):
        position += len(piece)
        if is_control and piece in ("<|end|>", "<|call|>", "<|return|>"):
            cuts.append(position)
    return cuts


def _prose_before(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    cuts = _boundaries(sample)
    slot = rng.randrange(len(cuts))
    prose = rng.choice(PROSE)
    at = cuts[slot]
    return sample.text[:at] + prose + sample.text[at:], {"slot": slot, "prose": prose}


def _prose_after(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    pieces = _pieces(sample.text)
    found = _control_indexes(sample, "<|message|>")
    index = found[rng.randrange(len(found))]
    pieces.insert(index, (False, " " + rng.choice(PROSE)))
    return "".join(p for _, p in pieces), {}


def _glue_prose(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    stripped, _ = _strip_all(sample, rng)
    if len(sample.messages) < 2:
        return stripped, {"message": None}
    index = rng.randrange(len(sample.messages) - 1)
    # The end of message `index`'s content in the stripped text.
    position, ends = 0, []
    for i, message in enumerate(sample.messages):
        header = _header(message, completion_start=sample.start == "completion" and i == 0)
        position += len("".join(p for c, p in _pieces(header) if not c)) + len(message.content)
        ends.append(position)
    prose = rng.choice(PROSE)
    at = ends[index]
    return stripped[:at] + prose + stripped[at:], {"message": index, "prose": prose}


def _dup_terminator(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    pieces = _pieces(sample.text)
    found = [
        i for i, (c, p) in enumerate(pieces) if c and p in ("<|end|>", "<|call|>", "<|return|>")
    ]
    index = rng.choice(found)
    pieces.insert(index, pieces[index])
    return "".join(p for _, p in pieces), {}


def _drop_terminator(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    pieces = _pieces(sample.text)
    found = [
        i for i, (c, p) in enumerate(pieces) if c and p in ("<|end|>", "<|call|>", "<|return|>")
    ]
    del pieces[rng.choice(found)]
    return "".join(p for _, p in pieces), {}


def _cut(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    at = rng.randint(0, len(sample.text))
    return sample.text[:at], {"at": at}


def _split_utf8(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    # The text is unchanged; the token-id form is built by the tests (tests/format/test_lossless.py).
    wide = [i for i, ch in enumerate(sample.text) if len(ch.encode()) > 1]
    return sample.text, {"char": rng.choice(wide) if wide else None}


def _prose_gap(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    cuts = _boundaries(sample)
    slot = rng.randrange(len(cuts))
    prose = rng.choice(PROSE) + rng.choice(("\n", " ", "\n\n", "\t", " \n"))
    at = cuts[slot]
    return sample.text[:at] + prose + sample.text[at:], {"slot": slot, "prose": prose}


#: What a body may open with where no field can read it: digits, symbols, emoji.
OPENINGS = ("42 ", "7", "🙂 ", "« ", "$3 ", "( ", "!! ", "3.5 ", "— ", "#1 ", "@ ")


def _plain(sample: Sample) -> list[int]:
    """Indexes of messages with a channel and no recipient or content type."""
    return [
        i
        for i, m in enumerate(sample.messages)
        if m.channel and not m.recipient and not m.content_type
    ]


def _rewrite(sample: Sample, index: int, header: str, content: str) -> str:
    """The sample's text with message ``index``'s header and content rewritten."""
    parts = []
    for i, message in enumerate(sample.messages):
        first = sample.start == "completion" and i == 0
        if i == index:
            parts.append(header + content)
        else:
            parts.append(_header(message, completion_start=first) + message.content)
        parts.append(f"<|{message.terminator.value}|>" if message.terminator else "")
    return "".join(parts)


def _opened(sample: Sample, index: int) -> str:
    message = sample.messages[index]
    first = sample.start == "completion" and index == 0
    return _header(message, completion_start=first).removesuffix("<|message|>")


def _symbol_body(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    plain = _plain(sample)
    if not plain:
        return sample.text, {"message": None}
    index = rng.choice(plain)
    opening = rng.choice(OPENINGS)
    content = opening + sample.messages[index].content
    text = _rewrite(sample, index, _opened(sample, index) + " ", content)
    return text, {"message": index, "content": content}


def _glued_channel(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    plain = _plain(sample)
    if not plain:
        return sample.text, {"message": None}
    index = rng.choice(plain)  # generated content opens with a capital: the word is glued
    return _rewrite(sample, index, _opened(sample, index), sample.messages[index].content), {
        "message": index
    }


def _word_after_stop(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    later = [
        i
        for i, m in enumerate(sample.messages)
        if i and m.role is Role.ASSISTANT and m.channel and m.recipient_position is not
        RecipientPosition.ROLE
    ]
    if not later:
        return sample.text, {"message": None}
    index = rng.choice(later)
    message = sample.messages[index]
    # <|start|>assistant<|channel|> stripped: the channel word follows the stop token.
    header = _header(message, completion_start=True).removeprefix("<|channel|>")
    return _rewrite(sample, index, header, message.content), {"message": index}


#: Junk between a recipient and <|channel|>: punctuation leaves one reading.
JUNK = (" ??", " --", " …", " :", " abc", " x1")


def _junk_recipient(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    roles = [
        i
        for i, m in enumerate(sample.messages)
        if m.recipient_position is RecipientPosition.ROLE and m.channel
    ]
    if not roles:
        return sample.text, {"message": None}
    index = rng.choice(roles)
    message = sample.messages[index]
    junk = rng.choice(JUNK)
    head = _header(message, completion_start=False)
    channel = head.index("<|channel|>")
    return _rewrite(sample, index, head[:channel] + junk + head[channel:], message.content), {
        "message": index,
        "junk": junk,
    }


MANGLINGS: dict[str, Callable[[Sample, random.Random], tuple[str, dict[str, object]]]] = {
    "strip_all": _strip_all,
    "strip_some": _strip_some,
    "drop_message": _drop_message,
    "prose_before": _prose_before,
    "prose_after": _prose_after,
    "glue_prose": _glue_prose,
    "dup_terminator": _dup_terminator,
    "drop_terminator": _drop_terminator,
    "cut": _cut,
    "split_utf8": _split_utf8,
    "prose_gap": _prose_gap,
    "symbol_body": _symbol_body,
    "glued_channel": _glued_channel,
    "word_after_stop": _word_after_stop,
    "junk_recipient": _junk_recipient,
}


def mangle(sample: Sample, kind: str, rng: random.Random) -> Mangled:
    """``sample`` mangled the way ``kind`` says."""
    text, detail = MANGLINGS[kind](sample, rng)
    return Mangled(text, kind, sample, detail)


# ---------------------------------------------------------------------------- expectations
def comparable(message: Message, *, terminator: bool = True, constrain: bool = True) -> tuple:
    """The fields an exact recovery must give back (span aside)."""
    ctype = message.content_type
    if ctype and not constrain:
        ctype = ctype.removeprefix("<|constrain|>")
    return (
        message.author,
        message.channel,
        message.recipient,
        ctype,
        message.content,
        message.terminator if terminator else None,
    )


def _stripped_view(messages: tuple[Message, ...]) -> list[tuple]:
    # A detokenizer keeps every word: the recipient moves to the channel section, the
    # <|constrain|> token and the stop tokens are gone.
    return [comparable(m, terminator=False, constrain=False) for m in messages]


def expected(mangled: Mangled) -> list[tuple] | None:
    """The messages an exact recovery gives back, as :func:`comparable` tuples; None where
    the mangling leaves more than one reading (docs/parser.md)."""
    sample, kind = mangled.sample, mangled.kind
    originals = sample.messages
    if kind in ("dup_terminator", "split_utf8"):
        return [comparable(m) for m in originals] if kind == "dup_terminator" else None
    if kind == "drop_terminator":
        return [comparable(m, terminator=False) for m in originals]
    completion = sample.start == "completion"
    if kind == "strip_all" and completion:
        return _stripped_view(originals)
    if kind == "glue_prose" and completion and mangled.detail["message"] is not None:
        index = int(mangled.detail["message"])  # type: ignore[call-overload]
        view = _stripped_view(originals)
        glued = view[index]
        view[index] = (*glued[:4], glued[4] + str(mangled.detail["prose"]), None)
        return view
    if kind == "drop_message":
        target = originals[int(mangled.detail["message"])]  # type: ignore[call-overload]
        if not target.recipient or not target.content_type:
            return None  # prose glued to its channel word: ambiguous
        return [comparable(m) for m in originals]
    if kind in ("word_after_stop", "glued_channel"):
        return [comparable(m) for m in originals]
    if kind == "symbol_body":
        view = [comparable(m) for m in originals]
        if mangled.detail["message"] is not None:
            index = int(mangled.detail["message"])  # type: ignore[call-overload]
            view[index] = (*view[index][:4], str(mangled.detail["content"]), view[index][5])
        return view
    if kind == "junk_recipient":
        junk = str(mangled.detail.get("junk", ""))
        if any(c.isalnum() for c in junk):
            return None  # a word there may be a content type out of order, or the body's
        return [comparable(m) for m in originals]
    if kind in ("prose_before", "prose_gap"):
        view = [comparable(m) for m in originals]
        slot = int(mangled.detail["slot"])  # type: ignore[call-overload]
        prose = str(mangled.detail["prose"]).strip()
        view.insert(slot, ("assistant", None, None, None, prose, None))
        return view
    return None
