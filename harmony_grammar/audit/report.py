"""``audit-masks --report report.html``: the audit as one self-contained page, drawn with the
pieces of validate's report (:mod:`harmony_grammar.validation.html_report`): the same style
sheet, bar charts and embedded JSON figures (``data-summary``, ``data-segments``,
``data-findings``), so tools and tests read what the page draws.
"""

from __future__ import annotations

import html

from ..validation.html_report import CSS, bar_chart, data_script
from .findings import FINDINGS
from .summary import AuditSummary

__all__ = ["render_audit_html"]


def _off(difference: int) -> str:
    return f"{difference:+,}" if difference else ""


def render_audit_html(summary: AuditSummary, *, title: str = "Harmony loss-mask audit") -> str:
    """The report page for ``summary``."""
    data = summary.to_json()
    with_findings = len(summary.samples)
    cards = "".join(
        f'<div class="card"><b>{value:,}</b>{label}</div>'
        for value, label in (
            (data["records"], "records"),
            (data["audited"], "audited"),
            (data["records"] - summary.clean, "with findings"),
            (summary.differing, "tokens off the exact mask"),
        )
    )
    rows = "".join(
        f"<tr><td>{name}</td><td>{s['tokens']:,}</td><td>{s['trained']:,}</td>"
        f"<td>{s['expected']:,}</td><td>{_off(s['trained'] - s['expected'])}</td></tr>"
        for name, s in data["segments"].items()
    )
    trained = bar_chart(
        [(name, s["trained"], "warning") for name, s in data["segments"].items() if s["tokens"]],
        "chart-trained",
    )
    summaries = {f.code: f.summary for f in FINDINGS}
    findings = bar_chart(
        [(row["code"], row["records"], "error") for row in data["findings"]], "chart-findings"
    )
    meaning = "".join(
        f"<tr><td>{row['code']}</td><td>{row['records']:,}</td>"
        f"<td>{html.escape(summaries[row['code']])}</td></tr>"
        for row in data["findings"]
    )
    samples = "".join(
        f"<tr><td>{html.escape(str(s['file']))}:{s['record']}</td>"
        f"<td>{html.escape(', '.join(s['findings']))}</td><td>{s['differing']:,}</td>"
        f"<td>{html.escape(s['error'] or '')}</td></tr>"
        for s in summary.samples
    )
    summary_figure = {
        "records": data["records"],
        "audited": data["audited"],
        "with_findings": data["records"] - summary.clean,
        "differing_tokens": summary.differing,
    }
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{CSS}</style></head><body>
<h1>{html.escape(title)}</h1>
<section id="summary"><div class="cards">{cards}</div>{data_script("summary", summary_figure)}
</section>
<section id="segments"><h2>Tokens per segment: in the data, trained, trained by the exact mask
</h2><table><tr><th>segment</th><th>tokens</th><th>trained</th><th>exact</th><th>off by</th></tr>
{rows}</table>{trained}{data_script("segments", data["segments"])}</section>
<section id="findings"><h2>Findings (records)</h2>{findings}
<table><tr><th>code</th><th>records</th><th>what it means</th></tr>{meaning}</table>
{data_script("findings", data["findings"])}</section>
<section id="samples"><h2>Records with findings (the first {with_findings})</h2>
<table><tr><th>record</th><th>findings</th><th>tokens off</th><th>why not audited</th></tr>
{samples}</table></section></body></html>
"""
