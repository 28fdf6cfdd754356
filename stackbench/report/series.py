"""The per-second time series and the CPU/memory charts of a workload.

- timeseries: per stack at its highest level (the most loaded, where instability shows), one
  row of two panels: requests completed per second and p50/p99 per second, one line per
  repetition; the warm-up (not recorded by the loader) shaded before t = 0. Each panel's
  y-axis has room above the highest second, so no series runs along the edge.
- resources: CPU (100% = one core) and peak RSS of each stack against the level, one bar per
  stack in its colour and hatch, on ONE y-axis per panel so bars compare: the stack's own
  processes solid, its data services (MariaDB, Redis, memcached) lighter on top. The load
  generator is not the stack: its CPU is in the tables.
"""

from __future__ import annotations  # matplotlib types are for the type checker only

import math
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from stackbench.analysis import fmt, stats
from stackbench.analysis.analysis import Analysis, CaseView, WorkloadView
from stackbench.analysis.figures import LOADER_ROLE, SERVER_CPU, SERVICE_CPU, SERVICE_ROLES
from stackbench.config.measured import Second
from stackbench.config.placement import OTHER_ROLE
from stackbench.report.chartkit import (
    ChartItem,
    Omitted,
    figure,
    formatter,
    headroom,
    latency_axis,
    legend_below,
    line,
    no_data,
    patch,
    rate_formatter,
    render,
    set_title,
    style,
)
from stackbench.report.tables import TextTable
from stackbench.store.store import LevelRow

if TYPE_CHECKING:
    from matplotlib.axes import Axes

WARMUP_COLOR = "#9ca3af"
MAX_LEVEL_TICKS = 12


def short_level(a: Analysis, value: float) -> str:
    """'300 conn.' or '5,000 req/s offered': a level with its unit, for titles."""
    if a.level_kind == "rate":
        return f"{fmt.rate(value)} req/s offered"
    return f"{fmt.level(value)} conn."


# --- time series -----------------------------------------------------------------------------
def top_level(c: CaseView) -> float | None:
    values = [r.level_value for r in c.rows if r.timeseries]
    return max(values) if values else None


def _seconds(r: LevelRow) -> list[Second]:
    # The loader marks the cut last second `partial`: it is no full second, not drawn.
    return [p for p in r.timeseries or () if not p.partial]


def _draw_series(
    ax_rate: Axes, ax_lat: Axes, rows: Sequence[LevelRow], color: str
) -> tuple[list[float], bool, bool]:
    """One line per repetition; returns (rates drawn, any second, any latency)."""
    rates: list[float] = []
    any_second = any_latency = False
    for r in rows:
        series = _seconds(r)
        any_second = any_second or bool(series)
        t = [float(p.t_s) for p in series]
        completed = [float(p.completed) for p in series]
        rates += completed
        ax_rate.plot(t, completed, color=color, linewidth=1.1, alpha=0.85)
        for key, dashes in (("p50", "-"), ("p99", "--")):
            values = [p.percentile_us(key) or math.nan for p in series]
            any_latency = any_latency or any(v > 0 for v in values)
            ax_lat.plot(t, values, color=color, linestyle=dashes, linewidth=1.1, alpha=0.85)
    return rates, any_second, any_latency


