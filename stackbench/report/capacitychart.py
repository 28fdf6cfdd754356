"""The capacity chart of a workload: per stack, req/s per server core at the SLO as a solid
bar up to the rate that held and a hatched bracket up to the rate that failed; an open
bracket ("at least") ends in an arrow, never at an invented rate."""

from __future__ import annotations  # matplotlib types are for the type checker only

from typing import TYPE_CHECKING

from stackbench.analysis.analysis import Analysis, WorkloadView
from stackbench.analysis.capacity import Capacity, case_capacity, per_core_words
from stackbench.config.slo import latency_words
from stackbench.report.chartkit import (
    Chart,
    figure,
    legend_below,
    patch,
    rate_formatter,
    render,
    set_title,
    style,
)
from stackbench.report.tables import TextTable

if TYPE_CHECKING:
    from matplotlib.axes import Axes

BAR_HEIGHT = 0.6
OPEN_REACH = 1.15  # an open bracket's arrow reaches this far past the rate that held


def capacity_chart(a: Analysis, w: WorkloadView, sid: str) -> Chart | None:
    """None when the workload has no capacity (closed loop, no SLO)."""
    caps = [cap for c in w.cases if (cap := case_capacity(a, c, w.label)) is not None]
    if not caps or a.slo is None:
        return None
    from matplotlib.ticker import MaxNLocator

    caps.sort(key=lambda c: c.per_core.low or 0.0)  # the highest on top
    fig = figure(1.2 + 0.45 * len(caps))
    ax = fig.add_subplot()
    for y, cap in enumerate(caps):
        _bar(ax, a, y, cap)
    counted = len({c.server_cores for c in caps}) > 1  # [placement] server_cores
    ax.set_yticks(range(len(caps)), [_name(c, counted) for c in caps])
    ax.xaxis.set_major_locator(MaxNLocator(5))  # rate labels of 5 digits must not touch
    ax.xaxis.set_major_formatter(rate_formatter())
    ax.set_xlabel("req/s per server core")
    ax.set_xlim(0, max(_reach(c) for c in caps) * 1.05)
    ax.grid(axis="y", visible=False)
    title = f"{w.label}: capacity at {latency_words(a.slo)}"
    set_title(ax, title)
    legend_below(
        fig,
        [
            patch(facecolor="#9ca3af", label="held (every repetition)"),
            patch(facecolor="white", edgecolor="#6b7280", hatch="///", label="bracket"),
        ],
    )
    data = TextTable(
        ["stack", "req/s per core at the SLO", "server cores"],
        [[_name(c, counted), per_core_words(c), str(c.server_cores)] for c in reversed(caps)],
    )
    caption = (
        "Solid: the highest offered rate every repetition held, per server core; hatched: up "
        "to the lowest rate above it that failed (the capacity lies in between); an arrow: "
        "no rate above failed, a lower bound only."
    )
    return render(f"{sid}-capacity", title, caption, fig, data)


def _name(cap: Capacity, counted: bool) -> str:
    """The stack, with its server cores when the run measured several counts."""
    if not counted:
        return cap.stack
    return f"{cap.stack} ({cap.server_cores} core{'' if cap.server_cores == 1 else 's'})"


def _colour_key(a: Analysis, stack: str) -> str:
    """The case a stack's colour is keyed by: itself, or at several core counts its first
    count's ("node.1c"), so that one stack keeps one colour at every count."""
    counted = (name for name, cc in a.settings.core_counts.items() if cc.stack == stack)
    return next(counted, stack)


def _reach(cap: Capacity) -> float:
    span = cap.per_core
    if span.high is not None:
        return span.high
    return (span.low or 0.0) * OPEN_REACH


def _bar(ax: Axes, a: Analysis, y: int, cap: Capacity) -> None:
    color = style(a, _colour_key(a, cap.stack)).color
    span = cap.per_core
    held = span.low or 0.0
    if held:
        ax.barh(y, held, height=BAR_HEIGHT, color=color)
    if span.high is not None:
        ax.barh(
            y,
            span.high - held,
            left=held,
            height=BAR_HEIGHT,
            facecolor="white",
            edgecolor=color,
            hatch="///",
        )
    else:
        ax.annotate(
            "",
            xy=(_reach(cap), y),
            xytext=(held, y),
            arrowprops={"arrowstyle": "->", "color": color, "linewidth": 1.5},
        )
