"""The verdicts' error rates by simulation (fixed seeds): false winners on A/A pairs and on a
1.01x pair, power on a 1.4x and an 8x pair from one 12-s level a side, and the regression gate
on a 0.586x case and on a case exactly at its threshold. Synthetic AR(1) windows and real
stored steady windows (tests/analysis/data/steady_windows.json, block-bootstrapped), each with
a true run-to-run spread the procedure does not know (it is told the assumed default, 5%).
docs/methods.md shows the table (benchmarks/verdict_rates.py prints it). And a background
burst of 2%, 5%, 13% or 30% of a core during one side's level, through the judge's disturbance
rule and the runner's one measurement again (docs/methods.md 3.1, issue 32), for one level a
side and for the paired reading of r rounds (analysis.paired)."""

import math

import pytest
import verdict_simulation as sim

from stackbench.analysis.verdicts import RunSpread, assumed_spread

TRIALS = 600
SYNTHETIC = [(cv, phi) for cv in (0.01, 0.03) for phi in (0.3, 0.6)]
TRUE_SPREADS = (0.0, 0.02, 0.04)  # up to 4%: what the assumed 5% must cover


def _scenarios(ratio: float) -> list[sim.Scenario]:
    return [
        sim.Scenario(ratio, sigma, assumed_spread(), sim.synthetic(cv, phi))
        for cv, phi in SYNTHETIC
        for sigma in TRUE_SPREADS
    ]


def _real(ratio: float) -> list[sim.Scenario]:
    return [
        sim.Scenario(ratio, 0.02, assumed_spread(), sim.block_bootstrap(w))
        for w in sim.real_windows()
    ]


