"""Running the cases through an adapter and scoring the answers by topic.

A parse case holds up to two checks: ``expected`` (strict parsing, always) and ``lenient``
(the recovery a lenient parser should make; left out with ``strict_only``). A render case
holds one. Each check becomes a request (:func:`requests_for`); the adapter's response is
compared with the check's expectation (:func:`compare`). A case *passes* when every check it
ran agrees, *fails* when one disagrees, is *errored* when the adapter raised, and *skipped*
when the adapter raised :class:`~.adapters.Unsupported` for every check.

What is compared: ``valid``; for a valid expectation the messages, field by field
(:data:`~.adapters.MESSAGE_FIELDS`), and ``next_turn`` where given; for an invalid one the
first error's position, in the unit the response gives (``offset`` into the text or
``token`` index into the ids) when both sides give it. ``codes`` (harmony-grammar's own
diagnostic codes) are compared only when the response carries them.

Isolation: an adapter is code under test, and nothing it does may stop the run or change what
later cases see. Each request is a fresh deep copy of the case's data, so an adapter that
mutates its request corrupts nothing. Whatever it raises (``sys.exit``, any
``BaseException``, an exception whose ``str`` raises) and whatever its response does when
compared (an ``__eq__`` that raises) is that case's error. :func:`run_suite` also runs the
adapter in a forked worker process (where the platform can fork) with a per-case time
limit (:data:`DEFAULT_CASE_TIMEOUT`, settable): a case that hangs (sleeps, spins, ignores
signals), or an adapter that ends its process (``os._exit``, a crash), is that case's error,
the worker is killed with everything it forked, and a fresh worker takes the next case; after
:data:`MAX_TIMEOUTS_IN_A_ROW` timeouts in a row the adapter's remaining cases are errored
unrun, so a hanging adapter costs a few timeouts, not one per case.
The worker's standard output goes to standard error, so the scorecard on stdout stays clean.
"""

from __future__ import annotations

import contextlib
import copy
import json
import multiprocessing
import os
import signal
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .cases import Case
from .interface import MESSAGE_FIELDS, Adapter, Json, Unsupported
from .views import view_problem

__all__ = [
    "DEFAULT_CASE_TIMEOUT",
    "MAX_TIMEOUTS_IN_A_ROW",
    "CaseResult",
    "Check",
    "Scorecard",
    "compare",
    "comparison_table",
    "requests_for",
    "run_case",
    "run_suite",
]

_PARSE_INPUTS = ("text", "tokens", "chunks", "token_chunks", "tools")
#: Seconds one case (all its checks) may take before it is scored as errored.
DEFAULT_CASE_TIMEOUT = 30.0
#: Cases in a row that may time out before the adapter's remaining cases are scored errored
#: without being run: an adapter that hangs on everything costs this many timeouts, not one
#: per case (hundreds of cases at 30 s each was hours).
MAX_TIMEOUTS_IN_A_ROW = 3
_REASON_LIMIT = 300


@dataclass(frozen=True)
class Check:
    """One request of a case and what its response must say."""

    name: str  # "strict", "lenient", "render" or "view"
    request: Json
    expected: Mapping[str, Any]


def requests_for(case: Case, *, strict_only: bool = False) -> list[Check]:
    """The checks of ``case``: strict (and lenient) parsing, rendering, or a reply (a case
    made by :func:`~.views.view_case`: one ``view`` check, the reply its reading gives)."""
    data = case.data
    if "view" in data:
        view: Json = {key: data[key] for key in (*_PARSE_INPUTS, "mode", "role") if key in data}
        view.update(kind="view", strict=data.get("strict", False))
        expected = {"messages": data["view"], "nulls_unknown": data.get("nulls_unknown", False)}
        return [Check("view", view, expected)]
    if case.is_render:
        request: Json = {
            "kind": "render",
            "conversation": data["conversation"],
            "mode": data["mode"],
        }
        for key in ("next_turn", "auto_drop_analysis", "profile", "current_date"):
            if key in data:
                request[key] = data[key]
        return [Check("render", request, data["expected"])]
    base: Json = {"kind": "parse", "mode": data["mode"], "role": data.get("role", "assistant")}
    base.update({key: data[key] for key in _PARSE_INPUTS if key in data})
    checks = [Check("strict", {**base, "strict": True}, data["expected"])]
    if "lenient" in data and not strict_only:
        checks.append(Check("lenient", {**base, "strict": False}, data["lenient"]))
    return checks


