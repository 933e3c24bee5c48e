"""The tokenizer's limits are the project's: a long run of whitespace is refused, never a panic.

tiktoken's regex engine backtracks through a run of whitespace on a bounded stack and panics
(``PanicException``, a ``BaseException``: a 500, a traceback, a batch that writes nothing)
near a million spaces, tabs, NBSPs or ideographic spaces. ``format/bounded_encode.py`` refuses
a run past :data:`MAX_WHITESPACE_RUN` before tiktoken sees it, and every door says so in its
own way: a 400 in the gateway, exit 2 with one line in ``tokens``, one record's problem in
``prepare`` and ``audit-masks`` (the other records still written).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harmony_grammar.cli.main import main
from harmony_grammar.format.bounded_encode import (
    MAX_WHITESPACE_RUN,
    EncodeLimitError,
    check_whitespace_runs,
    encode_bounded,
)
from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.vocabulary import load_encoding
from harmony_grammar.gateway.chat.protocol import plan_chat
from harmony_grammar.gateway.errors import GatewayError
from harmony_grammar.gateway.plan import Limits
from harmony_grammar.safety.escaping import encode_untrusted

#: Every character of Unicode's White_Space (tiktoken's ``\s``).
SPACES = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + ("\u2028\u2029\u202f\u205f\u3000")
)
_runs = st.text(st.sampled_from(" \t\xa0\u3000\u2003\u202f"), min_size=1, max_size=4)


def _run(unit: str, length: int) -> str:
    return (unit * (length // len(unit) + 1))[:length]


@settings(max_examples=8, deadline=None)
@given(unit=_runs, before=st.sampled_from(["", "a", "x\ny"]), after=st.sampled_from(["", "b"]))
def test_a_run_past_the_limit_is_refused_where_it_starts(
    unit: str, before: str, after: str
) -> None:
    text = before + _run(unit, MAX_WHITESPACE_RUN + 1) + after
    with pytest.raises(EncodeLimitError) as caught:
        check_whitespace_runs(text)
    assert caught.value.whitespace and caught.value.offset == len(before)
    assert "whitespace" in str(caught.value)
    for encode in (lambda: encode_untrusted(text), lambda: encode_harmony(text)):
        with pytest.raises(EncodeLimitError):
            encode()


@pytest.mark.parametrize("unit", [" ", "\t", "\xa0", "\u3000", " \t", "\u2003\u202f"])
def test_a_run_at_the_limit_encodes_as_tiktoken_does(unit: str) -> None:
    encoding = load_encoding()
    text = "a" + _run(unit, MAX_WHITESPACE_RUN) + "b"
    ids = encode_bounded(encoding, text, ordinary=True)
    assert encoding.decode(ids) == text
    assert ids == encoding.encode_ordinary(text)  # within the limit, tiktoken itself copes


def test_every_unicode_space_counts() -> None:
    text = _run(SPACES, MAX_WHITESPACE_RUN + 1)
    with pytest.raises(EncodeLimitError):
        check_whitespace_runs(text)
    check_whitespace_runs(_run(SPACES + "x", 3 * MAX_WHITESPACE_RUN))  # broken runs pass


def _record(content: str) -> dict[str, Any]:
    return {
        "messages": [{"role": "user", "content": content}, {"role": "assistant", "content": "ok"}]
    }


def test_the_gateway_answers_400(tmp_path: Path) -> None:
    body = {"messages": [{"role": "user", "content": "a" + _run("\u3000", 10**6)}]}
    with pytest.raises(GatewayError) as caught:
        plan_chat(body, model="m", limits=Limits())
    assert caught.value.status == 400 and "whitespace" in caught.value.message


def test_tokens_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.harmony"
    path.write_text("<|start|>user<|message|>x" + " " * 10**6 + "<|end|>", encoding="utf-8")
    assert main(["tokens", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "whitespace" in err


def test_prepare_refuses_the_record_and_writes_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyarrow = pytest.importorskip("pyarrow.parquet")
    source = tmp_path / "in.jsonl"
    records = [_record("one"), _record("x" + "\xa0" * 10**6), _record("three")]
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "out.parquet"
    assert main(["prepare", str(source), "--output", str(out)]) == 1
    err = capsys.readouterr().err
    assert ":2: HG304" in err and "whitespace" in err and "internal error" not in err
    assert pyarrow.read_table(out).num_rows == 2


def test_audit_masks_refuses_the_record_and_reads_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    encoding = load_encoding()
    space = encoding.encode_ordinary(" ")[0]
    head = encode_harmony("<|start|>user<|message|>a")
    tail = encode_harmony("b<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>")
    lines = []
    for middle in ([], [space] * 10**6, []):
        ids = head + middle + tail
        lines.append(json.dumps({"input_ids": ids, "assistant_masks": [0] * len(ids)}))
    source = tmp_path / "audit.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = tmp_path / "audit_out.jsonl"
    main(["audit-masks", str(source), "--output", str(report)])
    err_out = capsys.readouterr()
    assert "internal error" not in err_out.err + err_out.out
    rows = report.read_text(encoding="utf-8").splitlines()
    assert len(rows) == 3
    assert "whitespace" in rows[1] and "whitespace" not in rows[0] + rows[2]
