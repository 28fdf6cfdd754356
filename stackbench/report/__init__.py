"""Report files of one stored run: results.json, results.csv, summary.md, report.html, charts/.

Reports read only from the store's RunData, so any stored run (even an interrupted one) can be
reported again with `stackbench report RUN [--format ...]`.

Formats: html (report.html, and its charts under charts/), md (summary.md), csv (results.csv),
json (results.json), png (the charts alone, as PNG and SVG under charts/).
"""

from collections.abc import Iterable, Sequence
from pathlib import Path

from stackbench.analysis.analysis import Analysis, analyse
from stackbench.analysis.claims import ClaimResult
from stackbench.analysis.findings import Finding, findings
from stackbench.report.charts import Chart, glance_chart, workload_charts
from stackbench.report.context import build_context
from stackbench.report.exports import results_csv, results_json, summary_md
from stackbench.report.glance import glance
from stackbench.report.html import build_html
from stackbench.store.store import RunData

FORMATS = ("html", "md", "csv", "json", "png")


def write_all(
    data: RunData,
    out_dir: Path,
    formats: Iterable[str] = FORMATS,
    claims: Sequence[ClaimResult] = (),
    analysis: Analysis | None = None,
) -> Path:
    """Write the report files of `formats` into out_dir (created if needed); returns out_dir.
    `claims`: the article's claims evaluated on this run (summary.md and report.html)."""
    wanted = set(formats)
    analysis = analysis or analyse(data)
    found = findings(analysis)
    out_dir.mkdir(parents=True, exist_ok=True)
    if "json" in wanted:
        (out_dir / "results.json").write_text(results_json(analysis, found), encoding="utf-8")
    if "csv" in wanted:
        (out_dir / "results.csv").write_text(results_csv(analysis), encoding="utf-8")
    if "md" in wanted:
        (out_dir / "summary.md").write_text(summary_md(analysis, found, claims), encoding="utf-8")
    if wanted & {"html", "png"}:
        _write_charts_and_page(analysis, found, out_dir, "html" in wanted, claims)
    return out_dir


def _write_charts_and_page(
    analysis: Analysis,
    found: list[Finding],
    out_dir: Path,
    page: bool,
    claims: Sequence[ClaimResult],
) -> None:
    glances = glance(analysis)
    charts = {w.label: workload_charts(analysis, w) for w in analysis.workloads}
    summary_chart = glance_chart(analysis, glances)
    charts_dir = out_dir / "charts"
    charts_dir.mkdir(exist_ok=True)
    for stale in [*charts_dir.glob("*.svg"), *charts_dir.glob("*.png")]:
        stale.unlink()  # a rewritten report must not keep the charts of an older version
    for item in [summary_chart, *(c for items in charts.values() for c in items)]:
        if isinstance(item, Chart):
            (charts_dir / f"{item.name}.svg").write_text(item.svg, encoding="utf-8")
            (charts_dir / f"{item.name}.png").write_bytes(item.png)
    if page:
        html = build_html(
            analysis, found, glances, build_context(analysis), charts, summary_chart, claims
        )
        (out_dir / "report.html").write_text(html, encoding="utf-8")
