"""The report's charts, drawn with matplotlib (Agg, no display) and kept as SVG and PNG.

Per workload, in this order (each chart's file stem is `<workload-slug>-<kind>`):

- throughput: req/s against connections or offered rate; every repetition a faint point, the
  median a marker (hollow: level not valid) with its 95% CI, a LOWESS trend line (computed in
  log space when the axis is logarithmic); the SLO breakpoint of each stack as a dashed line;
  open loop: the offered rate as a grey diagonal (the ceiling).
- latency: p50 and p99 (and the SLO's percentile) against the level, log scale, same marks;
  the SLO objective as a horizontal line on its percentile's panel.
- errors: error rate against the level, only when some request failed.
- percentiles: HdrHistogram-style percentile distribution (latency against "1 in N" requests,
  log-log) decoded from the stored histograms, repetitions merged, at ONE level per workload:
  the highest level every stack measured (else each stack's highest level, named in the
  legend). Per-level distributions for every level are not drawn: a run can have hundreds.
- timeseries: per stack at its highest level (the most loaded, where instability shows),
  completed requests and p50/p99 per second, one line per repetition; the warm-up (not
  recorded by the loader) shaded before t = 0.
- resources: CPU (100% = one core) and peak RSS per role, stacked per level, one column per
  stack.

And one run-wide `glance` chart: the at-a-glance bars (see report/glance.py) for slides.
A chart with nothing to show is replaced by one sentence (`Omitted`).
"""

from __future__ import annotations  # matplotlib types are for the type checker only

import io
import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stackbench.analysis import fmt, stats
from stackbench.analysis.analysis import Analysis, CaseView, WorkloadView
from stackbench.analysis.stats import Estimate, LevelAggregate
from stackbench.config.slo import percentile_key
from stackbench.report import colors
from stackbench.report.glance import MetricGlance, WorkloadGlance
from stackbench.store.store import LevelRow

if TYPE_CHECKING:  # matplotlib and hdrh are heavy: imported when the first chart is drawn
    from hdrh.histogram import HdrHistogram
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

SERVER_ROLE_COLORS = ("#2563eb", "#60a5fa", "#1e3a8a", "#93c5fd")
FIXED_ROLE_COLORS = {"mariadb": "#ea580c", "redis": "#dc2626", "memcached": "#ca8a04",
                     "loader": "#9ca3af"}
LOG_X_SPAN = 20       # levels spanning 20x or more are drawn on a log x axis
MAX_LEVEL_TICKS = 12  # up to this many levels, each level gets its own x tick
PNG_DPI = 110
WIDTH_IN = 7.6
STACKS_PER_ROW = 4
STYLE: dict[Any, Any] = {  # rcParams of every chart
    "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8,
    "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.grid": True, "grid.color": "#e5e7eb",
    "grid.linewidth": 0.6, "axes.spines.top": False, "axes.spines.right": False,
    "axes.edgecolor": "#9ca3af", "font.family": ["DejaVu Sans", "sans-serif"],
    "svg.fonttype": "none",  # text stays text: smaller files, selectable in the page
    "text.parse_math": False,  # a '$' in a stack or workload name is text, not TeX
}


@dataclass(frozen=True)
class Chart:
    name: str      # file stem, unique in a report
    title: str
    caption: str
    svg: str       # complete SVG document
    png: bytes

    @property
    def inline_svg(self) -> str:
        """The <svg> element alone, to embed in the HTML page."""
        return self.svg[self.svg.index("<svg"):]


@dataclass(frozen=True)
class Omitted:
    name: str
    title: str
    sentence: str  # why there is no chart, in one sentence


ChartItem = Chart | Omitted


# --- helpers ---------------------------------------------------------------------------------
def stack_color(a: Analysis, stack: str) -> str:
    return colors.stack_color(a.stacks, stack)


def role_colors(roles: Sequence[str]) -> dict[str, str]:
    out, server_i = {}, 0
    for role in roles:
        if role in FIXED_ROLE_COLORS:
            out[role] = FIXED_ROLE_COLORS[role]
        else:
            out[role] = SERVER_ROLE_COLORS[server_i % len(SERVER_ROLE_COLORS)]
            server_i += 1
    return out


