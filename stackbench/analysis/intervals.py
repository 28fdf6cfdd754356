"""Confidence intervals for the figures of a level and of its repetitions: pure functions.

Within one level the figures are per-second values of its steady window (throughput, or a
latency percentile per second). Those seconds are autocorrelated: a busy second tends to follow
a busy second (queues, GC cycles, CPU frequency and scheduler effects last longer than a
second). A plain bootstrap of seconds, or a t interval treating them as independent, then
understates the variance of their mean and gives intervals too narrow to be honest. The method
of batch means (Law & Kelton, "Simulation Modeling and Analysis", ch. 9) cuts the window into
floor(sqrt(n)) consecutive batches: the means of long-enough batches are nearly independent and
nearly normal, so a Student t interval over the batch means has about its nominal coverage.

Across repetitions the median is reported with a distribution-free interval between two order
statistics (as benchstat does): it needs no assumption on the shape of the distribution, but a
95% interval needs at least 6 repetitions; with fewer the caller is told so and falls back to
the within-level intervals.

Bootstrap resampling of medians (used by stats.py and significance.py) lives here too, on a
seeded numpy generator so that every report is reproducible.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats as scipy_stats

DEFAULT_CONFIDENCE = 0.95
FloatArray = npt.NDArray[np.float64]
Values = Sequence[float] | FloatArray
# np.median or np.mean: a reduction taking an `axis` keyword.
Statistic = Callable[..., Any]


def finite_array(values: Values, what: str) -> FloatArray:
    """The values as a float array; NaN or infinity is a caller's bug, not a measurement."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{what}: expected a flat sequence of numbers")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{what}: values must be finite (got NaN or infinity)")
    return array


# --- within a level: batch means -------------------------------------------------------------
@dataclass(frozen=True)
class BatchMeansInterval:
    """A figure of a level with its batch-means interval (low/high None: too few seconds)."""

    value: float       # the figure itself (mean of the window, or the merged percentile)
    low: float | None
    high: float | None
    n: int             # seconds the interval was computed from
    batches: int       # number of batches (0 when there is no interval)
    confidence: float

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None


def batch_count(n: int) -> int:
    """floor(sqrt(n)) batches of floor(n / batches) seconds: the usual balance between enough
    batches for the t distribution and batches long enough to be nearly independent."""
    return math.isqrt(n) if n > 0 else 0


def batch_means(values: Values) -> FloatArray:
    """Means of floor(sqrt(n)) consecutive batches of equal length. The n mod batches
    seconds that do not fill a batch are dropped from the start of the window: the start
    is the part closest to the warm-up, so it is the one to give up."""
    array = finite_array(values, "batch means")
    batches = batch_count(len(array))
    if batches == 0:
        return np.empty(0, dtype=np.float64)
    size = len(array) // batches
    used = array[len(array) - batches * size:]
    means: FloatArray = used.reshape(batches, size).mean(axis=1)
    return means


def batch_means_interval(values: Values, confidence: float = DEFAULT_CONFIDENCE,
                         center: float | None = None) -> BatchMeansInterval:
    """Interval for the mean of an autocorrelated per-second series by batch means.

    The interval is centre +- t(b-1) * sd(batch means) / sqrt(b). The centre is the mean of
    all seconds (the headline: completed requests / seconds) unless `center` is given. Needs at
    least 4 seconds (2 batches); with fewer, or a single batch, there is no interval."""
    _check_confidence(confidence)
    array = finite_array(values, "batch-means interval")
    if len(array) == 0:
        raise ValueError("batch-means interval of no values")
    value = float(np.mean(array)) if center is None else float(center)
    means = batch_means(array)
    if len(means) < 2:
        return BatchMeansInterval(value, None, None, len(array), 0, confidence)
    half = _t_half_width(means, confidence)
    return BatchMeansInterval(value, value - half, value + half, len(array), len(means),
                              confidence)


def _t_half_width(means: FloatArray, confidence: float) -> float:
    b = len(means)
    spread = float(np.std(means, ddof=1))
    quantile = float(scipy_stats.t.ppf(0.5 + confidence / 2.0, b - 1))
    return quantile * spread / math.sqrt(b)


