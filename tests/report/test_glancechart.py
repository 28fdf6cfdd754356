"""glance.png as a slide: 1920 × 1080 px, no text outside the picture, no text over another
text or over a bar, at most 25 words a chart, and more slides when one cannot hold it all.

The figures are drawn and every text's extent is measured with the renderer
(get_window_extent), as matplotlib lays it out, fonts and all.
"""

import itertools
import random
import struct

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from synthetic_run import add_case, add_level, fill, settings, start_run

from stackbench.analysis.analysis import analyse
from stackbench.report.chartkit import Chart, png_dpi
from stackbench.report.glance import glance
from stackbench.report.glancechart import (
    MAX_WORDS,
    glance_charts,
    slide_figure,
    slides,
    words,
)
from stackbench.store.store import Store

# The longest names of stacks/ and a long workload label: the worst case for the layout.
STACKS = [
    "java-virtual-threads",
    "php-fpm-nginx",
    "node-cluster",
    "java-servlet",
    "go-nethttp",
    "php-apache",
    "node-nginx",
    "rust-hyper",
    "cpp-beast",
    "php-swoole",
    "node",
]
WORKLOADS = ["hello", "sha256?n=1000", "db-html-report?rows=100", "json", "fortunes"]


def _row(index, value, rep, rps, p99):
    return {
        "level_index": index,
        "level_value": value,
        "repetition": rep,
        "driver": "native",
        "mode": "closed",
        "keepalive": "on",
        "started_at": 0.0,
        "duration_s": 5.0,
        "completed": int(rps * 5),
        "ok": int(rps * 5),
        "errors": {},
        "requests_per_s": rps,
        "latency_us": {"p50": p99 / 4, "p99": p99},
        "usage": {},
        "flags": [],
        "status": "ok",
    }


def _analysis(stacks, workloads, seed=3):
    """Every stack on every workload, 3 repetitions at 2 levels; figures far apart and close
    together, so that the tier lines hold '»', '?' and ratios."""
    rng = random.Random(seed)
    store = Store(":memory:")
    run = start_run(store, "wide", run_settings=settings(repeat=3, slo=None, levels=[50, 300]))
    for w, workload in enumerate(workloads):
        for s, stack in enumerate(stacks):
            case = add_case(store, run, stack, workload, status="ok")
            capacity = 90_000.0 / (1 + s // 2) / (1 + w)  # pairs of stacks close together
            for index, conns in enumerate((50, 300)):
                for rep in range(3):
                    rps = capacity * (0.6 + 0.4 * index) * rng.uniform(0.97, 1.03)
                    add_level(store, case, _row(index, conns, rep, rps, 1e6 * conns / rps))
    return analyse(store.load_run(run), resamples=100)


def _texts(artist):
    return [
        t
        for t in artist.findobj(Text)
        if t.get_visible() and t.get_text().strip() and t.figure is not None
    ]


def _check_slide(a, shown, max_words=MAX_WORDS):
    fig = slide_figure(a, shown)
    fig.set_dpi(png_dpi(fig.get_figwidth()))  # as the PNG is drawn
    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    frame = fig.bbox
    texts = _texts(fig)
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    for text, box in boxes:  # inside the picture
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, f"{text!r} runs off the side"
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1, f"{text!r} runs off the top/bottom"
    for (t1, b1), (t2, b2) in itertools.combinations(boxes, 2):  # over no other text
        assert not b1.overlaps(b2), f"{t1!r} overlaps {t2!r}"
    axes = fig.findobj(lambda o: hasattr(o, "patches") and hasattr(o, "texts"))
    charts = [ax for ax in axes if ax.patches]
    assert len(charts) == 2 * len(shown)
    for ax in charts:
        said = [t.get_text() for t in _texts(ax)]
        assert sum(words(t) for t in said) <= max_words, said
        assert "…" not in ax.get_title(loc="left")  # a tier line is never cut short
        bars = [p.get_window_extent(renderer) for p in ax.patches if isinstance(p, Rectangle)]
        for text, box in ((t.get_text(), t.get_window_extent(renderer)) for t in _texts(ax)):
            for bar in bars:  # over no bar
                assert not box.overlaps(bar), f"{text!r} overlaps a bar"
    return fig, charts


def _png_size(png: bytes) -> tuple[int, int]:
    return struct.unpack(">II", png[16:24])


def test_the_synthetic_run_is_one_slide_with_its_tier_lines():
    store = Store(":memory:")
    a = analyse(store.load_run(fill(store)))
    glances = glance(a)
    [chart] = glance_charts(a, glances)
    assert isinstance(chart, Chart) and chart.name == "glance"
    assert _png_size(chart.png) == (1920, 1080)
    for said in ("synthetic (run 1", "AMD EPYC 7B13", "go-nethttp  »  node (1.98×)"):
        assert said in chart.svg, said
    _, charts = _check_slide(a, slides(glances)[0])
    titles = [ax.get_title(loc="left") for ax in charts]
    assert titles[0] == glances[0].throughput.line  # fits its width whole


def test_eight_stacks_by_four_workloads_fit_one_slide():
    a = _analysis(STACKS[:8], WORKLOADS[:4])
    glances = glance(a)
    assert [len(group) for group in slides(glances)] == [4]
    _, charts = _check_slide(a, glances)
    # 8 long names in 4 tiers make more than 80 characters: the line, as the headline,
    # names each tier by its first stack, and is never cut short
    title = charts[0].get_title(loc="left")
    assert title.replace("\n", " ") == glances[0].throughput.line
    assert title.count("+1") == 4 and "…" not in title


@pytest.mark.parametrize(
    ("stacks", "workloads", "expected"),
    [(8, 5, [4, 1]), (11, 3, [2, 1])],
)
def test_more_than_a_slide_holds_continues_on_the_next(stacks, workloads, expected):
    a = _analysis(STACKS[:stacks], WORKLOADS[:workloads])
    glances = glance(a)
    groups = slides(glances)
    assert [len(group) for group in groups] == expected
    # beyond 8 stacks, names and figures take 22 words: the tier line names each tier's first
    for group in groups:
        _check_slide(a, group, MAX_WORDS if stacks <= 8 else 2 * stacks + 1 + 8)
    charts = glance_charts(a, glances)
    assert [c.name for c in charts] == [f"glance-{i}" for i in range(1, len(expected) + 1)]
    assert all(isinstance(c, Chart) and _png_size(c.png) == (1920, 1080) for c in charts)


def test_words_are_tokens_with_a_letter_or_digit():
    assert words("go-nethttp ? node  »  php-fpm-nginx (6.6–7.1×)") == 4
    assert words("41,590 †") == 1
