"""``--report report.html``: one self-contained HTML page a person would rather look at than read.

:class:`ReportData` accumulates, in bounded memory, what the page shows as results stream in
from any engine: counts per rule and severity, where in a record problems sit (tenths of its
length), how failures spread over record lengths, the most frequent causes with their hints,
and the first failing records with the failing span highlighted. :func:`render_html` writes the
page: inline CSS and SVG, no script to run and nothing fetched, so it opens offline, in a mail
attachment or a CI artifact viewer. Each figure's numbers are also embedded as JSON
(``<script type="application/json" id="data-...">``), so tools and tests read what a chart draws.
"""

from __future__ import annotations

import datetime
import html
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..format.codes import CATALOGUE
from .results import ResultBatch

__all__ = [
    "CSS",
    "LENGTH_BUCKETS",
    "SAMPLE_SIZE",
    "ReportData",
    "bar_chart",
    "cause_hint",
    "data_script",
    "render_html",
]

#: Failing records shown with their excerpt: the first ones, so every engine shows the same.
SAMPLE_SIZE = 25
#: Upper bounds of the record-length buckets (characters or token ids); the last is open.
LENGTH_BUCKETS = (100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)
_POSITION_BINS = 10


def cause_hint(code: str) -> tuple[str, str | None]:
    """The likely cause of ``code`` and the fix at its source (its record's ``cause``); for a
    code with no known cause, what the code means and, as the fix, where the code and how to
    avoid it are documented."""
    entry = CATALOGUE.get(code)
    if entry is None:
        return code, None
    if entry.cause is not None:
        return entry.cause.summary, entry.cause.fix
    return entry.meaning, f"see {entry.page}, {code} {entry.slug}"


def _length_bucket(length: int) -> int:
    for i, bound in enumerate(LENGTH_BUCKETS):
        if length <= bound:
            return i
    return len(LENGTH_BUCKETS)


def _length_labels() -> list[str]:
    labels, low = [], 0
    for bound in LENGTH_BUCKETS:
        labels.append(f"{low:,}–{bound:,}")
        low = bound + 1
    return [*labels, f"> {LENGTH_BUCKETS[-1]:,}"]


