"""Error rates of the verdicts procedure by simulation: shared by test_verdict_rates.py and
benchmarks/verdict_rates.py (which prints the table of docs/methods.md).

One trial is one comparison of one level a side: each side's steady window is a per-second
series (synthetic AR(1), or a real stored window resampled by a circular block bootstrap),
scaled by the side's true mean times a run-to-run factor e^N(0, sigma_true^2) (a fresh server
start lands somewhere else). The verdicts procedure sees only the two windows and the spread it
is told (assumed or calibrated), as in a real run. With a background burst, the judge and the
one measurement again come first (burst_named_rate); the paired reading of r rounds has its own
trial (paired_burst_counts).
"""

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import signal

from stackbench.analysis.claims.bands import _ratio_band, _Verdict
from stackbench.analysis.paired import MIN_PAIRS, paired_log_ratio
from stackbench.analysis.verdicts import (
    Evidence,
    GateOutcome,
    Outcome,
    RunSpread,
    assumed_spread,
    clopper_pearson,
    compare,
    gate,
    interval_of,
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
    rng: np.random.Generator, window: Window, factor: float, burst: Burst, share: float
) -> tuple[np.ndarray, bool]:
    """One measurement on a server start landed at `factor`: its steady window and whether
    the judge flags it (a burst of `share` lowers the figure and shows in the account)."""
    lowered = factor * max(0.0, 1.0 - share * burst.loss_per_share)
    seconds = lowered * 1000.0 * window(rng)
    measured = share + rng.normal(0.0, burst.noise)
    return seconds, judged_disturbed(measured, burst.band)


def _judged_level(
    rng: np.random.Generator, window: Window, factor: float, burst: Burst, share: float
) -> tuple[np.ndarray, bool]:
    """A level as the runner leaves it: a disturbed first measurement is measured again once
    on the same start, the burst over by then; True: still disturbed (it decides nothing)."""
    seconds, disturbed = _level(rng, window, factor, burst, share)
    if disturbed and burst.remeasure:
        seconds, disturbed = _level(rng, window, factor, burst, 0.0)
    return seconds, disturbed


def _judged_side(
    rng: np.random.Generator, s: Scenario, mean: float, burst: Burst, share: float
) -> Evidence | None:
    """A side of one level as the runner leaves it; None when it is still disturbed."""
    factor = mean * math.exp(rng.normal(0.0, s.sigma_true)) if s.sigma_true else mean
    seconds, disturbed = _judged_level(rng, s.window, factor, burst, share)
    return None if disturbed else series_evidence(seconds)


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


# --- the paired reading with a burst (issue 32) ----------------------------------------------
# A ratio of two figures from the same repetitions is read from its pairs (analysis.paired):
# two stacks of one round, two levels of one fresh start. Each round gives both sides one
# figure: its true mean times the round's machine drift (both figures share it; the pairs
# cancel it), times the figure's own fresh-start factor, times its steady window's mean (the
# figure a repetition pairs by). Every level is judged and measured again as above; a
# repetition still disturbed is left out where its side has others, its pair with it
# (analysis.stats.leave_out_disturbed), and a side disturbed in every round sets the
# comparison aside (claims.reading.disturbed_reason). The rest is the claims' own decision:
# the paired interval judged against the noise band as a "near 1" claim's band, a winner named
# when it lies wholly outside (FAILS), as a verdict names one when it clears the band; with
# fewer than MIN_PAIRS pairs left, the sides are read as independent (claims.decisions).

# The rounds of the suites whose ratios pair: php-node-micro's repeat (5), db-html-report's (8)
SUITE_ROUNDS = (5, 8)
# The shared 2-core VM's drift: go-nethttp hello spread 4.8% over 15 fresh starts in 4 min
# (verdicts.ASSUMED_RUN_SPREAD); the figures' own spread is Scenario.sigma_true's 0-4%
MACHINE_DRIFT = 0.05
NEAR_ONE = _ratio_band("near", 1.0, 1.0, THROUGHPUT_THRESHOLD)


@dataclass(frozen=True)
class Rounds:
    """r rounds of a (true mean `ratio`) and b (1.0); spreads are log SDs of a figure."""

    ratio: float
    rounds: int
    own: float  # each figure's own fresh-start spread
    window: Window
    drift: float = MACHINE_DRIFT  # each round's, shared by its two figures

    def __post_init__(self) -> None:
        if self.rounds < MIN_PAIRS:
            raise ValueError(f"{self.rounds} rounds do not pair: at least {MIN_PAIRS}")


