"""A ratio from paired figures: each repetition's numerator over the same repetition's
denominator. Pure functions.

Two figures measured in the same repetition (two levels of one fresh start, two stacks of one
round, two standalone timings taken one after the other) share that repetition's drift: a
machine that is 10% slower for a minute slows both. Compared as independent sides, the drift
counts twice in the ratio's variance (once per side); paired, it cancels: the ratio's
evidence is the spread of the per-repetition log ratios alone (the paired t interval,
Student 1908). When the sides do not share drift the paired interval is about as wide as
the unpaired one (it loses half the degrees of freedom, so a few pairs are not enough:
`MIN_PAIRS`).
"""

import math
from collections.abc import Mapping

import numpy as np

from stackbench.analysis.moderated import Prior, moderate
from stackbench.analysis.verdicts import LogRatio

# Below this many pairs the sample variance of the log ratios is too unstable alone (the
# verdicts floor 3 or fewer repetitions at the run-to-run spread): the sides stay independent.
MIN_PAIRS = 4


def paired_log_ratio(
    numerator: Mapping[int, float], denominator: Mapping[int, float]
) -> LogRatio | None:
    """ln(numerator / denominator) over the repetitions both sides measured (keyed by
    repetition): d_i = ln a_i - ln b_i, its mean, se = sd(d) / sqrt(n), df = n - 1. No
    run-to-run term: the pairs carry it. `per_run`, the variance one more pair adds, is
    var(d). None with fewer than MIN_PAIRS common repetitions or a figure at or below 0."""
    keys = sorted(numerator.keys() & denominator.keys())
    if len(keys) < MIN_PAIRS:
        return None
    a = np.asarray([numerator[k] for k in keys], dtype=np.float64)
    b = np.asarray([denominator[k] for k in keys], dtype=np.float64)
    if np.any(a <= 0.0) or np.any(b <= 0.0) or not np.all(np.isfinite(a * b)):
        return None
    d = np.log(a) - np.log(b)
    variance = float(np.var(d, ddof=1))
    n = len(keys)
    return LogRatio(float(np.mean(d)), math.sqrt(variance / n), n - 1.0, 0.0, variance, True)


def moderated_pairs(ratio: LogRatio, prior: Prior) -> LogRatio:
    """The pairs' variance moderated by the run's levels (analysis.moderated): towards twice
    one level's prior variance, what a difference of two levels' logs has when they share no
    drift (pairs that share some vary less, so this errs wide)."""
    pairs = ratio.df + 1.0
    variance, df = moderate(ratio.per_run, ratio.df, prior, scale=2.0)
    return LogRatio(ratio.d, math.sqrt(variance / pairs), df, 0.0, variance, True, prior.df)
