"""analysis.verdicts against hand-computed values (the error rates: test_verdict_rates.py)."""

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stackbench.analysis import verdicts as v
from stackbench.analysis.verdicts import Evidence, Outcome, RunSpread, Unit

SPREAD = RunSpread(0.05, False, "test")
NONE = RunSpread(0.0, False, "none")


def _ev(value: float, variance: float, df: float, unit: Unit = Unit.SECONDS) -> Evidence:
    return Evidence(value, math.log(value), variance, df, 10, unit, variance)


def test_effective_size_corrects_the_lag1_bias_and_caps_it():
    # r = 0.3 + (1 + 1.2) / 20 = 0.41: n_eff = 20 * 0.59 / 1.41
    assert v.effective_size(20, 0.3) == pytest.approx(20 * 0.59 / 1.41)
    assert v.effective_size(10, -0.55) == 10.0  # a negative r is not allowed to flatter
    assert v.effective_size(10, 0.95) == pytest.approx(10 * 0.1 / 1.9)  # capped at 0.9


def test_series_evidence_by_hand():
    # mean 100, squared deviations sum to 60: variance of x/mean = 60 / 9 / 100^2; the lag-1
    # autocorrelation is -0.55, so r = 0 and n_eff = n = 10.
    x = [100.0, 104, 98, 102, 96, 100, 103, 97, 101, 99]
    e = v.series_evidence(x)
    assert e is not None
    assert v.lag1_autocorrelation(x) == pytest.approx(-0.55)
    assert (e.value, e.n, e.unit, e.df) == (100.0, 10, Unit.SECONDS, 9.0)
    assert e.variance == pytest.approx(60 / 9 / 100**2 / 10)
    shown = v.series_evidence(x, shown=150.0)  # a merged percentile: its own headline
    assert shown is not None and shown.log_mean == pytest.approx(math.log(150.0))
    assert v.series_evidence([1.0, 2.0]) is None  # too short for a lag-1 estimate
    assert v.series_evidence([math.nan, 5.0, 6.0, 7.0]) is not None  # NaN seconds skipped


def test_repetition_evidence_floors_few_repetitions():
    figures = [100.0, 101.0, 99.0]
    e = v.repetition_evidence(figures, [1e-4] * 3, SPREAD)
    assert e is not None and e.unit is Unit.REPETITIONS
    logs = np.log(figures)
    assert e.log_mean == pytest.approx(float(np.mean(logs)))
    # the sample variance of the logs (1e-4) is below sigma_run^2 + within = 0.0026: the
    # floor, taken as known, with z (df KNOWN_DF), since 4.30^2 * 1e-4 < 1.96^2 * 0.0026
    assert e.variance == pytest.approx((0.05**2 + 1e-4) / 3)
    assert e.df == v.KNOWN_DF
    # three figures far apart: t(2) sqrt(s^2 / 3) is the wider, so the sample with 2 df
    apart = [100.0, 130.0, 77.0]
    wide = v.repetition_evidence(apart, [1e-4] * 3, SPREAD)
    assert wide is not None and wide.df == 2
    assert wide.variance == pytest.approx(float(np.var(np.log(apart), ddof=1)) / 3)
    # whole levels without a series (wrk): the floor is the whole-level spread, 10% assumed
    whole = v.repetition_evidence(figures, [], SPREAD, whole_level_s=60.0)
    assert whole is not None and whole.variance == pytest.approx(0.10**2 / 3)
    many = [100.0, 120.0, 80.0, 110.0, 90.0]
    e5 = v.repetition_evidence(many, [], SPREAD)
    assert e5 is not None
    assert e5.variance == pytest.approx(float(np.var(np.log(many), ddof=1)) / 5)
    assert v.repetition_evidence([5.0], [], SPREAD) is None