@dataclass
class ReportData:
    """What the report shows, accumulated from result batches; its size does not grow with the
    dataset (counters keyed by code, fixed bins, a capped sample)."""

    records: int = 0
    failing: int = 0
    recovered: int = 0
    by_code: Counter[str] = field(default_factory=Counter)
    severity_of: dict[str, str] = field(default_factory=dict)
    positions: list[int] = field(default_factory=lambda: [0] * _POSITION_BINS)
    lengths_ok: list[int] = field(default_factory=lambda: [0] * (len(LENGTH_BUCKETS) + 1))
    lengths_failing: list[int] = field(default_factory=lambda: [0] * (len(LENGTH_BUCKETS) + 1))
    samples: list[dict[str, Any]] = field(default_factory=list)

    def add(self, batch: ResultBatch) -> None:
        """Count one batch of results."""
        columns = batch.columns
        for i, record in enumerate(batch.records):
            self.records += 1
            ok, length = columns["ok"][i], columns["length"][i]
            self.recovered += columns["recovered"][i] is not None
            (self.lengths_ok if ok else self.lengths_failing)[_length_bucket(length)] += 1
            text = columns["diagnostics"][i]
            for d in json.loads(text) if text != "[]" else ():  # most records: none to parse
                self.by_code[d["code"]] += 1
                self.severity_of[d["code"]] = d["severity"]
                if length > 0:
                    where = min(d["start"] * _POSITION_BINS // length, _POSITION_BINS - 1)
                    self.positions[max(where, 0)] += 1
            if not ok:
                self.failing += 1
                if len(self.samples) < SAMPLE_SIZE:
                    self.samples.append(
                        {
                            "file": batch.file,
                            "record": record,
                            "first_error": columns["first_error"][i],
                            "excerpt": columns["excerpt"][i],
                        }
                    )

    def merge(self, other: ReportData, order: Callable[[dict[str, Any]], Any]) -> None:
        """Add the counts of ``other`` (accumulated elsewhere, on a worker say); the samples
        kept are the first :data:`SAMPLE_SIZE` of both by ``order`` (a sample's input order:
        it has ``file`` and ``record``), so partials may arrive in any order."""
        self.records += other.records
        self.failing += other.failing
        self.recovered += other.recovered
        self.by_code.update(other.by_code)
        self.severity_of.update(other.severity_of)
        for mine, theirs in (
            (self.positions, other.positions),
            (self.lengths_ok, other.lengths_ok),
            (self.lengths_failing, other.lengths_failing),
        ):
            for i, count in enumerate(theirs):
                mine[i] += count
        self.samples = sorted([*self.samples, *other.samples], key=order)[:SAMPLE_SIZE]

    def to_json(self) -> str:
        """The accumulated counts and samples as JSON (:meth:`from_json` reads them back)."""
        return json.dumps(
            {name: getattr(self, name) for name in self.__dataclass_fields__},
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str) -> ReportData:
        """What :meth:`to_json` wrote."""
        data = json.loads(text)
        data["by_code"] = Counter(data["by_code"])
        return cls(**data)

    def figures(self) -> dict[str, Any]:
        """Every figure's data, JSON-ready (what the page embeds)."""
        codes = sorted(self.by_code, key=lambda c: (-self.by_code[c], c))
        return {
            "summary": {
                "records": self.records,
                "valid": self.records - self.failing,
                "failing": self.failing,
                "recovered": self.recovered,
            },
            "by_code": [
                {
                    "code": c,
                    "severity": self.severity_of[c],
                    "count": self.by_code[c],
                    "slug": CATALOGUE[c].slug if c in CATALOGUE else c,
                }
                for c in codes
            ],
            "by_severity": dict(sorted(self._severity_counts().items())),
            "positions": {
                "bins": [f"{10 * i}–{10 * i + 10}%" for i in range(_POSITION_BINS)],
                "counts": self.positions,
            },
            "lengths": {
                "bins": _length_labels(),
                "valid": self.lengths_ok,
                "failing": self.lengths_failing,
            },
            "causes": [
                {
                    "code": c,
                    "count": self.by_code[c],
                    "cause": cause_hint(c)[0],
                    "fix": cause_hint(c)[1],
                }
                for c in codes[:10]
            ],
        }

    def _severity_counts(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for code, count in self.by_code.items():
            counts[self.severity_of[code]] += count
        return counts


# ---------------------------------------------------------------------------------- drawing

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;color:#222;padding:0 1em}
h1{font-size:1.6em}.meta{color:#555}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
.cards{display:flex;gap:1em;flex-wrap:wrap}.card{border:1px solid #ddd;border-radius:6px;
padding:.6em 1em;min-width:8em}.card b{display:block;font-size:1.6em}
svg text{font-size:12px;fill:#333}.error{fill:#c0392b}.warning{fill:#e0a030}.ok{fill:#3a8f5c}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:.3em;
text-align:left;vertical-align:top}pre{white-space:pre-wrap;word-break:break-all;margin:0;
font-size:12px;background:#f7f7f7;padding:.4em}mark{background:#f5b7b1;outline:1px solid #c0392b}
.muted{color:#777}
"""


def _bars(rows: list[tuple[str, int, str]], figure: str, width: int = 640) -> str:
    """A horizontal bar chart: (label, value, css class) per bar."""
    if not rows:
        return f'<p class="muted" id="{figure}">nothing to draw</p>'
    top = max(value for _, value, _ in rows) or 1
    height = 22 * len(rows) + 4
    parts = [
        f'<svg id="{figure}" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, (label, value, css) in enumerate(rows):
        y = 22 * i + 2
        length = round((width - 260) * value / top)
        parts.append(
            f'<text x="0" y="{y + 14}">{html.escape(label)}</text>'
            f'<rect class="{css}" x="180" y="{y}" width="{max(length, 1)}" height="18" '
            f'data-value="{value}"><title>{html.escape(label)}: {value:,}</title></rect>'
            f'<text x="{186 + length}" y="{y + 14}">{value:,}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _data(name: str, value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False).replace("</", "<\\/")
    return f'<script type="application/json" id="data-{name}">{text}</script>'


def _excerpt(sample: dict[str, Any]) -> str:
    excerpt = sample["excerpt"]
    if excerpt is None:
        return '<span class="muted">no text (the record could not be read)</span>'
    text, start, end = excerpt["text"], excerpt["start"], excerpt["end"]
    marked = (
        html.escape(text[:start])
        + "<mark>"
        + (html.escape(text[start:end]) or "&#8203;")
        + "</mark>"
        + html.escape(text[end:])
    )
    return f"<pre>{marked}</pre>"


def render_html(
    data: ReportData,
    *,
    title: str = "Harmony validation report",
    hint: Callable[[str], tuple[str, str | None]] = cause_hint,
    inputs: Sequence[str] = (),
    when: datetime.datetime | None = None,
) -> str:
    """The report page for ``data``: one self-contained HTML document whose header names the
    ``inputs`` validated and ``when`` (default: now, in UTC)."""
    figures = data.figures()
    when = when or datetime.datetime.now(datetime.timezone.utc)
    stamp = when.strftime("%Y-%m-%d %H:%M %Z").strip()
    named = ", ".join(inputs) if inputs else "(not given)"
    meta = (
        f'<p class="meta" id="meta">Input: <b>{html.escape(named)}</b> · '
        f"generated {html.escape(stamp)} by harmony-grammar validate</p>"
    )
    if inputs:
        title = f"{title}: {named if len(named) <= 80 else named[:77] + '...'}"
    summary = figures["summary"]
    cards = "".join(
        f'<div class="card"><b>{summary[key]:,}</b>{label}</div>'
        for key, label in (
            ("records", "records"),
            ("valid", "valid"),
            ("failing", "with errors"),
            ("recovered", "repaired (lenient)"),
        )
    )
    by_code = _bars(
        [
            (f"{row['code']} {row['slug']}", row["count"], row["severity"])
            for row in figures["by_code"]
        ],
        "chart-by-code",
    )
    by_severity = _bars(
        [(severity, count, severity) for severity, count in sorted(figures["by_severity"].items())],
        "chart-by-severity",
    )
    positions = _bars(
        list(
            zip(
                figures["positions"]["bins"],
                figures["positions"]["counts"],
                ["error"] * _POSITION_BINS,
                strict=True,
            )
        ),
        "chart-positions",
    )
    lengths = figures["lengths"]
    length_rows = []
    for label, valid, failing in zip(
        lengths["bins"], lengths["valid"], lengths["failing"], strict=True
    ):
        if valid or failing:
            length_rows += [(f"{label} valid", valid, "ok"), (f"{label} failing", failing, "error")]
    by_length = _bars(length_rows, "chart-lengths")
    causes = "".join(
        f"<tr><td>{row['code']}</td><td>{row['count']:,}</td><td>{html.escape(hint(row['code'])[0])}"
        f"</td><td>{html.escape(hint(row['code'])[1] or '')}</td></tr>"
        for row in figures["causes"]
    )
    samples = "".join(
        f"<tr><td>{html.escape(str(s['file']))}:{s['record']}</td>"
        f"<td>{html.escape(s['first_error']['code'])}: {html.escape(s['first_error']['message'])}"
        f"</td><td>{_excerpt(s)}</td></tr>"
        for s in data.samples
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{_CSS}</style></head><body>
<h1>{html.escape(title)}</h1>
{meta}
<section id="summary"><div class="cards">{cards}</div>{_data("summary", summary)}</section>
<section id="rules"><h2>Problems per rule</h2>{by_code}{_data("by_code", figures["by_code"])}
<h2>Problems per severity</h2>{by_severity}{_data("by_severity", figures["by_severity"])}</section>
<section id="where"><h2>Where in a record problems sit (share of its length)</h2>{positions}
{_data("positions", figures["positions"])}
<h2>Records by length: valid and failing</h2>{by_length}{_data("lengths", lengths)}</section>
<section id="causes"><h2>Most frequent causes and how to fix them</h2>
<table><tr><th>code</th><th>count</th><th>what it means / likely cause</th><th>fix</th></tr>
{causes}</table>{_data("causes", figures["causes"])}</section>
<section id="samples"><h2>Failing records (the first {len(data.samples)})</h2>
<table><tr><th>record</th><th>first error</th><th>where (highlighted)</th></tr>{samples}</table>
</section></body></html>
"""


# The page's pieces, for other reports drawn in the same style (``audit-masks``'s).
#: The report's inline style sheet.
CSS = _CSS
#: ``bar_chart(rows, figure_id)``: a horizontal SVG bar chart of (label, value, css class).
bar_chart = _bars
#: ``data_script(name, value)``: a figure's numbers embedded as JSON (``id="data-NAME"``).
data_script = _data
