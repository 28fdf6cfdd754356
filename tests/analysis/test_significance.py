"""stackbench.analysis.significance: no winner on noise."""

import numpy as np
import pytest
import synthetic_series as syn

from stackbench.analysis import significance as sig
from stackbench.analysis.stats import Verdict

SEEDS = range(10)


def _repetitions(level, n, cv, seed):
    return (level * (1.0 + np.random.default_rng(seed).normal(0.0, cv, n))).tolist()


def test_holm_bonferroni_against_a_hand_computed_example():
    # sorted: 0.005 x4 = 0.02; 0.01 x3 = 0.03; 0.03 x2 = 0.06; 0.04 x1 = 0.04 -> 0.06 (monotone)
    adjusted = sig.holm_bonferroni([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # rejected at 0.05: the 1st and 4th, as the step-down rule gives by hand
    # (0.005 <= 0.05/4, 0.01 <= 0.05/3, then 0.03 > 0.05/2 stops).
    assert [p <= 0.05 for p in adjusted] == [True, False, False, True]
    assert sig.holm_bonferroni([0.5, 0.6]) == [1.0, 1.0]
    assert sig.holm_bonferroni([0.02]) == [0.02]
    assert sig.holm_bonferroni([]) == []


def test_series_three_percent_apart_with_one_percent_noise_differ():
    # 30-s steady windows, 1% noise per second: the observed gap varies around 3%, so the
    # claim needs the interval above 1.02; it is made for (nearly) every seed, never reversed.
    verdicts = []
    for seed in range(20):
        fast = syn.flat(30, 0.01, seed, level=1030.0)
        slow = syn.flat(30, 0.01, seed + 100, level=1000.0)
        d = sig.compare_series(fast, slow)
        verdicts.append(d.verdict)
        assert d.ratio == pytest.approx(1.03, abs=0.01)
        assert sig.compare_series(slow, fast).verdict is not Verdict.FASTER
    assert verdicts.count(Verdict.FASTER) >= 18 and Verdict.SLOWER not in verdicts


def test_a_three_percent_difference_in_detail():
    d = sig.compare_series(syn.flat(30, 0.01, 1, level=1030.0),
                           syn.flat(30, 0.01, 101, level=1000.0))
    assert d.verdict is Verdict.FASTER
    assert 1.02 < d.low <= d.ratio <= d.high
    assert d.p_value < 0.05 and (d.n_a, d.n_b, d.unit) == (5, 5, "batches")
    reverse = sig.compare_series(syn.flat(30, 0.01, 101, level=1000.0),
                                 syn.flat(30, 0.01, 1, level=1030.0))
    assert reverse.verdict is Verdict.SLOWER and reverse.high < 0.98


@pytest.mark.parametrize("seed", SEEDS)
def test_series_half_a_percent_apart_with_one_percent_noise_do_not(seed):
    a = syn.flat(30, 0.01, seed, level=1005.0)
    b = syn.flat(30, 0.01, seed + 100, level=1000.0)
    d = sig.compare_series(a, b)
    assert d.verdict is Verdict.NO_SIGNIFICANT_DIFFERENCE
    assert d.low < 1.02 and d.high > 0.98  # not wholly outside the 2% threshold


def test_repetitions_clearly_apart_differ_and_in_the_right_direction():
    fast, slow = _repetitions(1030.0, 6, 0.003, 1), _repetitions(1000.0, 6, 0.003, 2)
    assert sig.compare_samples(fast, slow).verdict is Verdict.FASTER
    assert sig.compare_samples(slow, fast).verdict is Verdict.SLOWER


def test_significant_test_within_the_noise_threshold_is_no_difference():
    # 1.5% apart with 0.2% noise: the rank test is certain, but 1.5% < 2%: within noise.
    a, b = _repetitions(1015.0, 8, 0.002, 3), _repetitions(1000.0, 8, 0.002, 4)
    d = sig.compare_samples(a, b)
    assert d.p_value < 0.01 and d.low > 1.0
    assert d.verdict is Verdict.NO_SIGNIFICANT_DIFFERENCE
    # A 1% threshold would call it.
    assert sig.compare_samples(a, b, threshold=0.01).verdict is Verdict.FASTER


def test_latency_lower_is_better_with_its_own_threshold():
    low_latency = [10.0, 10.2, 9.9, 10.1, 10.0, 9.8]
    high_latency = [12.0, 12.3, 11.9, 12.1, 12.2, 11.8]
    d = sig.compare_samples(low_latency, high_latency, higher_is_better=False,
                            threshold=sig.PERCENTILE_THRESHOLD)
    assert d.verdict is Verdict.FASTER and d.ratio < 0.95
    near = [10.3, 10.5, 10.2, 10.4, 10.3, 10.1]  # 3% slower: inside the 5% threshold
    assert sig.compare_samples(near, low_latency, higher_is_better=False,
                               threshold=sig.PERCENTILE_THRESHOLD
                               ).verdict is Verdict.NO_SIGNIFICANT_DIFFERENCE


def test_too_few_values_make_no_claim():
    one = sig.compare_samples([2000.0], [1000.0])
    assert one.verdict is Verdict.INSUFFICIENT_DATA and one.ratio == 2.0 and one.p_value is None
    # 3+3 entirely apart: the smallest possible p is 0.1, so no verdict can be reached.
    three = sig.compare_samples([2000.0, 2001.0, 2002.0], [1000.0, 1001.0, 1002.0])
    assert three.verdict is Verdict.NO_SIGNIFICANT_DIFFERENCE
    assert three.p_value == pytest.approx(0.1) and "more repetitions" in three.note
    assert sig.smallest_p(3, 3) == pytest.approx(0.1)
    assert sig.smallest_p(5, 5) == pytest.approx(2 / 252)
    zero = sig.compare_samples([5.0, 6.0], [0.0, 0.0])
    assert zero.verdict is Verdict.INSUFFICIENT_DATA and zero.ratio is None


def test_identical_values_have_p_one():
    assert sig.mann_whitney_p([5.0, 5.0, 5.0], [5.0, 5.0]) == 1.0
    d = sig.compare_samples([5.0] * 6, [5.0] * 6)
    assert d.verdict is Verdict.NO_SIGNIFICANT_DIFFERENCE and (d.low, d.high) == (1.0, 1.0)


def test_judging_a_comparison_together_adjusts_its_p_values():
    # Four figures each with 6+6 repetitions; one clearly faster (p = 0.0022), three equal.
    fast = sig.compare_samples(_repetitions(1100.0, 6, 0.002, 5),
                               _repetitions(1000.0, 6, 0.002, 6))
    same = [sig.compare_samples(_repetitions(1000.0, 6, 0.01, 10 + i),
                                _repetitions(1000.0, 6, 0.01, 20 + i)) for i in range(3)]
    judged = sig.judge_together([fast, *same])
    assert judged[0].p_raw == fast.p_value
    assert judged[0].p_value == pytest.approx(4 * fast.p_value)
    assert judged[0].verdict is Verdict.FASTER
    assert all(d.verdict is Verdict.NO_SIGNIFICANT_DIFFERENCE for d in judged[1:])
    # 4+4 repetitions entirely apart: p = 2/70 = 0.029 alone, a verdict; among 4 figures of
    # 4+4 Holm needs p <= 0.05/4, out of reach for every figure: the note says so.
    borderline = sig.compare_samples([1100.0, 1101.0, 1102.0, 1103.0],
                                     [1000.0, 1001.0, 1002.0, 1003.0])
    assert borderline.p_value == pytest.approx(2 / 70) and borderline.verdict is Verdict.FASTER
    small = [sig.compare_samples(_repetitions(1000.0, 4, 0.01, 30 + i),
                                 _repetitions(1000.0, 4, 0.01, 40 + i)) for i in range(3)]
    family = sig.judge_together([borderline, *small])
    assert family[0].p_value > 0.05 and family[0].verdict is Verdict.NO_SIGNIFICANT_DIFFERENCE
    assert all("Holm" in d.note and "n=4+4" in d.note for d in family)


def test_benchstat_style_cells():
    d = sig.compare_samples([100.0, 98.0, 103.0, 101.0, 99.0], [99.0, 102.0, 100.0, 97.0, 101.0])
    assert d.verdict is Verdict.NO_SIGNIFICANT_DIFFERENCE
    assert sig.format_benchstat(d) == f"~ (p={sig.format_p(d.p_value)} n=5+5)"
    assert sig.format_p(0.41) == "0.41" and sig.format_p(0.0079365) == "0.0079"
    fast = sig.compare_series(syn.flat(30, 0.01, 1, level=1030.0),
                              syn.flat(30, 0.01, 101, level=1000.0))
    assert fast.verdict is Verdict.FASTER
    assert sig.format_benchstat(fast) == f"{fast.ratio - 1:+.2%} (p=0.0079 n=5+5)"
    assert sig.format_benchstat(fast).startswith("+2.8")  # observed gap of this seed: 2.84%


def test_verdict_sentences():
    base = sig.Difference(Verdict.NO_SIGNIFICANT_DIFFERENCE, 1.01, 0.98, 1.04, 0.41, 0.41, 5,
                          5, 0.02, True, 0.05, 0.95, "values", None)
    assert sig.format_verdict(base) == "no significant difference (ratio 1.01, 95% [0.98, 1.04])"
    assert sig.format_benchstat(base) == "~ (p=0.41 n=5+5)"
    faster = sig.Difference(Verdict.FASTER, 1.0302, 1.0251, 1.0355, 0.0079365, 0.0079365, 5, 5,
                            0.02, True, 0.05, 0.95, "batches", None)
    assert sig.format_verdict(faster) == "faster: ratio 1.030, 95% [1.025, 1.036] (p=0.0079 n=5+5)"
    assert sig.format_benchstat(faster) == "+3.02% (p=0.0079 n=5+5)"
    single = sig.compare_samples([2000.0], [1000.0])
    assert sig.format_verdict(single) == "insufficient data (ratio 2.00, n=1+1: no interval)"
    assert sig.format_benchstat(single) == "~ (n=1+1)"
