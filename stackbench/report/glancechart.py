"""charts/glance.png: the at-a-glance bars of every workload as one picture for a slide or a
paper, standing on its own: the suite, the run, the machine and the date on top, each
workload's throughput and p99 bars (in each stack's colour and hatch, 95% CI whiskers), and the
verdicts in words under them. Landscape (10 in), unlike the page's charts: it is made to be
shown whole on a slide; the page shows the same as its glance cards.
"""

from __future__ import annotations  # matplotlib types are for the type checker only

import textwrap
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from stackbench.analysis import fmt
from stackbench.analysis.analysis import Analysis
from stackbench.report.chartkit import ChartItem, Omitted, figure, formatter, render, style
from stackbench.report.context import machine
from stackbench.report.glance import GlanceBar, MetricGlance, WorkloadGlance, level_name
from stackbench.report.tables import TextTable

if TYPE_CHECKING:
    from matplotlib.axes import Axes

WIDTH_IN = 10.0
WRAP_CHARS = 120  # verdict lines at 9 pt across 10 in
WHOLE_LEVEL_MARK = "†"


def vs_best(m: MetricGlance, b: GlanceBar) -> str:
    """'51%' of the best throughput; '1.97×' the best p99 ('best' for the best)."""
    if m.higher_is_better:
        return f"{b.share_of_best:.0%}"
    return "best" if b.times_best <= 1.0 else f"{b.times_best:.2f}×"


def bar_label(m: MetricGlance, b: GlanceBar, value_fmt: Callable[[float], str]) -> str:
    """'41,590 (100%)' for throughput; '13.2 ms (1.97×)' for latency (best: '(best)')."""
    mark = f" {WHOLE_LEVEL_MARK}" if b.whole_level else ""
    return f"  {value_fmt(b.estimate.value)} ({vs_best(m, b)}){mark}"


def _axis(
    ax: Axes, a: Analysis, m: MetricGlance, value_fmt: Callable[[float], str], title: str
) -> None:
    from matplotlib.ticker import MaxNLocator

    y = list(range(len(m.bars)))[::-1]
    for yi, b in zip(y, m.bars, strict=True):
        est, look = b.estimate, style(a, b.stack)
        ax.barh(yi, est.value, color=look.color, hatch=look.hatch, edgecolor="white", height=0.6)
        if est.low is not None and est.high is not None:
            ax.errorbar(
                [est.value],
                [yi],
                xerr=[[est.value - est.low], [est.high - est.value]],
                fmt="none",
                ecolor="#111827",
                capsize=3,
                elinewidth=1,
            )
        label = ax.text(est.high or est.value, yi, bar_label(m, b, value_fmt), va="center")
        label.set_in_layout(False)  # inside the axes: the x limit leaves room for it
    ax.set_yticks(y, [b.stack for b in m.bars])
    ax.set_xlim(0, max(b.estimate.high or b.estimate.value for b in m.bars) * 1.8)
    ax.xaxis.set_major_locator(MaxNLocator(4))
    ax.xaxis.set_major_formatter(formatter(lambda v: value_fmt(v) if v else "0"))
    ax.grid(axis="y", visible=False)
    if m.higher_is_better:
        ax.set_xlabel("requests/s")
    ax.set_title(title, loc="left")


def _verdicts(a: Analysis, g: WorkloadGlance) -> str:
    said = [
        f"{g.label}, req/s: {g.throughput.verdict}.",
        f"p99 ({g.latency.where}): {g.latency.verdict}.",
    ]
    if any(b.whole_level for b in (*g.throughput.bars, *g.latency.bars)):
        said.append(f"{WHOLE_LEVEL_MARK} whole-level figure: no steady window.")
    return "\n".join(textwrap.fill(s, WRAP_CHARS) for s in said)


def header(a: Analysis) -> str:
    """Suite, run, date and machine: what a slide needs to say where the figures come from."""
    run = a.data.run
    facts = machine(run.environment)
    when = time.strftime("%Y-%m-%d", time.localtime(run.started_at))
    return (
        f"stackbench — {run.suite_name} (run {run.id}, {when})\n"
        f"{facts.cpu}, cores: {facts.cores}; {a.settings.mode} loop, "
        f"{a.repeat} repetition(s) per level"
    )


def _data(a: Analysis, shown: Sequence[WorkloadGlance]) -> TextTable:
    rows = []
    for g in shown:
        for m, value_fmt in ((g.throughput, fmt.rate), (g.latency, fmt.latency)):
            for b in m.bars:
                rows.append(
                    [
                        g.label,
                        "req/s" if m.higher_is_better else "p99",
                        b.stack,
                        fmt.estimate(b.estimate, value_fmt),
                        level_name(a, b.level_value),
                        vs_best(m, b),
                        b.whole_level or "steady window",
                    ]
                )
    return TextTable(
        ["workload", "figure", "stack", "figure [95% CI]", "level", "vs best", "from"], rows
    )


def glance_chart(a: Analysis, glances: Sequence[WorkloadGlance]) -> ChartItem:
    shown = [g for g in glances if g.throughput.bars]
    if not shown:
        return Omitted(
            "glance",
            "at a glance",
            "No workload has a valid level: nothing to compare at a glance.",
        )
    texts = [_verdicts(a, g) for g in shown]
    heights = []
    for g, text in zip(shown, texts, strict=True):
        heights += [len(g.throughput.bars) * 0.34 + 0.75, 0.18 * (text.count("\n") + 1) + 0.1]
    fig = figure(sum(heights) + 0.7, WIDTH_IN)
    fig.suptitle(header(a), x=0.01, ha="left")
    grid = fig.add_gridspec(len(heights), 2, height_ratios=heights)
    for i, (g, text) in enumerate(zip(shown, texts, strict=True)):
        _axis(
            fig.add_subplot(grid[2 * i, 0]),
            a,
            g.throughput,
            fmt.rate,
            f"{g.label}: req/s\nat each stack's best level",
        )
        ax_l = fig.add_subplot(grid[2 * i, 1])
        if g.latency.bars:
            _axis(
                ax_l,
                a,
                g.latency,
                fmt.latency,
                f"{g.label}: p99 latency (shorter is better)\n{g.latency.where}",
            )
        else:
            ax_l.set_axis_off()
            ax_l.text(0, 0.5, f"{g.label}: p99: {g.latency.verdict}", wrap=True)
        words = fig.add_subplot(grid[2 * i + 1, :])
        words.set_axis_off()
        words.text(0, 1, text, va="top", ha="left", transform=words.transAxes)
    return render(
        "glance",
        "at a glance",
        "Each stack's best throughput and its p99 at a "
        "common level, with 95% CI whiskers; throughput as % of the best, p99 as "
        "× the best (1.00× = the best; longer bars are slower); a winner is named "
        "only when the verdicts show it faster than every other stack.",
        fig,
        _data(a, shown),
    )