def _show(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def _compare_messages(expected: Sequence[Mapping[str, Any]], got: Any) -> str | None:
    if not isinstance(got, list):
        return "no messages in the response"
    for index, (want, have) in enumerate(zip(expected, got, strict=False)):
        if not isinstance(have, Mapping):
            return f"message {index} is not an object"
        for name in MESSAGE_FIELDS:
            if want.get(name) != have.get(name):
                return (
                    f"message {index} {name}: expected {_show(want.get(name))}, "
                    f"got {_show(have.get(name))}"
                )
        # Lenient reading's header text read as no field; absent means empty.
        if want.get("unread", "") != have.get("unread", ""):
            return (
                f"message {index} unread: expected {_show(want.get('unread', ''))}, "
                f"got {_show(have.get('unread', ''))}"
            )
    if len(expected) != len(got):
        return f"expected {len(expected)} messages, got {len(got)}"
    return None


def compare(check: Check, response: Mapping[str, Any]) -> str | None:
    """Why ``response`` disagrees with the check's expectation, or None when it agrees."""
    want = check.expected
    if check.name == "view":
        return view_problem(want, response)
    if check.name == "render":
        if "text" not in response and "tokens" not in response:
            return "the response has neither text nor tokens"
        for key in ("text", "tokens"):
            if key in response and response[key] != want[key]:
                return f"{key} differ: expected {_show(want[key])}, got {_show(response[key])}"
        return None
    valid = response.get("valid")
    if valid is not want["valid"]:
        return f"expected valid={want['valid']}, got valid={valid}"
    if not want["valid"] and "error" in want and isinstance(response.get("error"), Mapping):
        for unit in ("offset", "token"):
            if unit in want["error"] and unit in response["error"]:
                if want["error"][unit] != response["error"][unit]:
                    return (
                        f"first error at {unit} {response['error'][unit]}, "
                        f"expected {want['error'][unit]}"
                    )
                break
    if "messages" in want:
        problem = _compare_messages(want["messages"], response.get("messages"))
        if problem:
            return problem
    if "next_turn" in want and response.get("next_turn") != want["next_turn"]:
        got = _show(response.get("next_turn"))
        return f"expected next_turn {_show(want['next_turn'])}, got {got}"
    if "codes" in want and "codes" in response and list(response["codes"]) != want["codes"]:
        return f"codes: expected {want['codes']}, got {response['codes']}"
    return None


@dataclass(frozen=True)
class CaseResult:
    """The outcome of one case: ``passed``, ``failed``, ``errored`` or ``skipped``."""

    case: Case
    status: str
    check: str | None = None
    reason: str | None = None


def _one_line(text: str) -> str:
    """A reason as one bounded line: what an adapter says cannot forge scorecard lines."""
    text = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)
    return text if len(text) <= _REASON_LIMIT else text[: _REASON_LIMIT - 3] + "..."


def _described(exc: BaseException) -> str:
    """``Type: message``, even for an exception whose ``str`` raises."""
    try:
        message = str(exc)
    except BaseException:  # code under test: its __str__ may raise anything
        message = "(its message cannot be shown)"
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _errored(case: Case, check: str, reason: str) -> CaseResult:
    return CaseResult(case, "errored", check, _one_line(reason))


