"""No winner on noise: when two sets of figures really differ. Pure functions.

Two sets (repetitions of two stacks or runs, or the steady seconds of two levels) differ only
when both hold:

1. Mann-Whitney U, two-sided, at ALPHA = 0.05 (Mann & Whitney 1947): a rank test, so one odd
   repetition cannot carry it, and it assumes nothing about the shape of the distribution.
   When one comparison tests several cases and metrics, the p-values are adjusted together by
   Holm-Bonferroni (Holm 1979): the chance of any false "faster" in the whole comparison stays
   at most 5%, with more power than plain Bonferroni.
2. The interval of the ratio a / b lies wholly outside 1 +- threshold (defaults: 2% for
   throughput, 5% for latency percentiles), as criterion separates "change" from "change within
   noise threshold": a real but tiny difference is not worth a claim (and the machine's own
   noise is of that order).

The ratio's interval is a percentile bootstrap, resampling the two sets independently: of the
ratio of medians for repetitions (benchstat's statistic, consistent with a rank test, robust to
one disturbed repetition), of the ratio of means for batch means of seconds (the headline of a
level is a mean). Fieller's interval or the delta method need approximately normal means and
misbehave when the denominator's interval comes near zero or one repetition is an outlier; the
bootstrap needs neither, and its weakness, a slightly narrow interval with 5 or fewer values, is
covered by requiring the exact rank test as well.

Per-second values are autocorrelated, which both the rank test and the bootstrap would take for
extra independent evidence: compare_series first reduces each window to floor(sqrt(n)) batch
means (intervals.batch_means), which are nearly independent, and compares those.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from scipy import stats as scipy_stats

from stackbench.analysis.intervals import (
    DEFAULT_CONFIDENCE,
    FloatArray,
    Statistic,
    batch_means,
    finite_array,
    percentile_bounds,
    resample,
)
from stackbench.analysis.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, Verdict

ALPHA = 0.05
THROUGHPUT_THRESHOLD = 0.02
PERCENTILE_THRESHOLD = 0.05
Center = Literal["median", "mean"]
_STATISTICS: dict[str, Statistic] = {"median": np.median, "mean": np.mean}


@dataclass(frozen=True)
class Difference:
    """a compared with b for one figure: ratio a/b with its interval, test and verdict."""

    verdict: Verdict
    ratio: float | None        # center(a) / center(b); None when b's center is 0
    low: float | None          # interval of the ratio (None: fewer than 2 values a side)
    high: float | None
    p_value: float | None      # Mann-Whitney, Holm-adjusted within its comparison
    p_raw: float | None        # before adjustment
    n_a: int
    n_b: int
    threshold: float           # relative change below which nothing is claimed
    higher_is_better: bool
    alpha: float
    confidence: float
    unit: str                  # what n counts: "values" or "batches" (of seconds)
    note: str | None           # why no claim can be made, when that is known in advance


def mann_whitney_p(a: Sequence[float] | FloatArray, b: Sequence[float] | FloatArray) -> float:
    """Two-sided Mann-Whitney U p-value (exact for small samples without ties)."""
    if min(a) == max(a) == min(b) == max(b):
        return 1.0  # all values equal: no evidence of any difference
    return float(scipy_stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)


def smallest_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided p-value Mann-Whitney can give for n_a + n_b values (no ties):
    every a above every b, 2 / C(n_a + n_b, n_a)."""
    return min(1.0, 2.0 / math.comb(n_a + n_b, n_a))


