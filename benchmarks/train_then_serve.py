"""Train a tiny gpt-oss on ``prepare``'s output, serve it, and count the right tool calls.

    python benchmarks/train_then_serve.py [--records 1500] [--epochs 2] [--asks 60] [--seed 0]

Issue 41's end-to-end check, in one run (the pieces are ``tests/support/train_serve.py``):

1. ``--records`` chat records over six tools (each request declares two to four of them in a
   random order; a fifth of the requests call for no tool) are written as JSON Lines and
   turned into Parquet by ``prepare`` (``harmony_grammar.training``, its defaults);
2. a random tiny gpt-oss (``harmony_grammar.generation.hf.tiny_gpt_oss``, seeded) is trained
   on the Parquet's ``input_ids`` and ``labels`` for ``--epochs`` on this machine's CPU (the
   cross-entropy over the masked-in tokens, as TRL's ``SFTTrainer`` computes it on the same
   columns; the output layer is applied to those positions only) and saved with
   ``save_pretrained``; the untrained model of the same seed is saved beside it;
3. ``harmony-grammar serve --model DIR`` (the embedded backend) runs as a process on
   127.0.0.1 for the untrained model (default ``--recipient-position``, ``either``) and for
   the trained one under ``either``, ``role`` and ``channel``; each gets the same ``--asks``
   held-out requests (same distribution, another seed, none equal to a training request)
   through the ``openai`` SDK, with their tools, ``tool_choice`` auto, greedy.

Per server it prints: answers that call a tool; right calls (the tool the request called
for, with arguments valid for its JSON Schema); of those, the request's own arguments; calls
to any declared tool with valid arguments; and requests for no tool answered without a call.
The machine's load before and after, the record count, the tokens and the training time are
printed too. Each ``serve`` process runs torch on one thread (``OMP_NUM_THREADS=1``): on a
shared machine a second OpenMP thread spends its time waiting for a busy core.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.train_serve import (
    POSITIONS,
    Tally,
    asks,
    held_out,
    save_untrained,
    score,
    served,
    train,
    write_records,
)


def _row(label: str, tally: Tally) -> str:
    cells = [
        tally.rate(tally.calls),
        tally.rate(tally.right),
        tally.rate(tally.exact),
        tally.rate(tally.declared),
        tally.rate(tally.quiet, tally.chats),
        f"{tally.seconds:.0f}",
    ]
    return f"| {label} | " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1500, help="training records (default 1500)")
    parser.add_argument("--epochs", type=float, default=2.0, help="passes over them (default 2)")
    parser.add_argument("--batch-size", type=int, default=4, help="default 4")
    parser.add_argument("--learning-rate", type=float, default=1e-2, help="AdamW's, default 1e-2")
    parser.add_argument("--asks", type=int, default=60, help="held-out requests per server")
    parser.add_argument("--seed", type=int, default=0, help="data, model and order (default 0)")
    parser.add_argument("--keep", metavar="DIR", help="write the data and models here (kept)")
    args = parser.parse_args(argv)

    from harmony_grammar.training import PrepareOptions, prepare

    folder = Path(args.keep or tempfile.mkdtemp(prefix="hg-train-serve-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"load before: {' '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    training = asks(args.records, seed=args.seed)
    write_records(folder / "records.jsonl", training, seed=args.seed)
    start = time.perf_counter()
    report = prepare(str(folder / "records.jsonl"), str(folder / "train.parquet"), PrepareOptions())
    print(
        f"prepare: {report.written}/{report.records} records, {report.tokens:,} tokens "
        f"({report.trained_tokens:,} masked in), {time.perf_counter() - start:.1f} s"
    )
    if report.problems:
        print(f"  problems: {report.problems[:3]}")
    save_untrained(folder / "untrained", seed=args.seed)
    cpu = time.process_time()
    fitted = train(
        folder / "train.parquet",
        folder / "trained",
        seed=args.seed,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
    )
    print(
        f"train: {fitted.steps} steps of {args.batch_size} ({fitted.epochs:.1f} epochs), "
        f"{fitted.seconds:.0f} s wall, {time.process_time() - cpu:.0f} s CPU, "
        f"loss {fitted.first_loss:.2f} -> {fitted.last_loss:.2f}"
    )
    evaluation = held_out(training, args.asks, seed=args.seed + 1000)
    print(
        f"asks: {sum(a.tool is not None for a in evaluation)} for a tool, "
        f"{sum(a.tool is None for a in evaluation)} for none"
    )
    print()
    print(
        "| model, --recipient-position | calls | right calls | exact arguments | "
        "declared tool, valid | no call where none is asked | seconds |"
    )
    print("|---|---|---|---|---|---|---|")
    runs = [("untrained", "either")] + [("trained", p) for p in POSITIONS]
    for model, position in runs:
        with served(folder / model, recipient_position=position) as url:
            tally = score(url, evaluation)
        print(_row(f"{model}, {position}", tally), flush=True)
    print()
    print(f"load after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; files in {folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
