"""The verdicts' error rates by simulation (fixed seeds): false winners on A/A pairs and on a
1.01x pair, power on a 1.4x and an 8x pair from one 12-s level a side, and the regression gate
on a 0.586x case and on a case exactly at its threshold. Synthetic AR(1) windows and real
stored steady windows (tests/analysis/data/steady_windows.json, block-bootstrapped), each with
a true run-to-run spread the procedure does not know (it is told the assumed default, 5%).
docs/methods.md shows the table (benchmarks/verdict_rates.py prints it)."""

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
