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
    Evidence,
    GateOutcome,
    Outcome,
    RunSpread,
    compare,
    gate,
    repetition_evidence,
    series_evidence,
    whole_level_evidence,
)
from stackbench.config.measured import CoreAccount, CoreSetUse
from stackbench.config.noise import THROUGHPUT_THRESHOLD
from stackbench.engine.judge import disturbed_flag

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


# --- a background burst during one side's level (issue 32) -----------------------------------
# The judge's rule is the real one (engine/judge.py's disturbed_flag on a core account); the
# monitor's measurement of the other processes' share is modelled: the truth plus Gaussian
# noise of about a point of a core, never below zero (the account's `other_s` is clamped).


@dataclass(frozen=True)
class Burst:
    share: float  # of one core, on the server's core, during side b's first measurement only
    loss_per_share: float = 1.0  # the figure loses share * this (1: a CPU-bound server)
    noise: float = 0.01  # the measured other-share's error, standard deviation
    band: float = THROUGHPUT_THRESHOLD  # the judge's band (0.15: the old fixed rule)
    remeasure: bool = True  # a disturbed level measured again once, after a quiet wait


def server_account(other_share: float, seconds: float = 12.0) -> CoreAccount:
    """One server core's account over a level whose other processes took `other_share`."""
    other = max(0.0, other_share) * seconds
    use = CoreSetUse(
        cores=(0,),
        roles=("server",),
        busy_s=seconds,
        interrupts_s=0.0,
        roles_s=seconds - other,
        stackbench_s=0.0,
        kernel_threads_s=0.0,
        named_other_s=other,
        unseen_s=0.0,
        other_s=other,
        steal_s=0.0,
        roles_per_s=(),
        other_per_s=(),
        steal_per_s=(),
    )
    return CoreAccount(
        method="simulated", sampled="", irq_time_apart=True, elapsed_s=seconds, sets=(use,), top=()
    )


def judged_disturbed(measured_other: float, band: float) -> bool:
    return disturbed_flag(server_account(measured_other), band) is not None


def _level(
    rng: np.random.Generator, s: Scenario, factor: float, burst: Burst, share: float
) -> tuple[Evidence | None, bool]:
    """One measurement on a server start landed at `factor`: its evidence and whether the
    judge flags it (a burst of `share` lowers the figure and shows in the account)."""
    lowered = factor * max(0.0, 1.0 - share * burst.loss_per_share)
    window = lowered * 1000.0 * s.window(rng)
    measured = share + rng.normal(0.0, burst.noise)
    return series_evidence(window), judged_disturbed(measured, burst.band)


def _judged_side(
    rng: np.random.Generator, s: Scenario, mean: float, burst: Burst, share: float
) -> Evidence | None:
    """A side as the runner leaves it: a disturbed first measurement is measured again once
    on the same start, the burst over by then; None when it is still disturbed (a disturbed
    level decides nothing)."""
    factor = mean * math.exp(rng.normal(0.0, s.sigma_true)) if s.sigma_true else mean
    evidence, disturbed = _level(rng, s, factor, burst, share)
    if disturbed and burst.remeasure:
        evidence, disturbed = _level(rng, s, factor, burst, 0.0)
    return None if disturbed else evidence


def burst_named_rate(s: Scenario, burst: Burst, trials: int, seed: int) -> float:
    """Share of trials that name a winner between a (true mean s.ratio) and b (1.0), a burst
    of `burst.share` running during b's first measurement."""
    rng = np.random.default_rng(seed)
    named = 0
    for _ in range(trials):
        a = _judged_side(rng, s, s.ratio, burst, 0.0)
        b = _judged_side(rng, s, 1.0, burst, burst.share)
        if a is None or b is None:
            continue
        named += compare(a, b, spread=s.spread).outcome in (Outcome.FASTER, Outcome.SLOWER)
    return named / trials
