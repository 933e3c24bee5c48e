"""Streaming: feed_tokens called once per token, against openai-harmony's StreamableParser.

    python benchmarks/bench_stream.py

Both parsers read the same token stream one token at a time in the same run; the ratio is
our time per token over openai-harmony's (at most 1.0 means no slower). Text mode is
measured per chunk of 16 characters.
"""

from __future__ import annotations

from _common import (
    best_of,
    ids_of,
    long_analysis_and_call,
    many_short_messages,
    openai_harmony_encoding,
)

from harmony_grammar.format.stream import StreamParser


def main() -> None:
    import openai_harmony

    oh = openai_harmony_encoding()
    text = long_analysis_and_call()
    ids = ids_of(text)

    def ours() -> None:
        parser = StreamParser()
        feed = parser.feed_tokens
        for token in ids:
            feed([token])
        parser.close()

    def theirs() -> None:
        parser = openai_harmony.StreamableParser(oh, openai_harmony.Role.ASSISTANT)
        process = parser.process
        for token in ids:
            process(token)
        parser.process_eos()

    t_ours = best_of(ours, repeat=9) / len(ids)
    t_theirs = best_of(theirs, repeat=9) / len(ids)
    print(f"feed_tokens per token ({len(ids)} tokens, long analysis + tool call)")
    print(
        f"  harmony-grammar {t_ours * 1e6:.2f} us, openai-harmony {t_theirs * 1e6:.2f} us, "
        f"ratio {t_ours / t_theirs:.2f} (<= 1.0 is the target)"
    )

    conversation = many_short_messages(200)
    chunks = [conversation[i : i + 16] for i in range(0, len(conversation), 16)]

    def text_mode() -> None:
        parser = StreamParser(start="conversation")
        for chunk in chunks:
            parser.feed(chunk)
        parser.close()

    t_chunk = best_of(text_mode) / len(chunks)
    print(
        f"text mode: {t_chunk * 1e6:.2f} us per 16-character chunk "
        f"({len(chunks)} chunks, 200 short messages)"
    )


if __name__ == "__main__":
    main()
