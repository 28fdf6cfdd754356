"""The report's charts, drawn with matplotlib (Agg, no display) and kept as SVG and PNG.

Per workload, in this order (each chart's file stem is `<workload-slug>-<kind>`):

- throughput: req/s against connections or offered rate; every repetition a faint point, the
  median a marker (hollow: level not valid) with its 95% CI, a LOWESS trend line (computed in
  log space when the axis is logarithmic); the SLO breakpoint of each stack as a dotted line
  topped by the stack's marker; open loop: the offered rate as a grey diagonal (the ceiling).
- latency: p50 and p99 (and the SLO's percentile) against the level, log scale, one panel
  above the other, same marks; the SLO objective as a horizontal line on its percentile's panel.
- errors: error rate against the level, only when some request failed.
- percentiles: HdrHistogram-style percentile distribution (report/percentiles.py).
- timeseries, resources: per-second series and CPU/memory per stack (report/series.py).

And the run-wide `glance` slides (report/glancechart.py). A chart with nothing to
show is replaced by one sentence (`Omitted`). Each stack keeps its colour, marker and line
style in every chart (report/colors.py); every chart carries its figures as a table, the text
alternative the page shows beside it.
"""

from __future__ import annotations  # matplotlib types are for the type checker only

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from stackbench.analysis import fmt, stats
from stackbench.analysis.analysis import Analysis, CaseView, WorkloadView
from stackbench.analysis.stats import Estimate, LevelAggregate
from stackbench.config.slo import latency_words, percentile_key
from stackbench.report.capacitychart import capacity_chart
from stackbench.report.chartkit import (
    Chart,
    ChartItem,
    Omitted,
    figure,
    formatter,
    headroom,
    latency_axis,
    legend_below,
    line,
    rate_formatter,
    render,
    set_title,
    stack_handles,
    style,
)
from stackbench.report.glancechart import glance_charts
from stackbench.report.percentiles import distribution, merged_histogram, percentiles_chart
from stackbench.report.series import resources_chart, timeseries_chart
from stackbench.report.tables import TextTable
from stackbench.store.store import LevelRow

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.lines import Line2D

__all__ = [
    "Chart",
    "ChartItem",
    "Omitted",
    "distribution",
    "glance_charts",
    "merged_histogram",
    "percentiles_chart",
    "resources_chart",
    "timeseries_chart",
    "workload_charts",
]

LOG_X_SPAN = 20  # levels spanning 20x or more are drawn on a log x axis
MAX_LEVEL_TICKS = 12  # up to this many levels, each level gets its own x tick
SLO_COLOR = "#dc2626"


def use_log_x(values: Sequence[float]) -> bool:
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) >= LOG_X_SPAN


def _level_axis(ax: Axes, a: Analysis, levels: Sequence[float], log_x: bool) -> None:
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    if log_x:
        ax.set_xscale("log")
    if len(levels) <= MAX_LEVEL_TICKS:
        ax.xaxis.set_major_locator(FixedLocator(list(levels)))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(formatter(fmt.level))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(a.level_label)


def _trend(
    points: Sequence[tuple[float, float]], log_x: bool, log_y: bool
) -> list[tuple[float, float]]:
    """LOWESS over about three neighbouring levels, in the axes' own (log) space, so the curve
    follows knees instead of cutting across them. Fewer than 3 levels: no trend."""
    pts = [(x, y) for x, y in points if (x > 0 or not log_x) and (y > 0 or not log_y)]
    levels = len({x for x, _ in pts})
    if levels < 3:
        return []

    def fx(v: float) -> float:
        return math.log10(v) if log_x else v

    def fy(v: float) -> float:
        return math.log10(v) if log_y else v

    smoothed = stats.lowess([(fx(x), fy(y)) for x, y in pts], frac=min(1.0, 3.5 / levels))
    return [(10**x if log_x else x, 10**y if log_y else y) for x, y in smoothed]


