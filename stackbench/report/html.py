"""The self-contained report.html, rendered from jinja2 templates (autoescape on).

Everything is inline: CSS, the charts as SVG, a few lines of JS (sortable tables, a stack and
workload filter). The page makes no request: it works offline, from a file or an attachment.
The first screen is the one-line context and the at-a-glance cards (report/glance.py).
"""

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from stackbench.analysis import claimtable, fmt
from stackbench.analysis.analysis import Analysis, WorkloadView
from stackbench.analysis.capacity import CapacityAsk
from stackbench.analysis.claims import ClaimResult
from stackbench.analysis.findings import RANKING_LEGEND, Finding, slo_text
from stackbench.analysis.tiers import LEGEND as TIER_LEGEND
from stackbench.analysis.wording import FIGURES_NOTE, RULE
from stackbench.report import tables
from stackbench.report.capacityview import capacity_view
from stackbench.report.charts import Chart, ChartItem
from stackbench.report.colors import stack_color
from stackbench.report.context import Context, memory_table
from stackbench.report.glance import (
    WHISKER_REACH,
    GlanceBar,
    MetricGlance,
    WorkloadGlance,
    pair_rows,
)
from stackbench.report.glancechart import vs_best
from stackbench.report.tables import TextTable
from stackbench.store.records import flags_text

TEMPLATES = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class BarView:
    stack: str
    color: str
    width_pct: float  # bar length, % of the track
    ci_left_pct: float | None  # CI whisker, % of the track
    ci_width_pct: float | None
    value: str  # median [CI]
    share: str  # % of best (throughput), × the best (latency)
    level: str  # where the figure comes from, with its unit
    flags: str
    whole_level: str | None  # why the figure is not from steady windows (None: it is)


@dataclass(frozen=True)
class MetricView:
    title: str
    where: str
    bars: list[BarView]
    winner: str | None
    verdict: str  # the verdicts in words: behind a disclosure
    share_header: str  # what the share column says: "% of best" or "× best"
    scale_note: str  # what a bar's length means
    line: str  # the tier line: the headline
    pairs: TextTable | None  # the pairs the line rests on (None: fewer than two bars)


@dataclass(frozen=True)
class GlanceView:
    label: str
    slug: str
    throughput: MetricView
    latency: MetricView
    not_ranked: list[tuple[str, str]]


@dataclass(frozen=True)
class WorkloadSection:
    label: str
    slug: str
    findings: list[Finding]
    charts: list[ChartItem]
    throughput: TextTable | None
    p99: TextTable | None
    detail: TextTable | None
    not_measured: TextTable | None


def short_level(a: Analysis, value: float) -> str:
    """'at 50 conn.' or 'at 5,000 req/s offered': where a glance figure was measured."""
    if a.level_kind == "rate":
        return f"at {fmt.rate(value)} req/s offered"
    return f"at {fmt.level(value)} conn."


def _metric_view(
    a: Analysis, m: MetricGlance, title: str, value_fmt: Callable[[float | None], str]
) -> MetricView:
    # glance.WHISKER_REACH: one wide interval must not shrink every bar
    most = max((b.estimate.value for b in m.bars), default=0.0)
    top = max((b.estimate.high or b.estimate.value for b in m.bars), default=0.0)
    scale = min(top, WHISKER_REACH * most) or 1.0

    def bar(b: GlanceBar) -> BarView:
        est = b.estimate
        has_ci = est.low is not None and est.high is not None and est.high > est.low
        return BarView(
            b.stack,
            stack_color(a.stacks, b.stack),
            100.0 * est.value / scale,
            100.0 * (est.low or 0.0) / scale if has_ci else None,
            100.0 * (min(est.high or 0.0, scale) - (est.low or 0.0)) / scale if has_ci else None,
            fmt.estimate(est, value_fmt),
            vs_best(m, b),
            short_level(a, b.level_value),
            flags_text(b.flags),
            b.whole_level,
        )

    if m.higher_is_better:
        header, note = "% of best", "a longer bar is more requests per second"
    else:
        header, note = "× best", "a longer bar is a slower p99 (× best: 1.00× is the best)"
    header_row, rows = pair_rows(m)
    return MetricView(
        title,
        m.where,
        [bar(b) for b in m.bars],
        m.winner,
        m.verdict,
        header,
        note,
        m.line,
        TextTable(header_row, rows) if rows else None,
    )


def glance_views(a: Analysis, glances: list[WorkloadGlance]) -> list[GlanceView]:
    return [
        GlanceView(
            g.label,
            fmt.slug(g.label),
            _metric_view(a, g.throughput, "throughput (req/s)", fmt.rate),
            _metric_view(a, g.latency, "p99 latency (shorter is better)", fmt.latency),
            list(g.not_ranked),
        )
        for g in glances
    ]


