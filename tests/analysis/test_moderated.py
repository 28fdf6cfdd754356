"""The moderated variances (analysis.moderated): hand-computed values, and the intervals'
error rates by simulation on levels whose true spreads differ, as a suite's levels do."""

import math

import numpy as np
import pytest
from scipy import special, stats

from stackbench.analysis.claims.reading import moderated_evidence
from stackbench.analysis.moderated import (
    MIN_LEVELS,
    Prior,
    fit_prior,
    moderate,
    trigamma_inverse,
)
from stackbench.analysis.paired import MIN_PAIRS
from stackbench.analysis.verdicts import (
    LogRatio,
    RunSpread,
    interval_of,
    log_ratio,
    repetition_evidence,
    repetition_floor,
)


@pytest.mark.parametrize("x", [1e-5, 0.01, 0.5, 1.0, 4.93, 100.0])
def test_trigamma_inverse_inverts_trigamma(x: float) -> None:
    assert float(special.polygamma(1, trigamma_inverse(x))) == pytest.approx(x, rel=1e-6)


def test_equal_variances_pool_completely_up_to_the_cap() -> None:
    # Six levels of 4 repetitions, each s^2 = 0.01: the logs scatter less than sampling
    # explains, so d0 is the cap, the levels' total df 6 x 3 = 18, and
    # s0^2 = 0.01 exp(ln 1.5 - digamma(1.5) + digamma(9) - ln 9)
    #      = 0.01 exp(0.4054651 - 0.0364900 + 2.1406415 - 2.1972246) = 0.0136669.
    prior = fit_prior([(0.01, 3.0)] * 6)
    assert prior is not None
    assert prior.df == 18.0
    assert prior.variance == pytest.approx(0.0136669, rel=1e-5)
    assert prior.levels == 6


def test_scattered_variances_fit_a_finite_prior() -> None:
    # e_g = ln s_g^2 - digamma(1.5) + ln 1.5; their sample variance less trigamma(1.5) =
    # pi^2 / 2 - 4 = 0.9348 is trigamma(d0 / 2). By hand for s^2 = 0.001, 0.004, 0.01, 0.02,
    # 0.05, 0.1 (df 3): var(ln s^2) = 14.2359 / 5 = 2.8472, so trigamma(d0 / 2) = 1.9124;
    # trigamma(0.9) = 1 / 0.81 + 1 / 3.61 + trigamma(2.9) = 1.2346 + 0.2770 + 0.4110 = 1.9225,
    # a little above, so d0 / 2 is a little above 0.9: d0 = 1.81.
    prior = fit_prior([(v, 3.0) for v in (0.001, 0.004, 0.01, 0.02, 0.05, 0.1)])
    assert prior is not None
    assert prior.df == pytest.approx(1.81, abs=0.01)
    logs = np.log([0.001, 0.004, 0.01, 0.02, 0.05, 0.1])
    mean_e = float(np.mean(logs)) - float(special.digamma(1.5)) + math.log(1.5)
    expected = math.exp(mean_e + float(special.digamma(prior.df / 2)) - math.log(prior.df / 2))
    assert prior.variance == pytest.approx(expected)


def test_too_few_levels_or_zero_variances_give_no_prior() -> None:
    assert fit_prior([(0.01, 3.0)] * (MIN_LEVELS - 1)) is None
    assert fit_prior([(0.01, 3.0)] * (MIN_LEVELS - 1) + [(0.0, 3.0)]) is None


def test_moderate_by_hand() -> None:
    prior = Prior(variance=0.02, df=6.0, levels=10)
    # (6 x 0.02 + 3 x 0.01) / 9 = 0.016667 with 9 df
    assert moderate(0.01, 3.0, prior) == pytest.approx((0.0166667, 9.0), rel=1e-5)
    # twice the prior for a difference of two levels: (6 x 0.04 + 3 x 0.01) / 9 = 0.03
    assert moderate(0.01, 3.0, prior, scale=2.0) == pytest.approx((0.03, 9.0))
    # a level noisier than the prior keeps its own variance, with the borrowed df
    assert moderate(0.05, 3.0, prior) == pytest.approx((0.05, 9.0))


