"""The charts as exported: PNGs wide enough for slides, a glance.png that says where its
figures come from, and every chart with its figures as a table (its text alternative)."""

import struct

import pytest
from synthetic_run import fill

from stackbench.analysis.analysis import analyse
from stackbench.report.chartkit import MIN_PNG_PX, Chart
from stackbench.report.charts import glance_charts, resources_chart, throughput_chart
from stackbench.report.glance import glance
from stackbench.store.store import Store


@pytest.fixture(scope="module")
def analysis():
    store = Store(":memory:")
    a = analyse(store.load_run(fill(store)))
    yield a
    store.close()


def _png_size(png: bytes) -> tuple[int, int]:
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    return width, height


def test_pngs_are_slide_sized_and_carry_their_figures(analysis):
    w = analysis.workloads[0]
    for chart in (throughput_chart(analysis, w, "hello"), resources_chart(analysis, w, "hello")):
        assert isinstance(chart, Chart)
        assert _png_size(chart.png)[0] >= MIN_PNG_PX
        assert len(chart.data.rows) == 3 * 3  # stack × level
        assert 'role="img"' in chart.inline_svg and f"cap-{chart.name}" in chart.inline_svg


def test_glance_png_stands_on_its_own(analysis):
    [chart] = glance_charts(analysis, glance(analysis))
    assert isinstance(chart, Chart)
    assert _png_size(chart.png)[0] >= MIN_PNG_PX
    for said in ("synthetic (run 1", "AMD EPYC 7B13", "go-nethttp  »  node (1.98×)", "41,590"):
        assert said in chart.svg, said
