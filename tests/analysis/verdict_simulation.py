"""Error rates of the verdicts procedure by simulation: shared by test_verdict_rates.py and
benchmarks/verdict_rates.py (which prints the table of docs/methods.md).

One trial is one comparison of one level a side: each side's steady window is a per-second
series (synthetic AR(1), or a real stored window resampled by a circular block bootstrap),
scaled by the side's true mean times a run-to-run factor e^N(0, sigma_true^2) (a fresh server
start lands somewhere else). The verdicts procedure sees only the two windows and the spread it
is told (assumed or calibrated), as in a real run.
"""

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import signal

from stackbench.analysis.verdicts import (
    GateOutcome,
    Outcome,
    RunSpread,
    compare,
    gate,
    repetition_evidence,
    series_evidence,
    whole_level_evidence,
)

WINDOW_S = 10  # a 12-s level: the first 2 s are always dropped
REAL_WINDOWS = Path(__file__).parent / "data" / "steady_windows.json"
Window = Callable[[np.random.Generator], np.ndarray]


def synthetic(cv: float, phi: float, seconds: int = WINDOW_S) -> Window:
    """AR(1) relative noise around 1 with marginal CV `cv` (started in its stationary law)."""

    def draw(rng: np.random.Generator) -> np.ndarray:
        shocks = rng.normal(0.0, cv * math.sqrt(1.0 - phi * phi), seconds)
        start = rng.normal(0.0, cv)
        noise, _ = signal.lfilter([1.0], [1.0, -phi], shocks, zi=[phi * start])
        return np.asarray(1.0 + noise, dtype=np.float64)

    return draw


def real_windows() -> list[np.ndarray]:
    """Steady windows of a real quick-suite run, each scaled to mean 1."""
    raw = json.loads(REAL_WINDOWS.read_text())["windows"]
    return [
        np.asarray(w["per_second"], dtype=np.float64) / float(np.mean(w["per_second"])) for w in raw
    ]


def block_bootstrap(window: np.ndarray, block: int = 3, seconds: int = WINDOW_S) -> Window:
    """Circular block bootstrap: keeps the window's autocorrelation up to `block` seconds."""
    n = len(window)

    def draw(rng: np.random.Generator) -> np.ndarray:
        starts = rng.integers(0, n, math.ceil(seconds / block))
        picks = (starts[:, None] + np.arange(block)[None, :]).ravel()[:seconds] % n
        return window[picks]

    return draw


@dataclass(frozen=True)
class Scenario:
    ratio: float  # true mean of a over b
    sigma_true: float  # the machine's real run-to-run spread
    spread: RunSpread  # what the procedure is told
    window: Window
    repetitions: int = 1


def _side(rng: np.random.Generator, s: Scenario, mean: float) -> tuple[float, np.ndarray]:
    factor = mean * math.exp(rng.normal(0.0, s.sigma_true)) if s.sigma_true else mean
    return factor, factor * 1000.0 * s.window(rng)


def _evidence(rng: np.random.Generator, s: Scenario, mean: float):  # type: ignore[no-untyped-def]
    if s.repetitions == 1:
        return series_evidence(_side(rng, s, mean)[1])
    windows = [_side(rng, s, mean)[1] for _ in range(s.repetitions)]
    within = [e.variance for w in windows if (e := series_evidence(w)) is not None]
    return repetition_evidence([float(np.mean(w)) for w in windows], within, s.spread)


def named_rate(s: Scenario, trials: int, seed: int) -> float:
    """Share of trials that name a winner (faster or slower) at all."""
    rng = np.random.default_rng(seed)
    named = 0
    for _ in range(trials):
        a, b = _evidence(rng, s, s.ratio), _evidence(rng, s, 1.0)
        named += compare(a, b, spread=s.spread).outcome in (Outcome.FASTER, Outcome.SLOWER)
    return named / trials


def gate_fire_rate(s: Scenario, limit: float, trials: int, seed: int) -> float:
    """Share of trials in which `--fail-if-slower limit` fires on B (ratio = B / A)."""
    rng = np.random.default_rng(seed)
    fired = 0
    for _ in range(trials):
        b, a = _evidence(rng, s, s.ratio), _evidence(rng, s, 1.0)
        result = gate([compare(b, a, spread=s.spread)], limit)[0]
        fired += result.outcome is GateOutcome.REGRESSED
    return fired / trials


def worst(rates: Sequence[float]) -> float:
    return max(rates)


def whole_level_named_rate(
    ratio: float,
    sigma_true: float,
    spread: RunSpread,
    trials: int,
    seed: int,
    level_s: float = 60.0,
    repetitions: int = 1,
) -> float:
    """Share of trials naming a winner between whole levels without a series (wrk, ab): each
    repetition's figure is its true mean times a run-to-run factor e^N(0, sigma_true^2); the
    procedure sees the figures and the spread it is told."""
    rng = np.random.default_rng(seed)
    named = 0
    for _ in range(trials):
        sides = []
        for mean in (ratio, 1.0):
            figures = [
                1000.0 * mean * math.exp(rng.normal(0.0, sigma_true)) for _ in range(repetitions)
            ]
            sides.append(
                whole_level_evidence(figures[0], level_s, spread)
                if repetitions == 1
                else repetition_evidence(figures, [], spread, level_s)
            )
        named += compare(sides[0], sides[1], spread=spread).outcome in (
            Outcome.FASTER,
            Outcome.SLOWER,
        )
    return named / trials
