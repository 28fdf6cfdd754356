"""stackbench.analysis.intervals against hand-computed values and seeded synthetic series."""

import math

import numpy as np
import pytest
import synthetic_series as syn
from scipy import stats as scipy_stats

from stackbench.analysis import intervals
from stackbench.analysis.intervals import MedianInterval, NotEnoughRepetitions


def test_batch_means_drop_the_oldest_leftover_seconds():
    # 10 seconds: 3 batches of 3, the first second left over.
    assert intervals.batch_count(10) == 3
    assert intervals.batch_means(range(1, 11)).tolist() == [3.0, 6.0, 9.0]
    assert intervals.batch_count(16) == 4 and intervals.batch_count(3) == 1


def test_batch_means_interval_matches_hand_computation():
    est = intervals.batch_means_interval(list(range(1, 11)))
    # centre: mean of all 10 seconds; batch means 3, 6, 9: sd 3, t(0.975, 2) = 4.302653
    half = 4.302653 * 3 / math.sqrt(3)
    assert est.value == 5.5
    assert est.low == pytest.approx(5.5 - half, rel=1e-6)
    assert est.high == pytest.approx(5.5 + half, rel=1e-6)
    assert (est.n, est.batches, est.confidence) == (10, 3, 0.95)


def test_batch_means_interval_needs_two_batches():
    est = intervals.batch_means_interval([10.0, 12.0, 11.0])
    assert est.value == 11.0 and not est.has_interval and est.batches == 0
    flat = intervals.batch_means_interval([7.0] * 9)  # a rate limit: really no spread
    assert (flat.low, flat.value, flat.high) == (7.0, 7.0, 7.0)
    with pytest.raises(ValueError):
        intervals.batch_means_interval([])
    with pytest.raises(ValueError):
        intervals.batch_means_interval([1.0, math.nan, 2.0, 3.0])


def test_batch_means_interval_covers_the_true_mean_of_white_noise():
    covered = 0
    for seed in range(200):
        series = syn.flat(30, 0.05, seed, level=1000.0)
        est = intervals.batch_means_interval(series)
        covered += est.low <= 1000.0 <= est.high
    assert 0.90 <= covered / 200 <= 0.99


def test_batch_means_keep_coverage_where_treating_seconds_as_independent_does_not():
    # AR(1) seconds (phi 0.5): a t interval over the seconds themselves is far too narrow.
    batch, naive = 0, 0
    for seed in range(200):
        series = syn.flat(30, 0.05, seed, phi=0.5, level=1000.0)
        est = intervals.batch_means_interval(series)
        batch += est.low <= 1000.0 <= est.high
        half = scipy_stats.t.ppf(0.975, 29) * series.std(ddof=1) / math.sqrt(30)
        naive += abs(series.mean() - 1000.0) <= half
    assert batch / 200 >= 0.88
    assert naive / 200 <= 0.82


def test_percentile_interval_is_centred_on_the_merged_percentile():
    per_second = [900.0, math.nan, 1100.0, 1000.0, 950.0, 1050.0, 1000.0, 980.0, 1020.0, 1000.0]
    measured = [v for v in per_second if not math.isnan(v)]
    plain = intervals.batch_means_interval(measured)
    est = intervals.percentile_interval(per_second, merged=1200.0)
    assert est.n == 9 and est.value == 1200.0
    assert est.high - est.value == pytest.approx(plain.high - plain.value)
    assert est.value - est.low == pytest.approx(plain.value - plain.low)
    assert intervals.percentile_interval(measured).value == pytest.approx(np.mean(measured))
    with pytest.raises(ValueError):
        intervals.percentile_interval([math.nan, math.nan])


def test_median_interval_of_six_repetitions_is_their_range():
    est = intervals.median_interval([10.0, 14.0, 11.0, 13.0, 12.0, 30.0])
    assert isinstance(est, MedianInterval)
    assert (est.value, est.low, est.high) == (12.5, 10.0, 30.0)
    assert est.confidence == pytest.approx(1 - 2 / 64)


def test_median_interval_of_ten_repetitions_uses_the_second_order_statistics():
    # P(Binomial(10, 1/2) <= 1) = 11/1024 < 0.025 <= P(<= 2) = 56/1024: ranks 2 and 9.
    est = intervals.median_interval([float(v) for v in range(1, 11)])
    assert isinstance(est, MedianInterval)
    assert (est.low, est.high) == (2.0, 9.0)
    assert est.confidence == pytest.approx(1 - 2 * 11 / 1024)


def test_median_interval_says_when_repetitions_are_too_few():
    est = intervals.median_interval([10.0, 11.0, 12.0, 13.0, 14.0])
    assert isinstance(est, NotEnoughRepetitions)
    assert (est.value, est.n, est.needed) == (12.0, 5, 6)
    assert "not enough repetitions" in est.message and "6" in est.message
    assert intervals.repetitions_needed(0.95) == 6
    assert intervals.repetitions_needed(0.99) == 8


def test_bootstrap_resampling_is_seeded():
    a = intervals.resample([1.0, 2.0, 3.0, 10.0], 500, np.random.default_rng(3))
    b = intervals.resample([1.0, 2.0, 3.0, 10.0], 500, np.random.default_rng(3))
    assert a.tolist() == b.tolist() and len(a) == 500
    assert set(np.unique(a)) <= {1.0, 1.5, 2.0, 2.5, 3.0, 6.0, 6.5, 10.0, 5.5}
    low, high = intervals.percentile_bounds(np.arange(101, dtype=float), 0.9)
    assert (low, high) == pytest.approx((5.0, 95.0))
