"""Recovering from leaks: moving leaked reasoning out of visible text, and cutting a turn
where the model began forging a tool's result.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .leaks import mention_spans
from .model import Diagnostic, Role
from .parser import parse
from .tokens import ControlToken

__all__ = ["ForgedToolResult", "find_forged_tool_result", "repair_thinking"]

_S = {token: re.escape(token.value) for token in ControlToken}

# One leaked message, rendered (<|start|>assistant<|channel|>...) or bare (<|channel|>...):
# an optional terminator of the text before it, the header (recipient and content type
# allowed, bounded), and the content up to its terminator, the next header, or the end.
_LEAKED_MESSAGE_RE = re.compile(
    rf"(?:{_S[ControlToken.END]}|{_S[ControlToken.RETURN]})?"
    rf"(?:{_S[ControlToken.START]}assistant)?{_S[ControlToken.CHANNEL]}"
    rf"(?P<channel>analysis|final)(?:[^<\n]|{_S[ControlToken.CONSTRAIN]}){{0,128}}"
    rf"{_S[ControlToken.MESSAGE]}(?P<content>.*?)"
    rf"(?:{_S[ControlToken.END]}|{_S[ControlToken.RETURN]}|{_S[ControlToken.CALL]}"
    rf"|(?={_S[ControlToken.START]}|{_S[ControlToken.CHANNEL]})|\Z)",
    re.DOTALL,
)
# A detokenizer that drops special tokens turns "<|channel|>analysis<|message|>X<|end|>
# <|start|>assistant<|channel|>final<|message|>Y" into "analysisXassistantfinalY".
_STRIPPED_RE = re.compile(
    r"\A\s*analysis(?P<reasoning>.+?)assistantfinal(?P<visible>.*)\Z", re.DOTALL
)


def _repair_once(text: str) -> tuple[str, list[str]]:
    stripped = _STRIPPED_RE.match(text)
    if stripped:
        return stripped.group("visible"), [stripped.group("reasoning")]
    quoted = mention_spans(text)
    quoted_starts = [span.start for span in quoted]
    visible: list[str] = []
    reasoning: list[str] = []
    pos = 0
    for match in _LEAKED_MESSAGE_RE.finditer(text):
        start = match.start()
        index = bisect.bisect_right(quoted_starts, start) - 1
        if index >= 0 and start < quoted[index].end:
            continue  # Harmony quoted in code or a literal: documentation, not a leak
        visible.append(text[pos:start])
        if match.group("channel") == "analysis":
            reasoning.append(match.group("content"))
        else:  # a leaked final header: the content is the answer, the markup goes
            visible.append(match.group("content"))
        pos = match.end()
    if pos == 0:
        return text, []
    visible.append(text[pos:])
    return "".join(visible), reasoning


def repair_thinking(text: str) -> tuple[str, str]:
    """Split visible text into ``(visible, reasoning)``, moving leaked analysis back.

    Recognised: rendered ``<|start|>assistant<|channel|>analysis<|message|>…<|end|>`` and
    bare ``<|channel|>analysis<|message|>…<|end|>`` blocks anywhere (the content ends at a
    terminator, the next header or the end of text), and the detokenized form
    ``analysis…assistantfinal…`` at the start. A leaked ``final`` header is removed and its
    content kept visible. Blocks inside Markdown code or quoted literals are left alone.
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
    result = parse(output, start="completion", role=role, strict=False)
    for diagnostic in result.diagnostics:
        if diagnostic.code == "HG170":
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