def holm_bonferroni(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: the i-th smallest p is
    multiplied by (m - i + 1), made non-decreasing in that order, and capped at 1. A
    hypothesis is rejected at level alpha exactly when its adjusted p is <= alpha."""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def compare_samples(a: Sequence[float] | FloatArray, b: Sequence[float] | FloatArray, *,
                    threshold: float = THROUGHPUT_THRESHOLD, higher_is_better: bool = True,
                    center: Center = "median", alpha: float = ALPHA,
                    confidence: float = DEFAULT_CONFIDENCE, resamples: int = DEFAULT_RESAMPLES,
                    seed: int = DEFAULT_SEED, unit: str = "values") -> Difference:
    """Is a better than b? Independent figures (e.g. repetitions); a family of one test: pass
    the results of one comparison through judge_together to adjust for multiple tests."""
    statistic = _STATISTICS[center]
    xa, xb = finite_array(a, "compared values"), finite_array(b, "compared values")
    if len(xa) == 0 or len(xb) == 0:
        raise ValueError("comparison needs at least one value on each side")
    ca, cb = float(statistic(xa)), float(statistic(xb))
    ratio = ca / cb if cb != 0 else None
    base = Difference(Verdict.INSUFFICIENT_DATA, ratio, None, None, None, None, len(xa),
                      len(xb), threshold, higher_is_better, alpha, confidence, unit, None)
    if ratio is None:
        return replace(base, note="b is zero: no ratio")
    if len(xa) < 2 or len(xb) < 2:
        return replace(base, note=f"n={len(xa)}+{len(xb)}: a test needs at least 2 a side")
    p = mann_whitney_p(xa, xb)
    low, high = _ratio_interval(xa, xb, statistic, confidence, resamples, seed)
    note = None
    if smallest_p(len(xa), len(xb)) > alpha:
        note = (f"with n={len(xa)}+{len(xb)} no difference can reach p < {alpha:g}: "
                "more repetitions are needed for a verdict")
    found = replace(base, low=low, high=high, p_value=p, p_raw=p, note=note)
    return replace(found, verdict=_decide(found, p))


def compare_series(a_seconds: Sequence[float], b_seconds: Sequence[float], *,
                   threshold: float = THROUGHPUT_THRESHOLD, higher_is_better: bool = True,
                   alpha: float = ALPHA, confidence: float = DEFAULT_CONFIDENCE,
                   resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> Difference:
    """Compare the steady windows of two levels from their per-second values: each window is
    reduced to floor(sqrt(n)) batch means (seconds are autocorrelated; batch means are nearly
    independent), then compared as independent values with the ratio of means."""
    return compare_samples(batch_means(a_seconds), batch_means(b_seconds),
                           threshold=threshold, higher_is_better=higher_is_better,
                           center="mean", alpha=alpha, confidence=confidence,
                           resamples=resamples, seed=seed, unit="batches")


def judge_together(differences: Sequence[Difference]) -> list[Difference]:
    """The differences of one comparison (all its cases and metrics), with their p-values
    Holm-adjusted together and their verdicts decided on the adjusted p-values."""
    tested = [i for i, d in enumerate(differences) if d.p_raw is not None]
    adjusted = holm_bonferroni([differences[i].p_raw or 0.0 for i in tested])
    out = list(differences)
    hopeless = _family_cannot_reject([differences[i] for i in tested])
    for i, p in zip(tested, adjusted, strict=True):
        d = differences[i]
        note = hopeless.format(n_a=d.n_a, n_b=d.n_b) if hopeless else d.note
        out[i] = replace(d, p_value=p, verdict=_decide(d, p), note=note)
    return out


def _family_cannot_reject(tested: Sequence[Difference]) -> str | None:
    """Holm rejects nothing unless the smallest p is <= alpha / m: say so when no test of the
    family could get there even with every a above every b (few batches or repetitions, many
    cases): the "no significant difference" is then a lack of data, not of difference."""
    m = len(tested)
    if m < 2 or any(smallest_p(d.n_a, d.n_b) * m <= d.alpha for d in tested):
        return None
    return (f"with {m} figures compared, n={{n_a}}+{{n_b}} cannot reach significance after "
            "Holm's adjustment: longer levels or more repetitions are needed for a verdict")


def _ratio_interval(a: FloatArray, b: FloatArray, statistic: Statistic, confidence: float,
                    resamples: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    numerators = resample(a, resamples, rng, statistic)
    denominators = resample(b, resamples, rng, statistic)
    usable = denominators != 0
    return percentile_bounds(numerators[usable] / denominators[usable], confidence)


def _decide(d: Difference, p: float) -> Verdict:
    if d.low is None or d.high is None:
        return Verdict.INSUFFICIENT_DATA
    beyond_noise = d.low > 1.0 + d.threshold or d.high < 1.0 - d.threshold
    if p > d.alpha or not beyond_noise:
        return Verdict.NO_SIGNIFICANT_DIFFERENCE
    a_is_larger = d.low > 1.0
    return Verdict.FASTER if a_is_larger == d.higher_is_better else Verdict.SLOWER


# --- wording ---------------------------------------------------------------------------------
def format_benchstat(d: Difference) -> str:
    """benchstat's cell: '~ (p=0.41 n=5+5)' without a significant difference, else the
    relative change, '+3.02% (p=0.008 n=5+5)'."""
    counts = f"n={d.n_a}+{d.n_b}"
    evidence = counts if d.p_value is None else f"p={format_p(d.p_value)} {counts}"
    if d.verdict in (Verdict.FASTER, Verdict.SLOWER) and d.ratio is not None:
        return f"{d.ratio - 1.0:+.2%} ({evidence})"
    return f"~ ({evidence})"


def format_verdict(d: Difference) -> str:
    """'no significant difference (ratio 1.01, 95% [0.98, 1.04])', 'faster: ratio 1.03,
    95% [1.02, 1.04] (p=0.008 n=5+5)', 'slower: ...', or 'insufficient data (...)'."""
    if d.ratio is None:
        return f"insufficient data ({d.note or 'no ratio'})"
    if d.low is None or d.high is None:
        return f"insufficient data (ratio {d.ratio:.2f}, n={d.n_a}+{d.n_b}: no interval)"
    digits = 2 if d.high - d.low >= 0.02 else 3
    interval = (f"ratio {d.ratio:.{digits}f}, {d.confidence:.0%} "
                f"[{d.low:.{digits}f}, {d.high:.{digits}f}]")
    if d.verdict is Verdict.NO_SIGNIFICANT_DIFFERENCE:
        return f"no significant difference ({interval})"
    p = "" if d.p_value is None else f"p={format_p(d.p_value)} "
    return f"{d.verdict.value}: {interval} ({p}n={d.n_a}+{d.n_b})"


def format_p(p: float) -> str:
    """Two decimals, or two significant digits below 0.01 (0.41, 0.05, 0.0079)."""
    return f"{p:.2f}" if p >= 0.01 else f"{p:.2g}"
