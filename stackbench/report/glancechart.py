"""charts/glance.png: the at-a-glance bars as slides, each standing on its own.

A slide is 16:9, 1920 × 1080 px (10 × 5.625 in at the PNGs' 192 dpi): on top the suite, the
run, the date and the machine; per workload a column with its req/s chart above its p99 chart;
at the bottom one legend. Up to 8 stacks × 4 workloads fit one slide; more workloads continue
on the next (glance-1.png, glance-2.png, ...), and more than 8 stacks give each workload's two
charts a whole row, two workloads to a slide.

Each chart says only its tier line (its title) and its figures: a stack's name above its bar,
its figure at the right, the unit under the axis; at most 25 words up to 8 stacks (`MAX_WORDS`,
counted as `words`), the tier line giving up its ratios and spacing first (analysis.tiers). No text
leaves the picture or overlaps another (tests/report/test_glancechart.py measures the drawn
extents). What the charts do not say (the verdicts in words, the pairs) is in report.html and
summary.md.
"""

from __future__ import annotations  # matplotlib types are for the type checker only

import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from stackbench.analysis import fmt
from stackbench.analysis.analysis import Analysis
from stackbench.analysis.tiers import ELLIPSIS, LINE_WIDTH
from stackbench.report.chartkit import (
    ChartItem,
    Omitted,
    figure,
    latency_unit,
    render,
    set_title,
    style,
)
from stackbench.report.context import machine
from stackbench.report.glance import (
    WHISKER_REACH,
    GlanceBar,
    MetricGlance,
    WorkloadGlance,
    level_name,
    line_within,
)
from stackbench.report.tables import TextTable

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure

WIDTH_IN = 10.0  # x 192 dpi = 1920 px
HEIGHT_IN = WIDTH_IN * 9 / 16
MAX_STACKS = 8  # per chart, with two charts to a column
MAX_WORKLOADS = 4  # columns of a slide
MAX_WORDS = 25
NAME_PT = 7.5
TITLE_PT = 8.0
HEADING_PT = 9.0
HEADER_PT = 10.0
LEGEND_PT = 7.0
WHOLE_LEVEL_MARK = "†"
LEGEND = (
    "Tiers, best first: » separates tiers (each stack before it shown better than each "
    "after it, by the ratios in parentheses); in a tier: ≈ equivalent, ≳ within the "
    "threshold, ? not enough evidence; +n: n more stacks. req/s: each stack's best level; "
    "p99: shorter is better. Whiskers: 95% interval; † whole-level figure (no steady "
    "window). The verdicts in words: report.html, summary.md."
)


def vs_best(m: MetricGlance, b: GlanceBar) -> str:
    """'51%' of the best throughput; '1.97×' the best p99 ('best' for the best)."""
    if m.higher_is_better:
        return f"{b.share_of_best:.0%}"
    return "best" if b.times_best <= 1.0 else f"{b.times_best:.2f}×"


def words(text: str) -> int:
    """Words of a chart's text: tokens with a letter or digit (the marks » ? ≈ are not)."""
    return sum(1 for token in text.split() if any(ch.isalnum() for ch in token))


def header(a: Analysis) -> str:
    """Suite, run, date and machine: what a slide needs to say where the figures come from."""
    run = a.data.run
    facts = machine(run.environment)
    when = time.strftime("%Y-%m-%d", time.localtime(run.started_at))
    return (
        f"stackbench — {run.suite_name} (run {run.id}, {when}) · {facts.cpu}, "
        f"cores: {facts.cores} · {a.settings.mode} loop, {a.repeat} repetition(s) a level"
    )


def slides(glances: Sequence[WorkloadGlance]) -> list[list[WorkloadGlance]]:
    """The workloads with a figure, as many to a slide as fit: 4 up to 8 stacks, else 2."""
    shown = [g for g in glances if g.throughput.bars]
    most = max((len(g.throughput.bars) for g in shown), default=0)
    per = MAX_WORKLOADS if most <= MAX_STACKS else MAX_WORKLOADS // 2
    return [shown[i : i + per] for i in range(0, len(shown), per)]


@dataclass(frozen=True)
class _Values:
    """How a chart writes its figures: the unit under the axis and each bar's number."""

    unit: str
    number: Callable[[float], str]


def _values(m: MetricGlance) -> _Values:
    if m.higher_is_better:
        return _Values("req/s", fmt.rate)
    factor, unit = latency_unit(max(b.estimate.value for b in m.bars))
    return _Values(f"{m.metric}, {unit}", lambda us: f"{us / factor:.3g}")


def _title(m: MetricGlance, budget: int, chars: int) -> str:
    """The tier line within the chart's words left after its figures, wrapped to its width:
    the longest that fits the budget, and never one cut short ('…'). Beyond 8 stacks the
    names and figures alone leave too few words: the line then names each tier's first stack
    ('node +2'), over the budget rather than cut."""
    whole = [
        line
        for line in (line_within(m, width) for width in range(LINE_WIDTH, 9, -5))
        if ELLIPSIS not in line
    ] or [m.line]
    line = next((line for line in whole if words(line) <= budget), whole[-1])
    return textwrap.fill(line, chars, break_on_hyphens=False, break_long_words=False)


