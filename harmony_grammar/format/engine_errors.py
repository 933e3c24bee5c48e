"""Where the grammar cannot go on: the engine's refusals, errors and ids that are no text.

The engine (:mod:`.engine`) parses by the grammar alone; these are its moves where the
grammar refuses or the input holds what Harmony does not: a rejected terminal (the repair
table's ``REJECTED_TOKEN`` rows, else HG100), the end of input where the grammar cannot
end (the ``END_OF_INPUT`` rows, else HG102), an unrecoverable error (reported, then
everything up to the next ``<|start|>`` skipped and discarded), a control token's spelling
cut short at the end of text (HG175), and token ids that are no Harmony (HG103, HG106) or
whose run says more than its text (HG105, HG110). :class:`.engine.Engine` takes each as a
method of its own.
"""

from __future__ import annotations

import reprlib

from .engine_view import EngineView
from .grammar import expected_description
from .lexer import TextRun
from .model import Span, author_text
from .tokens import FIRST_SPECIAL_ID, LAST_SPECIAL_ID, ControlToken, special_token_spelling

__all__ = [
    "cut_spelling",
    "end_of_input",
    "error",
    "expected_terminals",
    "rejected_token",
    "run_facts",
    "special_id",
]

_CONTENT = "CONTENT"
_CONTROL_TERMINALS = frozenset(token.terminal for token in ControlToken)


def special_id(engine: EngineView, token_id: object, index: int) -> None:
    """A special id that is not a Harmony control token, or an element of the ids that
    is not an integer at all (token input only)."""
    engine.book.discard(index, index + 1)
    if type(token_id) is not int:
        what = f"{type(token_id).__name__} {reprlib.repr(token_id)} is not a token id (an int)"
        engine.diagnose("HG106", f"{what}; it was skipped", index, index + 1)
        return
    if FIRST_SPECIAL_ID <= token_id <= LAST_SPECIAL_ID:
        spelling = special_token_spelling(token_id)
        what = f"special token {token_id} ({spelling}) is not part of Harmony"
    elif token_id.bit_length() > 64:  # never convert a huge int to text (quadratic, limited)
        what = f"an integer of {token_id.bit_length()} bits is not an o200k_harmony token id"
    else:
        what = f"{token_id} is not an o200k_harmony token id"
    engine.diagnose("HG103", f"{what}; it was skipped", index, index + 1)


def run_facts(engine: EngineView, run: TextRun) -> None:
    """Facts about a run of ordinary token ids that just ended."""
    if run.invalid_utf8:
        engine.diagnose(
            "HG105",
            "these token ids do not decode as UTF-8; invalid bytes became U+FFFD",
            run.start,
            run.end,
        )
    if run.spellings:
        engine.diagnose(
            "HG110",
            f"ordinary text tokens spell {', '.join(run.spellings)}: read as text, not as"
            " control tokens",
            run.start,
            run.end,
        )


def cut_spelling(engine: EngineView, text: str, start: int, end: int) -> None:
    """The start of a control token's spelling at the end of input (text only): text,
    as the grammar reads it, in strict mode (no repair); debris in lenient mode."""
    if not engine.repairs:
        engine.text(text, start, end)
        return
    if engine.lines is not None:
        engine.lines.add(text, start)
    engine.flush_pending("$END")
    engine.book.discard(start, end)
    engine.diagnose("HG175", f"{text!r}, a control token cut short, was discarded", start, end)


def end_of_input(engine: EngineView, end: int) -> None:
    """The end of input at offset ``end``."""
    engine.flush_pending("$END")
    if engine.skipping:
        return
    # A prompt's trailing <|start|>{author} is complete input (next_turn), not a header
    # cut short: only input the grammar cannot end here is repaired.
    if not engine.parser.feed_eof() and not any(
        repair(engine, end) for repair in engine.repairs.end_of_input
    ):
        error(
            engine,
            "HG102",
            "the input ends inside a message",
            end,
            end,
            expected=expected_terminals(engine),
        )
        return
    draft = engine.draft
    if draft is not None and draft.content is not None:
        engine.finish(None, end)  # a completion's last message, its stop token stripped
    elif draft is not None:  # a prompt's trailing <|start|>{author}
        engine.next_turn = author_text(draft.role, draft.name)
        engine.book.next_turn = Span(draft.start, end)
        engine.draft = None


def rejected_token(engine: EngineView, terminal: str, value: str, start: int, end: int) -> None:
    """A terminal the grammar refused: the first ``REJECTED_TOKEN`` row that repairs it,
    else HG100 (an error: skip to the next ``<|start|>``)."""
    if start == end:
        # A repair's zero-width terminal the grammar refuses: the repair misjudged the
        # state. Say so as an error (never a silent skip of real input).
        error(engine, "HG100", f"a repair could not feed {terminal} here", start, end)
        return
    for repair in engine.repairs.rejected_token:
        if repair(engine, terminal, value, start, end):
            return
    if terminal == _CONTENT:
        described = "message content"
    else:
        described = value if terminal in _CONTROL_TERMINALS else f"{terminal} {value!r}"
    what = f"unexpected {described}"
    error(engine, "HG100", what, start, end, expected=expected_terminals(engine))


def error(
    engine: EngineView,
    code: str,
    message: str,
    start: int,
    end: int,
    expected: tuple[str, ...] = (),
) -> None:
    """An unrecoverable error: report it and skip to the next ``<|start|>``."""
    skip = "" if code == "HG102" else "; skipped to the next <|start|>"
    engine.diagnose(code, message + skip, start, end, expected)
    # What the error abandons is discarded: the message being read, the pending text.
    draft, pending = engine.draft, engine.take_pending()
    first = min(
        draft.start if draft is not None else start,
        pending.start if pending.start >= 0 else start,
        start,
    )
    engine.book.discard(first, max(end, pending.end))
    engine.skipping = True
    engine.draft = None


def expected_terminals(engine: EngineView) -> tuple[str, ...]:
    """What the grammar would accept here, in readable form."""
    return expected_description(
        {name for name in engine.parser.choices() if name.isupper() or name.startswith(("$", "_"))}
    )