def run_case(adapter: Adapter, case: Case, *, strict_only: bool = False) -> CaseResult:
    """Run every check of ``case`` through ``adapter``; the first problem decides.

    Each request is a deep copy (the adapter may mutate it); anything the adapter raises, a
    ``BaseException`` such as ``SystemExit`` included, and anything comparing its response
    raises, makes the case errored. Only ``KeyboardInterrupt`` (the user) stops the run.
    """
    if "unjudged" in case.data:  # a view case with no reading to judge a reply by
        return CaseResult(case, "skipped", "view", _one_line(str(case.data["unjudged"])))
    ran = 0
    why: str | None = None
    for check in requests_for(case, strict_only=strict_only):
        try:
            response = adapter(copy.deepcopy(check.request))
        except Unsupported as exc:
            why = _described(exc).removeprefix("Unsupported: ")
            continue
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # code under test: errored, never fatal
            return _errored(case, check.name, _described(exc))
        ran += 1
        try:
            if not isinstance(response, Mapping):
                return _errored(case, check.name, "the response is not an object")
            problem = compare(check, response)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a malformed answer, whatever it raises
            return _errored(case, check.name, f"malformed response: {_described(exc)}")
        if problem is not None:
            return CaseResult(case, "failed", check.name, _one_line(problem))
    if ran:
        return CaseResult(case, "passed")
    return CaseResult(case, "skipped", None, _one_line(why) if why else None)


_STATUSES = ("passed", "failed", "errored", "skipped")


@dataclass
class Scorecard:
    """Results by topic, for one implementation."""

    implementation: str
    strict_only: bool = False
    results: list[CaseResult] = field(default_factory=list)

    def topics(self) -> list[str]:
        """The topics, in name order."""
        return sorted({r.case.topic for r in self.results})

    def count(self, status: str, topic: str | None = None) -> int:
        """How many cases of ``topic`` (or of all) ended with ``status``."""
        return sum(
            1
            for r in self.results
            if r.status == status and (topic is None or r.case.topic == topic)
        )

    @property
    def ok(self) -> bool:
        """True when no case failed or errored."""
        return not any(r.status in ("failed", "errored") for r in self.results)

    def to_dict(self) -> Json:
        """The stable JSON form: totals, then each topic's counts and case ids in order."""
        topics: Json = {}
        for topic in self.topics():
            mine = [r for r in self.results if r.case.topic == topic]
            entry: Json = {status: self.count(status, topic) for status in _STATUSES}
            for status in _STATUSES:
                entry[f"{status}_cases"] = [
                    r.case.id
                    if status in ("passed", "skipped")
                    else {"id": r.case.id, "check": r.check, "reason": r.reason}
                    for r in mine
                    if r.status == status
                ]
            topics[topic] = entry
        return {
            "implementation": self.implementation,
            "strict_only": self.strict_only,
            "cases": len(self.results),
            "totals": {status: self.count(status) for status in _STATUSES},
            "topics": topics,
        }

    def to_text(self, *, verbose: bool = True) -> str:
        """A readable scorecard: a table by topic, then each failed or errored case."""
        width = max([len("topic"), *(len(t) for t in self.topics())])
        mode = " (strict only)" if self.strict_only else ""
        lines = [f"conformance of {self.implementation}{mode}: {len(self.results)} cases", ""]
        lines.append(f"{'topic':<{width}}  passed  failed  errored  skipped")
        for topic in [*self.topics(), None]:
            counts = [self.count(s, topic) for s in _STATUSES]
            label = topic or "total"
            lines.append(
                f"{label:<{width}}  {counts[0]:>6}  {counts[1]:>6}  {counts[2]:>7}  {counts[3]:>7}"
            )
        if verbose:
            for status in ("failed", "errored"):
                bad = [r for r in self.results if r.status == status]
                if bad:
                    lines += ["", f"{status}:"]
                    lines += [f"  {r.case.id} ({r.check}): {r.reason}" for r in bad]
        return "\n".join(lines)


def _serve(adapter: Adapter, cases: Sequence[Case], strict_only: bool, conn: Any) -> None:
    """The worker: run the case each index names, send back its outcome as plain strings."""
    # A process group of its own: whatever the adapter forks is in it, and is killed with
    # the worker (an orphan holding our stdout would keep a caller reading it waiting).
    os.setpgid(0, 0)
    sys.stdout.flush()
    os.dup2(2, 1)  # what the adapter prints must not mix with the scorecard on stdout
    while True:
        try:
            index = conn.recv()
        except (EOFError, OSError):
            return
        result = run_case(adapter, cases[index], strict_only=strict_only)
        conn.send((result.status, result.check, result.reason))


