"""Checking the conservation ledger of a parse: did any of the input go missing?

:attr:`ParseResult.accounting <harmony_grammar.format.model.ParseResult.accounting>` says
where the input went; :func:`conservation_problems` checks it against the input itself, so
a test, or a user auditing a dataset, can prove that nothing was lost:

* every message's span, every discarded range and every gap between them lie in order
  inside the input, without overlap (debris discarded inside a message's header is in its
  span, never in its content);
* what lies in no message and no discarded range is whitespace (between messages);
* each message's content is exactly the input it was read from (text input: its
  characters; token ids: its decoded ids), inside the message's span, and after its body
  began the span holds nothing else but control tokens (its terminator, debris) and
  whitespace: text read neither as header nor as content shows up there;
* in lenient mode only control-token debris was discarded: spellings of control tokens
  (text) or special and non-integer ids (token ids); strict mode may discard more, after an
  error that names the skip.

Header text is not checked field by field: repairs read it (a channel word lower-cased,
a duplicate recipient ignored) and say so in their diagnostics; it stays in its message's
span. What must never happen, text dropped or moved out of place, is what this catches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .lexer import split_text
from .model import Accounting, ParseResult, Span
from .tokens import FIRST_SPECIAL_ID, special_token_spelling
from .vocabulary import load_encoding, token_bytes_table

__all__ = ["conservation_problems"]


def conservation_problems(
    source: str | Sequence[int], result: ParseResult, *, strict: bool = False
) -> list[str]:
    """What the ledger of ``result`` (parsed from ``source``) fails to account for.

    An empty list means every character (or token id) of ``source`` is in a message or in a
    discarded range a diagnostic names, and (``strict=False``) only control-token debris was
    discarded. ``strict`` must say which mode produced ``result``.
    """
    ledger = result.accounting
    if ledger is None:
        return ["the result carries no accounting"]
    text = source if isinstance(source, str) else None
    ids = None if isinstance(source, str) else list(source)
    decode = _decoder() if ids is not None else None
    problems: list[str] = []
    if ledger.length != len(source):
        problems.append(f"the ledger covers {ledger.length} of {len(source)} units")
    if len(ledger.content) != len(result.messages):
        problems.append(
            f"{len(ledger.content)} content ledgers for {len(result.messages)} messages"
        )
        return problems

    def piece(span: Span) -> str:
        if text is not None:
            return text[span.start : span.end]
        assert ids is not None and decode is not None
        return decode(ids[span.start : span.end])

    regions: list[tuple[Span, str]] = [(s, "discarded") for s in ledger.discarded]
    if ledger.next_turn is not None:
        regions.append((ledger.next_turn, "the next turn's header"))
    bodies = ledger.bodies or (-1,) * len(result.messages)
    for index, message in enumerate(result.messages):
        if message.span is None:
            problems.append(f"message {index} has no span")
            continue
        regions.append((message.span, f"message {index}"))
        spans = ledger.content[index]
        for span in spans:
            if not message.span.start <= span.start <= span.end <= message.span.end:
                problems.append(f"message {index}: content {span} outside its span {message.span}")
        if text is not None:
            read = "".join(piece(span) for span in spans)
            if read != message.content:
                problems.append(
                    f"message {index}: content {message.content[:40]!r} is not the input it came"
                    f" from ({read[:40]!r})"
                )
        elif message.content and not spans:
            problems.append(f"message {index}: content with no input range")
        if bodies[index] >= 0:
            problems += _body_problems(index, message.span, bodies[index], spans, ledger, piece)
    # Debris discarded inside a message (a stray token in its header) is in its span, never
    # in its content; the sweep below covers the rest.
    contents = [span for spans in ledger.content for span in spans]
    for span in ledger.discarded:
        if any(c.start < span.end and span.start < c.end for c in contents):
            problems.append(f"discarded {span} overlaps a message's content")
    messages = [s for s, what in regions if what.startswith("message")]
    regions = [
        (span, what)
        for span, what in regions
        if what != "discarded"
        or not any(m.start <= span.start and span.end <= m.end for m in messages)
    ]
    regions.sort(key=lambda region: (region[0].start, region[0].end))
    position = 0
    for span, what in regions:
        if span.start < position:
            problems.append(f"{what} {span} overlaps what precedes it (up to {position})")
        elif span.start > position:
            gap = piece(Span(position, span.start))
            if gap.strip():
                problems.append(f"input {position}-{span.start} is in no message: {gap[:40]!r}")
        position = max(position, span.end)
    if position < len(source):
        gap = piece(Span(position, len(source)))
        if gap.strip():
            problems.append(f"input {position}-{len(source)} is in no message: {gap[:40]!r}")
    if not strict:
        for span in ledger.discarded:
            if not _debris(source, span):
                shown = piece(span)[:40]
                problems.append(f"discarded {span} is not control-token debris: {shown!r}")
    return problems


def _body_problems(
    index: int,
    span: Span,
    body: int,
    contents: Sequence[Span],
    ledger: Accounting,
    piece: Callable[[Span], str],
) -> list[str]:
    """What lies after a message's body began that is neither its content nor structure."""
    taken = sorted((*contents, *ledger.discarded), key=lambda s: (s.start, s.end))
    gaps, position = [], body
    for part in taken:
        if part.end <= position or part.start >= span.end:
            continue
        if part.start > position:
            gaps.append(Span(position, part.start))
        position = max(position, part.end)
    if position < span.end:
        gaps.append(Span(position, span.end))
    return [
        f"message {index}: {piece(gap)[:40]!r} after its body began is neither content nor a"
        " control token"
        for gap in gaps
        if not _structure(piece(gap))
    ]


def _structure(text: str) -> bool:
    """Whether ``text`` is only control-token spellings and whitespace."""
    return all(control is not None or not piece.strip() for control, piece, *_ in split_text(text))


def _debris(source: str | Sequence[int], span: Span) -> bool:
    """Whether ``source[span]`` holds only control tokens (text) or special ids (ids)."""
    if isinstance(source, str):
        pieces = split_text(source[span.start : span.end])
        return all(control is not None for control, *_ in pieces)
    return all(
        not isinstance(token, int) or isinstance(token, bool) or token >= FIRST_SPECIAL_ID
        for token in source[span.start : span.end]
    )


def _decoder() -> Callable[[Sequence[int]], str]:
    table = token_bytes_table(load_encoding())

    def spelled(token: object) -> bytes:
        if not isinstance(token, int) or isinstance(token, bool) or token < 0:
            return b""
        if token < len(table):
            return table[token]
        return special_token_spelling(token).encode() if token >= FIRST_SPECIAL_ID else b""

    def decode(ids: Sequence[int]) -> str:
        return b"".join(map(spelled, ids)).decode("utf-8", errors="replace")

    return decode
