"""The conformance runner against adapters that misbehave (issue 27).

Every misbehaviour is that case's error; the run always finishes with its scorecard, and
what one adapter does never changes what the next one is scored on.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

import pytest

from harmony_grammar.conformance import load_cases
from harmony_grammar.conformance.adapters import harmony_grammar_adapter
from harmony_grammar.conformance.runner import MAX_TIMEOUTS_IN_A_ROW, run_case, run_suite
from tests.support.cli_helpers import run_cli

CASES = load_cases()
SOME = CASES[:12]
TEXT = harmony_grammar_adapter("text")


def mutating(request: dict[str, Any]) -> dict[str, Any]:
    """Answers, then vandalises everything it was given."""
    response = TEXT(request)
    for value in request.values():
        if isinstance(value, list):
            value.clear()
            value.append("vandalised")
        elif isinstance(value, dict):
            value.clear()
    request.clear()
    return response


def exiting(request: dict[str, Any]) -> dict[str, Any]:
    sys.exit(0)


class Weird(BaseException):
    pass


def base_exception(request: dict[str, Any]) -> dict[str, Any]:
    raise Weird("not an Exception")


class _Unshowable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no")


def unshowable(request: dict[str, Any]) -> dict[str, Any]:
    raise _Unshowable


class _Hostile:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__ raised")

    __ne__ = __eq__  # type: ignore[assignment]
    __hash__ = None  # type: ignore[assignment]


def raising_eq(request: dict[str, Any]) -> dict[str, Any]:
    """The right answer, with a value in every message (and the text) that cannot compare."""
    response = TEXT(request)
    for message in response.get("messages", []):
        message["role"] = _Hostile()
    if "text" in response:
        response["text"] = _Hostile()
    return response


def hanging(request: dict[str, Any]) -> dict[str, Any]:
    time.sleep(120)
    return TEXT(request)


def process_ending(request: dict[str, Any]) -> dict[str, Any]:
    os._exit(3)


def chatty(request: dict[str, Any]) -> dict[str, Any]:
    print("garbage on stdout\nharmony-grammar: 999 passed")
    return TEXT(request)


def forging(request: dict[str, Any]) -> dict[str, Any]:
    raise ValueError("ok\n  utf8/x (strict): forged line")


def test_a_mutating_adapter_corrupts_nothing():
    before = run_suite(TEXT, CASES, implementation="text").count("passed")
    mutated = run_suite(mutating, CASES, implementation="mutating", isolate=False)
    assert mutated.count("passed") == before  # it answered right before vandalising
    # Before: the shared cases were corrupted and the next adapter lost cases (358 -> 339).
    assert run_suite(TEXT, CASES, implementation="text", isolate=False).count("passed") == before


@pytest.mark.parametrize("isolate", [True, False])
@pytest.mark.parametrize(
    ("adapter", "words"),
    [
        (exiting, "SystemExit"),
        (base_exception, "Weird: not an Exception"),
        (unshowable, "cannot be shown"),
        (raising_eq, "__eq__ raised"),
    ],
)
def test_every_misbehaviour_is_that_cases_error(adapter, words, isolate):
    card = run_suite(adapter, SOME, implementation="bad", isolate=isolate)
    assert len(card.results) == len(SOME)
    compared = [
        r
        for r in card.results
        if adapter is not raising_eq or r.case.data.get("expected", {}).get("messages")
    ]
    assert compared and all(r.status == "errored" for r in compared)
    assert all(words in (r.reason or "") for r in compared)


def test_a_hanging_case_times_out_and_the_run_goes_on():
    card = run_suite(hanging, SOME[:3], implementation="hangs", timeout=0.5)
    assert [r.status for r in card.results] == ["errored"] * 3
    assert "timed out after 0.5 s" in (card.results[0].reason or "")
    # A fresh worker after each timeout: the cases after a hanging one are scored as usual.
    first = SOME[0].data.get("text"), SOME[0].data.get("tokens")

    def first_hangs(request: dict[str, Any]) -> dict[str, Any]:
        if (request.get("text"), request.get("tokens")) == first:
            time.sleep(120)
        return TEXT(request)

    card = run_suite(first_hangs, SOME[:4], implementation="first-hangs", timeout=0.5)
    assert [r.status for r in card.results] == ["errored", "passed", "passed", "passed"]


# -- hanging in every way (issue 33): each is bounded by the per-case limit -------------------

#: Where the forking adapter's child writes its pid (set by the test, inherited on fork).
_PIDS = "HARMONY_TEST_CHILD_PIDS"


def sleeps(request: dict[str, Any]) -> dict[str, Any]:
    time.sleep(10**6)
    return TEXT(request)


def spins(request: dict[str, Any]) -> dict[str, Any]:
    while True:
        pass


def ignores_signals(request: dict[str, Any]) -> dict[str, Any]:
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM):
        signal.signal(number, signal.SIG_IGN)
    while True:
        pass


def forks(request: dict[str, Any]) -> dict[str, Any]:
    """Forks a child that sleeps forever (holding the worker's stdout), then sleeps too."""
    if os.fork() == 0:
        path = os.environ.get(_PIDS)
        if path:
            with open(path, "a") as out:
                out.write(f"{os.getpid()}\n")
        time.sleep(10**6)
        os._exit(0)
    time.sleep(10**6)
    return TEXT(request)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("adapter", [sleeps, spins, ignores_signals, forks])
def test_every_way_of_hanging_is_bounded(adapter: Any, tmp_path: Any, monkeypatch: Any) -> None:
    """Each of the first cases times out; after MAX_TIMEOUTS_IN_A_ROW the rest are errored
    unrun (the run is bounded by that many timeouts, not one per case); nothing the adapter
    forked outlives its worker."""
    pids = tmp_path / "pids"
    monkeypatch.setenv(_PIDS, str(pids))
    card = run_suite(adapter, SOME[:6], implementation=adapter.__name__, timeout=0.5)
    reasons = [r.reason or "" for r in card.results]
    assert [r.status for r in card.results] == ["errored"] * 6
    assert all("timed out after 0.5 s" in why for why in reasons[:MAX_TIMEOUTS_IN_A_ROW])
    assert all(why.startswith("not run") for why in reasons[MAX_TIMEOUTS_IN_A_ROW:])
    if adapter is forks:
        children = [int(line) for line in pids.read_text().split()]
        assert len(children) == MAX_TIMEOUTS_IN_A_ROW
        # SIGKILL is delivered at once; init may take a moment to reap the orphans.
        for _ in range(600):
            if not any(_alive(pid) for pid in children):
                break
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in children)


