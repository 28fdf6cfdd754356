"""Confidence intervals for the figures of a level and of its repetitions: pure functions.

Within one level the figures are per-second values of its steady window (throughput, or a
latency percentile per second). Those seconds are autocorrelated: a busy second tends to follow
a busy second (queues, GC cycles, CPU frequency and scheduler effects last longer than a
second), so a t interval treating them as independent is too narrow. The interval of a figure
is the one its verdict evidence gives (verdicts.series_evidence: the effective sample size of
an AR(1) series with a bias-corrected lag-1 autocorrelation; across repetitions, Welch on the
repetitions' logs): the interval shown and the comparisons made from it never disagree.

Bootstrap resampling of medians (used by stats.py for whole-level figures) lives here too, on a
seeded numpy generator so that every report is reproducible.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

# scipy and ruptures are imported in the functions that use them: together 0.7 s of CPU at
# start-up, which every command that analyses nothing (stacks, doctor, --version) would pay.
from stackbench.analysis.verdicts import Evidence, series_evidence, t_quantile

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


# --- within a level and across repetitions: the verdicts' evidence as an interval -----------
@dataclass(frozen=True)
class FigureInterval:
    """A figure with the interval its evidence gives (low/high None: no evidence)."""

    value: float
    low: float | None
    high: float | None
    n: int  # seconds of the window, or repetitions
    confidence: float
    evidence: Evidence | None

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None


def evidence_interval(
    evidence: Evidence | None, value: float, confidence: float = DEFAULT_CONFIDENCE
) -> FigureInterval:
    """value * e^(+-t se) from the evidence's log-scale variance and degrees of freedom: the
    same arithmetic as a verdict's, so a figure's interval and its comparisons agree."""
    _check_confidence(confidence)
    if evidence is None:
        return FigureInterval(value, None, None, 0, confidence, None)
    half = t_quantile(0.5 + confidence / 2.0, evidence.df) * math.sqrt(evidence.variance)
    return FigureInterval(
        value, value * math.exp(-half), value * math.exp(half), evidence.n, confidence, evidence
    )


def window_interval(
    per_second: Values, shown: float | None = None, confidence: float = DEFAULT_CONFIDENCE
) -> FigureInterval:
    """A steady window's figure (its mean, or `shown`: a percentile merged over the window)
    with the interval of its autocorrelated per-second values (effective sample size; seconds
    without a figure, NaN, are skipped). Fewer than 3 seconds: no interval."""
    array = np.asarray(per_second, dtype=np.float64)
    if np.any(np.isinf(array)):
        raise ValueError("window interval: per-second values must be finite")
    measured = array[~np.isnan(array)]
    if len(measured) == 0:
        raise ValueError("window interval: no second has a figure")
    value = float(np.mean(measured)) if shown is None else float(shown)
    return evidence_interval(series_evidence(measured, shown), value, confidence)


# --- bootstrap -------------------------------------------------------------------------------
def resample(
    values: Values, resamples: int, rng: np.random.Generator, statistic: Statistic = np.median
) -> FloatArray:
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