def percentile_interval(per_second: Values, merged: float | None = None,
                        confidence: float = DEFAULT_CONFIDENCE) -> BatchMeansInterval:
    """Interval for a latency percentile of a steady window, from its per-second values.

    The figure to report is the percentile of the histograms merged over the window
    (`merged`): the mean of per-second p99s is not the p99 of the window. The spread of that
    figure is estimated from how the per-second percentile moves from batch to batch, so the
    interval is merged +- t * sd(batch means of per-second values) / sqrt(b). Its half-width
    assumes that the offset between the merged percentile and the mean of the per-second ones
    is stable across the window (it is a bias of averaging percentiles, not noise). Seconds
    without a percentile (no completed request: NaN) carry no latency and are skipped; without
    `merged` the centre is the mean of the per-second values."""
    array = np.asarray(per_second, dtype=np.float64)
    if np.any(np.isinf(array)):
        raise ValueError("percentile interval: per-second values must be finite")
    measured = array[~np.isnan(array)]
    if len(measured) == 0:
        raise ValueError("percentile interval: no second has a percentile")
    return batch_means_interval(measured.tolist(), confidence, center=merged)


# --- across repetitions: order statistics ----------------------------------------------------
@dataclass(frozen=True)
class MedianInterval:
    """The median of the repetitions with a distribution-free interval between two of them."""

    value: float
    low: float
    high: float
    n: int
    confidence: float  # the exact coverage of this pair of order statistics (>= the requested)


@dataclass(frozen=True)
class NotEnoughRepetitions:
    """Too few repetitions for an order-statistic interval at the requested confidence."""

    value: float       # the median, still the best single figure
    n: int
    needed: int
    confidence: float  # the requested confidence

    @property
    def message(self) -> str:
        return (f"not enough repetitions for a {self.confidence:.0%} interval of the median "
                f"({self.n}, needs at least {self.needed}): showing the within-level interval")


def repetitions_needed(confidence: float = DEFAULT_CONFIDENCE) -> int:
    """Fewest values whose extremes cover the median with `confidence`: 1 - 2 * 0.5**n."""
    _check_confidence(confidence)
    n = 1
    while 1.0 - 2.0 * 0.5 ** n < confidence:
        n += 1
    return n


def median_interval(values: Values, confidence: float = DEFAULT_CONFIDENCE
                    ) -> MedianInterval | NotEnoughRepetitions:
    """Median with the order-statistic interval [x(k), x(n-k+1)], k the largest rank with
    P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2: the number of values below the true
    median is Binomial(n, 1/2), whatever the distribution (Lehmann, "Nonparametrics", 1975)."""
    _check_confidence(confidence)
    array = np.sort(finite_array(values, "median interval"))
    n = len(array)
    if n == 0:
        raise ValueError("median interval of no values")
    center = float(np.median(array))
    alpha = 1.0 - confidence
    # binom.ppf: the smallest k with P(X <= k) >= alpha / 2, so P(X <= k - 1) < alpha / 2.
    k = int(scipy_stats.binom.ppf(alpha / 2.0, n, 0.5))
    if k < 1:
        return NotEnoughRepetitions(center, n, repetitions_needed(confidence), confidence)
    coverage = 1.0 - 2.0 * float(scipy_stats.binom.cdf(k - 1, n, 0.5))
    return MedianInterval(center, float(array[k - 1]), float(array[n - k]), n, coverage)


# --- bootstrap -------------------------------------------------------------------------------
def resample(values: Values, resamples: int, rng: np.random.Generator,
             statistic: Statistic = np.median) -> FloatArray:
    """`statistic` (np.median or np.mean, along axis 1) of `resamples` samples drawn with
    replacement: one bulk draw of indices, so that a report bootstrapping hundreds of figures
    stays fast."""
    array = finite_array(values, "bootstrap")
    if len(array) == 0:
        raise ValueError("bootstrap of no values")
    picks = rng.integers(0, len(array), size=(resamples, len(array)))
    result: FloatArray = np.asarray(statistic(array[picks], axis=1), dtype=np.float64)
    return result


def percentile_bounds(statistics: FloatArray, confidence: float) -> tuple[float, float]:
    """Percentile-bootstrap interval: the (1-c)/2 and (1+c)/2 quantiles ('linear' = type 7)."""
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(statistics, [tail, 1.0 - tail], method="linear")
    return float(low), float(high)


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
