"""Timing this checkout's ``parse`` against other checkouts (earlier rounds), interleaved.

    python benchmarks/bench_parse.py --against /tmp/r3 /tmp/r4

Each checkout (a ``git worktree`` of another commit) gets a child process of its own, with
its own package first on ``sys.path``; the children read the same inputs and time one pass
over them when told, so rounds of every checkout and mode alternate on the machine and a
busy machine moves them alike. The best (least CPU time) round of each is reported.

Run as a script, this file is the child: ``_against.py --child INPUTS.json``, with
``PYTHONPATH`` naming the checkout; it imports nothing but that checkout's ``parse``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["Timings", "time_checkouts"]

HERE = Path(__file__).resolve()
#: Modes a child times: the strict reading and the lenient one.
MODES = ("strict", "lenient")

#: ``{(checkout, mode): best seconds per input}``.
Timings = dict[tuple[str, str], float]


def time_checkouts(
    checkouts: Sequence[str], inputs: Sequence[tuple[str, str]], rounds: int = 7
) -> Timings:
    """The best CPU seconds per input of each checkout's ``parse``, strict and lenient."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(list(inputs), handle)
    children = []
    try:
        for checkout in checkouts:
            env = {**os.environ, "PYTHONPATH": str(Path(checkout).resolve())}
            children.append(
                subprocess.Popen(
                    [sys.executable, "-W", "ignore", str(HERE), "--child", handle.name],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                    env=env,
                    cwd=tempfile.gettempdir(),  # no checkout on the path but the child's own
                )
            )
        for child in children:  # each says where its package came from once it is warm
            assert child.stdout is not None
            where = child.stdout.readline().strip()
            print(f"  child {checkouts[children.index(child)]}: {where}", file=sys.stderr)
        best: Timings = {}
        for _ in range(rounds):
            for checkout, child in zip(checkouts, children, strict=True):
                for mode in MODES:
                    assert child.stdin is not None and child.stdout is not None
                    child.stdin.write(mode + "\n")
                    child.stdin.flush()
                    seconds = float(child.stdout.readline())
                    key = (checkout, mode)
                    best[key] = min(best.get(key, float("inf")), seconds / len(inputs))
        return best
    finally:
        for child in children:
            if child.stdin is not None:
                child.stdin.close()
            child.wait()
        os.unlink(handle.name)


def _child(path: str) -> None:
    import warnings

    warnings.simplefilter("ignore")
    import harmony_grammar
    from harmony_grammar import parse

    inputs = [(text, start) for text, start in json.loads(Path(path).read_text("utf-8"))]
    try:
        parse("", lenient=True)  # type: ignore[call-arg]
        lenient = {"lenient": True}
    except TypeError:  # before round 6 the keyword was strict=False
        lenient = {"strict": False}
    keywords = {"strict": {}, "lenient": lenient}

    def one_pass(mode: str) -> float:
        extra = keywords[mode]
        begin = time.process_time()
        for text, start in inputs:
            parse(text, start=start, **extra)
        return time.process_time() - begin

    for mode in MODES:
        one_pass(mode)  # warm: the grammar, the tables, the caches
    print(harmony_grammar.__file__, flush=True)
    for line in sys.stdin:
        print(one_pass(line.strip()), flush=True)


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    _child(sys.argv[2])
