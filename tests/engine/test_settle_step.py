"""run --settle's decision: the warm-up pass added after an unsteady first level."""

import pytest

from stackbench.config.measured import Second
from stackbench.config.plan import settle_bound_s
from stackbench.engine.settle import SettleAdvice, SettleStep, full_rates, settle_step

WHY = "did not settle within the 25-s level"


def test_the_bound_is_four_times_the_declared_at_most_120_s():
    assert [settle_bound_s(s) for s in (1, 15, 30, 45, 200)] == [4, 60, 120, 120, 200]


def test_the_pass_is_as_long_as_the_series_asks_within_the_bound():
    step = settle_step(SettleAdvice(False, 20, WHY), declared_s=15)
    assert step == SettleStep(20, 35, 60, WHY)
    assert step.note("hello at 50", 15) == (
        f"hello at 50: not shown steady after the 15-s JIT warm-up ({WHY}); run --settle "
        "warmed it up 20 s more (35 s in all, at most 60) and measured the level again"
    )


def test_more_than_the_bound_leaves_is_cut_to_it():
    step = settle_step(SettleAdvice(False, 80, WHY), declared_s=15)
    assert step is not None and (step.seconds, step.total_s) == (45, 60)
    assert "(60 s in all, at most 60 (the bound))" in step.note("x", 15)


def test_a_level_that_never_settled_gets_all_the_bound_leaves():
    step = settle_step(SettleAdvice(False, None, WHY), declared_s=40)
    assert step is not None and (step.seconds, step.total_s, step.bound_s) == (80, 120, 120)


@pytest.mark.parametrize(
    ("advice", "declared"),
    [
        (SettleAdvice(True, 0, "flat"), 15),  # shown steady
        (SettleAdvice(False, 0, "noisy"), 15),  # no warm-up would show it
        (SettleAdvice(False, 20, WHY), 0),  # no JIT warm-up declared
        (SettleAdvice(False, None, WHY), 150),  # the declared one is already past 120 s
    ],
)
def test_nothing_is_added(advice, declared):
    assert settle_step(advice, declared) is None


def test_full_rates_drop_the_cut_last_second():
    def second(t: int, completed: int, duration_s: float = 1.0) -> Second:
        return Second(
            t_s=t,
            completed=completed,
            errors=0,
            p50_us=100,
            p99_us=100,
            p90_us=100,
            max_us=100,
            duration_s=duration_s,
            partial=duration_s < 1.0,
            histogram="",
        )

    series = [second(1, 100), second(2, 200), second(3, 30, duration_s=0.5)]
    assert full_rates(series) == [100.0, 200.0]
    assert full_rates(None) == []
