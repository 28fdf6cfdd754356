"""stackbench.analysis.intervals against hand-computed values and seeded synthetic series."""

import math

import numpy as np
import pytest
import synthetic_series as syn
from scipy import stats as scipy_stats

from stackbench.analysis import intervals


def test_window_interval_matches_hand_computation():
    # mean 100; variance of x / mean = 60 / 9 / 100^2; lag-1 autocorrelation -0.55, so no
    # correction (n_eff = 10, df = 9): half-width on the log scale t(9) * sqrt(var / 10)
    x = [100.0, 104, 98, 102, 96, 100, 103, 97, 101, 99]
    est = intervals.window_interval(x)
    half = scipy_stats.t.ppf(0.975, 9) * math.sqrt(60 / 9 / 100**2 / 10)
    assert est.value == 100.0 and est.n == 10 and est.confidence == 0.95
    assert est.low == pytest.approx(100 * math.exp(-half))
    assert est.high == pytest.approx(100 * math.exp(half))


def test_window_interval_needs_three_seconds():
    est = intervals.window_interval([10.0, 12.0])
    assert est.value == 11.0 and not est.has_interval
    flat = intervals.window_interval([7.0] * 9)  # a rate limit: really no spread
    assert (flat.low, flat.value, flat.high) == (7.0, 7.0, 7.0)
    with pytest.raises(ValueError):
        intervals.window_interval([])
    with pytest.raises(ValueError):
        intervals.window_interval([1.0, math.inf, 2.0, 3.0])


def test_window_interval_covers_the_true_mean_of_white_noise():
    covered = 0
    for seed in range(200):
        series = syn.flat(30, 0.05, seed, level=1000.0)
        est = intervals.window_interval(series)
        covered += est.low <= 1000.0 <= est.high
    assert 0.92 <= covered / 200 <= 0.995


def test_effective_size_keeps_coverage_where_treating_seconds_as_independent_does_not():
    # AR(1) seconds (phi 0.5): a t interval over the seconds themselves is far too narrow.
    corrected, naive = 0, 0
    for seed in range(200):
        series = syn.flat(30, 0.05, seed, phi=0.5, level=1000.0)
        est = intervals.window_interval(series)
        corrected += est.low <= 1000.0 <= est.high
        half = scipy_stats.t.ppf(0.975, 29) * series.std(ddof=1) / math.sqrt(30)
        naive += abs(series.mean() - 1000.0) <= half
    assert corrected / 200 >= 0.90
    assert naive / 200 <= 0.82


def test_percentile_window_interval_is_centred_on_the_merged_percentile():
    per_second = [900.0, math.nan, 1100.0, 1000.0, 950.0, 1050.0, 1000.0, 980.0, 1020.0, 1000.0]
    measured = [v for v in per_second if not math.isnan(v)]
    plain = intervals.window_interval(measured)
    est = intervals.window_interval(per_second, shown=1200.0)
    assert est.n == 9 and est.value == 1200.0
    # the same relative half-width, around the merged figure
    assert est.high / est.value == pytest.approx(plain.high / plain.value)
    assert est.value / est.low == pytest.approx(plain.value / plain.low)
    assert intervals.window_interval(measured).value == pytest.approx(np.mean(measured))
    with pytest.raises(ValueError):
        intervals.window_interval([math.nan, math.nan])


def test_bootstrap_resampling_is_seeded():
    a = intervals.resample([1.0, 2.0, 3.0, 10.0], 500, np.random.default_rng(3))
    b = intervals.resample([1.0, 2.0, 3.0, 10.0], 500, np.random.default_rng(3))
    assert a.tolist() == b.tolist() and len(a) == 500
    assert set(np.unique(a)) <= {1.0, 1.5, 2.0, 2.5, 3.0, 6.0, 6.5, 10.0, 5.5}
    low, high = intervals.percentile_bounds(np.arange(101, dtype=float), 0.9)
    assert (low, high) == pytest.approx((5.0, 95.0))