def _simulate(
    low: float, high: float, gap: float, runs: int = 400, seed: int = 7
) -> dict[str, float]:
    """22 levels of 4 repetitions (pool-and-cluster's), each with its true log spread drawn
    between `low` and `high`; the levels paired two by two, the second `gap` times the first.
    Per run the prior is fitted on the 22 levels' variances, then each pair's paired t
    interval (of the log ratio) is formed with and without moderation."""
    rng = np.random.default_rng(seed)
    levels, reps = 22, 4
    covered = {"moderated": 0, "own": 0}
    excludes_one = {"moderated": 0, "own": 0}
    width = {"moderated": 0.0, "own": 0.0}
    noisiest: list[tuple[float, bool]] = []
    n = 0
    for _ in range(runs):
        sigma = np.exp(rng.uniform(math.log(low), math.log(high), levels))
        x = rng.normal(0.0, 1.0, (levels, reps)) * sigma[:, None]
        prior = fit_prior([(float(np.var(row, ddof=1)), reps - 1.0) for row in x])
        assert prior is not None
        for a in range(0, levels, 2):
            d = x[a + 1] - x[a] + math.log(gap)
            s2, mean = float(np.var(d, ddof=1)), float(np.mean(d))
            variance, df = moderate(s2, reps - 1.0, prior, scale=2.0)
            for name, (v, f) in {"own": (s2, reps - 1.0), "moderated": (variance, df)}.items():
                half = float(stats.t.ppf(0.975, f)) * math.sqrt(v / reps)
                hit = abs(mean - math.log(gap)) <= half
                covered[name] += hit
                excludes_one[name] += abs(mean) > half
                width[name] += half
                if name == "moderated":
                    noisiest.append((sigma[a] ** 2 + sigma[a + 1] ** 2, hit))
            n += 1
    noisiest.sort()
    tenth = noisiest[-len(noisiest) // 10 :]
    return {
        "coverage": covered["moderated"] / n,
        "coverage_own": covered["own"] / n,
        "noisiest_tenth": sum(hit for _, hit in tenth) / len(tenth),
        "width_ratio": width["moderated"] / width["own"],
        "excludes_one": excludes_one["moderated"] / n,
        "excludes_one_own": excludes_one["own"] / n,
    }


def test_a_a_intervals_cover_as_they_say_on_levels_of_unequal_spread() -> None:
    # True spreads 4-12% (this machine's levels: 5% at 1,000 clients to 9% at 7,000; the
    # calibrated spread 8%); 4,400 A/A comparisons. Moderated 95% intervals still cover 95%
    # (a false "different" in at most 5.5%), the noisiest tenth at least 90%, and they are
    # a fifth narrower than each pair's own.
    r = _simulate(0.04, 0.12, gap=1.0)
    assert r["coverage"] >= 0.94
    assert r["excludes_one"] <= 0.055
    assert r["noisiest_tenth"] >= 0.90
    assert r["width_ratio"] <= 0.85


def test_tenfold_unequal_spreads_still_cover_within_a_point_and_a_half() -> None:
    r = _simulate(0.02, 0.20, gap=1.0)
    assert r["coverage"] >= 0.935
    assert r["excludes_one"] <= 0.065


def test_power_on_a_known_gap_grows() -> None:
    # 1.2x apart: each pair's own interval excludes 1 about two times in three, the
    # moderated one more than four in five.
    r = _simulate(0.04, 0.12, gap=1.2)
    assert r["excludes_one"] >= r["excludes_one_own"] + 0.10
    assert r["coverage"] >= 0.94


# --- a machine that is not quiet -------------------------------------------------------------
# What the claims read on a busy host: a repetition may share a background process's burst
# (it took u of the server's core, the figure falls by about u). Above the 2% noise band the
# cores' account flags it (engine/judge.disturbed_flag): the level is measured once more, and a
# repetition still disturbed is left out (analysis/claims/reading.undisturbed), its pair with
# it. Below the band it stays in, unseen. The rounds also drift together (a slower minute of
# the host slows every level measured in it).
FLAG_BAND = 0.02


def _busy_repetition(rng: np.random.Generator, burst_p: float, burst_max: float) -> float:
    """One repetition's log loss to a burst: 0, an unseen one (below the band), or NaN for a
    repetition flagged twice (measured again, disturbed again: left out)."""
    for _attempt in range(2):
        took = rng.uniform(0.0, burst_max) if rng.random() < burst_p else 0.0
        if took <= FLAG_BAND:
            return math.log(1.0 - took)
    return math.nan


def _independent(a: np.ndarray, b: np.ndarray, prior: Prior, sigma: float) -> LogRatio | None:
    """Two levels read as independent sides, as a claim reads them when fewer than MIN_PAIRS
    pairs are left: each side's repetitions through the claims' own reading
    (reading.moderated_evidence: 4 or more moderated; 2 or 3 borrowing one degree of freedom,
    never narrower than the calibrated spread's interval), their log ratio."""
    spread = RunSpread(sigma, False, "simulated")
    sides = []
    for logs in (a, b):
        evidence = repetition_evidence(list(np.exp(logs)), [0.0] * len(logs), spread)
        evidence = moderated_evidence(evidence, prior, repetition_floor(spread, 0.0, None))
        if evidence is None:
            return None
        sides.append(evidence)
    return log_ratio([sides[0]], [sides[1]], spread)


def _simulate_busy(
    burst_p: float, burst_max: float, drift: float, gap: float = 1.0, runs: int = 400
) -> dict[str, float]:
    """22 levels x 4 repetitions as `_simulate`, on a busy host: every repetition may take a
    burst, every round a shared drift. Pairs whose repetitions were left out are dropped; with
    fewer than MIN_PAIRS left, the two levels are read as independent sides (the calibrated
    spread 8%, as this host's on 2026-11-27), as the claims read them."""
    rng = np.random.default_rng(11)
    levels, reps = 22, 4
    found, unpaired, n = 0, 0, 0
    for _ in range(runs):
        sigma = np.exp(rng.uniform(math.log(0.04), math.log(0.12), levels))
        rounds = rng.normal(0.0, drift, reps)
        x = rng.normal(0.0, 1.0, (levels, reps)) * sigma[:, None] + rounds[None, :]
        loss = np.array(
            [[_busy_repetition(rng, burst_p, burst_max) for _ in range(reps)] for _ in x]
        )
        x = x + loss
        kept = [row[~np.isnan(row)] for row in x]
        prior = fit_prior([(float(np.var(k, ddof=1)), len(k) - 1.0) for k in kept if len(k) > 1])
        assert prior is not None
        for a in range(0, levels, 2):
            b = x[a + 1] + math.log(gap)
            d = b - x[a]
            d = d[~np.isnan(d)]
            n += 1
            if len(d) >= MIN_PAIRS:
                variance, df = moderate(float(np.var(d, ddof=1)), len(d) - 1.0, prior, scale=2.0)
                half = float(stats.t.ppf(0.975, df)) * math.sqrt(variance / len(d))
                found += abs(float(np.mean(d))) > half
                continue
            unpaired += 1
            ratio = _independent(b[~np.isnan(b)], kept[a], prior, 0.084)
            if ratio is not None:
                low, high = interval_of(ratio)
                found += low > 1.0 or high < 1.0
    return {"excludes_one": found / n, "unpaired": unpaired / n}


@pytest.mark.parametrize(
    ("burst_p", "burst_max", "drift"),
    [(0.3, 0.13, 0.0), (0.3, 0.13, 0.05), (0.6, 0.13, 0.05), (0.3, 0.30, 0.08)],
)
def test_a_a_on_a_busy_host_gives_no_more_false_winners(
    burst_p: float, burst_max: float, drift: float
) -> None:
    # Bursts of a background process of up to 13% (the one that made a false winner of two
    # copies of one stack) or 30% of a core in 30-60% of the repetitions, and rounds drifting
    # by 5-8%: 4,400 A/A comparisons a case, at most 5.5% of them "different" (seeded: 3.3%,
    # 1.8%, 1.2%, 1.1%; the same levels on a quiet host 5.1%). 41-90% of the comparisons lost
    # a pair to a repetition left out and were read as independent sides, a side left with 2
    # or 3 repetitions borrowing one degree of freedom as the claims read it (before that
    # rule: 3.8%, 2.1%, 1.8%, 1.5%).
    r = _simulate_busy(burst_p, burst_max, drift)
    assert r["excludes_one"] <= 0.055, r


def test_power_on_a_busy_host_stays_useful() -> None:
    # 1.2x apart with bursts in 30% of the repetitions: most comparisons still decide
    # (seeded: 68%; on a quiet host 85%).
    r = _simulate_busy(0.3, 0.13, 0.05, gap=1.2)
    assert r["excludes_one"] >= 0.6, r


# --- levels left with 2 or 3 repetitions -----------------------------------------------------
def _simulate_few(
    n: int, low: float, high: float, floor_sigma: float, runs: int = 200, seed: int = 3
) -> dict[str, float]:
    """A level that kept n of its repetitions (the others disturbed) in a run whose prior was
    fitted on 22 levels of 4; true spreads drawn between `low` and `high`. Its 95% interval
    of the true log figure: its own (t(n - 1), or the floor's when that is wider, as
    repetition_evidence gives it) against the moderated one of reading.moderated_evidence
    (the prior's variance, one borrowed degree of freedom, never narrower than the floor's)."""
    from stackbench.analysis.moderated import FEW_BORROWED_DF
    from stackbench.analysis.verdicts import at_least_the_floor, t_quantile

    rng = np.random.default_rng(seed)
    floor = floor_sigma**2
    covered = {"own": 0, "moderated": 0}
    width = {"own": 0.0, "moderated": 0.0}
    noisiest: list[tuple[float, bool]] = []
    count = 0
    for _ in range(runs):
        sigma = np.exp(rng.uniform(math.log(low), math.log(high), 22))
        x = rng.normal(0.0, 1.0, (22, 4)) * sigma[:, None]
        prior = fit_prior([(float(np.var(row, ddof=1)), 3.0) for row in x])
        assert prior is not None
        for _level in range(10):
            s = math.exp(rng.uniform(math.log(low), math.log(high)))
            y = rng.normal(0.0, s, n)
            sample = float(np.var(y, ddof=1))
            own = at_least_the_floor(sample, n - 1.0, floor)
            moderated = own
            if own[1] == n - 1.0:  # the sample's own interval was the wider: moderate it
                borrowed = moderate(sample, n - 1.0, prior, borrowed_df=FEW_BORROWED_DF)
                moderated = at_least_the_floor(*borrowed, floor)
            for name, (variance, df) in {"own": own, "moderated": moderated}.items():
                half = t_quantile(0.975, df) * math.sqrt(variance / n)
                hit = abs(float(np.mean(y))) <= half
                covered[name] += hit
                width[name] += min(half, 5.0)
                if name == "moderated":
                    noisiest.append((s, hit))
            count += 1
    noisiest.sort()
    tenth = noisiest[-len(noisiest) // 10 :]
    return {
        "coverage": covered["moderated"] / count,
        "noisiest_tenth": sum(hit for _, hit in tenth) / len(tenth),
        "width_ratio": width["moderated"] / width["own"],
    }


@pytest.mark.parametrize(
    ("n", "low", "high", "floor_sigma", "narrower"),
    [
        (2, 0.04, 0.12, 0.02, 0.5),
        (2, 0.04, 0.12, 0.084, 0.5),
        (2, 0.02, 0.20, 0.02, 0.5),
        (3, 0.04, 0.12, 0.02, 0.95),
        (3, 0.02, 0.20, 0.02, 0.95),
    ],
)
def test_a_level_left_with_two_or_three_repetitions_borrows_one_df_and_still_covers(
    n: int, low: float, high: float, floor_sigma: float, narrower: float
) -> None:
    # 2,000 levels a case. Borrowing the prior's full d0 covered the noisiest tenth of such
    # levels in 85-91% only; one borrowed degree of freedom keeps it at 90% or more, the
    # 4-repetition rule's bar, and 94% overall, with intervals half as wide or less for 2
    # repetitions (t(2) = 4.3 against t(1) = 12.7).
    r = _simulate_few(n, low, high, floor_sigma)
    assert r["coverage"] >= 0.94
    assert r["noisiest_tenth"] >= 0.90
    assert r["width_ratio"] <= narrower