def _plot_case(
    ax: Axes,
    a: Analysis,
    c: CaseView,
    row_value: Callable[[LevelRow], float | None],
    agg_value: Callable[[LevelAggregate], Estimate | None],
    log_x: bool,
    log_y: bool,
) -> list[float]:
    """Every repetition as a point, medians with their CI, and the trend line in the stack's
    line style; returns the values drawn (for the axis limits)."""
    look = style(a, c.stack)
    reps = [(r.level_value, y) for r in c.rows if (y := row_value(r)) is not None]
    if reps:
        ax.scatter(
            [x for x, _ in reps],
            [y for _, y in reps],
            s=10,
            color=look.color,
            alpha=0.3,
            linewidths=0,
            zorder=2,
            marker=look.marker,
        )
    medians = [(g, est) for g in c.aggregates if (est := agg_value(g)) is not None]
    for g, est in medians:
        valid = g.status == "ok"
        ax.plot(
            [g.level_value],
            [est.value],
            marker=look.marker,
            markersize=5.5,
            zorder=3,
            color=look.color,
            markerfacecolor=look.color if valid else "white",
        )
        if est.low is not None and est.high is not None and est.high > est.low:
            ax.errorbar(
                [g.level_value],
                [est.value],
                yerr=[[est.value - est.low], [est.high - est.value]],
                fmt="none",
                ecolor=look.color,
                elinewidth=1.2,
                capsize=3,
                zorder=3,
            )
    trend = _trend(reps or [(g.level_value, e.value) for g, e in medians], log_x, log_y)
    if not trend and len(medians) > 1:  # too few levels to smooth: join the medians
        trend = [(g.level_value, e.value) for g, e in medians]
    if trend:
        ax.plot(
            [x for x, _ in trend],
            [y for _, y in trend],
            color=look.color,
            linestyle=look.linestyle,
            linewidth=1.5,
            zorder=2,
        )
    return [y for _, y in reps] + [e.high or e.value for _, e in medians]


def _breakpoints(ax: Axes, a: Analysis, w: WorkloadView) -> list[Line2D]:
    if a.search:  # probes of a search are not a sweep: "first failing level" means nothing
        return []
    drawn = False
    for c in w.cases:
        if c.breakpoint is not None:
            look = style(a, c.stack)
            x = c.breakpoint.level_value
            ax.axvline(x, color=look.color, linestyle=(0, (1, 2)), linewidth=1.2, zorder=1)
            ax.plot(
                [x],
                [1.0],
                marker=look.marker,
                color=look.color,
                markersize=5,
                transform=ax.get_xaxis_transform(),
                clip_on=False,
                zorder=4,
            )
            drawn = True
    if not drawn:
        return []
    return [
        line(
            color="#6b7280",
            linestyle=(0, (1, 2)),
            linewidth=1.2,
            label="SLO breakpoint (dotted; the stack's marker on top)",
        )
    ]


NOTE = (
    "Dots: each repetition; markers: median (hollow: level not valid, not ranked) with "
    "its 95% CI; line: LOWESS trend."
)


def _table(
    w: WorkloadView, columns: Sequence[tuple[str, Callable[[LevelAggregate], str]]]
) -> TextTable:
    """stack × level rows of the figures a chart draws: its text alternative."""
    rows = [
        [
            c.stack,
            fmt.level(g.level_value),
            *(cell(g) for _, cell in columns),
            "yes" if g.status == "ok" else g.status,
        ]
        for c in w.cases
        for g in c.aggregates
    ]
    return TextTable(["stack", "level", *(h for h, _ in columns), "valid"], rows)


# --- per workload ----------------------------------------------------------------------------
def throughput_chart(a: Analysis, w: WorkloadView, sid: str) -> Chart:
    fig = figure(3.6)
    ax = fig.add_subplot()
    log_x = use_log_x(w.level_values)
    drawn = []
    for c in w.cases:
        drawn += _plot_case(
            ax, a, c, lambda r: r.requests_per_s, lambda g: g.throughput, log_x, False
        )
    handles = stack_handles(a, [c.stack for c in w.cases]) + _breakpoints(ax, a, w)
    if a.level_kind == "rate":  # open loop: the offered rate is the ceiling to compare with
        top = max((r.requests_per_s for c in w.cases for r in c.rows), default=0.0) * 1.25
        offered = [v for v in w.level_values if v <= top] or w.level_values[:1]
        ax.plot(offered, offered, color="#9ca3af", linestyle=":", linewidth=1.2)
        drawn += offered
        handles.append(line(color="#9ca3af", linestyle=":", label="offered rate"))
    _level_axis(ax, a, w.level_values, log_x)
    ax.set_ylabel("requests/s")
    headroom(ax, drawn)
    ax.yaxis.set_major_formatter(rate_formatter())
    set_title(ax, f"{w.label}: throughput")
    legend_below(fig, handles)
    data = _table(w, [("req/s [95% CI]", lambda g: fmt.estimate(g.throughput))])
    return render(f"{sid}-throughput", f"{w.label}: throughput", "Throughput. " + NOTE, fig, data)


def _row_latency(key: str) -> Callable[[LevelRow], float | None]:
    return lambda r: stats.measured_latency(r).get(key)


