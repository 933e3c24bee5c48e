"""Recovering from leaks: moving leaked reasoning out of visible text, and cutting a turn
where the model began forging a tool's result.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from ..format.codes import CATALOGUE
from ..format.model import Diagnostic, Role
from ..format.parser import parse
from ..format.tokens import CONTROL_SPELLING_RE, TERMINATORS, ControlToken
from .leaks import mention_spans

__all__ = ["ForgedToolResult", "find_forged_tool_result", "repair_thinking"]

_HEADER_STARTS = (ControlToken.START, ControlToken.CHANNEL)
_LEAKED_CHANNELS = ("analysis", "final")


@dataclass(frozen=True, slots=True)
class _Leak:
    """A leaked message inside visible text: ``text[start:end]`` goes, ``content`` is kept."""

    start: int
    end: int
    channel: str
    content: str


def _leaks(text: str) -> list[_Leak]:
    """Leaked analysis/final messages in ``text``, read by the lenient parser.

    Control-token spellings only cut the text into candidates: from a ``<|start|>`` or
    ``<|channel|>`` (outside quoted spans) through the first ``<|message|>`` to a terminator,
    the next ``<|start|>``/``<|channel|>``, or the end. Whether a candidate is a message, and
    its channel and content, is the grammar's answer (``parse``, lenient), so the header
    syntax lives in harmony.lark only. A terminator just before it (ending the visible text
    the model wrote first) goes with it.
    """
    marks = [
        (ControlToken(m.group()), m.start(), m.end()) for m in CONTROL_SPELLING_RE.finditer(text)
    ]
    quoted = mention_spans(text)
    quoted_starts = [span.start for span in quoted]

    def is_quoted(offset: int) -> bool:
        index = bisect.bisect_right(quoted_starts, offset) - 1
        return index >= 0 and offset < quoted[index].end

    leaks: list[_Leak] = []
    i = 0
    while i < len(marks):
        token, begin, _ = marks[i]
        if token not in _HEADER_STARTS or is_quoted(begin):
            i += 1
            continue
        body = next(
            (j for j in range(i + 1, len(marks)) if marks[j][0] is ControlToken.MESSAGE), None
        )
        if body is None:
            break  # no <|message|> from here on: nothing later can be a message either
        stop = next(
            (j for j in range(body + 1, len(marks))
             if marks[j][0] in TERMINATORS or marks[j][0] in _HEADER_STARTS),
            None,
        )  # fmt: skip
        if stop is None:
            end, resume = len(text), len(marks)
        elif marks[stop][0] in TERMINATORS:
            end, resume = marks[stop][2], stop + 1
        else:
            end, resume = marks[stop][1], stop
        start_symbol = "conversation" if token is ControlToken.START else "completion"
        result = parse(text[begin:end], start=start_symbol, role="assistant", lenient=True)
        message = result.messages[0] if result.messages else None
        if (
            message is None
            or message.role is not Role.ASSISTANT
            or message.channel not in _LEAKED_CHANNELS
            or (message.span is not None and message.span.start != 0)
        ):
            i += 1
            continue
        if i and marks[i - 1][0] in TERMINATORS and marks[i - 1][2] == begin:
            begin = marks[i - 1][1]
        leaks.append(_Leak(begin, end, message.channel, message.content))
        i = resume
    return leaks


def _stripped(text: str) -> tuple[str, list[str]] | None:
    """``(visible, reasoning)`` when ``text`` is the stripped-token dialect, else None.

    A detokenizer that drops special tokens turns ``<|channel|>analysis<|message|>X<|end|>
    <|start|>assistant<|channel|>final<|message|>Y`` into ``analysisXassistantfinalY``. The
    lenient parser reads that dialect with its own grammar, and only on evidence (HG160), so
    its reading is taken as it is. Only a reading of plain analysis and final messages is
    used: anything else (a call, say) has no place in visible text or reasoning, and the text
    is left alone rather than lose it.
    """
    result = parse(text, start="completion", role="assistant", lenient=True)
    if not result.ok or not any(CATALOGUE[d.code].stripped_dialect for d in result.diagnostics):
        return None
    messages = result.messages
    if not messages or any(
        m.role is not Role.ASSISTANT or m.recipient is not None or m.channel not in _LEAKED_CHANNELS
        for m in messages
    ):
        return None
    visible = "".join(m.content for m in messages if m.channel == "final")
    return visible, [m.content for m in messages if m.channel == "analysis"]


def _repair_once(text: str) -> tuple[str, list[str]]:
    stripped = _stripped(text)
    if stripped is not None:
        return stripped
    visible: list[str] = []
    reasoning: list[str] = []
    pos = 0
    for leak in _leaks(text):
        visible.append(text[pos : leak.start])
        if leak.channel == "analysis":
            reasoning.append(leak.content)
        else:  # a leaked final header: the content is the answer, the markup goes
            visible.append(leak.content)
        pos = leak.end
    if pos == 0:
        return text, []
    visible.append(text[pos:])
    return "".join(visible), reasoning


def repair_thinking(text: str) -> tuple[str, str]:
    """Split visible text into ``(visible, reasoning)``, moving leaked analysis back.

    Recognised: rendered ``<|start|>assistant<|channel|>analysis<|message|>…<|end|>`` and
    bare ``<|channel|>analysis<|message|>…<|end|>`` blocks anywhere (the content ends at a
    terminator, the next header or the end of text), and text whose control tokens a
    detokenizer stripped (``analysis…assistantfinal…``), as the lenient parser reads it. A
    leaked ``final`` header is removed and its content kept visible. Blocks inside Markdown
    code or quoted literals are left alone.
    When anything was moved, the visible text is stripped of surrounding whitespace; pieces
    of reasoning are joined with newlines. Idempotent: repairing ``visible`` again changes
    nothing and finds no reasoning.
    """
    pieces: list[str] = []
    while True:
        repaired, found = _repair_once(text)
        if repaired == text:
            return text, "\n".join(pieces)
        pieces.extend(found)
        text = repaired.strip()


@dataclass(frozen=True, slots=True)
class ForgedToolResult:
    """Where the model began writing a tool's result itself.

    ``cut`` is where the host should end the turn: keep ``output[:cut]``. It is a character
    offset for text and a token index for token ids. ``author`` is the forged author
    (``functions.get_weather``); ``diagnostic`` is the parser's HG170.
    """

    cut: int
    author: str
    diagnostic: Diagnostic


def find_forged_tool_result(
    output: str | Sequence[int], *, role: str | Role = "assistant"
) -> ForgedToolResult | None:
    """Find a forged tool result in model output (the text or ids after ``<|start|>{role}``).

    The output is read by the lenient parser, which reports a message authored by a tool in
    the model's own output as HG170; None when there is none. Token ids are authoritative:
    in text, a spelled ``<|start|>`` cannot be told from the real token.
    """
    result = parse(output, start="completion", role=role, lenient=True)
    for diagnostic in result.diagnostics:
        if CATALOGUE[diagnostic.code].forged_tool_result:
            author = next(
                (
                    message.author
                    for message in result.messages
                    if message.role is Role.TOOL
                    and message.span is not None
                    and message.span.start == diagnostic.start
                ),
                "",
            )
            return ForgedToolResult(diagnostic.start, author, diagnostic)
    return None
