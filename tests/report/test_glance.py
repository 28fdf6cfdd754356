"""At a glance: best level, common latency level, % of best and the winner, by hand."""

import random

import pytest
from synthetic_run import add_case, add_level, settings, start_run

from stackbench.analysis.analysis import analyse
from stackbench.analysis.stats import Estimate, Verdict
from stackbench.report.glance import GlanceBar, common_level, compare, decide, glance
from stackbench.store.store import Store

SETTINGS = settings(repeat=3, slo=None, levels=[10, 20])


def _row(index, value, rep, rps, p99, status="ok", flags=()):
    return {"level_index": index, "level_value": value, "repetition": rep, "driver": "native",
            "mode": "closed", "keepalive": "on", "started_at": 0.0, "duration_s": 5.0,
            "completed": int(rps * 5), "ok": int(rps * 5), "errors": {},
            "requests_per_s": rps, "latency_us": {"p50": p99 / 4, "p99": p99},
            "usage": {}, "flags": list(flags), "status": status}


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
    "a": {10: [(100, 1000), (110, 1100), (90, 900), (105, 1050), (95, 950)],
          20: [(200, 2000), (210, 2100), (190, 1900), (205, 2050), (195, 1950)]},
    "b": {10: [(50, 3000), (55, 3300), (45, 2700), (52, 3100), (48, 2900)],
          20: [(80, 5000), (85, 5500), (75, 4500), (82, 5200), (78, 4800)]},
}


def test_best_level_share_of_best_and_winners():
    [g] = glance(_run(FIGURES))
    a, b = g.throughput.bars
    assert (a.stack, a.level_value, a.estimate.value, a.share_of_best) == ("a", 20, 200, 1.0)
    assert (b.stack, b.level_value, b.estimate.value) == ("b", 20, 80)
    assert b.share_of_best == pytest.approx(80 / 200)
    assert g.throughput.winner == "a"
    assert g.throughput.comparison.ratio == pytest.approx(200 / 80)
    # every a above every b: p = 2 / C(10, 5) = 0.0079, Holm-adjusted over the summary's two
    # comparisons (req/s and p99): 0.016, shown with two decimals
    assert g.throughput.comparison.p_value == pytest.approx(2 * 2 / 252)
    assert g.throughput.verdict.startswith("a wins: 2.50× b's req/s (95% CI ")
    assert g.throughput.verdict.endswith(", p=0.02, n=5+5)")
    # p99 at the highest common level (20): best is the lowest, share = best / this
    lat_a, lat_b = g.latency.bars
    assert (lat_a.stack, lat_a.estimate.value, lat_b.estimate.value) == ("a", 2000, 5000)
    assert lat_b.share_of_best == pytest.approx(2000 / 5000)
    assert g.latency.where == "at 20 connections"
    assert g.latency.winner == "a"
    assert g.latency.verdict.startswith("a wins: b's p99 is 2.50× a's (95% CI ")


def test_latency_compares_at_the_highest_level_every_stack_measured_validly():
    a = _run(FIGURES, statuses={("b", 20): "invalid"})
    [g] = glance(a)
    assert [b.level_value for b in g.throughput.bars] == [20, 10]  # b's best valid level
    assert common_level(a.workloads[0], ["a", "b"]) == 10
    assert g.latency.where == "at 10 connections"
    assert [b.estimate.value for b in g.latency.bars] == [1000, 3000]


def test_no_winner_within_noise_or_without_enough_repetitions():
    close = {"a": {10: [(100, 1000), (130, 1000), (70, 1000), (110, 1000), (90, 1000)]},
             "b": {10: [(98, 1000), (125, 1000), (72, 1000), (105, 1000), (95, 1000)]}}
    [g] = glance(_run(close))
    assert g.throughput.winner is None
    assert g.throughput.comparison.verdict is Verdict.NO_SIGNIFICANT_DIFFERENCE
    assert g.throughput.verdict.startswith("no winner: a leads b by 1.02×, not significant (p=")
    three = {s: {v: reps[:3] for v, reps in levels.items()} for s, levels in FIGURES.items()}
    [g] = glance(_run(three))
    assert g.throughput.winner is None  # 2.5× apart, but 3+3 values cannot reach p < 0.05
    assert g.throughput.verdict.startswith("no winner named: a leads by 2.50×, but with 2 "
                                           "figures compared, n=3+3 cannot reach significance")
    single = {"a": {10: [(200, 1000)]}, "b": {10: [(100, 1000)]}}
    [g] = glance(_run(single))
    assert g.throughput.winner is None
    assert g.throughput.verdict == ("no winner named: a leads by 2.00×, but n=1+1: a test "
                                    "needs at least 2 a side")


def _bar(stack, value, samples, flags=()):
    return GlanceBar(stack, Estimate(value, None, None, len(samples)), 10, 1.0,
                     tuple(samples), tuple(flags))


def test_decide_edge_cases():
    assert decide([], True, "req/s", None) == (None, "no valid level to compare")
    assert decide([_bar("a", 1, [1])], True, "req/s", None) == \
        (None, "only a has a valid figure: nothing to compare")
    bars = [_bar("a", 300, [300, 310, 290, 305, 295], ["loader-bound"]),
            _bar("b", 100, [100, 101, 99, 102, 98])]
    winner, text = decide(bars, True, "req/s", compare(bars, True))
    assert winner == "a" and text.endswith("; a was loader-bound: its figure is a lower bound")
    bars = [_bar("a", 5, [5, 5, 5]), _bar("b", 0, [0, 0, 0])]
    assert decide(bars, True, "req/s", compare(bars, True)) == \
        (None, "no winner named: b's median req/s is 0")


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


def test_one_repetition_each_is_judged_on_the_steady_windows():
    """With n=1+1 the seconds of the steady windows decide (batch means), as in the ranking."""
    rng = random.Random(7)
    fast = tuple(1000 * (1 + rng.gauss(0, 0.01)) for _ in range(16))
    slow = tuple(800 * (1 + rng.gauss(0, 0.01)) for _ in range(16))
    bars = [GlanceBar("a", Estimate(1000, None, None, 1), 10, 1.0, (1000.0,), (), fast),
            GlanceBar("b", Estimate(800, None, None, 1), 10, 0.8, (800.0,), (), slow)]
    winner, _text = decide(bars, True, "req/s", compare(bars, True))
    assert winner == "a"
    near = tuple(v * 1.002 for v in fast)
    bars = [GlanceBar("a", Estimate(1002, None, None, 1), 10, 1.0, (1002.0,), (), near),
            GlanceBar("b", Estimate(1000, None, None, 1), 10, 1.0, (1000.0,), (), fast)]
    winner, text = decide(bars, True, "req/s", compare(bars, True))
    assert winner is None and text.startswith("no winner")
