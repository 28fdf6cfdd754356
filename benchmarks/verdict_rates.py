"""The verdicts' error rates and minimum detectable ratios, as docs/methods.md shows them.

    .venv/bin/python benchmarks/verdict_rates.py [--trials 2000]

Prints, from one run of seeded simulations (tests/analysis/verdict_simulation.py):
- how often a winner is named for true ratios 1.00 (A/A), 1.01, 1.05, 1.4 and 8, one 12-s level
  a side, on synthetic AR(1) windows and on real stored windows, for several true run-to-run
  spreads while the procedure is told the assumed default (5%) or the truth (calibrated);
- how often `--fail-if-slower 5%` fires on a 0.586x case and on a case exactly at 0.95x;
- the minimum detectable ratio (80% power) at 1, 3, 5 and 10 repetitions a side.
"""

import argparse
import math
import sys
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=2000)
    args = parser.parse_args()
    n = args.trials
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


if __name__ == "__main__":
    main()
