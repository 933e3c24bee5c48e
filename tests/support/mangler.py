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
==================  =========================================================================

and the header shapes that made lenient reading cascade (issue 30; :data:`SHAPES`):

==================  =========================================================================
``prose_gap``       prose and whitespace put before a header (``Let me check.\n<|channel|>…``),
                    in a completion with the ``<|start|>assistant`` before it lost or not
``symbol_body``     a ``<|message|>`` dropped where the body opens with a digit, a symbol, an
                    emoji or a hyphenated channel word (``<|channel|>final 42 apples``)
``glued_word``      a channel word glued to its text (``<|channel|>analysisWe…``), or the
                    author with the channel lost (``<|start|>assistantThe answer``)
``word_after_stop`` ``<|start|>assistant<|channel|>`` stripped: a channel word after a stop
``junk_recipient``  junk between a role-section recipient and ``<|channel|>``, spaced or
                    glued (``<|start|>assistant to=functions.x ??<|channel|>commentary…``)
==================  =========================================================================

:func:`expected` says which manglings leave only one reading of the generated inputs, and
what the parser must then give back, with :data:`ANY` for a field the mangling leaves
ambiguous (docs/parser.md says why); :func:`recovered` compares a parse with it.
:data:`ISSUE_EXAMPLES` lists the issue's own inputs of the shapes. The property tests
(tests/format/test_lossless.py, tests/format/test_field_conservation.py) and the benchmark
``benchmarks/bench_lossless.py`` all read this one table.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from harmony_grammar.format.header_words import WORD_END_PUNCTUATION
from harmony_grammar.format.lexer import split_text
from harmony_grammar.format.model import Message, RecipientPosition, Role, Terminator