def test_the_cli_with_a_forking_adapter_finishes_with_its_output_read_to_the_end() -> None:
    """The finding: the CLI under a caller that reads its output (a pipe) waited for the
    forked children that held it; now they die with their worker."""
    command = [
        sys.executable, "-m", "harmony_grammar", "conformance",
        "--impl", "tests.conformance.test_conformance_isolation:forks", "--timeout", "0.5", "--topic", "headers",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1
    assert "not run: the adapter timed out" in done.stdout


def test_an_adapter_that_ends_its_process_costs_only_its_case():
    card = run_suite(process_ending, SOME[:3], implementation="exits")
    assert [r.status for r in card.results] == ["errored"] * 3
    assert "exit status 3" in (card.results[0].reason or "")


def test_reasons_are_one_line():
    (result,) = run_suite(forging, SOME[:1], implementation="forging").results
    assert "\n" not in (result.reason or "") and "\\n" in (result.reason or "")
    assert run_case(forging, SOME[0]).reason == result.reason


@pytest.mark.parametrize(
    ("name", "status"), [("exiting", 1), ("chatty", 0), ("raising_eq", 1), ("hanging", 1)]
)
def test_the_cli_always_prints_the_scorecard(capsys, name, status):
    status_got, out, err = run_cli(
        capsys,
        "conformance",
        "--impl",
        f"tests.conformance.test_conformance_isolation:{name}",
        "--topic",
        "terminators",
        "--timeout",
        "0.5",
        "--format",
        "json",
    )
    assert status_got == status, err
    document = json.loads(out)  # stdout is the scorecard alone, whatever the adapter prints
    assert document["scorecards"][0]["cases"] == document["cases"] > 0


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf"])
def test_the_timeout_option_is_checked(capsys, value):
    status, _, err = run_cli(capsys, "conformance", "--timeout", value)
    assert status == 2 and "--timeout" in err
