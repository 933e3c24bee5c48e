"""Targeted manglings: one per header shape that made lenient reading cascade (issue 30).

They take the same well-formed samples as ``tests/mangler.py`` (its generators) and have
the same signature as its :data:`~tests.support.mangler.MANGLINGS`, so the mangler may take them
(``MANGLINGS | SHAPES``) and ``benchmarks/bench_lossless.py`` runs them beside its own:

=======================  ==================================================================
``prose_ws_before``      prose and whitespace put before a header (``Let me check.\\n<|channel|>…``);
                         in a completion, the ``<|start|>assistant`` before it may be lost too
``nonletter_body``       a header lost its ``<|message|>`` and its body opens with a digit, a
                         symbol or an emoji (``<|channel|>final 42 apples``)
``glued_word``           a channel word glued to the body (``<|channel|>analysisOK so``), or
                         the author glued to it (``<|start|>assistantThe answer``)
``channel_after_stop``   ``<|start|>assistant<|channel|>`` lost after a terminator: a bare
                         channel word opens the next header (``…<|end|>final<|message|>…``)
``junk_before_channel``  junk between a role-section recipient and ``<|channel|>``
                         (``<|start|>assistant to=functions.x ??<|channel|>commentary…``)
=======================  ==================================================================

:func:`expected_shape` says what an exact recovery gives back, field by field, where the
shape leaves one reading of that field (:data:`ANY` where it does not).
:data:`ISSUE_EXAMPLES` lists the issue's own inputs of these shapes.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from harmony_grammar.format.model import Role
from tests.support.mangler import Mangled, Sample, _header, comparable

__all__ = [
    "ANY",
    "ISSUE_EXAMPLES",
    "SHAPES",
    "expected_shape",
    "mangle_shape",
    "matches",
]

#: Prose that a model writes before a header (a preamble with its control tokens lost).
PROSE = ("Let me check.", "Sure!", "Okay, one moment…", "Je vérifie.", "東京を調べます。", "42")
#: Whitespace between the prose and the header.
GAPS = ("\n", " ", "\n\n", "\t", "\r\n")
#: How a body opens with no letter: a digit, a symbol, an emoji, a hyphenated channel word.
LEADS = ("42 ", "🙂 ", "«", "$3 ", "(", "3.5% ", "— ", "? ", "…", "[1] ", "#", "analysis-free ")
#: What lies between a recipient and ``<|channel|>``: after a space, ``unread`` when it has
#: no letter and no digit, else a field or content; glued on, the recipient word or apart.
JUNK = ("??", " ?", " «»", " (", "…", " 🙂", " abc", " 42", "x")


@dataclass(frozen=True)
class _Any:
    """A field an exact recovery may read either way (the shape left it ambiguous)."""

    def __repr__(self) -> str:
        return "ANY"


ANY = _Any()

#: The issue's inputs of these shapes, as ``(text, start)``.
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

_Edit = tuple[str, dict[str, object]]


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


def _prose_ws_before(sample: Sample, rng: random.Random) -> _Edit:
    parts = _parts(sample)
    slot = rng.randrange(len(parts))
    prose, gap = rng.choice(PROSE), rng.choice(GAPS)
    header = parts[slot][0]
    lost_start = sample.start == "completion" and header.startswith("<|start|>assistant<|channel|>")
    if lost_start and rng.random() < 0.5:
        parts[slot][0] = header.removeprefix("<|start|>assistant")
    parts[slot][0] = prose + gap + parts[slot][0]
    return _join(parts), {"slot": slot, "prose": prose}


def _targets(sample: Sample, test: Callable[[int], bool]) -> list[int]:
    return [i for i in range(len(sample.messages)) if test(i)]


def _plain_assistant(sample: Sample, index: int) -> bool:
    message = sample.messages[index]
    return (
        message.role is Role.ASSISTANT
        and message.channel is not None
        and message.recipient is None
        and message.content_type is None
    )


def _nonletter_body(sample: Sample, rng: random.Random) -> _Edit:
    parts = _parts(sample)
    found = _targets(sample, lambda i: _plain_assistant(sample, i))
    if not found:
        return sample.text, {"message": None}
    index, lead = rng.choice(found), rng.choice(LEADS)
    gap = " " if lead[0].isalnum() else rng.choice((" ", ""))
    parts[index][0] = parts[index][0].removesuffix("<|message|>") + gap
    parts[index][1] = lead + parts[index][1]
    return _join(parts), {"message": index, "lead": lead}


def _glued_word(sample: Sample, rng: random.Random) -> _Edit:
    parts = _parts(sample)
    found = _targets(sample, lambda i: _plain_assistant(sample, i))
    if not found:
        return sample.text, {"message": None}
    index = rng.choice(found)
    header = parts[index][0]
    author = header.startswith("<|start|>assistant<|channel|>") and rng.random() < 0.5
    parts[index][0] = "<|start|>assistant" if author else header.removesuffix("<|message|>")
    return _join(parts), {"message": index, "author": author}


def _channel_after_stop(sample: Sample, rng: random.Random) -> _Edit:
    parts = _parts(sample)
    found = _targets(
        sample,
        lambda i: (
            i > 0
            and parts[i][0].startswith("<|start|>assistant<|channel|>")
            and bool(parts[i - 1][2])
        ),
    )
    if not found:
        return sample.text, {"message": None}
    index = rng.choice(found)
    parts[index][0] = parts[index][0].removeprefix("<|start|>assistant<|channel|>")
    return _join(parts), {"message": index}


def _junk_before_channel(sample: Sample, rng: random.Random) -> _Edit:
    parts = _parts(sample)
    found = _targets(
        sample,
        lambda i: (
            sample.messages[i].role is Role.ASSISTANT and sample.messages[i].recipient is not None
        ),
    )
    if not found:
        return sample.text, {"message": None}
    index, junk = rng.choice(found), rng.choice(JUNK)
    message = sample.messages[index]
    first = sample.start == "completion" and index == 0
    head = ("" if first else "<|start|>assistant") + f" to={message.recipient}{junk}"
    head += f"<|channel|>{message.channel}"
    if message.content_type:
        head += " " + message.content_type
    parts[index][0] = head + "<|message|>"
    return _join(parts), {"message": index, "junk": junk}


SHAPES: dict[str, Callable[[Sample, random.Random], _Edit]] = {
    "prose_ws_before": _prose_ws_before,
    "nonletter_body": _nonletter_body,
    "glued_word": _glued_word,
    "channel_after_stop": _channel_after_stop,
    "junk_before_channel": _junk_before_channel,
}


def mangle_shape(sample: Sample, kind: str, rng: random.Random) -> Mangled:
    """``sample`` mangled into the shape ``kind`` names."""
    text, detail = SHAPES[kind](sample, rng)
    return Mangled(text, kind, sample, detail)


def expected_shape(mangled: Mangled) -> list[tuple[object, ...]]:
    """What an exact recovery gives back, as :func:`~tests.support.mangler.comparable` tuples with
    :data:`ANY` where the shape leaves a field ambiguous (compare with :func:`matches`)."""
    detail, originals = mangled.detail, mangled.sample.messages
    want: list[tuple[object, ...]] = [comparable(m) for m in originals]
    index = detail.get("message")
    kind = mangled.kind
    if kind == "prose_ws_before":
        slot = int(detail["slot"])  # type: ignore[call-overload]
        # The prose is a message of its own; its channel depends on what follows it.
        want.insert(slot, ("assistant", ANY, None, None, str(detail["prose"]), None))
    elif index is None:
        pass
    elif kind == "nonletter_body":
        author, channel, recipient, ctype, content, end = want[int(index)]  # type: ignore[call-overload]
        want[int(index)] = (author, channel, recipient, ctype, f"{detail['lead']}{content}", end)  # type: ignore[call-overload]
    elif kind == "glued_word" and detail["author"]:
        author, _, recipient, ctype, content, end = want[int(index)]  # type: ignore[call-overload]
        want[int(index)] = (author, ANY, recipient, ctype, content, end)  # type: ignore[call-overload]
    elif kind == "junk_before_channel":
        junk = str(detail["junk"])
        author, channel, recipient, *rest = want[int(index)]  # type: ignore[call-overload]
        if not junk[0].isspace():
            # Glued on: the strict grammar reads one recipient word (``functions.x??``), a
            # reading of names reads ``functions.x`` and ``??`` apart; both keep every char.
            want[int(index)] = (author, channel, ANY, *rest)  # type: ignore[call-overload]
        elif any(ch.isalnum() for ch in junk):
            # A word there is a field or content, which one is not fixed.
            want[int(index)] = (author, channel, ANY, ANY, ANY, ANY)  # type: ignore[call-overload]
    return want


def matches(got: list[tuple[object, ...]], want: list[tuple[object, ...]]) -> bool:
    """Whether ``got`` is ``want`` field by field, :data:`ANY` matching anything; a message
    of prose inserted by ``prose_ws_before`` matches with its content stripped."""
    if len(got) != len(want):
        return False
    for have, need in zip(got, want, strict=True):
        for position, (a, b) in enumerate(zip(have, need, strict=True)):
            stripped = position == 4 and isinstance(a, str) and a.strip() == b
            if b is ANY or a == b or stripped:
                continue
            return False
    return True