class _Worker:
    """One forked process running cases through the adapter, replaced when it dies."""

    def __init__(self, adapter: Adapter, cases: Sequence[Case], strict_only: bool) -> None:
        context = multiprocessing.get_context("fork")
        self.conn, child = context.Pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        self.process = context.Process(
            target=_serve, args=(adapter, cases, strict_only, child), daemon=True
        )
        self.process.start()
        child.close()

    def run(self, index: int, timeout: float | None) -> tuple[str, str | None, str | None] | str:
        """The outcome of case ``index``, or why the worker gave none (it is then stopped)."""
        try:
            self.conn.send(index)
            if self.conn.poll(timeout):
                status, check, reason = self.conn.recv()
                return str(status), check, reason
            why = f"timed out after {timeout:g} s (the per-case limit)"
        except (EOFError, OSError):
            self.process.join(5)
            code = self.process.exitcode
            why = f"the adapter ended its process (exit status {code})"
        self.stop()
        return why

    def stop(self) -> None:
        """Kill the worker and everything it forked (SIGKILL: no handler can ignore it)."""
        pid = self.process.pid
        if pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)  # the group _serve made: the worker's pid
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.conn.close()


def _can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def run_suite(
    adapter: Adapter,
    cases: Iterable[Case],
    *,
    implementation: str,
    strict_only: bool = False,
    timeout: float | None = DEFAULT_CASE_TIMEOUT,
    isolate: bool = True,
) -> Scorecard:
    """Run every case through ``adapter``; the scorecard lists them in the given order.

    With ``isolate`` (the default, where the platform can fork) the adapter runs in a worker
    process and each case may take at most ``timeout`` seconds (None: no limit); a case that
    hangs or ends the worker is errored and a fresh worker takes the next (the worker and
    every process the adapter forked are killed with SIGKILL, which no handler can ignore);
    after :data:`MAX_TIMEOUTS_IN_A_ROW` timeouts in a row the remaining cases are errored
    without being run, so a run is bounded by about that many timeouts. Without it (or
    without fork) cases run in this process: still isolated from each other's requests and
    from every exception, but a hanging case hangs the run.
    """
    card = Scorecard(implementation, strict_only)
    cases = list(cases)
    if not (isolate and _can_fork()):
        card.results = [run_case(adapter, case, strict_only=strict_only) for case in cases]
        return card
    worker: _Worker | None = None
    timeouts = 0
    try:
        for index, case in enumerate(cases):
            if timeouts >= MAX_TIMEOUTS_IN_A_ROW:
                why = f"not run: the adapter timed out on {timeouts} cases in a row"
                card.results.append(_errored(case, "case", why))
                continue
            if worker is None:
                worker = _Worker(adapter, cases, strict_only)
            outcome = worker.run(index, timeout)
            if isinstance(outcome, str):
                worker = None
                timeouts = timeouts + 1 if outcome.startswith("timed out") else 0
                card.results.append(_errored(case, "case", outcome))
            else:
                timeouts = 0
                card.results.append(CaseResult(case, *outcome))
    finally:
        if worker is not None:
            worker.stop()
    return card


def comparison_table(cards: Sequence[Scorecard]) -> str:
    """A Markdown table of cases passed by topic, one column per scorecard, then the total.

    Each cell reads ``passed/cases``, the cases the implementation declined (a profile it
    does not render) left out and counted beside it, ``skipped`` when it declined them all;
    the README's scorecard is this table.
    """
    topics = sorted({t for card in cards for t in card.topics()})
    names = [card.implementation + (" (strict only)" if card.strict_only else "") for card in cards]
    header = "| topic | " + " | ".join(names) + " |"
    rule = "|---|" + "---:|" * len(cards)
    rows = [header, rule]
    for topic in [*topics, None]:
        cells = []
        for card in cards:
            ran = sum(1 for r in card.results if topic is None or r.case.topic == topic)
            skipped = card.count("skipped", topic)
            cell = f"{card.count('passed', topic)}/{ran - skipped}"
            if skipped:
                cell = "skipped" if skipped == ran else f"{cell} ({skipped} skipped)"
            cells.append(cell)
        label = topic or "**total**"
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(rows)