def _agg_latency(key: str) -> Callable[[LevelAggregate], Estimate | None]:
    return lambda g: g.latency_us.get(key)


def latency_keys(a: Analysis) -> list[str]:
    keys = ["p50", "p99"]
    if a.slo is not None and percentile_key(a.slo.percentile) not in keys:
        keys.append(percentile_key(a.slo.percentile))
    return keys


def _latency_cell(key: str) -> Callable[[LevelAggregate], str]:
    return lambda g: fmt.estimate(g.latency_us.get(key), fmt.latency)


def latency_chart(a: Analysis, w: WorkloadView, sid: str) -> ChartItem:
    keys = latency_keys(a)
    measured = [k for k in keys if any(k in g.latency_us for c in w.cases for g in c.aggregates)]
    title = f"{w.label}: latency"
    if not measured:
        return Omitted(
            f"{sid}-latency",
            title,
            "No level measured a latency percentile for "
            f"{w.label} (no request completed, or the driver printed none).",
        )
    fig = figure(2.3 * len(measured) + 0.7)
    axes = fig.subplots(len(measured), 1, sharex=True, squeeze=False)[:, 0]
    legend = stack_handles(a, [c.stack for c in w.cases])
    log_x = use_log_x(w.level_values)
    slo_key = percentile_key(a.slo.percentile) if a.slo is not None else None
    for ax, key in zip(axes, measured, strict=True):
        for c in w.cases:
            _plot_case(ax, a, c, _row_latency(key), _agg_latency(key), log_x, True)
        if key == slo_key and a.slo is not None:
            ax.axhline(a.slo.latency_ms * 1000.0, color=SLO_COLOR, linestyle="-.", linewidth=1)
            legend.append(
                line(
                    color=SLO_COLOR,
                    linestyle="-.",
                    label=f"SLO {latency_words(a.slo)}",
                )
            )
            legend += _breakpoints(ax, a, w)
        latency_axis(ax, f"{key.replace('_', '.')} latency")
        _level_axis(ax, a, w.level_values, log_x)
        set_title(ax, f"{key.replace('_', '.')} latency", loc="left")
    for ax in axes[:-1]:
        ax.set_xlabel("")
    legend_below(fig, legend)
    data = _table(w, [(k.replace("_", "."), _latency_cell(k)) for k in measured])
    return render(
        f"{sid}-latency",
        title,
        "Latency percentiles (log scale). – in the tables "
        "means the driver did not measure that percentile. " + NOTE,
        fig,
        data,
    )


def errors_chart(a: Analysis, w: WorkloadView, sid: str) -> ChartItem:
    title = f"{w.label}: error rate"
    if not any(r.errors_total for c in w.cases for r in c.rows):
        return Omitted(
            f"{sid}-errors",
            title,
            f"No request failed at any level of {w.label}: no error-rate chart.",
        )
    fig = figure(3.3)
    ax = fig.add_subplot()
    log_x = use_log_x(w.level_values)
    drawn = []
    for c in w.cases:
        drawn += _plot_case(ax, a, c, stats.level_error_rate, lambda g: g.error_rate, log_x, False)
    handles = stack_handles(a, [c.stack for c in w.cases])
    limit = a.settings.max_error_rate
    if limit:
        ax.axhline(limit, color=SLO_COLOR, linestyle="-.", linewidth=1)
        drawn.append(limit)
        handles.append(line(color=SLO_COLOR, linestyle="-.", label=f"validity limit {limit:.2%}"))
    _level_axis(ax, a, w.level_values, log_x)
    headroom(ax, drawn)
    ax.yaxis.set_major_formatter(formatter(fmt.fraction))
    ax.set_ylabel("failed / attempts (%)")
    set_title(ax, title)
    legend_below(fig, handles)
    data = _table(w, [("error rate [95% CI]", lambda g: fmt.estimate(g.error_rate, fmt.fraction))])
    return render(
        f"{sid}-errors", title, "Error rate: failed attempts / attempts. " + NOTE, fig, data
    )


def workload_charts(a: Analysis, w: WorkloadView) -> list[ChartItem]:
    sid = fmt.slug(w.label)
    if not w.cases:
        return []
    return [
        throughput_chart(a, w, sid),
        latency_chart(a, w, sid),
        errors_chart(a, w, sid),
        percentiles_chart(a, w, sid),
        timeseries_chart(a, w, sid),
        resources_chart(a, w, sid),
        *([chart] if (chart := capacity_chart(a, w, sid)) is not None else []),
    ]
