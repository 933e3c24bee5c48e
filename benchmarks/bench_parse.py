"""Batch parsing: token ids against openai-harmony, and text throughput.

    python benchmarks/bench_parse.py

openai-harmony's ``parse_messages_from_completion_tokens`` and our ``parse`` read the same
token streams in the same run; the ratio is openai-harmony's time over ours (above 1 means
we are faster).
"""

from __future__ import annotations

from _common import (
    best_of,
    ids_of,
    long_analysis_and_call,
    many_short_messages,
    openai_harmony_encoding,
)

from harmony_grammar import parse


def main() -> None:
    import openai_harmony

    oh = openai_harmony_encoding()
    workloads = {
        "long analysis + tool call (completion)": (long_analysis_and_call(), "completion"),
        "200 short messages (conversation)": (many_short_messages(200), "conversation"),
    }
    print("batch parse of token ids, median per stream")
    for name, (text, start) in workloads.items():
        ids = ids_of(text)
        role = openai_harmony.Role.ASSISTANT if start == "completion" else None
        ours = parse(ids, start=start)
        assert ours.ok, ours.diagnostics
        theirs = oh.parse_messages_from_completion_tokens(ids, role)
        assert len(theirs) == len(ours.messages)
        t_ours = best_of(lambda: parse(ids, start=start))
        t_theirs = best_of(lambda: oh.parse_messages_from_completion_tokens(ids, role))
        print(
            f"  {name}: {len(ids)} tokens; harmony-grammar {t_ours * 1e3:.3f} ms, "
            f"openai-harmony {t_theirs * 1e3:.3f} ms, speed-up x{t_theirs / t_ours:.1f}"
        )
    print("text parsing throughput")
    for name, (text, start) in workloads.items():
        big = text if start == "completion" else text * 5
        t = best_of(lambda: parse(big, start=start))
        size = len(big.encode("utf-8"))
        print(f"  {name}: {size / t / 1e6:.1f} MB/s ({size} bytes in {t * 1e3:.2f} ms)")


if __name__ == "__main__":
    main()
