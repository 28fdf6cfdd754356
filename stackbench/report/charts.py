"""The report's charts, built from the analysis as svg.XYChart / svg.BarChart values.

Each chart: every repetition as a faint dot, the median per level as a marker, the confidence
interval as a bar (repeat > 1), and a LOWESS trend line; the SLO objective and each stack's
breakpoint are drawn when the run has an SLO.
"""

import math
from collections.abc import Callable

from stackbench.analysis import fmt, stats
from stackbench.analysis.analysis import Analysis, CaseView, WorkloadView
from stackbench.analysis.stats import Estimate, LevelAggregate
from stackbench.report.svg import Bar, BarChart, Point, Series, VLine, XYChart
from stackbench.store.store import LevelRow

PALETTE = ("#2563eb", "#ea580c", "#16a34a", "#dc2626", "#7c3aed", "#0891b2", "#ca8a04",
           "#db2777", "#4b5563", "#65a30d")
SERVER_ROLE_COLORS = ("#2563eb", "#60a5fa", "#1e3a8a", "#93c5fd")
FIXED_ROLE_COLORS = {"mariadb": "#ea580c", "redis": "#dc2626", "memcached": "#ca8a04",
                     "loader": "#9ca3af"}
LOG_X_SPAN = 20  # levels spanning 20x or more are shown on a log x axis
MAX_LEVEL_TICKS = 12  # up to this many levels, each level gets its own x tick


def stack_color(a: Analysis, stack: str) -> str:
    return PALETTE[a.stacks.index(stack) % len(PALETTE)] if stack in a.stacks else PALETTE[-2]


def level_ticks(w: WorkloadView) -> list[float]:
    return w.level_values if len(w.level_values) <= MAX_LEVEL_TICKS else []


def use_log_x(w: WorkloadView) -> bool:
    values = [v for v in w.level_values if v > 0]
    return bool(values) and max(values) / min(values) >= LOG_X_SPAN


def _trend(points: list[Point], log_x: bool, log_y: bool) -> list[tuple[float, float]]:
    """LOWESS over about three neighbouring levels, computed in the axes' own (log) space, so
    the curve follows knees instead of cutting across them."""
    pts = [p for p in points if (p.x > 0 or not log_x) and (p.y > 0 or not log_y)]
    levels = len({p.x for p in pts})
    if levels < 3:
        return []
    def fx(v: float) -> float:
        return math.log10(v) if log_x else v

    def fy(v: float) -> float:
        return math.log10(v) if log_y else v

    smoothed = stats.lowess([(fx(p.x), fy(p.y)) for p in pts], frac=min(1.0, 3.5 / levels))
    return [(10 ** x if log_x else x, 10 ** y if log_y else y) for x, y in smoothed]


def _series(a: Analysis, c: CaseView, log_x: bool, row_value: Callable[[LevelRow], float | None],
            agg_value: Callable[[LevelAggregate], Estimate | None],
            y_fmt: Callable[[float | None], str], log_y: bool = False) -> Series:
    points = []
    for r in c.rows:
        y = row_value(r)
        if y is not None:
            points.append(Point(r.level_value, y, f"{c.stack} @ {fmt.level(r.level_value)}, "
                                                  f"repetition {r.repetition + 1}: {y_fmt(y)}"))
    medians, intervals = [], []
    for g in c.aggregates:
        est = agg_value(g)
        if est is None:
            continue
        invalid = "" if g.status == "ok" else f" — {g.status}, not ranked"
        medians.append(Point(g.level_value, est.value, f"{c.stack} @ {fmt.level(g.level_value)}: "
                             f"median {fmt.estimate(est, y_fmt)} ({g.repetitions} reps){invalid}",
                             hollow=g.status != "ok"))
        if est.has_interval:
            assert est.low is not None and est.high is not None
            intervals.append((g.level_value, est.low, est.high))
    trend = _trend(points or medians, log_x, log_y)
    return Series(c.stack, stack_color(a, c.stack), points if a.repeat > 1 else (), medians,
                  trend, intervals, connect=not trend)  # too few levels to smooth: join them


def _breakpoints(a: Analysis, w: WorkloadView) -> list[VLine]:
    if a.search:  # probe order is not a sweep: "first failing probe" means nothing
        return []
    return [VLine(c.breakpoint.level_value, stack_color(a, c.stack),
                  f"{c.stack}: SLO broken at {fmt.level(c.breakpoint.level_value)} "
                  f"({c.breakpoint.reason})")
            for c in w.cases if c.breakpoint is not None]


def throughput(a: Analysis, w: WorkloadView, log_y: bool = False) -> XYChart:
    log_x = use_log_x(w)
    series = [_series(a, c, log_x, lambda r: r.requests_per_s, lambda g: g.throughput, fmt.rate,
                      log_y) for c in w.cases]
    if a.level_kind == "rate":  # open loop: the offered rate is the ceiling to compare with
        top = max((r.requests_per_s for c in w.cases for r in c.rows), default=0.0) * 1.25
        offered = [(v, v) for v in w.level_values if v <= top]
        series.append(Series("offered rate", "#9ca3af", trend=offered))
    return XYChart(f"{w.label}: throughput", a.level_label, "requests/s", series,
                   fmt.level, fmt.rate, x_log=log_x, y_log=log_y, vlines=_breakpoints(a, w),
                   x_ticks=level_ticks(w))


