"""What every chart of the report shares: the figure size and style, the SVG and PNG output,
axes with units, legends outside the data, and each stack's colour, marker and line style.

Sizes: a chart is 5 in wide with text of 8.5 pt and more (axis text is drawn at matplotlib's
10 pt today: STYLE is in force while a figure is created, not when its axes are added, and
the browser test measures what is drawn), so that inlined in report.html at the width of a
phone (about 320 CSS px of chart at 360 px) no text is drawn under 7 px; on a wide
screen the page lays the charts out in columns instead of scaling them up. PNGs are rendered at
1600 px or more across (over 3x the CSS pixel density): sharp on slides and in papers.
"""

from __future__ import annotations  # matplotlib types are for the type checker only

import contextlib
import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stackbench.analysis import fmt
from stackbench.analysis.analysis import Analysis
from stackbench.report import colors
from stackbench.report.tables import TextTable

if TYPE_CHECKING:  # matplotlib is heavy: imported when the first chart is drawn
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

WIDTH_IN = 5.0
MIN_PNG_PX = 1600
STYLE: dict[Any, Any] = {  # rcParams of every chart (see the module's note on sizes)
    "font.size": 9,
    "axes.titlesize": 9.5,
    "axes.labelsize": 9,
    "legend.fontsize": 8.5,
    "xtick.labelsize": 8.5,
    "ytick.labelsize": 8.5,
    "figure.titlesize": 11,
    "axes.grid": True,
    "grid.color": "#e5e7eb",
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#9ca3af",
    "font.family": ["DejaVu Sans", "sans-serif"],
    "svg.fonttype": "none",  # text stays text: smaller files, selectable in the page
    "text.parse_math": False,  # a '$' in a stack or workload name is text, not TeX
    "hatch.linewidth": 0.8,
}
MIN_FONT_PT = 8.0
HEADROOM = 1.08  # linear axes end 8% above the highest figure: no series along the edge
NO_DATA = "#6b7280"


@dataclass(frozen=True)
class Chart:
    name: str  # file stem, unique in a report
    title: str
    caption: str
    svg: str  # complete SVG document
    png: bytes
    data: TextTable  # the chart's figures as a table: its text alternative

    @property
    def inline_svg(self) -> str:
        """The <svg> element alone, to embed in the HTML page, described by its caption."""
        svg = self.svg[self.svg.index("<svg") :]
        return svg.replace("<svg ", f'<svg role="img" aria-labelledby="cap-{self.name}" ', 1)


@dataclass(frozen=True)
class Omitted:
    name: str
    title: str
    sentence: str  # why there is no chart, in one sentence


ChartItem = Chart | Omitted


def style(a: Analysis, stack: str) -> colors.StackStyle:
    return colors.stack_style(a.stacks, stack)


def figure(height_in: float, width_in: float = WIDTH_IN) -> Figure:
    import matplotlib

    matplotlib.use("Agg")  # never a display, whatever the environment says
    from matplotlib.figure import Figure

    with matplotlib.rc_context(STYLE):
        return Figure(figsize=(width_in, height_in), layout="constrained")


MIN_PNG_DPI = 192  # twice the CSS pixel density (96 px to the inch)


def png_dpi(width_in: float) -> int:
    """At least 1600 px across and at least 2x density."""
    return max(MIN_PNG_DPI, math.ceil(MIN_PNG_PX / width_in))


def render(name: str, title: str, caption: str, fig: Figure, data: TextTable) -> Chart:
    """SVG (deterministic ids salted with the chart's name, so charts inlined in one page never
    share an id) and PNG of a figure laid out once (see `lay_out`)."""
    import matplotlib

    with matplotlib.rc_context({**STYLE, "svg.hashsalt": name}):
        lay_out(fig)
        svg = io.BytesIO()
        fig.savefig(svg, format="svg", metadata={"Date": None})
        png = io.BytesIO()
        fig.savefig(png, format="png", dpi=png_dpi(fig.get_figwidth()))
    return Chart(name, title, caption, svg.getvalue().decode("utf-8"), png.getvalue(), data)


def lay_out(fig: Figure) -> None:
    """Constrained layout (it keeps every title and legend inside the figure), run once; then
    the figure has no layout engine, so each save draws it once. With an engine, every savefig
    first draws the whole figure unseen to lay it out, then draws it again: a report drew each
    chart four times for its two files (most of a chart's time is measuring ticks and text,
    which every draw does again)."""
    import matplotlib

    _clear_above(fig)
    _pin_empty_labels(fig)
    engine = fig.get_layout_engine()
    if fig.axes and engine is not None:
        with contextlib.suppress(ValueError):  # as Figure.draw does: drawn as it stands
            engine.execute(fig)
    # a user's matplotlibrc asking for a layout would otherwise put one back
    no_layout: dict[Any, Any] = {"figure.autolayout": False, "figure.constrained_layout.use": False}
    with matplotlib.rc_context(no_layout):
        fig.set_layout_engine(None)