def role_order(roles: set[str]) -> list[str]:
    """Server roles first (bottom of a stack of bars), then services, the loader on top."""
    def rank(role: str) -> tuple[int, str]:
        group = 2 if role == stats.LOADER_ROLE else 1 if role in stats.SERVICE_ROLES else 0
        return group, role
    return sorted(roles, key=rank)


def use_log_x(values: Sequence[float]) -> bool:
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) >= LOG_X_SPAN


def _figure(height_in: float, width_in: float = WIDTH_IN) -> Figure:
    import matplotlib

    matplotlib.use("Agg")  # never a display, whatever the environment says
    from matplotlib.figure import Figure

    with matplotlib.rc_context(STYLE):
        return Figure(figsize=(width_in, height_in), layout="constrained")


def _line(**style: Any) -> Line2D:
    """A legend entry (a line or marker that is not drawn on the axes)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], **style)


def render(name: str, title: str, caption: str, fig: Figure) -> Chart:
    """SVG (deterministic ids salted with the chart's name, so charts inlined in one page never
    share an id) and PNG of a figure."""
    import matplotlib

    with matplotlib.rc_context({**STYLE, "svg.hashsalt": name}):
        svg = io.BytesIO()
        fig.savefig(svg, format="svg", metadata={"Date": None})
        fig.set_layout_engine("none")  # laid out by the first save: do not lay out twice
        png = io.BytesIO()
        fig.savefig(png, format="png", dpi=PNG_DPI)
    return Chart(name, title, caption, svg.getvalue().decode("utf-8"), png.getvalue())


def _formatter(text: Callable[[float], str]) -> FuncFormatter:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _pos: text(v))


def _rate_formatter() -> FuncFormatter:
    return _formatter(fmt.rate)


def _latency_formatter() -> FuncFormatter:
    return _formatter(lambda v: fmt.latency(v) if v > 0 else "0")


def _latency_axis(ax: Axes) -> None:
    """Log scale labelled at 1-2-5 steps, so a range narrower than a decade still has labels."""
    from matplotlib.ticker import LogLocator, NullFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(_latency_formatter())
    ax.yaxis.set_minor_formatter(NullFormatter())


LEGEND_ROW_CHARS = 80  # about what fits across a chart at the legend's font size


def _legend_below(fig: Figure, handles: Sequence[Line2D]) -> None:
    chars = sum(len(str(h.get_label())) + 6 for h in handles)
    rows = max(1, math.ceil(chars / LEGEND_ROW_CHARS))
    fig.legend(handles=list(handles), loc="outside lower center",
               ncols=max(1, math.ceil(len(handles) / rows)), frameon=False)


def _level_axis(ax: Axes, a: Analysis, levels: Sequence[float], log_x: bool) -> None:
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    if log_x:
        ax.set_xscale("log")
    if len(levels) <= MAX_LEVEL_TICKS:
        ax.xaxis.set_major_locator(FixedLocator(list(levels)))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(_formatter(fmt.level))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(a.level_label)


def _trend(points: Sequence[tuple[float, float]], log_x: bool, log_y: bool
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
    return [(10 ** x if log_x else x, 10 ** y if log_y else y) for x, y in smoothed]


def _plot_case(ax: Axes, color: str, c: CaseView, row_value: Callable[[LevelRow], float | None],
               agg_value: Callable[[LevelAggregate], Estimate | None], log_x: bool,
               log_y: bool) -> None:
    """Every repetition as a point, medians with their CI, and the trend line."""
    reps = [(r.level_value, y) for r in c.rows if (y := row_value(r)) is not None]
    if reps:
        ax.scatter([x for x, _ in reps], [y for _, y in reps], s=12, color=color, alpha=0.35,
                   linewidths=0, zorder=2)
    medians = [(g, est) for g in c.aggregates if (est := agg_value(g)) is not None]
    for g, est in medians:
        valid = g.status == "ok"
        ax.plot([g.level_value], [est.value], marker="o", markersize=5, zorder=3,
                color=color, markerfacecolor=color if valid else "white")
        if est.low is not None and est.high is not None and est.high > est.low:
            ax.errorbar([g.level_value], [est.value],
                        yerr=[[est.value - est.low], [est.high - est.value]], fmt="none",
                        ecolor=color, elinewidth=1.2, capsize=3, zorder=3)
    trend = _trend(reps or [(g.level_value, e.value) for g, e in medians], log_x, log_y)
    if trend:
        ax.plot([x for x, _ in trend], [y for _, y in trend], color=color, linewidth=1.6,
                zorder=2)
    elif len(medians) > 1:  # too few levels to smooth: join the medians
        ax.plot([g.level_value for g, _ in medians], [e.value for _, e in medians],
                color=color, linewidth=1.2, zorder=2)


def _stack_handles(a: Analysis, stacks: Sequence[str]) -> list[Line2D]:
    return [_line(color=stack_color(a, s), marker="o", markersize=5, label=s) for s in stacks]


def _breakpoints(ax: Axes, a: Analysis, w: WorkloadView) -> list[Line2D]:
    if a.search:  # probes of a search are not a sweep: "first failing level" means nothing
        return []
    drawn = False
    for c in w.cases:
        if c.breakpoint is not None:
            ax.axvline(c.breakpoint.level_value, color=stack_color(a, c.stack), linestyle="--",
                       linewidth=1, alpha=0.8, zorder=1)
            drawn = True
    if not drawn:
        return []
    return [_line(color="#6b7280", linestyle="--", linewidth=1,
                   label="SLO breakpoint (dashed, in the stack's colour)")]


NOTE = ("Dots: each repetition; markers: median (hollow: level not valid, not ranked) with "
        "its 95% bootstrap CI; line: LOWESS trend.")


# --- per workload ----------------------------------------------------------------------------
def throughput_chart(a: Analysis, w: WorkloadView, sid: str) -> Chart:
    fig = _figure(3.4)
    ax = fig.add_subplot()
    log_x = use_log_x(w.level_values)
    for c in w.cases:
        _plot_case(ax, stack_color(a, c.stack), c, lambda r: r.requests_per_s,
                   lambda g: g.throughput, log_x, False)
    handles = _stack_handles(a, [c.stack for c in w.cases]) + _breakpoints(ax, a, w)
    if a.level_kind == "rate":  # open loop: the offered rate is the ceiling to compare with
        top = max((r.requests_per_s for c in w.cases for r in c.rows), default=0.0) * 1.25
        offered = [v for v in w.level_values if v <= top] or w.level_values[:1]
        ax.plot(offered, offered, color="#9ca3af", linestyle=":", linewidth=1.2)
        handles.append(_line(color="#9ca3af", linestyle=":", label="offered rate"))
    _level_axis(ax, a, w.level_values, log_x)
    ax.set_ylabel("requests/s")
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(_rate_formatter())
    ax.set_title(f"{w.label}: throughput")
    _legend_below(fig, handles)
    return render(f"{sid}-throughput", f"{w.label}: throughput", "Throughput. " + NOTE, fig)


def _row_latency(key: str) -> Callable[[LevelRow], float | None]:
    return lambda r: stats.measured_latency(r).get(key)


def _agg_latency(key: str) -> Callable[[LevelAggregate], Estimate | None]:
    return lambda g: g.latency_us.get(key)


def latency_keys(a: Analysis) -> list[str]:
    keys = ["p50", "p99"]
    if a.slo is not None and percentile_key(a.slo.percentile) not in keys:
        keys.append(percentile_key(a.slo.percentile))
    return keys


def latency_chart(a: Analysis, w: WorkloadView, sid: str) -> ChartItem:
    keys = latency_keys(a)
    measured = [k for k in keys if any(k in g.latency_us for c in w.cases
                                       for g in c.aggregates)]
    title = f"{w.label}: latency"
    if not measured:
        return Omitted(f"{sid}-latency", title, "No level measured a latency percentile for "
                       f"{w.label} (no request completed, or the driver printed none).")
    fig = _figure(3.4)
    axes = fig.subplots(1, len(measured), sharex=True, squeeze=False)[0]
    legend = _stack_handles(a, [c.stack for c in w.cases])
    log_x = use_log_x(w.level_values)
    slo_key = percentile_key(a.slo.percentile) if a.slo is not None else None
    for ax, key in zip(axes, measured, strict=True):
        for c in w.cases:
            _plot_case(ax, stack_color(a, c.stack), c, _row_latency(key), _agg_latency(key),
                       log_x, True)
        if key == slo_key and a.slo is not None:
            ax.axhline(a.slo.latency_ms * 1000.0, color="#dc2626", linestyle="-.", linewidth=1)
            legend.append(_line(color="#dc2626", linestyle="-.",
                                 label=f"SLO {key.replace('_', '.')} ≤ {a.slo.latency_ms:g} ms"))
            legend += _breakpoints(ax, a, w)
        _latency_axis(ax)
        _level_axis(ax, a, w.level_values, log_x)
        ax.set_title(f"{key.replace('_', '.')} latency")
    _legend_below(fig, legend)
    return render(f"{sid}-latency", title, "Latency percentiles (log scale). – in the tables "
                  "means the driver did not measure that percentile. " + NOTE, fig)


def errors_chart(a: Analysis, w: WorkloadView, sid: str) -> ChartItem:
    title = f"{w.label}: error rate"
    if not any(r.errors_total for c in w.cases for r in c.rows):
        return Omitted(f"{sid}-errors", title,
                       f"No request failed at any level of {w.label}: no error-rate chart.")
    fig = _figure(3.0)
    ax = fig.add_subplot()
    log_x = use_log_x(w.level_values)
    for c in w.cases:
        _plot_case(ax, stack_color(a, c.stack), c, stats.level_error_rate,
                   lambda g: g.error_rate, log_x, False)
    handles = _stack_handles(a, [c.stack for c in w.cases])
    limit = a.settings.max_error_rate
    if limit:
        ax.axhline(limit, color="#dc2626", linestyle="-.", linewidth=1)
        handles.append(_line(color="#dc2626", linestyle="-.",
                              label=f"validity limit {limit:.2%}"))
    _level_axis(ax, a, w.level_values, log_x)
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(_formatter(fmt.fraction))
    ax.set_ylabel("failed attempts / attempts")
    ax.set_title(title)
    _legend_below(fig, handles)
    return render(f"{sid}-errors", title, "Error rate: failed attempts / attempts. " + NOTE, fig)


# --- percentile distribution -----------------------------------------------------------------
def _unreadable() -> tuple[type[Exception], ...]:
    """What a damaged stored histogram raises when decoded: that repetition is left out."""
    from hdrh.codec import HdrCookieException, HdrHistogramSettingsException, HdrLengthException

    return (ValueError, zlib.error, HdrCookieException, HdrLengthException,
            HdrHistogramSettingsException)


def _highest_trackable(h: HdrHistogram) -> int:
    return int(h.get_highest_equivalent_value(h.get_value_from_index(h.counts_len - 1)))


def merged_histogram(rows: Sequence[LevelRow]) -> HdrHistogram | None:
    """The stored histograms of a level's repetitions, added together (None if none)."""
    from hdrh.histogram import HdrHistogram

    decoded = []
    for r in rows:
        if not r.histogram or r.completed == 0:
            continue
        try:
            decoded.append(HdrHistogram.decode(r.histogram))
        except _unreadable():
            continue
    if not decoded:
        return None
    decoded.sort(key=_highest_trackable, reverse=True)  # the widest range receives the rest
    merged = decoded[0]
    for h in decoded[1:]:
        merged.add(h)
    return merged if merged.get_total_count() > 0 else None


