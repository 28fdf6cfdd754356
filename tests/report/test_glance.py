"""At a glance: best level, common latency level, % of best and the winner, by hand."""

import math

import pytest
from synthetic_run import add_case, add_level, settings, start_run

from stackbench.analysis.analysis import analyse, compare_figures
from stackbench.analysis.stats import Estimate
from stackbench.analysis.verdicts import Outcome, assumed_spread, series_evidence
from stackbench.report.glance import GlanceBar, common_level, decide, glance, pair_cells, pair_rows
from stackbench.store.records import Flag
from stackbench.store.store import Store

SETTINGS = settings(repeat=3, slo=None, levels=[10, 20])


def _row(index, value, rep, rps, p99, status="ok", flags=()):
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
        "flags": list(flags),
        "status": status,
    }


def _run(figures, statuses=None):
    """figures: stack -> level -> [(rps, p99) per repetition]."""
    store = Store(":memory:")
    run = start_run(store, "t", run_settings=SETTINGS)
    for stack, levels in figures.items():
        case = add_case(store, run, stack, "hello", status="ok")
        for index, (value, reps) in enumerate(levels.items()):
            status = (statuses or {}).get((stack, value), "ok")
            for rep, (rps, p99) in enumerate(reps):
                add_level(store, case, _row(index, value, rep, rps, p99, status))
    return analyse(store.load_run(run), resamples=500)


FIGURES = {  # 5 repetitions: the fewest with which a rank test can reach p < 0.05
    "a": {
        10: [(100, 1000), (110, 1100), (90, 900), (105, 1050), (95, 950)],
        20: [(200, 2000), (210, 2100), (190, 1900), (205, 2050), (195, 1950)],
    },
    "b": {
        10: [(50, 3000), (55, 3300), (45, 2700), (52, 3100), (48, 2900)],
        20: [(80, 5000), (85, 5500), (75, 4500), (82, 5200), (78, 4800)],
    },
}