def _section(
    a: Analysis, w: WorkloadView, found: list[Finding], charts: list[ChartItem]
) -> WorkloadSection:
    measured = bool(w.cases)
    return WorkloadSection(
        w.label,
        fmt.slug(w.label),
        [f for f in found if f.workload == w.label],
        charts,
        tables.pivot(w, tables.METRICS["req/s"]) if measured else None,
        tables.pivot(w, tables.METRICS["p99"]) if measured else None,
        tables.detail(a, w) if measured else None,
        tables.not_measured(w) if w.not_measured else None,
    )


def context_line(a: Analysis, ctx: Context) -> str:
    """One sentence: on what machine and placement the figures were measured."""
    machine = ctx.machine
    cores = dict(ctx.cores)
    parts = [
        machine.cpu,
        f"cores: {machine.cores}",
        machine.memory,
        f"kernel {machine.kernel}",
        f"governor {machine.governor}",
    ]
    placement = "; ".join(f"{k} on CPU {v}" for k, v in cores.items())
    return (
        ", ".join(parts)
        + (f" — {placement}" if placement else "")
        + f" — {a.settings.mode} loop, {a.repeat} repetition(s) per level, "
        f"SLO: {slo_text(a)}"
    )


def _run_wide(a: Analysis) -> list[tuple[str, str, TextTable, str]]:
    """(anchor, title, table, intro) of the run-wide tables that have content."""
    out = []
    if a.failed_verifications:
        out.append(
            (
                "verification",
                "Verification failures",
                TextTable(
                    ["stack", "workload", "checked", "failures"],
                    [
                        [v.stack, v.workload, str(v.checked), "; ".join(v.failures)]
                        for v in a.failed_verifications
                    ],
                ),
                "",
            )
        )
    unavailable = {c.stack: c.reason for c in a.data.cases if c.status == "unavailable"}
    if unavailable:
        out.append(
            (
                "unavailable",
                "Unavailable stacks",
                TextTable(["stack", "reason"], [[s, r] for s, r in unavailable.items()]),
                "",
            )
        )
    notes = tables.case_notes(a)
    if notes:
        out.append(("notes", "Sweep notes", notes, ""))
    timings = tables.script_timings(a)
    if timings:
        out.append(
            (
                "script",
                "Standalone timing (no HTTP)",
                timings,
                "The workload's code run in one process of each stack's runtime, as the "
                "original article did before putting a server in front.",
            )
        )
    return out


NUMBER = re.compile(r"^-?[0-9.,]+")


def numeric_columns(t: TextTable) -> set[int]:
    """Columns whose every figure is a number (right-aligned): '–' (not measured) aside."""
    out = set()
    for i in range(len(t.header)):
        cells = [row[i] for row in t.rows if row[i] not in ("", fmt.MISSING)]
        if cells and all(NUMBER.match(c) for c in cells):
            out.add(i)
    return out


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["slug"] = fmt.slug
    env.globals["numeric_columns"] = numeric_columns
    return env


def build_html(
    a: Analysis,
    found: list[Finding],
    glances: list[WorkloadGlance],
    ctx: Context,
    charts: dict[str, list[ChartItem]],
    slides: Sequence[ChartItem],
    claims: Sequence[ClaimResult] = (),
    ask: CapacityAsk | None = None,
) -> str:
    """The page. `charts` maps a workload label to its charts (already rendered); `ask`: the
    capacity's target load and price."""
    run = a.data.run
    template = _environment().get_template("report.html.j2")
    return template.render(
        run=run,
        analysis=a,
        started=time.strftime("%Y-%m-%d %H:%M", time.localtime(run.started_at)),
        context_line=context_line(a, ctx),
        ctx=ctx,
        memory=memory_table(ctx),
        glances=glance_views(a, glances),
        capacity=capacity_view(a, ask),
        slides=[c for c in slides if isinstance(c, Chart)],
        rule=RULE,
        tier_legend=TIER_LEGEND,
        run_findings=[f for f in found if f.workload is None],
        claims=claimtable.claim_rows(claims),
        claim_header=claimtable.HEADER,
        claim_counts=claimtable.counts_sentence(claims),
        ranking_legend=RANKING_LEGEND,
        figures_legend=tables.FIGURES_LEGEND,
        figures_note=FIGURES_NOTE,
        spread_note=a.spread.source.capitalize(),
        sections=[_section(a, w, found, charts.get(w.label, [])) for w in a.workloads],
        run_wide=_run_wide(a),
        environment=tables.environment(a),
        settings=tables.settings(a),
        deviations=tables.deviations(a),
        # Our own files, inserted verbatim (escaping would break their quotes).
        css=Markup((TEMPLATES / "report.css").read_text(encoding="utf-8")),
        js=Markup((TEMPLATES / "report.js").read_text(encoding="utf-8")),
    )