@pytest.mark.parametrize("ratio", [1.0, 1.01])
def test_false_winners_at_most_2_percent(ratio: float) -> None:
    rates = [sim.named_rate(s, TRIALS, seed) for seed, s in enumerate(_scenarios(ratio))]
    assert sim.worst(rates) <= 0.02, rates
    real = [sim.named_rate(s, TRIALS // 2, seed) for seed, s in enumerate(_real(ratio))]
    assert sim.worst(real) <= 0.02, real


def test_a_14x_pair_is_named_at_least_95_percent_and_8x_always() -> None:
    """Synthetic windows (per-second CV 1-3%): every scenario. Real windows: on average over
    the 16 stored windows, and at least 85% for the noisiest (node hello @50, per-second CV
    12%: one 10-s window of it cannot carry more; docs/methods.md lists it)."""
    for ratio, floor in ((1.4, 0.95), (8.0, 1.0)):
        rates = [sim.named_rate(s, TRIALS, seed) for seed, s in enumerate(_scenarios(ratio))]
        assert min(rates) >= floor, (ratio, rates)
    real = [sim.named_rate(s, TRIALS // 2, seed) for seed, s in enumerate(_real(1.4))]
    assert sum(real) / len(real) >= 0.95 and min(real) >= 0.85, real
    assert all(sim.named_rate(s, TRIALS // 2, seed) == 1.0 for seed, s in enumerate(_real(8.0)))


def test_the_gate_fires_on_a_41_percent_regression_and_rarely_at_its_threshold() -> None:
    fire = [sim.gate_fire_rate(s, 0.05, TRIALS, seed) for seed, s in enumerate(_scenarios(0.586))]
    assert min(fire) >= 0.99, fire
    at_limit = [
        sim.gate_fire_rate(s, 0.05, TRIALS, seed) for seed, s in enumerate(_scenarios(0.95))
    ]
    assert sim.worst(at_limit) <= 0.05, at_limit


def test_repetitions_keep_false_winners_rare() -> None:
    for reps in (3, 5):
        scenario = sim.Scenario(1.0, 0.04, assumed_spread(), sim.synthetic(0.03, 0.6), reps)
        assert sim.named_rate(scenario, TRIALS // 2, reps) <= 0.02


def test_without_the_run_to_run_term_false_winners_abound() -> None:
    """The check can fail: told there is no run-to-run spread when there is 4%, one
    repetition a side names a winner between two copies of one stack far too often."""
    blind = sim.Scenario(1.0, 0.04, RunSpread(0.0, False, "none"), sim.synthetic(0.01, 0.3))
    assert sim.named_rate(blind, TRIALS, 1) > 0.2


# --- one whole level without a series (wrk, ab): the run-to-run spread of whole levels -------
WHOLE_TRUE = (0.0, 0.04, 0.08)  # up to 8%: what the assumed 10% must cover
CALIBRATED = RunSpread(0.03, False, "calibrated 3%", within=0.0001, level_s=15.0)


@pytest.mark.parametrize("ratio", [1.0, 1.01])
def test_one_whole_level_a_side_names_false_winners_at_most_2_percent(ratio: float) -> None:
    for seed, sigma in enumerate(WHOLE_TRUE):
        rate = sim.whole_level_named_rate(ratio, sigma, assumed_spread(), TRIALS * 2, seed)
        assert rate <= 0.02, (sigma, rate)
    # calibrated (sigma_run 3% plus 1% window noise, upper bound): the truth at 80% of it
    truth = 0.8 * math.sqrt(0.03**2 + 0.0001)
    assert sim.whole_level_named_rate(ratio, truth, CALIBRATED, TRIALS * 2, 7) <= 0.02


def test_one_whole_level_a_side_decides_6x_always_and_14x_often() -> None:
    """Assumed 10%: the interval of a ratio is ×/÷ 1.32, so 6× always, and 1.4× (just beyond
    the 1.35× it resolves) in well over half the trials; calibrated at 3% nearly always."""
    for seed, sigma in enumerate(WHOLE_TRUE):
        assert sim.whole_level_named_rate(6.0, sigma, assumed_spread(), TRIALS, seed) == 1.0
        rate = sim.whole_level_named_rate(1.4, sigma, assumed_spread(), TRIALS, seed)
        assert rate >= 0.6, (sigma, rate)
    truth = 0.8 * math.sqrt(0.03**2 + 0.0001)
    assert sim.whole_level_named_rate(1.4, truth, CALIBRATED, TRIALS, 3) >= 0.99


def test_whole_levels_with_a_spread_beyond_the_assumed_one_name_false_winners() -> None:
    """The check can fail: ab levels whose fresh starts vary by 25% (node on db-report did,
    issue 31) name false winners far more often than 2% under the assumed 10%."""
    assert sim.whole_level_named_rate(1.0, 0.25, assumed_spread(), TRIALS, 5) > 0.2


# --- a background burst during one side's level: the judge, then the verdict ---------------
BURSTS = (0.02, 0.05, 0.13, 0.30)
BURST_TRIALS = 400


@pytest.mark.parametrize("share", BURSTS)
def test_a_burst_during_one_sides_level_names_false_winners_at_most_2_percent(
    share: float,
) -> None:
    """A CPU-bound server loses the burst's share of its figure, and the monitor measures the
    share within about a point: a burst beyond the 2% band is flagged and the level measured
    again; one within it moves the figure by less than the verdicts can resolve."""
    burst = sim.Burst(share)
    rates = [
        sim.burst_named_rate(s, burst, BURST_TRIALS, seed) for seed, s in enumerate(_scenarios(1.0))
    ]
    assert sim.worst(rates) <= 0.02, rates


def test_a_clean_14x_pair_is_still_decided_beside_the_disturbance_rule() -> None:
    """The judge's noise (a point of a core) flags a clean level now and then; measured again,
    it still decides: 1.4x named in at least 95% of trials, with or without a 13% burst."""
    for share in (0.0, 0.13):
        rates = [
            sim.burst_named_rate(s, sim.Burst(share), BURST_TRIALS, seed)
            for seed, s in enumerate(_scenarios(1.4))
        ]
        assert min(rates) >= 0.95, (share, rates)


def test_the_old_fixed_15_percent_rule_lets_a_13_percent_burst_name_false_winners() -> None:
    """The check can fail: judged against the old fixed 15% instead of the 2% band, a 13%
    burst on one side of an A/A pair (true run-to-run spread 4%) names a winner in more than
    a tenth of the trials."""
    old = sim.Burst(0.13, band=0.15)
    scenario = sim.Scenario(1.0, 0.04, assumed_spread(), sim.synthetic(0.01, 0.3))
    assert sim.burst_named_rate(scenario, old, BURST_TRIALS, 3) > 0.1


def test_the_judge_sees_the_burst_it_is_given() -> None:
    """The simulated account is judged as a real one: 13% of the server's core is disturbed,
    1% is not, and the band is the judge's."""
    assert sim.judged_disturbed(0.13, 0.02)
    assert not sim.judged_disturbed(0.01, 0.02)
    assert not sim.judged_disturbed(0.13, 0.15)


# --- the paired reading (analysis.paired) with a burst during one side's level --------------
# r rounds each give both sides one figure, sharing the round's machine drift (5%); each
# figure has its own fresh-start spread (0-4%, as above) and window. A/A bounds are over the
# 12 scenarios of a burst together, with the 95% Clopper-Pearson upper bound of the rate.
PAIRED_ROUNDS = sim.SUITE_ROUNDS[0]
PAIRED_TRIALS = 100  # a scenario: 1,200 a burst


def _rounds(ratio: float) -> list[sim.Rounds]:
    return [
        sim.Rounds(ratio, PAIRED_ROUNDS, own, sim.synthetic(cv, phi))
        for cv, phi in SYNTHETIC
        for own in TRUE_SPREADS
    ]


def _paired(ratio: float, burst: sim.Burst, every_round: bool) -> list[sim.PairedCounts]:
    return [
        sim.paired_burst_counts(s, burst, PAIRED_TRIALS, seed, every_round)
        for seed, s in enumerate(_rounds(ratio))
    ]


@pytest.mark.parametrize("every_round", [False, True], ids=["one round", "every round"])
@pytest.mark.parametrize("share", BURSTS)
def test_paired_a_burst_during_one_sides_level_names_false_winners_at_most_2_percent(
    share: float, every_round: bool
) -> None:
    """In one round, as the unpaired test has it, and in every round (a job that keeps coming
    back): flagged beyond the band and measured again. In one round alone a burst could not
    name a winner even unflagged: one pair far off widens the paired interval with it (alone
    it gives a t of about 1); a burst in every round shifts every pair, and only the judge
    stops it."""
    counts = _paired(1.0, sim.Burst(share), every_round)
    total = sum(counts, start=sim.PairedCounts(0, 0, 0, 0))
    upper = sim.upper_bound(total.named, total.trials)
    assert upper <= 0.02, (
        f"{total.named} of {total.trials} A/A comparisons named a winner, 95% upper bound "
        f"{upper:.2%} (binomial, Clopper-Pearson); by scenario {[c.rate for c in counts]}"
    )


def test_paired_a_clean_14x_pair_is_still_decided_beside_the_disturbance_rule() -> None:
    """A clean level is flagged now and then by the monitor's error, and one flagged twice
    is left out with its pair (the comparison set aside only when a side is disturbed in
    every round); 1.4x is named in at least 95% of each scenario's trials, with or without a
    13% burst in one round (seeded: 100% in both; when a repetition flagged twice set the
    comparison aside, 98-100% clean and 96-99% with the burst)."""
    for share in (0.0, 0.13):
        counts = _paired(1.4, sim.Burst(share), False)
        assert min(c.rate for c in counts) >= 0.95, (share, [c.rate for c in counts])


def test_paired_the_old_fixed_15_percent_rule_lets_a_recurring_burst_name_false_winners() -> None:
    """The check can fail: judged against the old fixed 15%, a 13% burst during every one
    of b's levels lowers every pair alike, and the paired reading names a winner in most
    A/A trials (seeded: 93 of 100; with the judge's 2% band, 0.6% over 12 scenarios)."""
    old = sim.Burst(0.13, band=0.15)
    scenario = sim.Rounds(1.0, PAIRED_ROUNDS, 0.02, sim.synthetic(0.01, 0.3))
    assert sim.paired_burst_counts(scenario, old, PAIRED_TRIALS, 3, every_round=True).rate > 0.5
