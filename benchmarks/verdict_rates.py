"""The verdicts' error rates and minimum detectable ratios, as docs/methods.md shows them.

    .venv/bin/python benchmarks/verdict_rates.py [--trials 2000] [--bursts-only] [--rounds 5]

Prints, from one run of seeded simulations (tests/analysis/verdict_simulation.py):
- how often a winner is named for true ratios 1.00 (A/A), 1.01, 1.05, 1.4 and 8, one 12-s level
  a side, on synthetic AR(1) windows and on real stored windows, for several true run-to-run
  spreads while the procedure is told the assumed default (5%) or the truth (calibrated);
- how often `--fail-if-slower 5%` fires on a 0.586x case and on a case exactly at 0.95x;
- the minimum detectable ratio (80% power) at 1, 3, 5 and 10 repetitions a side;
- a background burst of 2%, 5%, 13% or 30% of a core during one side's level, through the
  judge's disturbance rule and the one measurement again: A/A false winners and 1.4x power,
  for a CPU-bound server (it loses the burst's share) and one losing 2.3x the share (go-nethttp
  hello did, issue 32), beside the old fixed 15% rule;
- the same bursts with the paired reading (analysis.paired: r rounds, each giving both sides
  one figure that shares the round's machine drift), in b's first round or in every round:
  A/A false winners and 1.4x power, paired and the same figures read unpaired, and the share
  of comparisons set aside (a level still disturbed when measured again).
"""

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "analysis"))

import verdict_simulation as sim  # noqa: E402

from stackbench.analysis.verdicts import RunSpread, assumed_spread  # noqa: E402

RATIOS = (1.0, 1.01, 1.05, 1.4, 8.0)


def _row(name: str, scenarios: list[sim.Scenario], trials: int) -> str:
    cells = []
    for ratio in RATIOS:
        rates = [
            sim.named_rate(
                sim.Scenario(ratio, s.sigma_true, s.spread, s.window, s.repetitions), trials, seed
            )
            for seed, s in enumerate(scenarios)
        ]
        low, high = min(rates), max(rates)
        cells.append(f"{low:.1%}" if math.isclose(low, high) else f"{low:.1%}–{high:.1%}")
    gates = []
    for ratio in (0.586, 0.95):
        rates = [
            sim.gate_fire_rate(
                sim.Scenario(ratio, s.sigma_true, s.spread, s.window), 0.05, trials, seed
            )
            for seed, s in enumerate(scenarios)
        ]
        gates.append(f"{min(rates):.1%}–{max(rates):.1%}")
    return f"| {name} | " + " | ".join(cells + gates) + " |"


def _mdr(reps: int, sigma: float, trials: int) -> str:
    """Smallest ratio (on a 1% grid) named in at least 80% of trials."""
    window = sim.synthetic(0.02, 0.3)
    spread = RunSpread(sigma, False, "calibrated")
    for step in range(1, 80):
        ratio = 1.0 + step / 100.0
        if sim.named_rate(sim.Scenario(ratio, sigma, spread, window, reps), trials, step) >= 0.8:
            return f"{ratio:.2f}×"
    return "> 1.80×"


def _spanned(rates: Sequence[float]) -> str:
    """The rates' range over the scenarios: "0.2%–1.0%", or one figure when they agree."""
    low, high = min(rates), max(rates)
    return f"{low:.1%}" if math.isclose(low, high) else f"{low:.1%}–{high:.1%}"


def _burst_cell(ratio: float, burst: sim.Burst, scenarios: list[sim.Scenario], n: int) -> str:
    return _spanned(
        [
            sim.burst_named_rate(
                sim.Scenario(ratio, s.sigma_true, s.spread, s.window), burst, n, seed
            )
            for seed, s in enumerate(scenarios)
        ]
    )


def _bursts(trials: int) -> None:
    """A/A false winners and 1.4x power with a burst during b's level (synthetic windows,
    true spread 0-4%, assumed 5%; measured other-share within about a point)."""
    scenarios = [
        sim.Scenario(1.0, sigma, assumed_spread(), sim.synthetic(cv, phi))
        for cv in (0.01, 0.03)
        for phi in (0.3, 0.6)
        for sigma in (0.0, 0.02, 0.04)
    ]
    print("| burst during b's level | rule | A/A named | 1.4× named |")
    print("|---|---|---|---|")
    for share in (0.0, 0.02, 0.05, 0.13, 0.30):
        for loss, band in ((1.0, 0.02), (2.3, 0.02), (1.0, 0.15)):
            burst = sim.Burst(share, loss_per_share=loss, band=band)
            rule = f"flag beyond {band:.0%}, measure again" + (
                f"; figure loses {loss:g}× the share" if loss != 1.0 else ""
            )
            aa = _burst_cell(1.0, burst, scenarios, trials)
            power = _burst_cell(1.4, burst, scenarios, trials)
            print(f"| {share:.0%} of a core | {rule} | {aa} | {power} |")


