"""Inline SVG charts, generated in Python so the report needs no library and no network.

Styling is done with presentation attributes (not CSS classes) so that every chart is also a
valid standalone .svg file. Elements of one series carry data-series, which the report's small
script uses to toggle series; every point has a <title> so hovering shows its figures.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape

Formatter = Callable[[float], str]
FONT = 'font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif"'
GRID = "#e5e7eb"
AXIS = "#6b7280"
TEXT = "#374151"


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    tip: str = ""
    hollow: bool = False  # drawn as a ring: a level that is not valid (e.g. too many errors)


@dataclass(frozen=True)
class Series:
    name: str
    color: str
    points: Sequence[Point] = ()        # every repetition: small faint dots
    medians: Sequence[Point] = ()       # one per level: solid markers
    trend: Sequence[tuple[float, float]] = ()
    intervals: Sequence[tuple[float, float, float]] = ()  # x, low, high
    connect: bool = False               # draw a polyline through medians (time series)
    marker: float = 4.0                 # radius of the median markers


@dataclass(frozen=True)
class VLine:
    x: float
    color: str
    label: str


@dataclass(frozen=True)
class XYChart:
    title: str
    x_label: str
    y_label: str
    series: Sequence[Series]
    x_format: Formatter
    y_format: Formatter
    x_log: bool = False
    y_log: bool = False
    hlines: Sequence[tuple[float, str]] = ()   # y, label (e.g. the SLO objective)
    vlines: Sequence[VLine] = ()               # e.g. breakpoints
    width: int = 1000
    height: int = 360
    legend: bool = True
    y_zero: bool = True                        # linear y axis starts at 0
    x_ticks: Sequence[float] = ()              # fixed x ticks (e.g. percentiles), else automatic


@dataclass(frozen=True)
class _Axis:
    lo: float
    hi: float
    log: bool
    start: float  # pixel of lo
    end: float    # pixel of hi

    def __call__(self, v: float) -> float:
        if self.log:
            v, lo, hi = math.log10(max(v, 1e-12)), math.log10(self.lo), math.log10(self.hi)
        else:
            lo, hi = self.lo, self.hi
        frac = 0.5 if hi == lo else (v - lo) / (hi - lo)
        return self.start + frac * (self.end - self.start)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step) * step
    ticks, t = [], first
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    if ticks[-1] < hi:
        ticks.append(ticks[-1] + step)
    return ticks


def log_ticks(lo: float, hi: float) -> list[float]:
    """Decades; with 1-2-5 steps in between when the range spans few decades."""
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    decades = [10.0 ** e for e in range(first, max(last, first + 1) + 1)]
    if len(decades) > 4:
        return decades
    fine = sorted({round(d * m, 12) for d in decades for m in (1, 2, 5)})
    return [t for t in fine if decades[0] <= t <= decades[-1]]


def _values(chart: XYChart) -> tuple[list[float], list[float]]:
    xs, ys = [], []
    for s in chart.series:
        for p in (*s.points, *s.medians):
            xs.append(p.x)
            ys.append(p.y)
        for x, lo, hi in s.intervals:
            xs.append(x)
            ys += [lo, hi]
        for x, y in s.trend:
            xs.append(x)
            ys.append(y)
    ys += [y for y, _ in chart.hlines]
    xs += [v.x for v in chart.vlines]
    return xs, ys


def _domain(values: list[float], log: bool, zero: bool) -> tuple[list[float], float, float]:
    if log:
        positive = [v for v in values if v > 0] or [1.0]
        ticks = log_ticks(min(positive), max(positive))
    else:
        lo = min([*values, 0.0] if zero else values or [0.0])
        ticks = nice_ticks(lo, max(values or [1.0]))
    return ticks, ticks[0], ticks[-1]


def render_xy(chart: XYChart) -> str:
    left, right, top, bottom = 72, 16, 36, 56
    legend_h = 22 * math.ceil(len(chart.series) / 4) if chart.legend and chart.series else 0
    w, h = chart.width, chart.height + legend_h
    xs, ys = _values(chart)
    if not xs:
        return _empty(chart)
    x_ticks, x_lo, x_hi = _tight_log_x(xs) if chart.x_log else _tight_x(xs)
    if chart.x_ticks:
        x_ticks = [t for t in chart.x_ticks if x_lo <= t <= x_hi]
    y_ticks, y_lo, y_hi = _domain(ys, chart.y_log, chart.y_zero)
    plot_bottom = chart.height - bottom
    X = _Axis(x_lo, x_hi, chart.x_log, left, w - right)
    Y = _Axis(y_lo, y_hi, chart.y_log, plot_bottom, top)
    out = [_open(w, h), _text(left, 22, chart.title, size=14, weight="600")]
    out += _grid(chart, X, Y, x_ticks, y_ticks, plot_bottom)
    out += [_hline(X, Y, y, label) for y, label in chart.hlines]
    out += [_vline(X, Y, v) for v in chart.vlines]
    for s in chart.series:
        out.append(_series(s, X, Y, chart.y_log))
    if chart.legend:
        out.append(_legend(chart.series, left, chart.height + 4, w - left - right))
    out.append("</svg>")
    return "\n".join(out)


def _tight_x(xs: list[float]) -> tuple[list[float], float, float]:
    """Linear x axis fitted to the data (levels rarely start at 0) with a small margin."""
    lo, hi = min(xs), max(xs)
    pad = (hi - lo) * 0.04 or max(abs(lo) * 0.1, 1.0)
    ticks = [t for t in nice_ticks(lo, hi) if lo - pad <= t <= hi + pad]
    return ticks or [lo], lo - pad, hi + pad


def _tight_log_x(xs: list[float]) -> tuple[list[float], float, float]:
    """Log x axis fitted to the data with a margin so end points are not on the frame."""
    positive = [x for x in xs if x > 0] or [1.0]
    lo, hi = min(positive), max(positive)
    pad = max((hi / lo) ** 0.04, 1.15)
    lo, hi = lo / pad, hi * pad
    return [t for t in log_ticks(lo, hi) if lo <= t <= hi], lo, hi


def _open(w: int, h: int) -> str:
    return (f'<svg viewBox="0 0 {w} {h}" width="{w}" '
            f'height="{h}" role="img" {FONT} font-size="11">'
            f'<rect width="{w}" height="{h}" fill="#ffffff"/>')


def standalone(svg: str) -> str:
    """An inline chart as a .svg file (inline SVG in HTML needs no namespace; a file does)."""
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            + svg.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


def _empty(chart: XYChart) -> str:
    return (_open(chart.width, 80) + _text(16, 22, chart.title, size=14, weight="600")
            + _text(16, 50, "no data") + "</svg>")


def _text(x: float, y: float, s: str, size: int = 11, anchor: str = "start",
          weight: str = "400", fill: str = TEXT, extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{fill}" {extra}>{escape(s)}</text>')


def _grid(chart: XYChart, X: _Axis, Y: _Axis, x_ticks: list[float], y_ticks: list[float],
          plot_bottom: float) -> list[str]:
    out = []
    for t in y_ticks:
        y = Y(t)
        out.append(f'<line x1="{X.start}" x2="{X.end}" y1="{y:.1f}" y2="{y:.1f}" '
                   f'stroke="{GRID}"/>')
        out.append(_text(X.start - 6, y + 4, chart.y_format(t), anchor="end", fill=AXIS))
    for t in x_ticks:
        x = X(t)
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{Y.end}" y2="{plot_bottom}" '
                   f'stroke="{GRID}"/>')
        out.append(_text(x, plot_bottom + 16, chart.x_format(t), anchor="middle", fill=AXIS))
    out.append(f'<line x1="{X.start}" x2="{X.end}" y1="{plot_bottom}" y2="{plot_bottom}" '
               f'stroke="{AXIS}"/>')
    out.append(_text((X.start + X.end) / 2, plot_bottom + 36, chart.x_label + (
        " (log scale)" if chart.x_log else ""), anchor="middle"))
    mid = (Y.start + Y.end) / 2
    out.append(_text(16, mid, chart.y_label + (" (log scale)" if chart.y_log else ""),
                     anchor="middle", extra=f'transform="rotate(-90 16 {mid:.1f})"'))
    return out


def _hline(X: _Axis, Y: _Axis, y: float, label: str) -> str:
    py = Y(y)
    return (f'<g><line x1="{X.start}" x2="{X.end}" y1="{py:.1f}" y2="{py:.1f}" stroke="#dc2626" '
            f'stroke-width="1.5" stroke-dasharray="6 4"><title>{escape(label)}</title></line>'
            + _text(X.end - 4, py - 5, label, anchor="end", fill="#dc2626") + "</g>")


def _vline(X: _Axis, Y: _Axis, v: VLine) -> str:
    px = X(v.x)
    return (f'<g data-series="{escape(v.label.split(":")[0])}"><line x1="{px:.1f}" x2="{px:.1f}" '
            f'y1="{Y.end}" y2="{Y.start}" stroke="{v.color}" stroke-width="1.5" '
            f'stroke-dasharray="2 3"><title>{escape(v.label)}</title></line>'
            f'<path d="M{px - 5:.1f},{Y.end - 2} L{px + 5:.1f},{Y.end - 2} L{px:.1f},'
            f'{Y.end + 7}Z" fill="{v.color}"><title>{escape(v.label)}</title></path></g>')


def _series(s: Series, X: _Axis, Y: _Axis, y_log: bool) -> str:
    def ok(y: float) -> bool:
        return y > 0 or not y_log

    name = escape(s.name)
    out = [f'<g data-series="{name}">']
    for x, lo, hi in s.intervals:
        if ok(lo) and ok(hi):
            px = X(x)
            out.append(f'<path d="M{px - 4:.1f},{Y(lo):.1f}H{px + 4:.1f}M{px:.1f},{Y(lo):.1f}'
                       f'V{Y(hi):.1f}M{px - 4:.1f},{Y(hi):.1f}H{px + 4:.1f}" '
                       f'stroke="{s.color}" stroke-width="1.2" fill="none"/>')
    trend = [(x, y) for x, y in s.trend if ok(y)]
    if len(trend) >= 2:
        d = " ".join(f"{X(x):.1f},{Y(y):.1f}" for x, y in trend)
        out.append(f'<polyline points="{d}" fill="none" stroke="{s.color}" stroke-width="2" '
                   f'stroke-opacity="0.8"/>')
    meds = [p for p in s.medians if ok(p.y)]
    if s.connect and len(meds) >= 2:
        d = " ".join(f"{X(p.x):.1f},{Y(p.y):.1f}" for p in meds)
        out.append(f'<polyline points="{d}" fill="none" stroke="{s.color}" stroke-width="1.5"/>')
    for p in s.points:
        if ok(p.y):
            out.append(f'<circle cx="{X(p.x):.1f}" cy="{Y(p.y):.1f}" r="2.5" fill="{s.color}" '
                       f'fill-opacity="0.45"><title>{escape(p.tip)}</title></circle>')
    radius = s.marker
    for p in meds:
        fill, stroke = ("#fff", s.color) if p.hollow else (s.color, "#fff")
        out.append(f'<circle cx="{X(p.x):.1f}" cy="{Y(p.y):.1f}" r="{radius:g}" fill="{fill}" '
                   f'stroke="{stroke}" stroke-width="{2 if p.hollow else 1}">'
                   f'<title>{escape(p.tip)}</title></circle>')
    out.append("</g>")
    return "".join(out)


def _legend(series: Sequence[Series], x0: float, y0: float, width: float) -> str:
    out, per_row = [], 4
    col_w = width / per_row
    for i, s in enumerate(series):
        x = x0 + (i % per_row) * col_w
        y = y0 + 22 * (i // per_row) + 10
        out.append(f'<g data-legend="{escape(s.name)}" style="cursor:pointer">'
                   f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="14" height="10" rx="2" '
                   f'fill="{s.color}"/>' + _text(x + 20, y, s.name) + "</g>")
    return "".join(out)


@dataclass(frozen=True)
class Bar:
    label: str                            # x label (e.g. the level)
    parts: Sequence[tuple[str, float]]    # (role, value) stacked bottom-up
    tip: str = ""


@dataclass(frozen=True)
class BarChart:
    title: str
    x_label: str
    y_label: str
    bars: Sequence[Bar]
    colors: dict[str, str] = field(default_factory=dict)
    y_format: Formatter = str
    width: int = 360
    height: int = 240


def render_bars(chart: BarChart) -> str:
    left, right, top, bottom = 56, 8, 34, 40
    roles = list(dict.fromkeys(role for b in chart.bars for role, _ in b.parts))
    legend_h = 18 * math.ceil(len(roles) / 3)
    w, h = chart.width, chart.height + legend_h
    if not chart.bars:
        return _empty(XYChart(chart.title, "", "", (), str, str, width=w))
    totals = [sum(v for _, v in b.parts) for b in chart.bars]
    ticks = nice_ticks(0.0, max([*totals, 1.0]), 4)
    plot_bottom = chart.height - bottom
    Y = _Axis(0.0, ticks[-1], False, plot_bottom, top)
    out = [_open(w, h), _text(left, 20, chart.title, size=13, weight="600")]
    for t in ticks:
        out.append(f'<line x1="{left}" x2="{w - right}" y1="{Y(t):.1f}" y2="{Y(t):.1f}" '
                   f'stroke="{GRID}"/>')
        out.append(_text(left - 6, Y(t) + 4, chart.y_format(t), anchor="end", fill=AXIS))
    slot = (w - left - right) / len(chart.bars)
    bar_w = min(36.0, slot * 0.7)
    for i, bar in enumerate(chart.bars):
        x = left + slot * i + (slot - bar_w) / 2
        base = 0.0
        for role, value in bar.parts:
            y1, y2 = Y(base + value), Y(base)
            out.append(f'<rect x="{x:.1f}" y="{y1:.1f}" width="{bar_w:.1f}" '
                       f'height="{max(y2 - y1, 0):.1f}" fill="{chart.colors.get(role, AXIS)}">'
                       f'<title>{escape(f"{bar.label}: {role} {chart.y_format(value)}")}</title>'
                       f'</rect>')
            base += value
        out.append(_text(x + bar_w / 2, plot_bottom + 14, bar.label, anchor="middle", fill=AXIS))
    out.append(_text((left + w - right) / 2, plot_bottom + 30, chart.x_label, anchor="middle"))
    mid = (Y.start + Y.end) / 2
    out.append(_text(12, mid, chart.y_label, anchor="middle",
                     extra=f'transform="rotate(-90 12 {mid:.1f})"'))
    for i, role in enumerate(roles):
        x = left + (i % 3) * ((w - left - right) / 3)
        y = chart.height + 18 * (i // 3) + 6
        out.append(f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="12" height="10" rx="2" '
                   f'fill="{chart.colors.get(role, AXIS)}"/>' + _text(x + 17, y, role))
    out.append("</svg>")
    return "\n".join(out)