def distribution(h: HdrHistogram, steps_per_decade: int = 20) -> list[tuple[float, float]]:
    """(N, latency) where one request in N is slower: N from 1 (the minimum) in steps of
    10^(1/steps_per_decade) while N < count (the sample supports no finer percentile), then
    the slowest request at N = count."""
    count = h.get_total_count()
    ns = []
    k = 0
    while (n := 10 ** (k / steps_per_decade)) < count:
        ns.append(n)
        k += 1
    percentiles = [100.0 * (1.0 - 1.0 / n) for n in ns]
    values = h.get_percentile_to_value_dict(percentiles)
    points = [(n, float(values[p])) for n, p in zip(ns, percentiles, strict=True)]
    points.append((float(count), float(h.get_max_value())))
    return points


def _nines_label(n: float) -> str:
    if n < 1.5:
        return "min"
    p = 100.0 * (1.0 - 1.0 / n)
    return f"p{p:.10g}\n1 in {n:,.0f}"


def distribution_level(w: WorkloadView) -> float | None:
    """The highest level every stack with a stored histogram measured."""
    with_hist = [c for c in w.cases if any(r.histogram for r in c.rows)]
    if not with_hist:
        return None
    common = set.intersection(*({r.level_value for r in c.rows if r.histogram}
                                for c in with_hist))
    return max(common) if common else None