__all__ = [
    "ANY",
    "ISSUE_EXAMPLES",
    "MANGLINGS",
    "SHAPES",
    "Mangled",
    "Sample",
    "comparable",
    "expected",
    "mangle",
    "mangled",
    "matches",
    "one_reading",
    "random_completion",
    "random_conversation",
    "recovered",
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
    """``(is a control token, spelling)`` pieces of ``text``, a fresh list (callers edit it)."""
    return list(_split(text))


@lru_cache(maxsize=16)  # every mangling of one sample splits the same text
def _split(text: str) -> tuple[tuple[bool, str], ...]:
    return tuple((control is not None, piece) for control, piece, _, _ in split_text(text))


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


#: Prose a model writes before a header (a preamble whose control tokens were lost).
GAP_PROSE = (*PROSE, "Let me check.", "Sure!", "Je vérifie.", "東京を調べます。", "42")
#: Whitespace between that prose and the header.
GAPS = ("\n", " ", "\n\n", "\t", " \n", "\r\n")


def _prose_gap(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    parts = _parts(sample)
    slot = rng.randrange(len(parts) + 1)  # before a header, or after the last message
    prose = rng.choice(GAP_PROSE)
    if slot < len(parts):
        header = parts[slot][0]
        # In a completion the <|start|>assistant before the channel may be lost too.
        lost_start = sample.start == "completion" and header.startswith(_ASSISTANT_CHANNEL)
        if lost_start and rng.random() < 0.5:
            parts[slot][0] = header.removeprefix("<|start|>assistant")
        parts[slot][0] = prose + rng.choice(GAPS) + parts[slot][0]
    else:
        parts.append([prose + rng.choice(GAPS), "", ""])
    return _join(parts), {"slot": slot, "prose": prose}


#: What a body may open with where no field can read it: digits, symbols, emoji, a
#: hyphenated channel word.
OPENINGS = (
    "42 ", "7", "🙂 ", "« ", "«", "$3 ", "( ", "(", "!! ", "3.5 ", "3.5% ", "— ", "#1 ", "#",
    "@ ", "? ", "…", "[1] ", "analysis-free ",
)  # fmt: skip
_ASSISTANT_CHANNEL = "<|start|>assistant<|channel|>"


def _parts(sample: Sample) -> list[list[str]]:
    """Each message as ``[header, content, terminator]``; joined they are ``sample.text``."""
    completion = sample.start == "completion"
    return [
        [
            _header(message, completion_start=completion and index == 0),
            message.content,
            f"<|{message.terminator.value}|>" if message.terminator else "",
        ]
        for index, message in enumerate(sample.messages)
    ]


def _join(parts: list[list[str]]) -> str:
    return "".join("".join(part) for part in parts)


def _plain(sample: Sample) -> list[int]:
    """Indexes of the assistant's messages with a channel and no recipient or content type."""
    return [
        i
        for i, m in enumerate(sample.messages)
        if m.role is Role.ASSISTANT and m.channel and not m.recipient and not m.content_type
    ]


def _symbol_body(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    parts, plain = _parts(sample), _plain(sample)
    if not plain:
        return sample.text, {"message": None}
    index, opening = rng.choice(plain), rng.choice(OPENINGS)
    # A word needs a space to stand apart from the channel word; a symbol may be glued on.
    gap = " " if opening[0].isalnum() else rng.choice((" ", ""))
    parts[index][0] = parts[index][0].removesuffix("<|message|>") + gap
    parts[index][1] = opening + parts[index][1]
    content = parts[index][1]
    if not gap:  # punctuation glued to the channel word is unread (docs/parser.md)
        content = content.lstrip("".join(WORD_END_PUNCTUATION)).lstrip()
    return _join(parts), {"message": index, "content": content}


def _glued_word(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    parts, plain = _parts(sample), _plain(sample)
    if not plain:
        return sample.text, {"message": None}
    index = rng.choice(plain)  # generated content opens with a capital: the word is glued
    header = parts[index][0]
    # The channel word glued to the body (<|channel|>analysisWe…), or, with the channel
    # lost too, the author (<|start|>assistantThe…).
    author = header.startswith(_ASSISTANT_CHANNEL) and rng.random() < 0.5
    parts[index][0] = "<|start|>assistant" if author else header.removesuffix("<|message|>")
    return _join(parts), {"message": index, "author": author}


def _word_after_stop(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    parts = _parts(sample)
    later = [i for i in range(1, len(parts)) if parts[i][0].startswith(_ASSISTANT_CHANNEL)]
    if not later:
        return sample.text, {"message": None}
    index = rng.choice(later)
    # <|start|>assistant<|channel|> stripped: the channel word follows the stop token.
    parts[index][0] = parts[index][0].removeprefix(_ASSISTANT_CHANNEL)
    return _join(parts), {"message": index}


#: Junk between a recipient and <|channel|>: after a space, punctuation leaves one reading
#: (``unread``) and a word does not; glued on, the recipient word may take it or not.
JUNK = (" ??", " ?", " --", " …", " :", " «»", " (", " 🙂", "??", "…", "x", " abc", " x1", " 42")


def _junk_recipient(sample: Sample, rng: random.Random) -> tuple[str, dict[str, object]]:
    parts = _parts(sample)
    calls = [i for i, m in enumerate(sample.messages) if m.role is Role.ASSISTANT and m.recipient]
    if not calls:
        return sample.text, {"message": None}
    index, junk = rng.choice(calls), rng.choice(JUNK)
    message = sample.messages[index]
    # The recipient in the role section (moved there where it was in the channel's).
    first = sample.start == "completion" and index == 0
    head = ("" if first else "<|start|>assistant") + f" to={message.recipient}{junk}"
    head += f"<|channel|>{message.channel}"
    if message.content_type:
        head += " " + message.content_type
    parts[index][0] = head + "<|message|>"
    return _join(parts), {"message": index, "junk": junk}


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
    "glued_word": _glued_word,
    "word_after_stop": _word_after_stop,
    "junk_recipient": _junk_recipient,
}
#: The manglings of the header shapes that made lenient reading cascade (issue 30).
SHAPES = ("prose_gap", "symbol_body", "glued_word", "word_after_stop", "junk_recipient")


def mangle(sample: Sample, kind: str, rng: random.Random) -> Mangled:
    """``sample`` mangled the way ``kind`` says."""
    text, detail = MANGLINGS[kind](sample, rng)
    return Mangled(text, kind, sample, detail)


def mangled(seed: int, kind: str, *, conversation: bool = False) -> Mangled:
    """A sample drawn from ``seed`` (a completion, or a conversation) mangled by ``kind``."""
    rng = random.Random(seed)
    sample = random_conversation(rng) if conversation else random_completion(rng)
    return mangle(sample, kind, rng)


# ---------------------------------------------------------------------------- expectations
def comparable(message: Message, *, constrain: bool = True) -> tuple[object, ...]:
    """The fields an exact recovery must give back (span aside): author, channel, recipient,
    content type (without ``<|constrain|>`` unless ``constrain``), content, terminator."""
    ctype = message.content_type
    if ctype and not constrain:
        ctype = ctype.removeprefix("<|constrain|>")
    return (
        message.author,
        message.channel,
        message.recipient,
        ctype,
        message.content,
        message.terminator,
    )


@dataclass(frozen=True)
class _Any:
    """A field an exact recovery may read either way (the mangling left it ambiguous)."""

    def __repr__(self) -> str:
        return "ANY"


ANY = _Any()
_TERMINATOR = 5


def _stripped_view(messages: tuple[Message, ...]) -> list[tuple[object, ...]]:
    # A detokenizer keeps every word: the recipient moves to the channel section, the
    # <|constrain|> token and the stop tokens are gone.
    return [(*comparable(m, constrain=False)[:_TERMINATOR], ANY) for m in messages]


def _at(mangled: Mangled) -> int | None:
    index = mangled.detail.get("message")
    return None if index is None else int(index)  # type: ignore[call-overload]


def expected(mangled: Mangled) -> list[tuple[object, ...]] | None:
    """The messages an exact recovery gives back, as :func:`comparable` tuples with
    :data:`ANY` where the mangling leaves a field ambiguous; None where it leaves more than
    one reading of the messages (docs/parser.md). Compare with :func:`matches`."""
    sample, kind, detail = mangled.sample, mangled.kind, mangled.detail
    originals = sample.messages
    view: list[tuple[object, ...]] = [comparable(m) for m in originals]
    index = _at(mangled)
    completion = sample.start == "completion"
    if kind == "dup_terminator":
        return view
    if kind == "drop_terminator":
        return [(*m[:_TERMINATOR], ANY) for m in view]
    if kind == "strip_all" and completion:
        return _stripped_view(originals)
    if kind == "glue_prose" and completion and index is not None:
        view = _stripped_view(originals)
        glued = view[index]
        view[index] = (*glued[:4], f"{glued[4]}{detail['prose']}", ANY)
        return view
    if kind == "drop_message":
        target = originals[index]  # type: ignore[index]
        if not target.recipient or not target.content_type:
            return None  # prose glued to its channel word: ambiguous
        return view
    if kind in ("prose_before", "prose_gap"):
        # The prose is a message of its own; its channel depends on what follows it.
        slot = int(detail["slot"])  # type: ignore[call-overload]
        view.insert(slot, ("assistant", ANY, None, None, str(detail["prose"]), None))
        return view
    if kind in ("word_after_stop", "glued_word", "symbol_body", "junk_recipient"):
        if index is None:  # no message of the shape: the input is the sample
            return view
        author, channel, recipient, ctype, content, end = view[index]
        broken = kind == "symbol_body" or (kind == "glued_word" and not detail["author"])
        if broken and channel == "commentary" and not recipient:
            channel = "analysis"  # prose in a broken commentary header: reasoning
        if kind == "symbol_body":
            content = str(detail["content"])
        elif kind == "glued_word" and detail["author"]:
            channel = ANY  # <|start|>assistantThe…: the channel is the parser's choice
        elif kind == "junk_recipient":
            junk = str(detail["junk"])
            if not junk[0].isspace():
                # Glued on: the strict grammar reads one recipient word (functions.x??), a
                # reading of names reads functions.x and ?? apart; both keep every char.
                recipient = ANY
            elif any(ch.isalnum() for ch in junk):
                # A word there may be a content type out of order, or the body's.
                recipient = ctype = content = end = ANY
        view[index] = (author, channel, recipient, ctype, content, end)
        return view
    return None  # cut, split_utf8, strip_some, prose_after; strip_all of a conversation


def matches(got: list[tuple[object, ...]], want: list[tuple[object, ...]]) -> bool:
    """Whether ``got`` is ``want`` field by field, :data:`ANY` matching anything; a content
    matches with its whitespace stripped (inserted prose keeps its gap between messages)."""
    if len(got) != len(want):
        return False
    for have, need in zip(got, want, strict=True):
        for position, (a, b) in enumerate(zip(have, need, strict=True)):
            stripped = position == 4 and isinstance(a, str) and a.strip() == b
            if not (b is ANY or a == b or stripped):
                return False
    return True


def one_reading(mangled: Mangled) -> bool:
    """Whether the mangling leaves one reading of every recipient, content type and content
    (a channel or a terminator left to the parser aside): where the rules can judge the
    reading, as they judge the originals."""
    want = expected(mangled)
    return want is not None and not any(m[i] is ANY for m in want for i in (2, 3, 4))


def recovered(mangled: Mangled, messages: Sequence[Message]) -> bool | None:
    """Whether ``messages`` are the one reading ``mangled`` leaves (None: more than one)."""
    want = expected(mangled)
    return None if want is None else matches([comparable(m) for m in messages], want)


#: The issue's own inputs of the shapes, as ``(text, start)``.
ISSUE_EXAMPLES: tuple[tuple[str, str], ...] = (
    (
        'Let me check.\n<|channel|>commentary to=functions.lookup <|constrain|>json<|message|>{"q":"tides"}<|call|>',
        "completion",
    ),
    ("<|channel|>final 42 apples<|return|>", "completion"),
    ("<|channel|>final 🙂<|return|>", "completion"),
    ("<|channel|>final «quoted»<|return|>", "completion"),
    ("<|channel|>final $3<|return|>", "completion"),
    ("<|channel|>final (see below)<|return|>", "completion"),
    ("<|channel|>final analysis-free answer<|return|>", "completion"),
    ("<|start|>assistantThe answer is 42<|return|>", "completion"),
    ("<|channel|>analysisOK so<|end|>", "completion"),
    ("<|start|>assistant to=functions.x abc<|channel|>analysis<|message|>{}<|call|>", "completion"),
    ("<|channel|>commentary Hello<|end|>", "completion"),
    ('<|channel|>final {"a": 1} and then text<|return|>', "completion"),
    (
        '<|channel|>commentary to=functions.f json<|message|>{}<|call|>commentary<|channel|>commentary to=functions.g json<|message|>{}<|call|>',
        "completion",
    ),
    ("<|start|>user<|message|>Hi<|end|><|start|>assistant<|channel|>ünïcode<|message|>x<|end|>", "conversation"),
)  # fmt: skip