def _geo(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def test_best_level_share_of_best_and_winners():
    [g] = glance(_run(FIGURES))
    a, b = g.throughput.bars
    # five repetitions: each figure is the geometric mean of the repetitions (the unit)
    a20, b20 = [r[0] for r in FIGURES["a"][20]], [r[0] for r in FIGURES["b"][20]]
    assert (a.stack, a.level_value, a.share_of_best) == ("a", 20, 1.0)
    assert a.estimate.value == pytest.approx(_geo(a20))
    assert (b.stack, b.level_value) == ("b", 20)
    assert b.share_of_best == pytest.approx(_geo(b20) / _geo(a20))
    assert g.throughput.winner == "a"
    assert b.vs_best is not None and b.vs_best.outcome is Outcome.FASTER
    assert b.vs_best.ratio == pytest.approx(_geo(a20) / _geo(b20))
    assert b.vs_best.unit == "repetitions" and (b.vs_best.n_a, b.vs_best.n_b) == (5, 5)
    assert g.throughput.verdict.startswith(
        "a is the best, shown faster than every other: req/s 2.5"
    )
    # p99 at the highest common level (20): best is the lowest, share = best / this
    lat_a, lat_b = g.latency.bars
    assert (lat_a.stack, lat_b.stack) == ("a", "b")
    assert lat_b.share_of_best == pytest.approx(lat_a.estimate.value / lat_b.estimate.value)
    assert g.latency.where == "at 20 connections"
    assert g.latency.winner == "a"
    assert lat_b.vs_best is not None and lat_b.vs_best.ratio < 1  # a's p99 over b's


def test_latency_compares_at_the_highest_level_every_stack_measured_validly():
    a = _run(FIGURES, statuses={("b", 20): "invalid"})
    [g] = glance(a)
    assert [b.level_value for b in g.throughput.bars] == [20, 10]  # b's best valid level
    assert common_level(a.workloads[0], ["a", "b"]) == 10
    assert g.latency.where == "at 10 connections"
    assert [b.estimate.value for b in g.latency.bars] == pytest.approx(
        [_geo([r[1] for r in FIGURES[s][10]]) for s in ("a", "b")]
    )


def test_no_winner_without_evidence_and_never_a_tie_for_lack_of_it():
    close = {
        "a": {10: [(100, 1000), (130, 1000), (70, 1000), (110, 1000), (90, 1000)]},
        "b": {10: [(98, 1000), (125, 1000), (72, 1000), (105, 1000), (95, 1000)]},
    }
    [g] = glance(_run(close))
    assert g.throughput.winner is None
    assert g.throughput.verdict.startswith(
        "no winner named: not enough evidence between a and b: a's req/s is 1.0"
    )
    assert "no significant difference" not in g.throughput.verdict
    # no per-second series: one repetition is one whole level, whose uncertainty is the
    # machine's run-to-run spread of whole levels (assumed 10%): 2× is shown, 1.05× is not
    single = {"a": {10: [(200, 1000)]}, "b": {10: [(100, 1000)]}}
    [g] = glance(_run(single))
    assert g.throughput.winner == "a"
    near = {"a": {10: [(105, 1000)]}, "b": {10: [(100, 1000)]}}
    [g] = glance(_run(near))
    assert g.throughput.winner is None
    assert "not enough evidence" in g.throughput.verdict


def _bar(stack, value, flags=(), vs_best=None):
    return GlanceBar(
        stack, Estimate(value, None, None, 1), 10, 1.0, tuple(map(Flag.parse, flags)), vs_best
    )


def test_decide_edge_cases():
    assert decide([], "req/s") == (None, "no valid level to compare")
    assert decide([_bar("a", 1)], "req/s") == (
        None,
        "only a has a valid figure: nothing to compare",
    )
    series = [1000.0 * (1 + 0.01 * ((i * 7) % 5 - 2)) for i in range(12)]
    best = Estimate(3000.0, None, None, 1, series_evidence([3 * v for v in series]))
    other = Estimate(1000.0, None, None, 1, series_evidence(series))
    verdict = compare_figures(best, other, assumed_spread())
    bars = [_bar("a", 3000, ["loader-bound"]), _bar("b", 1000, vs_best=verdict)]
    winner, text = decide(bars, "req/s")
    assert winner == "a" and text.endswith(
        "; a was loader-bound: its figure is a lower bound"
        " (run-to-run spread assumed 5%: not calibrated)"
    )


def test_not_ranked_stacks_are_named_with_why():
    store = Store(":memory:")
    run = start_run(store, "t", run_settings=SETTINGS)
    case = add_case(store, run, "a", "hello", status="ok")
    add_level(store, case, _row(0, 10, 0, 100, 1000))
    add_case(store, run, "s", "hello", status="unavailable", reason="no [epoll] here")
    bad = add_case(store, run, "c", "hello", status="ok")
    add_level(store, bad, _row(0, 10, 0, 100, 1000, status="invalid"))
    [g] = glance(analyse(store.load_run(run), resamples=100))
    assert g.not_ranked == (("c", "no valid level"), ("s", "unavailable: no [epoll] here"))


def test_latency_reads_as_times_the_best_and_whole_level_figures_are_marked():
    from stackbench.report.glancechart import vs_best
    from stackbench.report.html import glance_views

    a = _run(FIGURES)
    [g] = glance(a)
    best, slower = g.latency.bars
    assert best.times_best == 1.0 and vs_best(g.latency, best) == "best"
    assert slower.times_best == pytest.approx(slower.estimate.value / best.estimate.value)
    assert vs_best(g.latency, slower) == f"{slower.times_best:.2f}×"
    assert vs_best(g.throughput, g.throughput.bars[1]).endswith("%")
    # no per-second series: every figure is the whole level's, and says so
    assert {b.whole_level for b in g.throughput.bars} == {"the driver gave no per-second series"}
    [view] = glance_views(a, [g])
    assert view.latency.share_header == "× best"
    assert [b.level for b in view.latency.bars] == ["at 20 conn.", "at 20 conn."]
    assert all(b.whole_level for b in view.throughput.bars)


def test_every_headline_is_the_tier_line_and_the_words_move_behind():
    """summary.md, report.html and the terminal open each workload with its tier line (one
    line of at most 80 characters); the verdicts in words are in summary.md's workload
    section and report.html's disclosure."""
    import io

    from rich.console import Console
    from synthetic_run import fill

    from stackbench.analysis.findings import findings
    from stackbench.report.exports import summary_md
    from stackbench.report.html import glance_views
    from stackbench.report.terminal import print_glance

    store = Store(":memory:")
    a = analyse(store.load_run(fill(store)), resamples=100)
    glances = glance(a)
    line = "go-nethttp  »  node (1.98×)  »  php-fpm-nginx (2.6×)"
    assert glances[0].throughput.line == line
    md = summary_md(a, findings(a)).splitlines()
    at = md.index("### hello")
    assert md[at + 2] == line  # the line right under the workload's heading
    words = md.index("## hello")
    assert md[words + 2] == "Verdicts in words:"
    assert md[words + 4].startswith("- req/s (best valid level of each stack): go-nethttp is")
    glance_md = "\n".join(md[at : md.index("## Context")])
    assert "shown faster than every other" not in glance_md
    assert "| node vs php-fpm-nginx | 2.56× | 2.49–2.64× | > faster |" in glance_md
    view = glance_views(a, glances)[0]
    assert view.throughput.line == line and view.throughput.pairs is not None
    assert view.throughput.pairs.header == ["a vs b", "a/b", "95% interval", "verdict"]
    console = Console(record=True, width=80, file=io.StringIO(), color_system=None)
    print_glance(console, a, glances)
    out = console.export_text().splitlines()
    assert out[out.index("hello — req/s, best valid level of each stack") + 1] == line
    for g in glances:
        for m in (g.throughput, g.latency):
            assert len(m.line) <= 80 and "\n" not in m.line


def test_an_undecided_pair_says_what_would_decide_it():
    close = {
        "a": {10: [(100, 1000), (130, 1000), (70, 1000), (110, 1000), (90, 1000)]},
        "b": {10: [(98, 1000), (125, 1000), (72, 1000), (105, 1000), (95, 1000)]},
        "c": {10: [(20, 1000), (21, 1000), (19, 1000), (20, 1000), (20, 1000)]},
    }
    [g] = glance(_run(close))
    m = g.throughput
    assert m.tiers is not None and m.tiers.groups == ((0, 1), (2,))
    assert m.line.startswith("a ? b  »  c (")
    first = m.shown[0]
    assert (first.first, first.second) == ("a", "b")
    cells = pair_cells(first)
    assert cells[3] == "? undecided" and "repetitions" in cells[4]
    header, rows = pair_rows(m)
    assert header[-1] == "what would decide it" and rows[1][3] == "> faster"
