"""Between-repetition variances moderated by the run's other levels (empirical Bayes, Smyth
2004, the method of limma's moderated t). Pure functions.

An article suite repeats every level a few times (4 in pool-and-cluster) on fresh starts. One
level's sample variance from 4 repetitions has 3 degrees of freedom: its own estimate is
unstable, and the t quantile of an interval on it is 3.18 (4.18 when two levels must both hold)
where a known variance would give 1.96. The run has many such levels, each measured the same
way on the same machine, so their variances are alike without being equal. Smyth's method
fits the scaled inverse chi-square distribution the levels' variances are drawn from (a prior
variance s0^2 with d0 degrees of freedom) by the moments of their logs, and moderates each
level's variance towards it: s~^2 = (d0 s0^2 + d s^2) / (d0 + d), with d0 + d degrees of
freedom (here never below the level's own s^2: `moderate`). When the levels' variances
scatter more than sampling explains (some levels are truly noisier), d0 comes out small and
each keeps mostly its own; when they scatter as sampling alone would, d0 is large and they
share one estimate. d0 is capped here at the levels' total degrees of freedom, so the prior
never counts for more than the data it came from. tests/analysis/test_moderated.py checks the
intervals' coverage by simulation, on levels whose true spreads differ up to tenfold.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

# Fewer levels than this give the prior's two moments too little to rest on: no moderation
MIN_LEVELS = 6
# A level left with 2 or 3 repetitions (the others disturbed) borrows one degree of freedom:
# t(1) = 12.7 becomes t(2) = 4.3. Its own s^2 on 1-2 df is too unstable to take the prior's
# full d0: with it the noisiest tenth of levels covered 85-91%; with 1 borrowed, 91-97%,
# 96-99% overall, and intervals 0.40-0.45 (2 repetitions) and 0.81-0.90 (3) of their own
# width (tests/analysis/test_moderated.py, true spreads 4-12% and 2-20%).
FEW_BORROWED_DF = 1.0


@dataclass(frozen=True)
class Prior:
    """The distribution the run's levels' variances (of the log figure) are drawn from."""

    variance: float  # s0^2
    df: float  # d0
    levels: int  # how many levels it was fitted on


def trigamma_inverse(x: float) -> float:
    """y with trigamma(y) = x, x > 0 (Smyth 2004's Newton iteration, from y = 0.5 + 1/x)."""
    if x > 1e7:
        return 1.0 / math.sqrt(x)
    if x < 1e-6:
        return 1.0 / x
    y = 0.5 + 1.0 / x
    for _ in range(50):
        tri = float(special.polygamma(1, y))
        step = tri * (1.0 - tri / x) / float(special.polygamma(2, y))
        y += step
        if -step / y < 1e-8:
            break
    return y


def fit_prior(variances: Sequence[tuple[float, float]], max_df: float = math.inf) -> Prior | None:
    """The prior (s0^2, d0) of sample variances given as (s^2, its df), by the moments of
    their logs: e = ln s^2 - digamma(d/2) + ln(d/2) has mean ln s0^2 - digamma(d0/2) + ln(d0/2)
    and variance trigamma(d0/2) + mean(trigamma(d/2)). d0 is capped at the variances' total
    df, or at `max_df` when less (variances that are not independent: analysis.paired). None
    below MIN_LEVELS usable levels (a variance of exactly 0 has no log and is left out)."""
    usable = [(s2, d) for s2, d in variances if s2 > 0.0 and d > 0.0 and math.isfinite(s2)]
    if len(usable) < MIN_LEVELS:
        return None
    s2 = np.asarray([v for v, _ in usable], dtype=np.float64)
    half = np.asarray([d for _, d in usable], dtype=np.float64) / 2.0
    e = np.log(s2) - special.digamma(half) + np.log(half)
    mean = float(np.mean(e))
    excess = float(np.var(e, ddof=1)) - float(np.mean(special.polygamma(1, half)))
    cap = min(float(np.sum(half)) * 2.0, max_df)
    df = cap if excess <= 0.0 else min(2.0 * trigamma_inverse(excess), cap)
    variance = math.exp(mean + float(special.digamma(df / 2.0)) - math.log(df / 2.0))
    return Prior(variance, df, len(usable))


def moderate(
    sample: float, df: float, prior: Prior, scale: float = 1.0, borrowed_df: float = math.inf
) -> tuple[float, float]:
    """(s~^2, its df): the sample variance with df degrees of freedom moderated towards the
    prior's variance times `scale` (2 for the difference of two levels' logs, each drawn from
    the prior: what the pairs' variance is when they share no drift, an upper bound when they
    share some), and never below the sample's own. Smyth's s~^2 alone pulls the noisiest
    levels' variances down, so their intervals cover less than they say (in simulation, 89%
    of a 95% interval for the noisiest tenth of levels whose spreads differ threefold); kept
    at least at its own, a level borrows the others' degrees of freedom but not their
    quietness (95.5% overall, 92% for the noisiest tenth: tests/analysis/test_moderated.py).
    `borrowed_df` caps the degrees of freedom borrowed (not the weight of the prior): a level
    of 2 or 3 repetitions borrows FEW_BORROWED_DF (see there)."""
    total = prior.df + df
    variance = max((prior.df * prior.variance * scale + df * sample) / total, sample)
    return variance, df + min(prior.df, borrowed_df)
