"""stackbench.analysis.steady on synthetic per-second series with known answers."""

import math

import numpy as np
import pytest
import synthetic_series as syn

from stackbench.analysis import steady
from stackbench.analysis.steady import STEADY_TOLERANCE, SteadyClass, detect_steady_state

LEVEL = syn.LEVEL
SEEDS = range(8)


def test_floor_and_minimum_window():
    assert [steady.floor_seconds(n) for n in (5, 10, 20, 25, 60)] == [2, 2, 2, 3, 6]
    assert [steady.min_window_seconds(n) for n in (10, 15, 16, 30, 60)] == [5, 5, 6, 10, 20]


@pytest.mark.parametrize("seed", SEEDS)
def test_ramp_then_plateau_is_a_warmup_with_its_length(seed):
    series = syn.ramp_then_plateau(25, ramp_s=13, cv=0.01, seed=seed)
    s = detect_steady_state(series.tolist())
    assert s.steady_class is SteadyClass.WARMUP
    assert abs(s.warmup_s - 13) <= 2
    assert s.window_start == s.warmup_s and s.window_end == 25
    assert s.steady_mean == pytest.approx(LEVEL, rel=0.01)
    assert "warm-up of" in s.message


def test_jit_like_warmup_reaches_the_plateau():
    # java-servlet hello: 2.4k req/s in the first second, ~62k from about the 14th.
    series = syn.exponential_warmup(25, tau_s=3.0, cv=0.01, seed=1, start=0.04, level=62_000)
    s = detect_steady_state(series.tolist())
    assert s.steady_class is SteadyClass.WARMUP
    assert 9 <= s.warmup_s <= 15
    assert s.steady_mean == pytest.approx(62_000, rel=0.01)
    cold = float(np.mean(series))
    assert cold < 0.9 * s.steady_mean  # the whole-level mean would have understated it


@pytest.mark.parametrize("seed", SEEDS)
def test_flat_noise_is_flat_from_the_floor(seed):
    s = detect_steady_state(syn.flat(30, 0.05, seed, phi=0.3).tolist())
    assert s.steady_class is SteadyClass.FLAT
    assert (s.window_start, s.window_end, s.warmup_s) == (3, 30, 0)
    assert s.has_steady_state and s.window_seconds == 27


@pytest.mark.parametrize("at", [8, 15, 27])
def test_single_stalled_second_leaves_a_plateau_flat_and_counts_in_its_mean(at):
    series = syn.with_stall(syn.flat(30, 0.01, seed=2), at, 1, 0.0)
    s = detect_steady_state(series.tolist())
    assert s.steady_class is SteadyClass.FLAT
    assert s.window_start <= at < s.window_end
    assert s.steady_mean == pytest.approx(float(np.mean(series[s.window_start :])))


def test_stall_of_a_few_seconds_is_a_transient_inside_the_window():
    series = syn.with_stall(syn.flat(30, 0.01, seed=3), 12, 4, 0.0)
    s = detect_steady_state(series.tolist())
    assert s.steady_class is SteadyClass.FLAT
    assert s.transients == ((12, 16),)
    assert s.steady_mean == pytest.approx(float(np.mean(series[3:])))


def test_dip_of_five_seconds_or_more_ends_the_window():
    # As documented: a departure of MIN_WINDOW_S seconds is a change of level; what follows
    # it is classed like any level (here a recovery, so a warm-up).
    series = syn.with_stall(syn.flat(30, 0.01, seed=3), 10, 5, 0.0)
    s = detect_steady_state(series.tolist())
    assert s.steady_class is SteadyClass.WARMUP
    assert s.window_start == 15 and s.transients == ()


def test_level_ending_in_a_stall_has_no_steady_state():
    series = syn.with_stall(syn.flat(30, 0.01, seed=4), 26, 3, 0.3)
    s = detect_steady_state(series.tolist())
    assert s.steady_class is SteadyClass.NO_STEADY_STATE
    assert not s.has_steady_state and s.steady_mean is None and s.warmup_s is None


@pytest.mark.parametrize("seed", SEEDS)
def test_slow_decline_has_no_steady_state_and_says_a_longer_level_is_the_fix(seed):
    s = detect_steady_state(syn.decline(30, 0.2, 0.01, seed).tolist())
    assert s.steady_class is SteadyClass.NO_STEADY_STATE
    assert s.window_start is None and s.window_end is None
    assert "longer level" in s.message


@pytest.mark.parametrize("seed", SEEDS)
def test_step_down_is_a_slowdown_steady_after_the_fall(seed):
    s = detect_steady_state(syn.step(30, 10, 1.0, 0.7, 0.01, seed).tolist())
    assert s.steady_class is SteadyClass.SLOWDOWN
    assert abs(s.window_start - 10) <= 1 and s.window_end == 30
    assert s.warmup_s is None
    assert s.steady_mean == pytest.approx(0.7 * LEVEL, rel=0.01)
    assert s.changepoints and abs(s.changepoints[-1] - 10) <= 1


