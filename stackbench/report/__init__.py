"""Report files of one stored run: results.json, results.csv, summary.md, report.html, charts/.

Reports read only from the store's RunData, so any stored run (even an interrupted one) can be
reported again with `stackbench report RUN [--format ...]`.

Each format is an `Exporter` (after hyperfine's): its name (`--format`), the file it writes
(what the commands say they wrote) and a render function over the report's typed inputs that
gives the files' contents. Adding a format is one entry in `EXPORTERS`.
"""

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from stackbench.analysis.analysis import Analysis, analyse
from stackbench.analysis.capacity import CapacityAsk
from stackbench.analysis.claims import ClaimResult
from stackbench.analysis.findings import Finding, findings
from stackbench.report.bmf import results_bmf
from stackbench.report.charts import Chart, ChartItem, glance_charts, workload_charts
from stackbench.report.context import build_context
from stackbench.report.exports import results_csv, results_json, summary_md
from stackbench.report.glance import WorkloadGlance, glance
from stackbench.report.html import build_html
from stackbench.store.store import RunData

CHARTS_DIR = "charts"
Files = Mapping[str, str | bytes]  # path inside the report folder -> its content


@dataclass(frozen=True)
class ReportInputs:
    """What every format renders from: the run's analysis, its findings and the article's
    claims judged on it; the glance and the charts are computed once, for the formats that
    need them (report.html and the charts alone share them)."""

    analysis: Analysis
    found: list[Finding]
    claims: Sequence[ClaimResult]
    # --target-rps / --price-per-core-hour: what the capacity means for a plan
    ask: CapacityAsk = CapacityAsk()

    @functools.cached_property
    def glances(self) -> list[WorkloadGlance]:
        return glance(self.analysis)

    @functools.cached_property
    def charts(self) -> dict[str, list[ChartItem]]:
        return {w.label: workload_charts(self.analysis, w) for w in self.analysis.workloads}

    @functools.cached_property
    def slides(self) -> list[ChartItem]:
        """glance.png (or glance-1.png, glance-2.png ...): the glance as slides."""
        return glance_charts(self.analysis, self.glances)


@dataclass(frozen=True)
class Exporter:
    name: str  # the --format value
    file_name: str  # what it writes, as the commands name it
    render: Callable[[ReportInputs], Files]
    by_default: bool = True  # written by every run and `report`; else only on --format


def _chart_files(inputs: ReportInputs) -> dict[str, str | bytes]:
    """Each chart as SVG and PNG under charts/ (a chart replaced by a sentence has none)."""
    out: dict[str, str | bytes] = {}
    for item in [*inputs.slides, *(c for items in inputs.charts.values() for c in items)]:
        if isinstance(item, Chart):
            out[f"{CHARTS_DIR}/{item.name}.svg"] = item.svg
            out[f"{CHARTS_DIR}/{item.name}.png"] = item.png
    return out


def _page(inputs: ReportInputs) -> Files:
    a = inputs.analysis
    html = build_html(
        a,
        inputs.found,
        inputs.glances,
        build_context(a),
        inputs.charts,
        inputs.slides,
        inputs.claims,
        inputs.ask,
    )
    return {"report.html": html, **_chart_files(inputs)}


EXPORTERS: tuple[Exporter, ...] = (
    Exporter("html", "report.html", _page),
    Exporter(
        "md",
        "summary.md",
        lambda i: {"summary.md": summary_md(i.analysis, i.found, i.claims, i.ask)},
    ),
    Exporter("csv", "results.csv", lambda i: {"results.csv": results_csv(i.analysis, i.ask)}),
    Exporter(
        "json",
        "results.json",
        lambda i: {"results.json": results_json(i.analysis, i.found, i.ask)},
    ),
    Exporter("png", f"{CHARTS_DIR}/*.png (and .svg)", _chart_files),
    # Bencher Metric Format, for continuous-benchmarking dashboards (report/bmf.py); on request
    Exporter(
        "bmf",
        "results.bmf.json",
        lambda i: {"results.bmf.json": results_bmf(i.analysis)},
        by_default=False,
    ),
)
BY_NAME: dict[str, Exporter] = {e.name: e for e in EXPORTERS}
FORMATS = tuple(BY_NAME)
DEFAULT_FORMATS = tuple(e.name for e in EXPORTERS if e.by_default)


def write_all(
    data: RunData,
    out_dir: Path,
    formats: Iterable[str] = DEFAULT_FORMATS,
    claims: Sequence[ClaimResult] = (),
    analysis: Analysis | None = None,
    ask: CapacityAsk | None = None,
) -> Path:
    """Write the report files of `formats` into out_dir (created if needed); returns out_dir.
    `claims`: the article's claims evaluated on this run (summary.md and report.html);
    `ask`: the capacity's target load and price (every format shows what they mean)."""
    analysis = analysis or analyse(data)
    inputs = ReportInputs(analysis, findings(analysis), claims, ask or CapacityAsk())
    files: dict[str, str | bytes] = {}
    for name in dict.fromkeys(formats):
        files.update(BY_NAME[name].render(inputs))
    out_dir.mkdir(parents=True, exist_ok=True)
    if any(path.startswith(f"{CHARTS_DIR}/") for path in files):
        _clear_charts(out_dir / CHARTS_DIR)
    for path, content in files.items():
        target = out_dir / path
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return out_dir


def _clear_charts(charts_dir: Path) -> None:
    """A rewritten report must not keep the charts of an older version."""
    charts_dir.mkdir(exist_ok=True)
    for stale in [*charts_dir.glob("*.svg"), *charts_dir.glob("*.png")]:
        stale.unlink()