def _series_row(a: Analysis, c: CaseView, level: float, ax_rate: Axes, ax_lat: Axes) -> list[str]:
    """Draws one stack's row; returns its row of the chart's table."""
    rows = [r for r in c.rows if r.level_value == level and r.timeseries]
    rates, any_second, any_latency = _draw_series(ax_rate, ax_lat, rows, style(a, c.stack).color)
    warmup = a.settings.warmup_s
    for ax in (ax_rate, ax_lat):
        if warmup > 0:
            ax.axvspan(-warmup, 0, color=WARMUP_COLOR, alpha=0.25, linewidth=0)
    headroom(ax_rate, rates)
    ax_rate.yaxis.set_major_formatter(rate_formatter())
    ax_rate.set_ylabel("requests/s")
    set_title(ax_rate, f"{c.stack}, {short_level(a, level)}", loc="left")
    if any_latency:
        latency_axis(ax_lat)
    else:  # a log axis of nothing cannot be drawn; say why the panel is empty
        no_data(
            ax_lat,
            "no request completed in any second"
            if any_second
            else "the level ended within its first second: no full second",
        )
    set_title(ax_lat, "p50, p99", loc="left")
    lat = [
        [p.percentile_us(k) for r in rows for p in _seconds(r) if p.percentile_us(k)]
        for k in ("p50", "p99")
    ]
    return [
        c.stack,
        fmt.level(level),
        str(len(rows)),
        str(len(rates)),
        " / ".join(
            fmt.rate(f(rates)) if rates else fmt.MISSING for f in (min, statistics.median, max)
        ),
        *(fmt.latency(statistics.median(v)) if v else fmt.MISSING for v in lat),
    ]


def timeseries_chart(a: Analysis, w: WorkloadView, sid: str) -> ChartItem:
    title = f"{w.label}: per-second time series"
    cases = [(c, lv) for c in w.cases if (lv := top_level(c)) is not None]
    if not cases:
        return Omitted(
            f"{sid}-timeseries",
            title,
            f"No per-second series is stored for {w.label} (only the native driver records one).",
        )
    warmup = a.settings.warmup_s
    fig = figure(1.75 * len(cases) + 0.8)
    axes = fig.subplots(len(cases), 2, squeeze=False, sharex=True)
    table = [
        _series_row(a, c, level, ax_rate, ax_lat)
        for (c, level), (ax_rate, ax_lat) in zip(cases, axes, strict=True)
    ]
    for ax in axes[-1]:
        ax.set_xlabel("time in the level (s)")
    handles = [
        line(color="#374151", linestyle="-", label="p50 (solid)"),
        line(color="#374151", linestyle="--", label="p99 (dashed)"),
    ]
    if warmup:
        handles.append(
            line(color=WARMUP_COLOR, linewidth=6, alpha=0.5, label="warm-up, not recorded")
        )
    legend_below(fig, handles)
    data = TextTable(
        [
            "stack",
            "level",
            "repetitions",
            "seconds",
            "req/s per second: min / median / max",
            "p50 (median second)",
            "p99 (median second)",
        ],
        table,
    )
    return render(
        f"{sid}-timeseries",
        title,
        "Each stack at its highest level; one line per repetition (a cut last "
        "second is left out). Grey band: the warm-up before recording "
        f"({warmup:g} s), which the loader does not record.",
        fig,
        data,
    )


# --- resources -------------------------------------------------------------------------------
def _rss_peak(rows: Sequence[LevelRow], role: str) -> float | None:
    # 0 bytes: no process of the role was sampled, so no memory figure
    values = [u.rss_max_bytes for r in rows if (u := r.usage.get(role)) and u.rss_max_bytes]
    return stats.median(values) if values else None


def _rss_mib(rows: Sequence[LevelRow], services: bool) -> float | None:
    """Sum over the stack's roles (or its services) of each role's median peak RSS, MiB."""
    roles = {
        role
        for r in rows
        for role in r.usage
        if role not in (LOADER_ROLE, OTHER_ROLE) and (role in SERVICE_ROLES) == services
    }
    peaks = [p for role in roles if (p := _rss_peak(rows, role)) is not None]
    return sum(peaks) / 2**20 if peaks else None


def _figures(c: CaseView) -> dict[float, tuple[float | None, ...]]:
    """level -> (stack CPU, services CPU, stack RSS MiB, services RSS MiB)."""
    return {
        g.level_value: (
            g.value(SERVER_CPU),
            g.value(SERVICE_CPU),
            _rss_mib(c.rows_at(g.level_index), False),
            _rss_mib(c.rows_at(g.level_index), True),
        )
        for g in c.aggregates
    }