def percentiles_chart(a: Analysis, w: WorkloadView, sid: str) -> ChartItem:
    from matplotlib.ticker import FixedLocator, NullFormatter

    title = f"{w.label}: latency by percentile"
    common = distribution_level(w)
    curves = []
    for c in w.cases:
        measured = sorted({r.level_value for r in c.rows if r.histogram})
        if not measured:
            continue
        level = common if common is not None else measured[-1]
        h = merged_histogram([r for r in c.rows if r.level_value == level])
        if h is not None:
            label = c.stack if common is not None else f"{c.stack} @ {fmt.level(level)}"
            curves.append((c.stack, label, distribution(h)))
    if not curves:
        return Omitted(f"{sid}-percentiles", title, "No latency histogram is stored for "
                       f"{w.label} (only the native driver records one): no percentile "
                       "distribution; the tables list the percentiles the driver printed.")
    fig = _figure(3.4)
    ax = fig.add_subplot()
    for stack, label, pts in curves:
        ax.plot([n for n, _ in pts], [v for _, v in pts], color=stack_color(a, stack),
                linewidth=1.6, label=label, drawstyle="steps-post")
    if a.slo is not None:
        ax.axhline(a.slo.latency_ms * 1000.0, color="#dc2626", linestyle="-.", linewidth=1,
                   label=f"SLO {percentile_key(a.slo.percentile).replace('_', '.')} ≤ "
                         f"{a.slo.latency_ms:g} ms")
    ax.set_xscale("log")
    _latency_axis(ax)
    top = max(n for _, _, pts in curves for n, _ in pts)
    ticks = [1.0] + [10.0 ** d for d in range(1, int(math.log10(top)) + 1)]
    ticks = [2.0 if t == 1.0 else t for t in ticks]  # p50 reads better than min at the left
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(_formatter(_nines_label))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("percentile (one request in N is slower)")
    ax.set_ylabel("latency")
    where = (f"at {fmt.level(common)} {a.level_label}" if common is not None
             else "at each stack's highest level")
    ax.set_title(f"{title} {where}")
    ax.legend(loc="upper left", frameon=False)
    return render(f"{sid}-percentiles", f"{title} {where}",
                  "HdrHistogram percentile distribution from the loader's full-resolution "
                  "histograms, repetitions merged; the curve ends at the slowest request.", fig)


