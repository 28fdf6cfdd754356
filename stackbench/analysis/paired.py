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

A pair's own variance rests on n - 1 degrees of freedom (3 for 4 pairs), so it is moderated
(analysis.moderated) towards what the run's other pairs of the same kind say: two stacks of one
workload and level, two levels of one stack's workload, two workloads of one stack at a level
(`PairKind`). Each kind shares drift in its own measure (two levels of one fresh start a minute
apart share nearly all of it, two stacks of one round a few minutes apart much of it), so each
has its own prior (`fit_pairs_prior`). Without one (fewer than MIN_LEVELS pairs of the kind),
the prior is twice one level's, what a pair has when its sides share no drift: wide, never
narrow (`moderated_pairs`). tests/analysis/test_pairs_prior.py checks the intervals' coverage
by simulation on a drifting host.
"""

import enum
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from stackbench.analysis.moderated import Prior, fit_prior, moderate
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


# A level's prior stands for a pair's as twice its variance: the two sides' when they share
# no drift (a pair that shares some varies less, so this errs wide).
LEVELS_SCALE = 2.0


class PairKind(enum.Enum):
    """What differs between the two figures of a pair (the rest is the same)."""

    STACKS = "stacks"  # one workload at one level, two stacks measured in the same rounds
    LEVELS = "levels"  # one stack's workload, two levels of each fresh start
    WORKLOADS = "workloads"  # one stack at one level, two workloads of each fresh start


# A level's key: (stack, workload label, level); a standalone timing has no level (None)
FigureKey = tuple[str, str, float | None]
# Where in a level's key each kind of pair differs
_VARIES = {PairKind.STACKS: 0, PairKind.WORKLOADS: 1, PairKind.LEVELS: 2}


def pair_kind(a: FigureKey, b: FigureKey) -> PairKind | None:
    """How two levels pair: the one part of their keys they differ in (None: more than one,
    or a standalone timing)."""
    if a[2] is None or b[2] is None:
        return None
    differ = [i for i in range(3) if a[i] != b[i]]
    if len(differ) != 1:
        return None
    return next(kind for kind, at in _VARIES.items() if at == differ[0])


def pair_groups(
    figures: Mapping[FigureKey, Mapping[int, float]], kind: PairKind
) -> list[list[Mapping[int, float]]]:
    """The levels' figures (keyed by repetition) that pair as `kind`: those alike in the two
    other parts of their keys."""
    varies = _VARIES[kind]
    groups: dict[tuple[object, ...], list[Mapping[int, float]]] = {}
    for key, keyed in figures.items():
        groups.setdefault(key[:varies] + key[varies + 1 :], []).append(keyed)
    return [g for g in groups.values() if len(g) >= 2]


def pairs_priors(figures: Mapping[FigureKey, Mapping[int, float]]) -> dict[PairKind, Prior | None]:
    """The prior of each kind of pair among a run's levels (`fit_pairs_prior`)."""
    return {kind: fit_pairs_prior(pair_groups(figures, kind)) for kind in PairKind}


def moderated_pairs(ratio: LogRatio, prior: Prior, scale: float = LEVELS_SCALE) -> LogRatio:
    """The pairs' variance moderated (analysis.moderated) towards `prior` times `scale`: a
    prior of the run's pairs of the same kind as it is (scale 1, `fit_pairs_prior`), or one
    level's prior twice (LEVELS_SCALE)."""
    pairs = ratio.df + 1.0
    variance, df = moderate(ratio.per_run, ratio.df, prior, scale=scale)
    return LogRatio(ratio.d, math.sqrt(variance / pairs), df, 0.0, variance, True, prior.df)


def pair_variances(group: Sequence[Mapping[int, float]]) -> list[tuple[float, float]]:
    """(var of the log ratios, its df) of every two figures of `group` (each keyed by
    repetition) that pair: MIN_PAIRS or more repetitions in common, every figure above 0."""
    found = []
    for a, b in itertools.combinations(group, 2):
        ratio = paired_log_ratio(a, b)
        if ratio is not None:
            found.append((ratio.per_run, ratio.df))
    return found


def fit_pairs_prior(groups: Iterable[Sequence[Mapping[int, float]]]) -> Prior | None:
    """The prior of one kind of pair, fitted on the variances of every pair within each group
    (the figures that pair with one another: every stack at one workload and level, for
    PairKind.STACKS). k figures give k (k - 1) / 2 pairs but only k - 1 independent
    contrasts, so d0 is capped at those contrasts' degrees of freedom: the pairs' total df
    times 2 / k a group. None below MIN_LEVELS pairs (analysis.moderated)."""
    variances: list[tuple[float, float]] = []
    independent = 0.0
    for group in groups:
        found = pair_variances(group)
        if found:
            variances.extend(found)
            independent += sum(df for _, df in found) * 2.0 / len(group)
    return fit_prior(variances, max_df=independent)