TITLE_Y = 1.0  # an axes' top edge (matplotlib's axes.titlepad lifts the title off it)


def set_title(ax: Axes, text: str, **kw: Any) -> None:
    """The axes' title at its top edge, for axes with nothing drawn above them (every chart's:
    x ticks and labels at the bottom, and `lay_out` leaves no y axis an offset text), where
    matplotlib's automatic placement puts it too. Placed automatically, a title has the axes'
    y axis measured again (every tick label) at each layout pass and each draw."""
    ax.set_title(text, y=TITLE_Y, **kw)


def _clear_above(fig: Figure) -> None:
    """No y axis draws an offset text (the '1e6' or '+1.2e3' at its top, over which automatic
    placement would lift a title): a linear axis that keeps matplotlib's number formatter
    writes its numbers out in full instead (50000000, 0.000003), and the same labels as
    before wherever it needed no offset."""
    from matplotlib.ticker import ScalarFormatter

    for ax in fig.axes:
        numbers = ax.yaxis.get_major_formatter()
        if isinstance(numbers, ScalarFormatter):
            numbers.set_useOffset(False)
            numbers.set_scientific(False)


def _pin_empty_labels(fig: Figure) -> None:
    """An axis without a label (each inner panel of a column sharing x, the y axis of a chart
    of named bars) keeps its empty label on its own edge. Placed automatically, it would be
    moved clear of the tick labels at each layout pass and draw, measuring every one of them
    again; empty, it draws nothing and takes no room wherever it is."""
    for ax in fig.axes:
        if not ax.xaxis.label.get_text():
            ax.xaxis.set_label_coords(0.5, 0.0)
        if not ax.yaxis.label.get_text():
            ax.yaxis.set_label_coords(0.0, 0.5)


def line(**kw: Any) -> Line2D:
    """A legend entry (a line or marker that is not drawn on the axes)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], **kw)


def patch(**kw: Any) -> Artist:
    """A legend entry for bars (colour and hatch)."""
    from matplotlib.patches import Patch

    return Patch(**kw)


def stack_handles(a: Analysis, stacks: Sequence[str]) -> list[Artist]:
    return [
        line(
            color=(s := style(a, stack)).color,
            marker=s.marker,
            linestyle=s.linestyle,
            markersize=5,
            label=stack,
        )
        for stack in stacks
    ]


def formatter(text: Callable[[float], str]) -> FuncFormatter:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _pos: text(v))


def rate_formatter() -> FuncFormatter:
    return formatter(fmt.rate)


LATENCY_UNITS = ((1e6, "s"), (1e3, "ms"), (1.0, "µs"))


def latency_unit(top_us: float) -> tuple[float, str]:
    """The unit an axis reaching `top_us` is labelled in: (microseconds per unit, name)."""
    return next(((f, u) for f, u in LATENCY_UNITS if top_us >= 2 * f), LATENCY_UNITS[-1])


def latency_axis(ax: Axes, what: str = "latency") -> None:
    """Log scale labelled at 1-2-5 steps (a range narrower than a decade still has labels), in
    one unit named on the axis. Call after plotting: the unit follows the data's range."""
    from matplotlib.ticker import LogLocator, NullFormatter

    ax.set_yscale("log")
    low, high = ax.get_ylim()
    ax.set_ylim(low / 1.15, high * 1.15)  # log headroom: no series along the edge
    factor, unit = latency_unit(high)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(formatter(lambda v: f"{v / factor:,.4g}" if v > 0 else "0"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel(f"{what} ({unit})")


def headroom(ax: Axes, values: Sequence[float | None]) -> None:
    """A linear axis from 0 to a little above the highest value."""
    top = max((v for v in values if v is not None and math.isfinite(v)), default=0.0)
    ax.set_ylim(0, top * HEADROOM if top > 0 else 1.0)


LEGEND_ROW_CHARS = 52  # about what fits across a 5 in chart at the legend's font size


def legend_below(fig: Figure, handles: Sequence[Artist]) -> None:
    """The legend under the axes, outside the data, in as many rows as its labels need."""
    widths = [len(str(h.get_label())) + 6 for h in handles]
    cols = len(handles)
    while cols > 1 and _widest_row(widths, cols) > LEGEND_ROW_CHARS:
        cols -= 1
    fig.legend(handles=list(handles), loc="outside lower center", ncols=cols, frameon=False)


def _widest_row(widths: Sequence[int], cols: int) -> int:
    column = [max(widths[i::cols]) for i in range(cols)]
    return sum(column)


def no_data(ax: Axes, why: str) -> None:
    """An empty panel that says why it is empty."""
    ax.set_yticks([])
    ax.text(
        0.5, 0.5, why, transform=ax.transAxes, ha="center", va="center", color=NO_DATA, wrap=True
    )
