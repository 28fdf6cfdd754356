"""stackbench.analysis.paired: the paired ratio, by hand."""

import math

import pytest

from stackbench.analysis.paired import MIN_PAIRS, paired_log_ratio
from stackbench.analysis.verdicts import (
    RunSpread,
    log_ratio,
    repetition_evidence,
    repetitions_to_decide,
)


def test_paired_log_ratio_by_hand():
    # d = ln 2, ln 2, ln 4, ln 1: mean ln 2, deviations 0, 0, ln 2, -ln 2,
    # var = 2 (ln 2)^2 / 3, se = sqrt(var / 4) = ln 2 / sqrt(6)
    ratio = paired_log_ratio({0: 2.0, 1: 4.0, 2: 8.0, 3: 4.0}, {0: 1.0, 1: 2.0, 2: 2.0, 3: 4.0})
    assert ratio is not None
    assert ratio.d == pytest.approx(math.log(2.0))
    assert ratio.se == pytest.approx(math.log(2.0) / math.sqrt(6.0))
    assert ratio.df == 3.0
    assert ratio.per_run == pytest.approx(2.0 * math.log(2.0) ** 2 / 3.0)
    assert ratio.run_variance == 0.0 and ratio.paired


def test_only_the_repetitions_both_sides_measured_pair():
    a = {0: 2.0, 1: 2.0, 2: 2.0, 3: 2.0, 9: 100.0}
    b = {0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0, 7: 0.01}
    ratio = paired_log_ratio(a, b)
    assert ratio is not None and ratio.d == pytest.approx(math.log(2.0)) and ratio.se == 0.0
    assert ratio.df == MIN_PAIRS - 1


def test_too_few_pairs_or_a_figure_at_zero_give_none():
    three = {0: 1.0, 1: 1.0, 2: 1.0}
    assert paired_log_ratio(three, three) is None
    assert paired_log_ratio({**three, 3: 0.0}, {**three, 3: 1.0}) is None
    assert paired_log_ratio({0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0}, {4: 1.0, 5: 1.0, 6: 1.0}) is None


def test_drift_both_sides_share_cancels():
    """Repetitions that drift by ±30% together, the ratio 2 within ±1%: paired, only the 1%
    is left (d_i = ln 2 ± 0.01: se = sqrt(4 x 0.01^2 / 3 / 4)); as independent sides the
    drift counts on both."""
    drift = [1.0, 1.3, 0.7, 1.1]
    jitter = [0.01, -0.01, 0.01, -0.01]
    a = {i: 2.0 * x * math.exp(j) for i, (x, j) in enumerate(zip(drift, jitter, strict=True))}
    b = dict(enumerate(drift))
    paired = paired_log_ratio(a, b)
    assert paired is not None
    assert paired.d == pytest.approx(math.log(2.0))
    assert paired.se == pytest.approx(math.sqrt(0.0004 / 3.0 / 4.0))
    spread = RunSpread(0.05, False, "")
    ea, eb = (repetition_evidence(list(x.values()), [], spread) for x in (a, b))
    assert ea is not None and eb is not None
    assert log_ratio([ea], [eb], spread).se > 20 * paired.se


def test_pairs_to_decide_count_n_minus_one_degrees_of_freedom():
    """per_run 0.01, half-width 0.1 needed: paired, t(r - 1) sqrt(0.01 / r) first fits at
    r = 7 (t(6) 2.447 x 0.0378 = 0.0925; r = 6: t(5) 2.571 x 0.0408 = 0.105); two
    independent sides, t(2r - 2), at r = 6 (t(10) 2.228 x 0.0408 = 0.091)."""
    assert repetitions_to_decide(0.1, 0.01, paired=True) == 7
    assert repetitions_to_decide(0.1, 0.01) == 6
