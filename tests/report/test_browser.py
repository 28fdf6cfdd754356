"""report.html in a real headless Chromium (Debian's `chromium`, driven by Playwright), with
the network blocked: no console error, no request leaves the page, every chart is drawn with a
size, the stack/workload filter and the sortable tables work, and on a phone (390 px) as on a
desktop (1400 px) the page does not scroll sideways and no visible text is under 7 px (chart
text included: its font size as rendered, after the SVG is scaled to the page).

Needs /usr/bin/chromium (`make setup-test` installs it); never downloads a browser.
"""

import shutil
from pathlib import Path

import pytest
from synthetic_run import fill

from stackbench.report import write_all
from stackbench.store.store import Store

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = pytest.mark.skipif(
    shutil.which(CHROMIUM) is None, reason=f"{CHROMIUM} missing: apt-get install chromium"
)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    store = Store(":memory:")
    run = fill(store)
    out = write_all(store.load_run(run), tmp_path_factory.mktemp("report"), ["html"])
    store.close()
    return out / "report.html"


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        instance = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield instance
        instance.close()


def _open(browser, report, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.errors = []
    page.requests = []

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:  # the network is blocked; any attempt is recorded and fails the test
            page.requests.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(report.as_uri())
    page.wait_for_load_state("load")
    return context, page


@pytest.fixture()
def page(browser, report):
    context, page = _open(browser, report, 1280)
    yield page
    context.close()


MIN_TEXT_PX = 7.0
# Every visible element with text of its own: its font size as rendered. In an SVG the size is
# the element's font size times the scale the SVG is drawn at (its screen CTM).
SMALL_TEXT = """min => {
  const small = [];
  for (const el of document.querySelectorAll('body *')) {
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    const box = el.getBoundingClientRect();
    if (!own || box.width === 0 || box.height === 0) continue;
    const css = getComputedStyle(el);
    if (css.visibility === 'hidden' || el.closest('[hidden]')) continue;
    let size = parseFloat(css.fontSize);
    if (el instanceof SVGElement) {
      const m = el.getScreenCTM();
      size *= Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
    }
    if (size < min) small.push(`${size.toFixed(1)}px: ${el.textContent.trim().slice(0, 40)}`);
  }
  return small;
}"""


@pytest.mark.parametrize("width", [390, 1400])
def test_fits_the_screen_with_readable_text(browser, report, width):
    context, page = _open(browser, report, width)
    try:
        assert page.evaluate("document.scrollingElement.scrollWidth") <= width
        svg_texts = page.evaluate("document.querySelectorAll('figure.chart svg text').length")
        assert svg_texts > 100  # chart text is text, so the check below sees it
        assert page.evaluate(SMALL_TEXT, MIN_TEXT_PX) == []
        assert page.errors == [] and page.requests == []
    finally:
        context.close()


def _visible(page, selector):
    return page.eval_on_selector_all(
        selector,
        "els => els.filter(e => e.offsetParent !== null)"
        ".map(e => e.getAttribute('data-stack') || e.getAttribute('data-workload'))",
    )


def test_page_loads_offline_without_errors_and_draws_every_chart(page):
    assert page.errors == []
    assert page.requests == []
    charts = page.query_selector_all("figure.chart svg")
    assert len(charts) >= 12  # 6 per workload
    for svg in charts:
        svg.scroll_into_view_if_needed()
        box = svg.bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 50
    assert page.query_selector("figure[data-chart='hello-errors']") is not None
    first = page.locator("#glance").bounding_box()
    assert first is not None and first["y"] < 900  # the summary is on the first screen
    line = page.locator(".card .tiers.win").first.inner_text()
    assert line == "go-nethttp  »  node (1.98×)  »  php-fpm-nginx (2.6×)"
    words = page.locator(".card details.why").first
    assert not words.locator("p").first.is_visible()  # the verdicts in words: behind it
    words.locator("summary").click()
    assert "shown faster than every other" in words.locator("p").first.inner_text()


# A phone's first screen: 390 CSS px wide, 664 tall (an iPhone 13's viewport in Playwright's
# device list, the browser's own bars taken off).
PHONE = (390, 664)


def test_a_phone_shows_the_hello_cards_tier_line_and_bars_on_the_first_screen(browser, report):
    context = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]})
    page = context.new_page()
    try:
        page.goto(report.as_uri())
        card = page.locator(".card[data-workload=hello]")
        seen = [
            card.locator(".tiers").first,
            *card.locator(".metric").first.locator(".bar-row .track, .bar-row .value").all(),
        ]
        assert len(seen) == 1 + 2 * 3  # the line, and a track and a figure per stack
        for element in seen:
            box = element.bounding_box()
            assert box is not None and box["height"] > 0
            assert box["y"] >= 0 and box["y"] + box["height"] <= PHONE[1], element
            assert box["x"] + box["width"] <= PHONE[0]
        assert page.evaluate("window.scrollY") == 0
    finally:
        context.close()


def test_filter_by_stack_and_workload(page):
    assert len(_visible(page, "section.workload")) == 2
    page.select_option("#filter-stack", "node")
    stacks = set(_visible(page, ".bar-row[data-stack], tr[data-stack]"))
    assert stacks == {"node"}
    page.select_option("#filter-workload", "sha256-n-10")
    assert _visible(page, "section.workload") == ["sha256-n-10"]
    assert page.inner_text("#filter-count") == "1 of 2 workloads shown"
    page.select_option("#filter-stack", "")
    page.select_option("#filter-workload", "")
    assert len(_visible(page, "section.workload")) == 2
    assert "php-fpm-nginx" in _visible(page, "tr[data-stack]")
    assert page.errors == []


def _column(page, table, index):
    """The medians of a column (the interval after them left out)."""
    return table.eval_on_selector_all(
        "tbody tr", f"rows => rows.map(r => r.cells[{index}].textContent.split(' [')[0].trim())"
    )


def test_tables_sort_by_number_with_units(page):
    section = page.locator("#w-hello")
    table = section.locator("table[data-table=p99]").element_handle()  # p99 by connections
    header = table.query_selector("thead th:nth-child(4)")  # 300 connections
    header.click()
    assert header.get_attribute("aria-sort") == "ascending"
    values = _column(page, table, 3)
    assert values == ["23.3 ms", "45.9 ms", "107 ms"]  # 23.3 ms < 107 ms, not as text
    header.click()
    assert header.get_attribute("aria-sort") == "descending"
    assert _column(page, table, 3) == ["107 ms", "45.9 ms", "23.3 ms"]
    table.query_selector("thead th:nth-child(1)").click()
    assert _column(page, table, 0) == ["go-nethttp", "node", "php-fpm-nginx"]
    assert page.errors == []