def latency(a: Analysis, w: WorkloadView, key: str, log_y: bool = False) -> XYChart:
    log_x = use_log_x(w)
    series = [_series(a, c, log_x, lambda r: stats.measured_latency(r).get(key),
                      lambda g: g.latency_us.get(key), fmt.latency, log_y) for c in w.cases]
    hlines, vlines = [], []
    if a.slo is not None and stats.percentile_key(a.slo.percentile) == key:
        hlines.append((a.slo.latency_ms * 1000.0, f"SLO {key} ≤ {a.slo.latency_ms:g} ms"))
        vlines = _breakpoints(a, w)
    name = key.replace("_", ".")
    return XYChart(f"{w.label}: {name} latency", a.level_label, f"{name} latency", series,
                   fmt.level, fmt.latency, x_log=log_x, y_log=log_y, hlines=hlines,
                   vlines=vlines, x_ticks=level_ticks(w))


def latency_keys(a: Analysis, w: WorkloadView) -> list[str]:
    """p50 and p99 always (a stack without them shows no points), plus the SLO's percentile."""
    keys = ["p50", "p99"]
    if a.slo is not None and stats.percentile_key(a.slo.percentile) not in keys:
        keys.append(stats.percentile_key(a.slo.percentile))
    return keys


def error_rate(a: Analysis, w: WorkloadView) -> XYChart:
    log_x = use_log_x(w)
    series = [_series(a, c, log_x, stats.level_error_rate, lambda g: g.error_rate, fmt.fraction)
              for c in w.cases]
    limit = a.settings.get("max_error_rate")
    hlines = [(float(limit), f"limit {float(limit):.2%}")] if limit else []
    return XYChart(f"{w.label}: error rate", a.level_label, "error rate", series, fmt.level,
                   fmt.fraction, x_log=log_x, hlines=hlines, x_ticks=level_ticks(w))


def role_colors(roles: list[str]) -> dict[str, str]:
    colors, server_i = {}, 0
    for role in roles:
        if role in FIXED_ROLE_COLORS:
            colors[role] = FIXED_ROLE_COLORS[role]
        else:
            colors[role] = SERVER_ROLE_COLORS[server_i % len(SERVER_ROLE_COLORS)]
            server_i += 1
    return colors


def _role_order(roles: set[str]) -> list[str]:
    """Server roles first (bottom of the stack), then services, the loader on top."""
    def rank(role: str) -> tuple[int, str]:
        group = 2 if role == stats.LOADER_ROLE else 1 if role in stats.SERVICE_ROLES else 0
        return group, role
    return sorted(roles, key=rank)


def cpu_split(a: Analysis, c: CaseView) -> BarChart:
    roles = _role_order({r for g in c.aggregates for r in g.cpu_by_role})
    bars = [Bar(fmt.level(g.level_value), [(r, g.cpu_by_role[r]) for r in roles
                                           if r in g.cpu_by_role]) for g in c.aggregates]
    return BarChart(f"{c.stack}: CPU by role", a.level_label, "CPU % (100 = 1 core)", bars,
                    role_colors(roles), lambda v: f"{v:.0f}%")


def timeseries(a: Analysis, c: CaseView, level_index: int) -> XYChart:
    series = []
    for r in c.rows_at(level_index):
        pts = [Point(float(p.get("t_s", i + 1)), float(p.get("completed", 0)),
                     _second_tip(r, p)) for i, p in enumerate(r.timeseries or [])]
        series.append(Series(f"repetition {r.repetition + 1}",
                             PALETTE[r.repetition % len(PALETTE)], medians=pts, connect=True,
                             marker=2.0))
    return XYChart("completed requests per second", "second", "completed/s", series,
                   fmt.level, fmt.rate, width=460, height=200, legend=len(series) > 1)


def _second_tip(r: LevelRow, p: dict[str, float]) -> str:
    parts = [f"t={p.get('t_s', '?')} s", f"completed {fmt.rate(p.get('completed'))}"]
    if p.get("errors"):
        parts.append(f"errors {p['errors']:g}")
    for key in ("p50_us", "p99_us"):
        if key in p:
            parts.append(f"{key[:-3]} {fmt.latency(p[key])}")
    return f"rep {r.repetition + 1}: " + ", ".join(parts)


# Percentile spectrum: x = -log10(1 - p), so p50, p90, p99, p99.9 ... are evenly spaced.
SPECTRUM_KEYS = ("p50", "p75", "p80", "p90", "p99", "p99_9", "p99_99")


def _nines(key: str) -> float:
    return -math.log10(1.0 - float(key[1:].replace("_", ".")) / 100.0)


def _spectrum_label(x: float) -> str:
    key = next((k for k in SPECTRUM_KEYS if abs(_nines(k) - x) < 1e-6), None)
    return key.replace("_", ".") if key else ""


def spectrum(a: Analysis, w: WorkloadView, level_value: float) -> XYChart:
    """Latency by percentile at one level: only the percentiles each driver measured."""
    series = []
    for c in w.cases:
        g = c.aggregate_at(level_value)
        if g is None:
            continue
        pts = [Point(_nines(k), g.latency_us[k].value,
                     f"{c.stack} {k.replace('_', '.')}: {fmt.latency(g.latency_us[k].value)}")
               for k in SPECTRUM_KEYS if k in g.latency_us]
        if pts:
            series.append(Series(c.stack, stack_color(a, c.stack), medians=pts, connect=True,
                                 marker=3.0))
    return XYChart(f"{w.label}: latency by percentile at {fmt.level(level_value)} "
                   f"{a.level_label}", "percentile", "latency", series, _spectrum_label,
                   fmt.latency, y_log=True,
                   x_ticks=[_nines(k) for k in SPECTRUM_KEYS if k != "p80"],  # p75/p80 overlap
                   width=700, height=300)