def test_whole_level_spread_calibrated_only_on_levels_at_least_as_long():
    calibrated = RunSpread(0.02, False, "calibrated", within=0.0001, level_s=15.0)
    # at least as long: sigma_run^2 + the calibration windows' noise, sqrt(0.0004 + 0.0001)
    assert v.whole_level_sigma(calibrated, 60.0) == pytest.approx(math.sqrt(0.0005))
    assert v.whole_level_sigma(calibrated, 5.0) == 0.10  # shorter: assumed
    assert v.whole_level_sigma(v.assumed_spread(), 60.0) == 0.10
    noisy = RunSpread(0.15, False, "calibrated", level_s=15.0)
    assert v.whole_level_sigma(noisy, 5.0) == pytest.approx(0.15)  # never below calibrated
    e = v.whole_level_evidence(50.0, 60.0, calibrated)
    assert e is not None and e.unit is Unit.RUN and e.single_run
    assert e.variance == pytest.approx(0.0001)  # a comparison adds sigma_run^2 itself
    assert v.whole_level_evidence(0.0, 60.0, calibrated) is None


def test_one_wrk_level_a_side_decides_a_large_gap_and_not_a_small_one():
    """Assumed 10% a side: se = sqrt(2) 0.1, interval ratio ×/÷ e^(1.96 se) = ×/÷ 1.32."""
    spread = v.assumed_spread()
    big = v.compare(
        v.whole_level_evidence(67_000.0, 12.0, spread),
        v.whole_level_evidence(10_000.0, 12.0, spread),
        spread=spread,
    )
    assert big.outcome is Outcome.FASTER
    assert big.se == pytest.approx(math.sqrt(2) * 0.10)
    # the verdict names the spread of whole levels it used, not the windows' 5%
    assert big.spread is not None and big.spread.assumed and big.spread.sigma == 0.10
    assert big.low == pytest.approx(6.7 / math.exp(1.959964 * math.sqrt(2) * 0.10), rel=1e-5)
    small = v.compare(
        v.whole_level_evidence(10_500.0, 12.0, spread),
        v.whole_level_evidence(10_000.0, 12.0, spread),
        spread=spread,
    )
    assert small.outcome is Outcome.UNDECIDED
    assert small.decide is not None and "repetitions a side" in small.decide


def test_compare_by_hand():
    a, b = _ev(200.0, 0.0004, 9.0), _ev(100.0, 0.0004, 9.0)
    verdict = v.compare(a, b, spread=SPREAD)
    variance = 0.0004 * 2 + 2 * 0.05**2
    df = variance**2 / (2 * 0.0004**2 / 9)
    t = scipy_stats.t.ppf(0.975, df)
    se = math.sqrt(variance)
    assert verdict.se == pytest.approx(se) and verdict.df == pytest.approx(df)
    assert verdict.ratio == pytest.approx(2.0)
    assert verdict.low == pytest.approx(math.exp(math.log(2) - t * se))
    assert verdict.high == pytest.approx(math.exp(math.log(2) + t * se))
    assert verdict.outcome is Outcome.FASTER and verdict.spread is SPREAD
    band = math.log(1.02)
    assert verdict.p_raw == pytest.approx(2 * scipy_stats.t.sf((math.log(2) - band) / se, df))
    assert verdict.resolvable == pytest.approx(math.exp(band + t * se))
    assert v.compare(b, a, spread=SPREAD).outcome is Outcome.SLOWER
    # latency: lower is better, so a's higher figure is slower
    assert v.compare(a, b, spread=SPREAD, higher_is_better=False).outcome is Outcome.SLOWER


def test_the_four_outcomes():
    tight = 1e-6
    same = v.compare(_ev(1000.0, tight, 50), _ev(1000.0, tight, 50), spread=NONE)
    assert same.outcome is Outcome.EQUIVALENT
    small = v.compare(_ev(1010.0, tight, 50), _ev(1000.0, tight, 50), spread=NONE)
    assert small.outcome is Outcome.WITHIN_THRESHOLD and small.a_better
    unsure = v.compare(_ev(1050.0, 0.004, 5), _ev(1000.0, 0.004, 5), spread=NONE)
    assert unsure.outcome is Outcome.UNDECIDED
    assert unsure.decide is not None and "would show it beyond" in unsure.decide
    missing = v.compare(None, _ev(1000.0, tight, 50))
    assert missing.outcome is Outcome.UNDECIDED and "no evidence on a" in (missing.decide or "")


