"""What most likely produced a deviation, and how to fix it at the source: one table.

A diagnostic's code says *what* the parser saw; the serving stack that produced it is usually
one of a few (harmony-format.md §5): a detokenizer that drops special tokens, a server that
strips the stop token, a client that joins streamed deltas, a model that drifted. This table
maps a code to that most likely cause and to the fix where the output is produced, so that a
user who brings broken output learns how to stop getting it. ``validate`` prints each hint
once per run; ``harmony-grammar repair`` prints it beside the diagnostics.

Like ``diagnostics.CATALOGUE``, this is data: a new code that has a cause worth naming is one
row here. Codes without a row (strict errors, validator rules) have no hint.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["CAUSES", "Cause", "cause_of", "causes_of"]


@dataclass(frozen=True, slots=True)
class Cause:
    """The most likely cause of a deviation (``summary``) and the fix at its source (``fix``)."""

    summary: str
    fix: str


_STRIPPED_TOKENS = Cause(
    "control tokens were stripped by the detokenizer",
    "decode with special tokens kept (`skip_special_tokens=False` in vLLM/SGLang/transformers)",
)
_STRIPPED_STOP = Cause(
    "the stop token was stripped (or the output was cut)",
    "keep `<|call|>`/`<|return|>` in the output (vLLM/SGLang: `skip_special_tokens=False`, "
    'stop tokens not removed), or pass `start="completion"` for text after '
    "`<|start|>assistant`",
)
_SPELLED_TOKENS = Cause(
    "control tokens were encoded as ordinary text (the spelling, not the special id)",
    'encode with special tokens allowed (tiktoken: `allowed_special="all"`), or parse '
    "the text instead of re-tokenised ids",
)
_MODEL_DRIFT_HEADER = Cause(
    "the model wrote a malformed header (sampling drift, often at high temperature or "
    "with a quantised model)",
    "constrain the header with the turn grammar (`harmony-grammar grammar`), or lower "
    "the temperature",
)

#: Code -> most likely cause. Every lenient repair (HG15x-HG17x warnings) has one.
CAUSES: dict[str, Cause] = {
    "HG102": _STRIPPED_STOP,  # strict mode's name for HG159
    "HG105": Cause(
        "token ids were cut in the middle of a UTF-8 character",
        "pass the complete id sequence, or decode only at token boundaries that end a character",
    ),
    "HG110": _SPELLED_TOKENS,
    "HG150": Cause(
        "the model stopped inside a header (a stop token before `<|message|>`)",
        "constrain the header with the turn grammar, or check that `<|message|>` is not a "
        "stop string in the engine's settings",
    ),
    "HG151": Cause(
        "`<|start|>assistant` was dropped between messages (the engine or a client joined "
        "messages, or it was the prompt's last token)",
        'for output after `<|start|>assistant` pass `start="completion"`; otherwise keep '
        "`<|start|>{role}` when joining messages",
    ),
    "HG152": Cause(
        "text outside any message: log noise, a client's prefix, or several generations joined",
        "pass only the model's output, one generation at a time",
    ),
    "HG153": Cause(
        "the `<|call|>` stop token was stripped, or the call ended with another token",
        "keep `<|call|>` in the output (do not strip stop tokens; vLLM/SGLang: "
        "`skip_special_tokens=False`) and stop generation at `<|call|>`",
    ),
    "HG154": Cause(
        "the model glued the content type to the recipient (`to=functions.xjson`)",
        "constrain the call header with the turn grammar; the call itself was recovered",
    ),
    "HG155": Cause(
        "the model wrote the content type in upper case (`<|constrain|>JSON`)",
        "nothing to fix at the source; the content type was kept as written, with this warning",
    ),
    "HG156": _MODEL_DRIFT_HEADER,
    "HG157": _MODEL_DRIFT_HEADER,
    "HG158": _MODEL_DRIFT_HEADER,
    "HG159": _STRIPPED_STOP,
    "HG160": _STRIPPED_TOKENS,
    "HG161": Cause(
        "the model wrote its reasoning into the header (sampling drift, often with a "
        "quantised model or a high temperature)",
        "constrain the header with the turn grammar (`harmony-grammar grammar`), or lower "
        "the temperature",
    ),
    "HG162": Cause(
        "the model wrote a call outside a call header (or its header was lost), so it could "
        "not be dispatched",
        "keep the control tokens in the output (`skip_special_tokens=False`) and constrain the "
        "turn with the turn grammar",
    ),
    "HG163": Cause(
        "the output has no header: the prompt did not end with `<|start|>assistant` in the "
        "Harmony format, or the start of the output was cut off",
        'render the prompt with the Harmony renderer (`render(..., next_turn="assistant")`) '
        "and pass the whole output",
    ),
    "HG164": Cause(
        "text between messages: the model wrote outside a message, or outputs were joined",
        "pass one generation at a time; constrain the turn with the turn grammar",
    ),
    "HG165": _MODEL_DRIFT_HEADER,
    "HG166": _MODEL_DRIFT_HEADER,
    "HG167": Cause(
        "the model copied a tool reply's `to=assistant` into its own header (imitating the "
        "history)",
        "constrain the header with the turn grammar; the message itself was recovered",
    ),
    "HG168": Cause(
        "the model wrote its call in the shape of a tool's reply (imitating the history)",
        "constrain the call header with the turn grammar; the call itself was recovered",
    ),
    "HG169": Cause(
        "the model left out the `functions.` namespace of a declared function",
        "declare the tools in the developer message's `namespace functions` (as the renderer "
        "does); the call was read as `functions.NAME`",
    ),
    "HG171": Cause(
        "the output repeats the prompt's `<|start|>assistant`, or a client prefixed text to it",
        "pass only what the model generated after the prompt's `<|start|>assistant`",
    ),
    "HG172": _MODEL_DRIFT_HEADER,
    "HG177": _MODEL_DRIFT_HEADER,
    "HG178": _MODEL_DRIFT_HEADER,
    "HG179": _MODEL_DRIFT_HEADER,
    "HG173": Cause(
        "the model wrote a channel name that is not one of Harmony's ASCII names (often a "
        "translated `analysis`/`final` in a conversation in another language)",
        "constrain the header with the turn grammar (`harmony-grammar grammar`); the name was "
        "kept whole, and `validate` reports it if the system message does not declare it",
    ),
    "HG174": _SPELLED_TOKENS,
    "HG175": Cause(
        "a control token where none can stand: a doubled stop token, or one a serving stack "
        "injected or left over from a cut",
        "stop generation at the first `<|call|>`/`<|return|>` and pass the output once; the "
        "token was discarded and nothing else was lost",
    ),
    "HG176": Cause(
        "the prompt ended with `<|start|>assistant` and the model's ` to=` lost its space (a "
        "client trimmed the completion's leading whitespace)",
        "keep the completion exactly as generated; the recipient was read as written",
    ),
    "HG170": Cause(
        "the model went on past `<|call|>` and wrote the tool's result itself",
        "stop generation at `<|call|>` (add it to the engine's stop tokens) and run the tool",
    ),
}


def cause_of(code: str) -> Cause | None:
    """The most likely cause of diagnostic ``code`` and its fix, or None when none is known."""
    return CAUSES.get(code)


def causes_of(codes: Iterable[str]) -> list[tuple[tuple[str, ...], Cause]]:
    """Each distinct cause among ``codes``, with the codes that point to it, in first-seen order.

    A cause shared by several codes (a stripped stop token is HG153 or HG159) is listed once,
    so a summary prints each hint once; codes without a cause are left out.
    """
    grouped: dict[Cause, list[str]] = {}
    for code in dict.fromkeys(codes):
        cause = CAUSES.get(code)
        if cause is not None:
            grouped.setdefault(cause, []).append(code)
    return [(tuple(group), cause) for cause, group in grouped.items()]
