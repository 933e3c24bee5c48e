"""Streaming: once per token, ids and text, against openai-harmony's StreamableParser.

    python benchmarks/bench_stream.py [--quick]

Both parsers read the same token stream one token at a time in the same run; the ratio is
our time per token over openai-harmony's (issue 39's target: at most 0.4, for token ids and
for text). Ours is timed three ways: ``feed_tokens([id])`` strict and lenient, and
``feed(text)`` strict with each token's text as a serving loop's detokenizer hands it over
(a character split over ids arrives whole with its last id; control tokens spelled). Shapes: a long analysis (a sentence repeated 300 to 10,000 times, then a
final), prose that does not repeat (the project's docs as one analysis), the worst case for
the parser's shared deltas (20,000 random ordinary ids, nearly all distinct), many short
messages, and long call arguments (ours checking them against the tool's schema with
``tools=``, which openai-harmony does not do; shown, not a like-for-like pair).
Times are CPU seconds (``time.process_time``), the best of a few rounds, so a busy machine
moves them less; text mode is measured per chunk of 16 characters.
"""

from __future__ import annotations

import codecs
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from _common import ids_of, many_short_messages, openai_harmony_encoding

from harmony_grammar.format.stream import StreamParser
from harmony_grammar.format.tokens import CONTROL_SPELLING_RE, ControlToken
from harmony_grammar.format.vocabulary import load_encoding, token_bytes_table

DOCS = Path(__file__).resolve().parents[1] / "docs"

SENTENCE = "The user wants the weather in Paris, so we call get_weather with the city. "
TOOLS = [
    {
        "name": "write_file",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
            "required": ["path", "text"],
        },
    }
]


def _cpu(func: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        func()
        best = min(best, time.process_time() - start)
    return best


def long_analysis(repeats: int) -> str:
    return (
        f"<|channel|>analysis<|message|>{SENTENCE * repeats}<|end|>"
        "<|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>"
    )


def long_arguments(repeats: int) -> str:
    body = '{"path": "notes.txt", "text": "' + SENTENCE * repeats + '"}'
    return (
        f"<|channel|>commentary to=functions.write_file <|constrain|>json<|message|>{body}<|call|>"
    )


def measure(
    name: str, ids: Sequence[int], *, rounds: int, start: str = "completion", tools: object = None
) -> None:
    import openai_harmony

    oh = openai_harmony_encoding()
    role = openai_harmony.Role.ASSISTANT if start == "completion" else None

    def ours(strict: bool) -> None:
        parser = StreamParser(start=start, lenient=not strict, tools=tools)  # type: ignore[arg-type]
        feed = parser.feed_tokens
        for token in ids:
            feed([token])
        parser.close()

    def theirs() -> None:
        parser = openai_harmony.StreamableParser(oh, role)
        process = parser.process
        for token in ids:
            process(token)
        parser.process_eos()

    pieces = text_pieces(ids)

    def ours_text() -> None:
        parser = StreamParser(start=start, tools=tools)  # type: ignore[arg-type]
        feed = parser.feed
        for piece in pieces:
            feed(piece)
        parser.close()

    t_strict = _cpu(lambda: ours(True), rounds) / len(ids)
    t_lenient = _cpu(lambda: ours(False), rounds) / len(ids)
    t_theirs = _cpu(theirs, rounds) / len(ids)
    t_text = _cpu(ours_text, rounds) / len(ids)
    print(
        f"| {name} | {len(ids):,} | {t_strict * 1e6:.2f} | {t_lenient * 1e6:.2f} |"
        f" {t_text * 1e6:.2f} | {t_theirs * 1e6:.2f} | {t_strict / t_theirs:.2f} |"
        f" {t_lenient / t_theirs:.2f} | {t_text / t_theirs:.2f} |"
    )


def text_pieces(ids: Sequence[int]) -> list[str]:
    """Each id's text as an incremental detokenizer hands it over (possibly empty)."""
    table = token_bytes_table(load_encoding())
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pieces = []
    for token_id in ids:
        control = ControlToken.from_id(token_id)
        pieces.append(control.value if control is not None else decoder.decode(table[token_id]))
    return pieces


def main(argv: Sequence[str]) -> None:
    quick = "--quick" in argv
    lengths = (300, 3000) if quick else (300, 1000, 3000, 10000)
    print("feed_tokens once per token, CPU us per token (best of rounds)\n")
    print(
        "| shape | tokens | ours strict | ours lenient | ours text | openai-harmony |"
        " strict ratio | lenient ratio | text ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    StreamParser().feed_tokens(ids_of("<|channel|>final<|message|>warm up"))
    for repeats in lengths:
        ids = ids_of(long_analysis(repeats))
        measure(f"long analysis x{repeats}", ids, rounds=3 if repeats >= 3000 else 5)
    docs = "\n\n".join(p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md")))
    prose = f"<|channel|>analysis<|message|>{CONTROL_SPELLING_RE.sub('', docs)}<|end|>"
    measure("the docs as prose", ids_of(prose), rounds=3)
    rng = random.Random(23)
    noise = [rng.randrange(1000, 150000) for _ in range(20000)]
    head, tail = ids_of("<|channel|>analysis<|message|>"), ids_of("<|end|>")
    measure("20,000 random ids", head + noise + tail, rounds=3)
    measure("200 short messages", ids_of(many_short_messages(200)), rounds=5, start="conversation")
    for repeats in (30,) if quick else (30, 300):
        ids = ids_of(long_arguments(repeats))
        measure(f"call arguments x{repeats}, no tools", ids, rounds=5)
        measure(f"call arguments x{repeats}, tools= (ours checks them)", ids, rounds=3, tools=TOOLS)

    conversation = many_short_messages(200)
    chunks = [conversation[i : i + 16] for i in range(0, len(conversation), 16)]

    def text_mode() -> None:
        parser = StreamParser(start="conversation")
        for chunk in chunks:
            parser.feed(chunk)
        parser.close()

    t_chunk = _cpu(text_mode, 5) / len(chunks)
    print(
        f"\ntext mode: {t_chunk * 1e6:.2f} us per 16-character chunk "
        f"({len(chunks)} chunks, 200 short messages)"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
