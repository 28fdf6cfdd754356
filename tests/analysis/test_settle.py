"""stackbench.analysis.settle on synthetic per-second series with known answers."""

import numpy as np
import pytest
import synthetic_series as syn

from stackbench.analysis.settle import SettleKind, settle_time
from stackbench.analysis.steady import detect_steady_state

SEEDS = range(6)
# java-servlet hello on the 2-core VM (#32): 10.7k req/s cold, 46.3k warm
COLD, WARM = 10_000.0, 46_000.0


def jvm_climb(seconds: int, climb_s: int, cv: float, seed: int) -> list[float]:
    """A linear climb from COLD to WARM over climb_s seconds, then flat at WARM."""
    series = syn.ramp_then_plateau(seconds, climb_s, cv, seed, start=COLD / WARM, level=WARM)
    return [float(v) for v in series]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_jvm_climb_of_20_s_then_flat_settles_at_about_20_s(seed):
    got = settle_time(jvm_climb(40, 20, 0.01, seed))
    assert got.kind is SettleKind.SETTLED
    assert got.settled_at_s is not None and abs(got.settled_at_s - 20) <= 2
    assert got.warmup_more_s == got.settled_at_s
    assert f"a warm-up about {got.settled_at_s} s longer" in got.sentence()


@pytest.mark.parametrize("seed", SEEDS)
def test_a_jit_exponential_warmup_settles_where_it_reaches_the_plateau(seed):
    # 1 - 0.8 e^(-t/5) is within 5% of the plateau from t = 5 ln(16) = 13.9 s
    series = syn.exponential_warmup(40, tau_s=5.0, cv=0.01, seed=seed, start=0.2, level=WARM)
    got = settle_time(series.tolist())
    assert got.kind is SettleKind.SETTLED
    assert got.settled_at_s is not None and 12 <= got.settled_at_s <= 20


def test_settled_when_the_window_found_is_not_shown_but_a_later_start_is():
    # 30 s, climb 20 s with 3% noise: the steady window starts at 18 s and is not shown
    # steady; from 20 s on it is (the scan after the window's start)
    series = jvm_climb(30, 20, 0.03, seed=3)
    state = detect_steady_state(series)
    assert state.window_start == 18 and not state.steady_shown
    got = settle_time(series, state)
    assert (got.kind, got.settled_at_s) == (SettleKind.SETTLED, 20)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_flat_series_needs_no_warmup(seed):
    got = settle_time(syn.flat(40, 0.01, seed, phi=0.3).tolist())
    assert got.kind is SettleKind.NONE_NEEDED
    assert got.warmup_more_s == 0
    assert "would not change it" in got.sentence()


def test_a_constant_series_needs_no_warmup():
    assert settle_time([1000.0] * 20).kind is SettleKind.NONE_NEEDED


@pytest.mark.parametrize("seed", SEEDS)
def test_a_climb_through_the_whole_level_never_settles(seed):
    # the #32 measurement: 25 s climbing from 10.7k to 46.3k req/s
    climb = np.linspace(10_683, 46_326, 25) * (1.0 + syn.noise(25, 0.01, seed))
    got = settle_time(climb.tolist())
    assert got.kind is SettleKind.NOT_SETTLED
    assert got.warmup_more_s is None and got.settled_at_s is None
    assert got.end_window_s == 9  # a third of the level
    assert got.end_change is not None and got.end_change > 0.2
    assert "did not settle within the 25-s level" in got.sentence()
    assert "longer than 25 s may be needed" in got.sentence()


@pytest.mark.parametrize("seed", SEEDS)
def test_a_climb_ending_too_late_to_show_is_not_settled(seed):
    # settles at 20 s of 25: the 5 flat seconds are too few for a steady window (9 s)
    got = settle_time(jvm_climb(25, 20, 0.01, seed))
    assert got.kind is SettleKind.NOT_SETTLED


@pytest.mark.parametrize("seed", SEEDS)
def test_a_slow_decline_never_settles(seed):
    got = settle_time(syn.decline(25, 0.3, 0.01, seed).tolist())
    assert got.kind is SettleKind.NOT_SETTLED
    assert got.end_change is not None and got.end_change < -0.05


def test_a_noisy_flat_level_is_not_a_missing_warmup():
    # 10% noise, 25 s: no drift beyond 5% at the end, but nothing bounded either
    got = settle_time(syn.flat(25, 0.1, seed=1).tolist())
    assert got.kind is SettleKind.NOISY
    assert got.warmup_more_s == 0
    assert got.sentence().startswith("no warm-up is missing")


def test_a_noisy_plateau_after_a_climb_says_where_it_rose_to():
    got = settle_time(jvm_climb(30, 20, 0.03, seed=1))
    assert got.kind is SettleKind.NOISY
    assert got.settled_at_s is not None and abs(got.settled_at_s - 20) <= 3
    assert got.warmup_more_s == got.settled_at_s
    assert f"a warm-up about {got.settled_at_s} s longer, or a longer level" in got.sentence()


def test_a_noisy_flat_stretch_is_not_a_warmup_by_chance():
    # flat with 3% noise: some later start is shown steady, but the seconds before it were
    # the same level, so it is not called settled there
    for seed in range(10):
        got = settle_time(syn.flat(25, 0.03, seed).tolist())
        assert got.kind is not SettleKind.SETTLED


@pytest.mark.parametrize("seed", [0, 1, 3, 4])
def test_a_very_noisy_flat_level_cannot_tell_a_missing_warmup(seed):
    # 30% second-to-second noise: the end's fitted change exceeds 5% but not that noise
    got = settle_time(syn.flat(25, 0.3, seed).tolist())
    assert got.kind is SettleKind.NOISY and got.warmup_more_s == 0
    assert got.end_change is not None and abs(got.end_change) > 0.05
    assert got.sentence().startswith("the series cannot tell whether a warm-up is missing")
