"""Report files of one stored run: results.json, results.csv, summary.md, report.html, charts/.

Reports read only from the store's RunData, so any stored run (even an interrupted one) can be
reported again with `stackbench report RUN`.
"""

from pathlib import Path

from stackbench.analysis.analysis import analyse
from stackbench.analysis.findings import findings
from stackbench.report.exports import results_csv, results_json, summary_md
from stackbench.report.html import build_html
from stackbench.report.svg import standalone
from stackbench.store.store import RunData


def write_all(data: RunData, out_dir: Path) -> Path:
    """Write every report file into out_dir (created if needed) and return out_dir."""
    analysis = analyse(data)
    found = findings(analysis)
    html, chart_svgs = build_html(analysis, found)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.json").write_text(results_json(analysis, found), encoding="utf-8")
    (out_dir / "results.csv").write_text(results_csv(analysis), encoding="utf-8")
    (out_dir / "summary.md").write_text(summary_md(analysis, found), encoding="utf-8")
    (out_dir / "report.html").write_text(html, encoding="utf-8")
    charts_dir = out_dir / "charts"
    charts_dir.mkdir(exist_ok=True)
    for stale in charts_dir.glob("*.svg"):  # a rewritten report must not keep old charts
        stale.unlink()
    for name, svg in chart_svgs.items():
        (charts_dir / f"{name}.svg").write_text(standalone(svg), encoding="utf-8")
    return out_dir