def test_shift_within_the_tolerance_is_not_a_change_of_level():
    # 1% step in a very quiet series: PELT sees it, but it is within 2%: still flat.
    s = detect_steady_state(syn.step(30, 15, 1.0, 0.99, 0.001, seed=5).tolist())
    assert s.changepoints == (15,)
    assert s.steady_class is SteadyClass.FLAT and s.window_start == 3


def test_change_late_in_the_level_leaves_no_steady_state():
    # node hello @100: 61k, 63k, 59k then 28k, 30k: the last level is too short.
    series = [61e3, 63e3, 59e3, 60e3, 61e3, 62e3, 60e3, 61e3, 28e3, 30e3, 29e3]
    s = detect_steady_state(series)
    assert s.steady_class is SteadyClass.NO_STEADY_STATE
    assert s.changepoints == (8,)
    assert "8 s into the 11-s level" in s.message and "longer level" in s.message


def test_too_short_level():
    s = detect_steady_state([100.0, 110.0, 105.0, 107.0, 106.0, 104.0])
    assert s.steady_class is SteadyClass.NO_STEADY_STATE
    assert "too short" in s.message and s.segments == ()


def test_constant_and_dead_series_are_flat():
    assert detect_steady_state([500.0] * 20).steady_class is SteadyClass.FLAT
    dead = detect_steady_state([0.0] * 20)
    assert dead.steady_class is SteadyClass.FLAT and dead.steady_mean == 0.0


def test_same_answer_at_any_throughput_scale():
    # The normal cost is scale-free: 300 req/s and 30k req/s stacks get the same segments.
    series = syn.ramp_then_plateau(30, 10, 0.02, seed=6)
    small, large = detect_steady_state((series * 0.03).tolist()), detect_steady_state(series)
    assert small.changepoints == large.changepoints
    assert (small.steady_class, small.window_start) == (large.steady_class, large.window_start)


def test_rejects_values_that_are_not_measurements():
    with pytest.raises(ValueError):
        detect_steady_state([1.0, 2.0, math.inf] * 5)


def test_warmup_in_a_five_minute_level():
    s = detect_steady_state(syn.ramp_then_plateau(300, 40, 0.02, seed=7).tolist())
    assert s.steady_class is SteadyClass.WARMUP and abs(s.warmup_s - 40) <= 2


# --- steadiness shown, not assumed -----------------------------------------------------------
def test_a_quiet_flat_level_shows_its_steadiness():
    state = detect_steady_state(syn.flat(30, 0.01, seed=3))
    assert state.steady_shown and state.change_bound is not None
    assert state.change_bound <= STEADY_TOLERANCE
    assert "steadiness not shown" not in state.message


def test_a_10_percent_decline_inside_a_12_s_level_is_never_called_steady():
    """The quick run's go sha256?n=1 @300 fell 10.6% across its window and was classed flat:
    a short window that cannot bound its change says so, with the level that would."""
    shown = 0
    for seed in range(40):
        state = detect_steady_state(syn.decline(12, 0.10, 0.01, seed))
        if state.steady_shown:  # only a window short enough to really change < 5% across it
            shown += 1
            assert 0.10 * (state.window_seconds - 1) / 11 <= STEADY_TOLERANCE, state.message
        elif state.has_steady_state:
            assert "steadiness not shown" in state.message
            assert "would show" in state.message or "settles" in state.message
    assert shown <= 4  # the whole 10-s window (an 8% change) is never shown steady


def test_steadiness_names_the_level_length_that_would_show_it():
    s = steady.Steadiness(False, 0.01, 0.08, 10, 0.05)
    # margin 0.07 must shrink to the 0.04 of room left: (0.07 / 0.04)^2 * 10 s, + 2 s outside
    assert s.why(2).endswith(
        f"a level of about {math.ceil(10 * (0.07 / 0.04) ** 2) + 2} s would show it"
    )
    assert "settles" in steady.Steadiness(False, 0.045, 0.09, 10, 0.05).why(2)
    assert "too short or too autocorrelated" in steady.Steadiness(False, 0.0, None, 6, 0.05).why(2)


@pytest.mark.parametrize("seed", range(20))
def test_the_window_fit_is_scipys_least_squares_line(seed: int) -> None:
    """_ols is linregress's arithmetic (slope, its standard error, the residuals) without its
    argument handling; an exact line has no error to doubt it."""
    from scipy import stats as scipy_stats

    from stackbench.analysis.steady import _ols

    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 120))
    y = 1.0 + rng.normal(0.0, 0.05, n) + rng.normal(0.0, 0.002) * np.arange(n)
    slope, residuals, se = _ols(y)
    fit = scipy_stats.linregress(np.arange(n, dtype=np.float64), y)
    assert slope == pytest.approx(fit.slope, rel=1e-9, abs=1e-15)
    assert se == pytest.approx(fit.stderr, rel=1e-9)
    expected = y - (fit.intercept + fit.slope * np.arange(n))
    assert residuals == pytest.approx(expected, abs=1e-12)
    assert _ols(np.arange(n, dtype=np.float64) * 0.37 + 5.0)[2] == 0.0