@dataclass(frozen=True)
class PairedCounts:
    """Of `trials` comparisons: a winner named by the paired reading, by the same figures
    read as independent sides (verdicts.compare on repetition evidence), and comparisons set
    aside (a level still disturbed when measured again)."""

    named: int
    named_unpaired: int
    set_aside: int
    trials: int

    @property
    def rate(self) -> float:
        return self.named / self.trials

    @property
    def unpaired_rate(self) -> float:
        return self.named_unpaired / self.trials

    @property
    def aside_rate(self) -> float:
        return self.set_aside / self.trials

    def __add__(self, other: "PairedCounts") -> "PairedCounts":
        return PairedCounts(
            self.named + other.named,
            self.named_unpaired + other.named_unpaired,
            self.set_aside + other.set_aside,
            self.trials + other.trials,
        )


def upper_bound(named: int, trials: int) -> float:
    """The 95% Clopper-Pearson interval's upper end of a rate seen `named` of `trials`."""
    return clopper_pearson(named, trials)[1]


def _paired_trial(
    rng: np.random.Generator, s: Rounds, burst: Burst, every_round: bool, unpaired: bool
) -> tuple[bool, bool] | None:
    """One comparison, the burst during b's level of the first round (both readings treat the
    rounds alike: any one would do) or of every round (a job that keeps coming back): whether
    the paired reading names a winner, and whether the same figures read as independent sides
    do (False unless `unpaired`); None: set aside (a side disturbed in every round)."""
    windows: tuple[dict[int, np.ndarray], dict[int, np.ndarray]] = ({}, {})
    flagged: tuple[set[int], set[int]] = (set(), set())
    for k in range(s.rounds):
        drift = rng.normal(0.0, s.drift)
        share = burst.share if every_round or k == 0 else 0.0
        for i, (mean, hit) in enumerate(((s.ratio, 0.0), (1.0, share))):
            factor = mean * math.exp(drift + rng.normal(0.0, s.own))
            windows[i][k], disturbed = _judged_level(rng, s.window, factor, burst, hit)
            if disturbed:
                flagged[i].add(k)
    if any(len(bad) == s.rounds for bad in flagged):
        return None
    kept = (
        {k: w for k, w in windows[0].items() if k not in flagged[0]},
        {k: w for k, w in windows[1].items() if k not in flagged[1]},
    )
    a, b = ({k: float(np.mean(w)) for k, w in side.items()} for side in kept)
    ratio = paired_log_ratio(a, b)
    if ratio is None:  # fewer than MIN_PAIRS pairs left: independent sides
        paired = _unpaired_named(kept)
    else:
        low, high = interval_of(ratio)
        paired = NEAR_ONE.judge(math.exp(ratio.d), low, high) is _Verdict.FAILS
    return paired, unpaired and _unpaired_named(kept)


def _unpaired_named(windows: tuple[dict[int, np.ndarray], dict[int, np.ndarray]]) -> bool:
    """The same figures as independent sides: each side's repetitions, verdicts.compare."""
    spread = assumed_spread()
    sides = []
    for side in windows:
        evidence = [e for w in side.values() if (e := series_evidence(w)) is not None]
        figures = [e.value for e in evidence]
        sides.append(repetition_evidence(figures, [e.variance for e in evidence], spread))
    verdict = compare(sides[0], sides[1], spread=spread)
    return verdict.outcome in (Outcome.FASTER, Outcome.SLOWER)


def paired_burst_counts(
    s: Rounds,
    burst: Burst,
    trials: int,
    seed: int,
    every_round: bool = False,
    unpaired: bool = False,
) -> PairedCounts:
    """`trials` comparisons of a with b over s.rounds rounds, a burst of `burst.share` during
    b's level in the first round (or in every round); `unpaired`: also read them unpaired."""
    rng = np.random.default_rng(seed)
    named = named_unpaired = aside = 0
    for _ in range(trials):
        outcome = _paired_trial(rng, s, burst, every_round, unpaired)
        if outcome is None:
            aside += 1
            continue
        named += outcome[0]
        named_unpaired += outcome[1]
    return PairedCounts(named, named_unpaired, aside, trials)