def _bars(
    ax: Axes,
    a: Analysis,
    cases: Sequence[CaseView],
    levels: Sequence[float],
    figures: dict[str, dict[float, tuple[float | None, ...]]],
    own: int,
) -> list[float]:
    """Grouped bars (one group per level, one bar per stack) of figure `own` with the
    services' figure `own + 1` on top; returns the totals drawn."""
    width = 0.8 / len(cases)
    totals = []
    for i, c in enumerate(cases):
        look = style(a, c.stack)
        x = [j - 0.4 + width * (i + 0.5) for j in range(len(levels))]
        base = [figures[c.stack].get(v, (None,) * 4)[own] or 0.0 for v in levels]
        extra = [figures[c.stack].get(v, (None,) * 4)[own + 1] or 0.0 for v in levels]
        ax.bar(
            x,
            base,
            width=width,
            color=look.color,
            hatch=look.hatch,
            edgecolor="white",
            linewidth=0.5,
        )
        if any(extra):
            ax.bar(
                x,
                extra,
                bottom=base,
                width=width,
                color=look.color,
                alpha=0.4,
                hatch=look.hatch,
                edgecolor="white",
                linewidth=0.5,
            )
        totals += [b + e for b, e in zip(base, extra, strict=True)]
    step = math.ceil(len(levels) / MAX_LEVEL_TICKS)  # a sweep of hundreds of levels
    ax.set_xticks(
        list(range(len(levels)))[::step],
        [fmt.level(v) for v in levels][::step],
        rotation=45 if len(levels[::step]) > 6 else 0,
    )
    ax.grid(axis="x", visible=False)
    return totals


def resources_chart(a: Analysis, w: WorkloadView, sid: str) -> ChartItem:
    title = f"{w.label}: CPU and memory"
    cases = [
        c
        for c in w.cases
        if any(g.cpu_by_role for g in c.aggregates) or any(r.usage for r in c.rows)
    ]
    if not cases:
        return Omitted(
            f"{sid}-resources", title, f"No CPU or memory sample is stored for {w.label}."
        )
    levels = sorted({g.level_value for c in cases for g in c.aggregates})
    figures = {c.stack: _figures(c) for c in cases}
    fig = figure(5.4)
    ax_cpu, ax_rss = fig.subplots(2, 1, sharex=True)
    headroom(ax_cpu, _bars(ax_cpu, a, cases, levels, figures, 0))
    headroom(ax_rss, _bars(ax_rss, a, cases, levels, figures, 2))
    ax_cpu.set_ylabel("CPU (%, 100 = 1 core)")
    set_title(ax_cpu, "CPU of the stack", loc="left")
    ax_rss.set_ylabel("peak RSS (MiB)")
    set_title(ax_rss, "peak memory of the stack", loc="left")
    ax_rss.yaxis.set_major_formatter(formatter(lambda v: f"{v:,.0f}"))
    ax_rss.set_xlabel(a.level_label)
    handles = [
        patch(
            facecolor=(s := style(a, c.stack)).color,
            hatch=s.hatch,
            edgecolor="white",
            label=c.stack,
        )
        for c in cases
    ]
    if any(f[1] or f[3] for per in figures.values() for f in per.values()):
        handles.append(patch(facecolor="#9ca3af", alpha=0.5, label="lighter top: data services"))
    legend_below(fig, handles)
    rows = [
        [
            c.stack,
            fmt.level(v),
            *(fmt.percent(f[0]), fmt.percent(f[1])),
            *(fmt.MISSING if m is None else f"{m:,.1f} MiB" for m in f[2:]),
        ]
        for c in cases
        for v, f in figures[c.stack].items()
    ]
    data = TextTable(
        ["stack", "level", "stack CPU", "services CPU", "stack peak RSS", "services peak RSS"], rows
    )
    return render(
        f"{sid}-resources",
        title,
        "Median CPU at each level (100% = one core busy) and the median over "
        "repetitions of each role's peak RSS, summed over the stack's roles: its own "
        "processes (solid) and its data services (lighter, on top). Per role and "
        "with the load generator: the memory table and the detail table.",
        fig,
        data,
    )
