"""How a chart is drawn: laid out once, then drawn once per file, with its titles where
matplotlib's automatic placement puts them (chartkit.lay_out, chartkit.set_title)."""

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from stackbench.report import chartkit
from stackbench.report.tables import TextTable


def _chart(top: float, titled, rows: int = 1, latency: bool = False):
    """A figure shaped like the report's: `rows` panels sharing x, each titled by `titled`
    (ax, text), over values reaching `top` (on a log latency axis if `latency`)."""
    fig = chartkit.figure(1.8 * rows + 0.7)
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    for i, ax in enumerate(axes):
        ax.plot([0, 10, 20], [top / 3, top, top / 2])
        if latency:
            chartkit.latency_axis(ax)
        titled(ax, f"panel {i}")
    axes[-1].set_xlabel("time in the level (s)")
    chartkit.legend_below(fig, [chartkit.line(color="#374151", label="p50")])
    return fig


def _automatic(ax, text):
    ax.set_title(text, loc="left")


def _title_boxes(fig):
    """Each panel's title box (x, y, width, height flattened), drawn at the PNG's density."""
    fig.set_dpi(chartkit.png_dpi(fig.get_figwidth()))
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    return [v for ax in fig.axes for v in _title(ax).get_window_extent(renderer).bounds]


def _title(ax):
    """The panel's title (set on the left, as the report's panels are)."""
    return next(
        t for t in ax.get_children() if isinstance(t, Text) and t.get_text().startswith("panel ")
    )


def _set_left(ax, text):
    chartkit.set_title(ax, text, loc="left")


@pytest.mark.parametrize(
    ("top", "rows", "latency"),
    [
        (80.0, 1, False),  # a CPU axis in %: matplotlib's own number formatter
        (5e7, 2, False),  # large enough for the formatter's '1e7' over the axis
        (3e-6, 1, False),  # small enough for its '1e-6'
        (250_000.0, 3, True),  # latency panels sharing x (inner x labels hidden)
    ],
)
def test_a_fixed_title_sits_where_automatic_placement_puts_it(top, rows, latency):
    fixed = _chart(top, _set_left, rows, latency)
    automatic = _chart(top, _automatic, rows, latency)
    for fig in (fixed, automatic):
        chartkit.lay_out(fig)
    assert _title_boxes(fixed) == pytest.approx(_title_boxes(automatic))


def test_an_offset_text_would_lift_an_automatic_title():
    """What lay_out clears: without it a y axis reaching 5e7 writes '1e7' over itself and an
    automatic title moves up over it (so the case above is no empty comparison)."""
    cleared, kept = _chart(5e7, _automatic), _chart(5e7, _automatic)
    chartkit.lay_out(cleared)
    kept.set_dpi(chartkit.png_dpi(kept.get_figwidth()))
    FigureCanvasAgg(kept).draw()
    assert kept.axes[0].yaxis.offsetText.get_text()
    FigureCanvasAgg(cleared).draw()
    assert not cleared.axes[0].yaxis.offsetText.get_text()
    assert _title(kept.axes[0]).get_position()[1] > 1.0
    assert _title(cleared.axes[0]).get_position()[1] == 1.0


def test_lay_out_gives_the_constrained_layout():
    laid_out, drawn = _chart(80.0, _set_left, 2), _chart(80.0, _set_left, 2)
    chartkit.lay_out(laid_out)
    assert laid_out.get_layout_engine() is None
    FigureCanvasAgg(laid_out).draw()
    FigureCanvasAgg(drawn).draw()  # laid out by its engine as it draws
    assert drawn.get_layout_engine() is not None
    for a, b in zip(laid_out.axes, drawn.axes, strict=True):
        assert tuple(a.get_position().bounds) == pytest.approx(tuple(b.get_position().bounds))


def test_a_chart_is_drawn_once_per_file():
    fig = _chart(80.0, _set_left, 2)
    draws = []
    fig.canvas.mpl_connect("draw_event", lambda event: draws.append(event))
    chart = chartkit.render("t", "t", "t", fig, TextTable(["a"], [["1"]]))
    assert chart.svg.startswith("<?xml") and chart.png[:4] == b"\x89PNG"
    assert len(draws) == 2  # the SVG's and the PNG's; no unseen layout draw before either