def _chart(sub: SubFigure, a: Analysis, m: MetricGlance, chars: int) -> Axes:
    """One figure of one workload: names above bars (longest name, full width), figures at
    the right, the tier line as the title."""
    ax = sub.add_subplot()
    values = _values(m)
    n = len(m.bars)
    # glance.WHISKER_REACH: one wide interval must not shrink every bar
    most = max(b.estimate.value for b in m.bars) or 1.0
    top = max(b.estimate.high or b.estimate.value for b in m.bars)
    right = min(top * 1.03, most * WHISKER_REACH)
    labels = []
    for i, b in enumerate(m.bars):
        y = n - 1 - i  # best on top
        est, look = b.estimate, style(a, b.stack)
        ax.barh(y, est.value, color=look.color, hatch=look.hatch, edgecolor="white", height=0.3)
        if est.low is not None and est.high is not None:
            ax.errorbar(
                [est.value],
                [y],
                xerr=[[est.value - est.low], [est.high - est.value]],
                fmt="none",
                ecolor="#111827",
                capsize=2,
                elinewidth=0.8,
            )
        mark = f" {WHOLE_LEVEL_MARK}" if b.whole_level else ""
        labels.append(values.number(est.value) + mark)
        ax.text(0, y + 0.18, b.stack, va="bottom", ha="left", fontsize=NAME_PT)
        ax.text(right, y + 0.18, labels[-1], va="bottom", ha="right", fontsize=NAME_PT)
    ax.set_xlim(0, right)
    ax.set_ylim(-0.2, n - 0.15)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    for side in ("left", "top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel(values.unit, fontsize=NAME_PT, loc="right")
    used = sum(words(t) for t in [*(b.stack for b in m.bars), *labels, values.unit])
    set_title(
        ax,
        _title(m, MAX_WORDS - used, chars),
        loc="left",
        fontsize=TITLE_PT,
        fontweight="bold",
    )
    return ax


def _heading(g: WorkloadGlance, m: MetricGlance, stacked: bool) -> str:
    """Stacked in a column, the req/s chart names the workload and the p99 chart its level;
    side by side, each names both."""
    what = "req/s" if m.higher_is_better else f"{m.metric} {m.where}" if m.bars else m.metric
    if stacked:
        return g.label if m.higher_is_better else what
    return f"{g.label} — {what}"


def _cell(
    sub: SubFigure, a: Analysis, g: WorkloadGlance, m: MetricGlance, chars: int, stacked: bool
) -> None:
    heading = textwrap.fill(
        _heading(g, m, stacked), int(chars * TITLE_PT / HEADING_PT), break_on_hyphens=False
    )
    sub.suptitle(heading, x=0.02, ha="left", fontsize=HEADING_PT, fontweight="bold")
    if m.bars:
        _chart(sub, a, m, chars)
        return
    ax = sub.add_subplot()
    ax.set_axis_off()
    ax.text(0, 0.5, textwrap.fill(m.line, chars), fontsize=NAME_PT, va="center")


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
        for m in (g.throughput, g.latency):
            rows.append([g.label, "tiers" if m.higher_is_better else "p99 tiers", m.line])
            rows[-1] += [""] * 4
    return TextTable(
        ["workload", "figure", "stack", "figure [95% CI]", "level", "vs best", "from"], rows
    )


def slide_figure(a: Analysis, shown: Sequence[WorkloadGlance]) -> Figure:
    """One slide's figure (not yet drawn) of some workloads, as `slides` groups them."""
    fig = figure(HEIGHT_IN, WIDTH_IN)
    fig.suptitle(
        textwrap.fill(header(a), int(WIDTH_IN * 72 / (HEADER_PT * 0.55))),
        x=0.01,
        ha="left",
        fontsize=HEADER_PT,
    )
    stacked = max(len(g.throughput.bars) for g in shown) <= MAX_STACKS
    cells = [(g, m) for g in shown for m in (g.throughput, g.latency)]
    if stacked:  # a column per workload: req/s above p99
        grid = fig.subfigures(2, len(shown), squeeze=False)
        subs = [grid[r][c] for c in range(len(shown)) for r in range(2)]
        cell_in = WIDTH_IN / len(shown)
    else:  # a row of (req/s, p99) pairs
        grid = fig.subfigures(1, len(cells), squeeze=False)
        subs = list(grid[0])
        cell_in = WIDTH_IN / len(cells)
    chars = max(16, int(cell_in * 72 / (TITLE_PT * 0.62)) - 2)
    for sub, (g, m) in zip(subs, cells, strict=True):
        _cell(sub, a, g, m, chars, stacked)
    fig.supxlabel(
        textwrap.fill(LEGEND, int(WIDTH_IN * 72 / (LEGEND_PT * 0.55))),
        x=0.01,
        ha="left",
        fontsize=LEGEND_PT,
        color="#374151",
    )
    return fig


def _slide(a: Analysis, shown: Sequence[WorkloadGlance], name: str) -> ChartItem:
    return render(
        name,
        "at a glance" if name == "glance" else f"at a glance ({name.split('-')[-1]})",
        "Each stack's best throughput and its p99 at a common level, with 95% CI "
        "whiskers, under each figure's tier line: stacks the verdicts do not separate share "
        "a tier. A slide of 1920 × 1080 px.",
        slide_figure(a, shown),
        _data(a, shown),
    )


def glance_charts(a: Analysis, glances: Sequence[WorkloadGlance]) -> list[ChartItem]:
    """glance.png, or glance-1.png, glance-2.png ... when one slide cannot hold them all."""
    groups = slides(glances)
    if not groups:
        return [
            Omitted(
                "glance",
                "at a glance",
                "No workload has a valid level: nothing to compare at a glance.",
            )
        ]
    if len(groups) == 1:
        return [_slide(a, groups[0], "glance")]
    return [_slide(a, group, f"glance-{i}") for i, group in enumerate(groups, start=1)]