# --- time series -----------------------------------------------------------------------------
def top_level(c: CaseView) -> float | None:
    values = [r.level_value for r in c.rows if r.timeseries]
    return max(values) if values else None


def timeseries_chart(a: Analysis, w: WorkloadView, sid: str) -> ChartItem:
    title = f"{w.label}: per-second time series"
    cases = [(c, lv) for c in w.cases if (lv := top_level(c)) is not None]
    if not cases:
        return Omitted(f"{sid}-timeseries", title, "No per-second series is stored for "
                       f"{w.label} (only the native driver records one).")
    warmup = a.settings.warmup_s
    fig = _figure(1.9 * len(cases) + 0.4)
    axes = fig.subplots(len(cases), 2, squeeze=False, sharex=True)
    for (c, level), (ax_rate, ax_lat) in zip(cases, axes, strict=True):
        color = stack_color(a, c.stack)
        rows = [r for r in c.rows if r.level_value == level and r.timeseries]
        any_latency = any_second = False
        for r in rows:
            # The loader marks the cut last second `partial`: it is no full second, not drawn.
            series = [p for p in r.timeseries or () if not p.partial]
            any_second = any_second or bool(series)
            t = [float(p.t_s) for p in series]
            style = ("-", "--", ":", "-.")[r.repetition % 4]
            ax_rate.plot(t, [float(p.completed) for p in series], color=color,
                         linestyle=style, linewidth=1.2, label=f"rep {r.repetition + 1}")
            for key, alpha in (("p50", 1.0), ("p99", 0.55)):
                # 0: no request completed in that second, so no latency to draw
                values = [p.percentile_us(key) or math.nan for p in series]
                any_latency = any_latency or any(v > 0 for v in values)
                ax_lat.plot(t, values, color=color, alpha=alpha, linestyle=style, linewidth=1.2)
        for ax in (ax_rate, ax_lat):
            if warmup > 0:
                ax.axvspan(-warmup, 0, color="#9ca3af", alpha=0.25, linewidth=0)
        ax_rate.set_ylim(bottom=0)
        ax_rate.yaxis.set_major_formatter(_rate_formatter())
        ax_rate.set_ylabel("completed/s")
        ax_rate.set_title(f"{c.stack} @ {fmt.level(level)}: completed/s", loc="left")
        if any_latency:
            _latency_axis(ax_lat)
        else:  # a log axis of nothing cannot be drawn; say why the panel is empty
            ax_lat.set_yticks([])
            why = ("no request completed in any second" if any_second
                   else "the level ended within its first second: no full second")
            ax_lat.text(0.5, 0.5, why,
                        transform=ax_lat.transAxes, ha="center", va="center", color="#6b7280")
        ax_lat.set_title("p50 (solid), p99 (faint) per second", loc="left")
        if len(rows) > 1:
            ax_rate.legend(loc="lower right", frameon=False)
    for ax in axes[-1]:
        ax.set_xlabel("second of the level" + (" (grey: warm-up)" if warmup else ""))
    return render(f"{sid}-timeseries", title,
                  "Each stack at its highest level; one line per repetition (a cut last "
                  "second is left out). Grey band: the warm-up before recording "
                  f"({warmup:g} s), which the loader does not record.", fig)


