"""A tiny gpt-oss trained on ``prepare``'s output calls its tools through ``serve`` (issue 41).

``benchmarks/train_then_serve.py`` at CI size (``tests/support/train_serve.py`` holds the
pieces): records over six tools go through ``prepare`` to Parquet, a random tiny gpt-oss is
trained on its ``labels`` for 150 optimiser steps on the CPU and saved with
``save_pretrained``, and ``harmony-grammar serve --model DIR`` (the embedded backend, the
default ``--recipient-position either``) answers held-out requests sent with the ``openai``
SDK: the trained model and, from the same seed, the untrained one.

What training teaches at this size is when to call: a request that calls for a tool gets a
call to a declared tool with arguments valid for its schema, and a greeting or a sum gets an
answer without a call. A greedy random model makes nearly the same choice for every request
(the grammar keeps its calls well formed, so it may call for most of them), so it gets one
kind of request right and the other wrong; the trained model must get both. Which of the
declared tools it picks needs more training than CI can afford (the benchmark's figures are
in docs/training.md). Everything is seeded and decoded greedily; nothing is timed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("pyarrow")
pytest.importorskip("openai")
pytest.importorskip("llguidance")
pytest.importorskip("jsonschema")

from harmony_grammar.training import PrepareOptions, prepare
from tests.support.serve_peers import deadline
from tests.support.train_serve import (
    Tally,
    asks,
    held_out,
    save_untrained,
    score,
    served,
    train,
    write_records,
)

SEED = 0
RECORDS = 200
EPOCHS = 3.0  # 150 steps of 4: at 2 epochs (or 160 records) some seeds have not learnt it
ASKS = 24
CHAT_SHARE = 0.4  # of the held-out requests (a fifth of the training ones)
#: Of the held-out requests, how many the trained model may get wrong, of each kind. Seeds
#: 0-3 at this size got at most one wrong (docs/training.md); the bound leaves room for
#: another machine's float rounding to flip a greedy choice or two.
SLACK = 2


def _right(tally: Tally) -> int:
    """Answers of the right kind: a valid call to a declared tool where a tool is asked for,
    no call where none is."""
    return tally.declared + tally.quiet


def test_a_model_trained_on_prepares_data_calls_its_tools_through_serve(tmp_path: Path) -> None:
    with deadline(1800):  # a guard against a hang only: 4 minutes on a loaded 2-core machine
        _train_then_serve(tmp_path)


def _train_then_serve(tmp_path: Path) -> None:
    training = asks(RECORDS, seed=SEED)
    write_records(tmp_path / "records.jsonl", training, seed=SEED)
    report = prepare(
        str(tmp_path / "records.jsonl"), str(tmp_path / "train.parquet"), PrepareOptions()
    )
    assert report.written == RECORDS and not report.problems
    save_untrained(tmp_path / "untrained", seed=SEED)
    fitted = train(tmp_path / "train.parquet", tmp_path / "trained", seed=SEED, epochs=EPOCHS)
    assert fitted.last_loss < fitted.first_loss / 4, fitted
    evaluation = held_out(training, ASKS, seed=SEED + 1000, chat_share=CHAT_SHARE)
    chats = sum(a.tool is None for a in evaluation)
    assert 0 < chats < ASKS  # both kinds of request are asked

    with served(tmp_path / "trained") as url:  # serve's default: --recipient-position either
        trained = score(url, evaluation, max_tokens=48)
    assert trained.asked + trained.chats == ASKS
    assert trained.declared >= trained.asked - SLACK, trained
    assert trained.quiet >= trained.chats - SLACK, trained

    with served(tmp_path / "untrained") as url:
        untrained = score(url, evaluation, max_tokens=48)
    # A greedy random model answers nearly every request alike (the grammar keeps its calls
    # well formed, so calling everywhere scores every request that asks for a tool): the
    # trained one must do clearly better than that.
    assert _right(trained) >= _right(untrained) + ASKS // 4, (trained, untrained)
