"""The latency-by-percentile chart: the HdrHistogram-style percentile distribution (latency
against "1 in N" requests, log-log) decoded from the stored histograms, repetitions merged, at
ONE level per workload: the highest level every stack measured (else each stack's highest level,
named in the legend). Per-level distributions for every level are not drawn: a run can have
hundreds.
"""

from __future__ import annotations  # hdrh types are for the type checker only

import math
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from stackbench.analysis import fmt
from stackbench.analysis.analysis import Analysis, WorkloadView
from stackbench.config.slo import latency_words
from stackbench.report.chartkit import (
    ChartItem,
    Omitted,
    figure,
    formatter,
    latency_axis,
    legend_below,
    line,
    render,
    set_title,
    stack_handles,
    style,
)
from stackbench.report.tables import TextTable
from stackbench.store.store import LevelRow

if TYPE_CHECKING:
    from hdrh.histogram import HdrHistogram

TABLE_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)


def _unreadable() -> tuple[type[Exception], ...]:
    """What a damaged stored histogram raises when decoded: that repetition is left out."""
    from hdrh.codec import HdrCookieException, HdrHistogramSettingsException, HdrLengthException

    return (
        ValueError,
        zlib.error,
        HdrCookieException,
        HdrLengthException,
        HdrHistogramSettingsException,
    )


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
    return f"p{100.0 * (1.0 - 1.0 / n):.10g}"


def distribution_level(w: WorkloadView) -> float | None:
    """The highest level every stack with a stored histogram measured."""
    with_hist = [c for c in w.cases if any(r.histogram for r in c.rows)]
    if not with_hist:
        return None
    common = set.intersection(*({r.level_value for r in c.rows if r.histogram} for c in with_hist))
    return max(common) if common else None


def _curves(w: WorkloadView, common: float | None) -> list[tuple[str, str, float, HdrHistogram]]:
    """(stack, legend label, level, merged histogram) of each stack with a histogram."""
    curves = []
    for c in w.cases:
        measured = sorted({r.level_value for r in c.rows if r.histogram})
        if not measured:
            continue
        level = common if common is not None else measured[-1]
        h = merged_histogram([r for r in c.rows if r.level_value == level])
        if h is not None:
            label = c.stack if common is not None else f"{c.stack} @ {fmt.level(level)}"
            curves.append((c.stack, label, level, h))
    return curves


def _data(curves: Sequence[tuple[str, str, float, HdrHistogram]]) -> TextTable:
    header = ["stack", "level", *(f"p{p:g}" for p in TABLE_PERCENTILES), "max", "requests"]
    rows = []
    for stack, _, level, h in curves:
        values = h.get_percentile_to_value_dict(list(TABLE_PERCENTILES))
        rows.append(
            [
                stack,
                fmt.level(level),
                *(fmt.latency(float(values[p])) for p in TABLE_PERCENTILES),
                fmt.latency(float(h.get_max_value())),
                f"{h.get_total_count():,}",
            ]
        )
    return TextTable(header, rows)


def percentiles_chart(a: Analysis, w: WorkloadView, sid: str) -> ChartItem:
    from matplotlib.ticker import FixedLocator, NullFormatter

    title = f"{w.label}: latency by percentile"
    common = distribution_level(w)
    curves = _curves(w, common)
    if not curves:
        return Omitted(
            f"{sid}-percentiles",
            title,
            "No latency histogram is stored for "
            f"{w.label} (only the native driver records one): no percentile "
            "distribution; the tables list the percentiles the driver printed.",
        )
    fig = figure(3.8)
    ax = fig.add_subplot()
    handles = stack_handles(a, [])
    for stack, label, _, h in curves:
        look = style(a, stack)
        pts = distribution(h)
        ax.plot(
            [n for n, _ in pts],
            [v for _, v in pts],
            color=look.color,
            linestyle=look.linestyle,
            linewidth=1.5,
            drawstyle="steps-post",
        )
        ax.plot([pts[-1][0]], [pts[-1][1]], marker=look.marker, color=look.color)
        handles.append(
            line(
                color=look.color,
                linestyle=look.linestyle,
                marker=look.marker,
                markersize=5,
                label=label,
            )
        )
    if a.slo is not None:
        ax.axhline(a.slo.latency_ms * 1000.0, color="#dc2626", linestyle="-.", linewidth=1)
        handles.append(
            line(
                color="#dc2626",
                linestyle="-.",
                label=f"SLO {latency_words(a.slo)}",
            )
        )
    ax.set_xscale("log")
    latency_axis(ax)
    top = max(h.get_total_count() for _, _, _, h in curves)
    ticks = [1.0] + [10.0**d for d in range(1, int(math.log10(top)) + 1)]
    ticks = [2.0 if t == 1.0 else t for t in ticks]  # p50 reads better than min at the left
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(formatter(_nines_label))
    ax.xaxis.set_minor_formatter(NullFormatter())
    if len(ticks) > 5:
        ax.tick_params(axis="x", labelrotation=30)
    ax.set_xlabel("percentile (p99.9: one request in 1,000 is slower)")
    where = (
        f"at {fmt.level(common)} {a.level_label}"
        if common is not None
        else "at each stack's highest level"
    )
    set_title(ax, f"{title}\n{where}")
    legend_below(fig, handles)
    return render(
        f"{sid}-percentiles",
        f"{title} {where}",
        "HdrHistogram percentile distribution from the loader's full-resolution "
        "histograms, repetitions merged; the curve ends (marker) at the slowest "
        "request.",
        fig,
        _data(curves),
    )