# --- resources -------------------------------------------------------------------------------
def _rss_peak(rows: Sequence[LevelRow], role: str) -> float | None:
    values = [u.rss_max_bytes for r in rows if (u := r.usage.get(role)) and u.rss_max_bytes]
    return stats.median(values) if values else None


def resources_chart(a: Analysis, w: WorkloadView, sid: str) -> ChartItem:
    title = f"{w.label}: CPU and memory per role"
    cases = [c for c in w.cases if any(g.cpu_by_role for g in c.aggregates)
             or any(r.usage for r in c.rows)]
    if not cases:
        return Omitted(f"{sid}-resources", title,
                       f"No CPU or memory sample is stored for {w.label}.")
    roles = role_order({role for c in cases for r in c.rows for role in r.usage})
    palette = role_colors(roles)
    cols = min(len(cases), STACKS_PER_ROW)
    blocks = math.ceil(len(cases) / cols)
    fig = _figure(2.3 * 2 * blocks + 0.5)
    axes = fig.subplots(2 * blocks, cols, squeeze=False)
    for i, c in enumerate(cases):
        ax_cpu = axes[2 * (i // cols)][i % cols]
        ax_rss = axes[2 * (i // cols) + 1][i % cols]
        x = list(range(len(c.aggregates)))
        cpu_base = [0.0] * len(x)
        rss_base = [0.0] * len(x)
        for role in roles:
            cpu = [g.cpu_by_role.get(role, 0.0) for g in c.aggregates]
            rss = [(_rss_peak(c.rows_at(g.level_index), role) or 0.0) / 2**20
                   for g in c.aggregates]
            if any(cpu):
                ax_cpu.bar(x, cpu, bottom=cpu_base, color=palette[role], width=0.7)
                cpu_base = [b + v for b, v in zip(cpu_base, cpu, strict=True)]
            if any(rss):
                ax_rss.bar(x, rss, bottom=rss_base, color=palette[role], width=0.7)
                rss_base = [b + v for b, v in zip(rss_base, rss, strict=True)]
        step = math.ceil(len(x) / MAX_LEVEL_TICKS)  # a sweep of hundreds of levels
        labels = [fmt.level(g.level_value) for g in c.aggregates][::step]
        for ax in (ax_cpu, ax_rss):
            ax.set_xticks(x[::step], labels, rotation=45 if len(labels) > 6 else 0)
            ax.grid(axis="x", visible=False)
        ax_cpu.set_title(c.stack, loc="left")
        if i % cols == 0:
            ax_cpu.set_ylabel("CPU % (100 = 1 core)")
            ax_rss.set_ylabel("peak RSS (MiB)")
        ax_rss.set_xlabel(a.level_label)
    for j in range(len(cases), blocks * cols):  # empty cells of the last row
        axes[2 * (j // cols)][j % cols].set_visible(False)
        axes[2 * (j // cols) + 1][j % cols].set_visible(False)
    fig.legend(handles=[_line(color=palette[r], linewidth=6, label=r) for r in roles],
               loc="outside lower center", ncols=min(len(roles), 6), frameon=False)
    return render(f"{sid}-resources", title,
                  "Median CPU per role at each level (100% = one core busy) and the median "
                  "over repetitions of each role's peak RSS: the stack's own processes, its "
                  "data services and the load generator.", fig)


def workload_charts(a: Analysis, w: WorkloadView) -> list[ChartItem]:
    sid = fmt.slug(w.label)
    if not w.cases:
        return []
    return [throughput_chart(a, w, sid), latency_chart(a, w, sid), errors_chart(a, w, sid),
            percentiles_chart(a, w, sid), timeseries_chart(a, w, sid),
            resources_chart(a, w, sid)]


# --- at a glance -----------------------------------------------------------------------------
def _glance_axis(ax: Axes, a: Analysis, m: MetricGlance, value_fmt: Callable[[float], str],
                 title: str) -> None:
    from matplotlib.ticker import MaxNLocator

    y = list(range(len(m.bars)))[::-1]
    for yi, b in zip(y, m.bars, strict=True):
        est = b.estimate
        ax.barh(yi, est.value, color=stack_color(a, b.stack), height=0.6)
        if est.low is not None and est.high is not None:
            ax.errorbar([est.value], [yi], xerr=[[est.value - est.low], [est.high - est.value]],
                        fmt="none", ecolor="#111827", capsize=3, elinewidth=1)
        ax.text(est.high or est.value, yi, f"  {value_fmt(est.value)} ({b.share_of_best:.0%})",
                va="center", fontsize=8)
    ax.set_yticks(y, [b.stack for b in m.bars])
    ax.set_xlim(0, max(b.estimate.high or b.estimate.value for b in m.bars) * 1.6)
    ax.xaxis.set_major_locator(MaxNLocator(4))
    ax.xaxis.set_major_formatter(_formatter(lambda v: value_fmt(v) if v else "0"))
    ax.grid(axis="y", visible=False)
    ax.set_title(title, loc="left")


def _winner_line(m: MetricGlance) -> str:
    return f"winner: {m.winner}" if m.winner else "no winner named (not significant)"


def glance_chart(a: Analysis, glances: Sequence[WorkloadGlance]) -> ChartItem:
    shown = [g for g in glances if g.throughput.bars]
    if not shown:
        return Omitted("glance", "at a glance", "No workload has a valid level: nothing to "
                       "compare at a glance.")
    heights = [max(len(g.throughput.bars), 1) * 0.32 + 0.9 for g in shown]
    fig = _figure(sum(heights) + 0.2)
    axes = fig.subplots(len(shown), 2, squeeze=False,
                        gridspec_kw={"height_ratios": heights})
    for g, (ax_t, ax_l) in zip(shown, axes, strict=True):
        _glance_axis(ax_t, a, g.throughput, fmt.rate, f"{g.label}: req/s, best level\n"
                     + _winner_line(g.throughput))
        if g.latency.bars:
            _glance_axis(ax_l, a, g.latency, fmt.latency, f"p99 {g.latency.where}\n"
                         + _winner_line(g.latency))
        else:
            ax_l.set_axis_off()
            ax_l.text(0, 0.5, f"{g.label}: p99: {g.latency.verdict}", fontsize=8, wrap=True)
    return render("glance", "at a glance", "Each stack's best throughput and its p99 at a "
                  "common level, with 95% CI whiskers and % of the best; a winner is named only "
                  "when the difference is significant.", fig)