def _paired_bursts(trials: int, rounds: int) -> None:
    """The same bursts with the paired reading over `rounds` rounds (machine drift 5% shared
    by a round's two figures, each figure's own spread 0-4%, synthetic windows), in b's first
    round or in every round: A/A and 1.4x named, paired and unpaired (the same figures as
    independent sides, assumed 5%), and the A/A comparisons set aside."""
    print(
        f"The same with the paired reading, {rounds} rounds (machine drift 5% shared in a "
        "round; unpaired: the same figures as independent sides):"
    )
    scenarios = [
        (sim.synthetic(cv, phi), own)
        for cv in (0.01, 0.03)
        for phi in (0.3, 0.6)
        for own in (0.0, 0.02, 0.04)
    ]
    print(
        "| burst during b's level | rule | A/A named: paired | unpaired | set aside "
        "| 1.4× named: paired | unpaired |"
    )
    print("|---|---|---|---|---|---|---|")
    for share in (0.0, 0.02, 0.05, 0.13, 0.30):
        for every in (False, True) if share else (False,):
            for loss, band in ((1.0, 0.02), (2.3, 0.02), (1.0, 0.15)):
                burst = sim.Burst(share, loss_per_share=loss, band=band)
                rule = f"flag beyond {band:.0%}, measure again" + (
                    f"; figure loses {loss:g}× the share" if loss != 1.0 else ""
                )
                cells = []
                for ratio in (1.0, 1.4):
                    counts = [
                        sim.paired_burst_counts(
                            sim.Rounds(ratio, rounds, own, window), burst, trials, seed, every, True
                        )
                        for seed, (window, own) in enumerate(scenarios)
                    ]
                    cells += [
                        _spanned([c.rate for c in counts]),
                        _spanned([c.unpaired_rate for c in counts]),
                    ]
                    if ratio == 1.0:
                        cells.append(_spanned([c.aside_rate for c in counts]))
                where = (
                    f"{share:.0%} of a core, " + ("every round" if every else "one round")
                    if share
                    else "none"
                )
                print(f"| {where} | {rule} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--bursts-only", action="store_true", help="only the burst tables")
    parser.add_argument(
        "--rounds", type=int, default=sim.SUITE_ROUNDS[0], help="rounds of the paired reading"
    )
    args = parser.parse_args()
    n = args.trials
    if args.bursts_only:
        _bursts(n // 2)
        print()
        _paired_bursts(n // 4, args.rounds)
        return
    assumed = assumed_spread()
    synthetic = [(cv, phi) for cv in (0.01, 0.03) for phi in (0.3, 0.6)]
    print("| windows, spread | A/A | 1.01× | 1.05× | 1.4× | 8× | gate @0.586× | gate @0.95× |")
    print("|---|---|---|---|---|---|---|---|")
    for truth in (0.0, 0.02, 0.04):
        print(
            _row(
                f"synthetic, true {truth:.0%}, assumed 5%",
                [
                    sim.Scenario(1.0, truth, assumed, sim.synthetic(cv, phi))
                    for cv, phi in synthetic
                ],
                n,
            )
        )
    print(
        _row(
            "synthetic, true 5%, calibrated 5%",
            [
                sim.Scenario(1.0, 0.05, RunSpread(0.05, False, "c"), sim.synthetic(cv, phi))
                for cv, phi in synthetic
            ],
            n,
        )
    )
    print(
        _row(
            "real windows, true 2%, assumed 5%",
            [sim.Scenario(1.0, 0.02, assumed, sim.block_bootstrap(w)) for w in sim.real_windows()],
            n // 2,
        )
    )
    print()
    print("Minimum detectable ratio (80% power; per-second CV 2%, AR(1) 0.3; spread calibrated):")
    print("| run-to-run spread | 1 repetition | 3 | 5 | 10 |")
    print("|---|---|---|---|---|")
    for sigma in (0.02, 0.05):
        cells = [_mdr(r, sigma, n // 4) for r in (1, 3, 5, 10)]
        print(f"| {sigma:.0%} | " + " | ".join(cells) + " |")
    print()
    print("A burst during one side's level (judge + one measurement again + verdict):")
    _bursts(n // 2)
    print()
    _paired_bursts(n // 4, args.rounds)


if __name__ == "__main__":
    main()