def test_what_would_decide_names_a_level_length_or_repetitions():
    # no run-to-run term: a longer window decides (the variance falls as 1/n)
    longer = v.compare(_ev(1050.0, 0.0009, 9), _ev(1000.0, 0.0009, 9), spread=NONE)
    assert longer.outcome is Outcome.UNDECIDED
    assert longer.decide is not None and longer.decide.startswith("levels of about")
    # the run-to-run term alone is wider than the gap: only repetitions decide it
    reps = v.compare(_ev(1100.0, 1e-5, 9), _ev(1000.0, 1e-5, 9), spread=SPREAD)
    assert reps.outcome is Outcome.UNDECIDED
    assert reps.decide is not None and "repetitions a side" in reps.decide
    at_edge = v.compare(_ev(1020.0, 0.0009, 9), _ev(1000.0, 0.0009, 9), spread=NONE)
    assert at_edge.decide is not None and "sits at the" in at_edge.decide


def test_holm_turns_a_marginal_winner_undecided():
    clear = v.compare(_ev(2000.0, 1e-4, 30), _ev(1000.0, 1e-4, 30), spread=NONE)
    marginal = v.compare(_ev(1100.0, 6e-4, 30), _ev(1000.0, 6e-4, 30), spread=NONE)
    assert marginal.outcome is Outcome.FASTER and marginal.p_raw is not None
    assert 0.05 / 2 < marginal.p_raw < 0.05
    # Holm's first step multiplies the smallest p by m: two marginal ones both fail it
    judged = v.holm([clear, marginal, marginal])
    assert judged[0].outcome is Outcome.FASTER
    assert [j.outcome for j in judged[1:]] == [Outcome.UNDECIDED] * 2
    assert judged[1].p_value == pytest.approx(min(1.0, 2 * marginal.p_raw))
    assert "Holm" in (judged[1].decide or "")
    # alone, the second step multiplies by m - 1 = 1: it stays a winner
    assert v.holm([clear, marginal])[1].outcome is Outcome.FASTER
    assert v.holm_adjust([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_gate_regressed_cleared_and_undecided():
    base = _ev(1000.0, 1e-5, 50)
    slow = v.compare(_ev(586.0, 1e-5, 50), base, spread=SPREAD)
    same = v.compare(_ev(1000.0, 1e-5, 50), base, spread=NONE)
    unsure = v.compare(_ev(960.0, 1e-5, 50), base, spread=SPREAD)
    results = v.gate([slow, same, unsure], 0.05)
    assert [r.outcome for r in results] == [
        v.GateOutcome.REGRESSED,
        v.GateOutcome.CLEARED,
        v.GateOutcome.UNDECIDED,
    ]
    # latency gate: p99 1.5x higher against a 10% limit regresses
    p99 = v.compare(
        _ev(1500.0, 1e-5, 50), base, spread=SPREAD, higher_is_better=False, threshold=0.05
    )
    assert v.gate([p99], 0.10)[0].outcome is v.GateOutcome.REGRESSED
    # one-sided p by hand for the regressed case
    assert slow.se is not None and slow.df is not None and slow.log_diff is not None
    z = (-slow.log_diff + math.log1p(-0.05)) / slow.se
    assert (
        results[0].p_regressed == pytest.approx(scipy_stats.t.sf(z, slow.df) * 3, rel=1e-6)
        or results[0].p_regressed < 1e-6
    )


def test_clopper_pearson_by_hand():
    # k = 0: the upper end solves (1 - p)^n = 0.025; k = n: the lower end solves p^n = 0.025
    low, high = v.clopper_pearson(0, 100)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 100))
    low, high = v.clopper_pearson(100, 100)
    assert low == pytest.approx(0.025 ** (1 / 100)) and high == 1.0
    # k = 1 of 35,000: the lower end solves 1 - (1 - p)^n = 0.025, far below any stated rate
    low, _ = v.clopper_pearson(1, 35_000)
    assert low == pytest.approx(1 - 0.975 ** (1 / 35_000))
    with pytest.raises(ValueError):
        v.clopper_pearson(3, 2)
