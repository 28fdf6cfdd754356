"""The trend of one case across runs: each run's req/s with its 95% interval, the change
points marked, the x axis the runs in order (labelled by label or number)."""

import io

from stackbench.analysis.history import CaseHistory
from stackbench.report.chartkit import figure, lay_out, png_dpi, rate_formatter, set_title


def history_png(history: CaseHistory) -> bytes:
    fig = figure(3.6)
    ax = fig.add_subplot()
    points = history.points
    xs = list(range(len(points)))
    values = [p.throughput.value for p in points]
    lows = [
        v - (p.throughput.low if p.throughput.low is not None else v)
        for v, p in zip(values, points, strict=True)
    ]
    highs = [
        (p.throughput.high if p.throughput.high is not None else v) - v
        for v, p in zip(values, points, strict=True)
    ]
    ax.errorbar(xs, values, yerr=[lows, highs], fmt="o-", capsize=3, color="#1f77b4")
    for x, p in zip(xs, points, strict=True):
        if p.change:
            ax.axvline(x - 0.5, color="#d62728", linestyle="--", linewidth=1)
    ax.set_xticks(xs, [p.label or f"run {p.run_id}" for p in points], rotation=30, ha="right")
    ax.yaxis.set_major_formatter(rate_formatter())
    ax.set_ylabel("req/s (95% interval)")
    ax.set_ylim(bottom=0)
    k = history.key
    set_title(
        ax,
        f"{k.stack} · {k.workload} @ {k.level:g}\nsuite {k.suite}; dashed: a change point",
        fontsize="medium",
    )
    lay_out(fig)
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=png_dpi(fig.get_figwidth()))
    return out.getvalue()
