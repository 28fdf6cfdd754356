"""Statistics for benchmark results: pure functions, no I/O, deterministic (seeded bootstrap).

Here: the descriptive figures of levels (medians, a percentile-bootstrap interval of a median
of repetitions, jitter; the per-level figures of figures.py aggregated over repetitions), the
SLO breakpoint and the LOWESS curve. The arithmetic is numpy's (quantiles, seeded
resampling). The steady windows live in steady.py and levelsteady.py, the interval of a
figure from its evidence in intervals.py, and the verdicts that compare stacks or runs
(faster, equivalent, not enough evidence) in verdicts.py.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import msgspec
import numpy as np

from stackbench.analysis.figures import LEVEL_FIGURES, LevelFigure
from stackbench.analysis.intervals import FloatArray, percentile_bounds, resample
from stackbench.analysis.verdicts import Evidence
from stackbench.config.loadspec import error_rate  # noqa: F401 - part of the stats API
from stackbench.config.slo import SloOutcome, SloStatus, evaluate_slo
from stackbench.config.suite import Slo
from stackbench.store.records import Flag, LevelFlag, SloSettings, has_flag
from stackbench.store.store import LevelRow

DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95
DEFAULT_SEED = 1
NOISY_CV = 0.05
NO_COMPLETED = LevelFlag.NO_COMPLETED.alone
# Display order of latency figures; a driver may give any subset.
LATENCY_KEYS = ("min", "p50", "p75", "p80", "p90", "p99", "p99_9", "p99_99", "max", "mean", "stdev")
_STATUS_RANK = {"ok": 0, "invalid": 1, "failed": 2}


# --- basic summaries -------------------------------------------------------------------------
def median(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("median of no values")
    return float(np.median(values))


def mean(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("mean of no values")
    return float(np.mean(values))


def stdev(values: Sequence[float]) -> float:
    """Sample standard deviation (n - 1); 0.0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    return float(np.std(values, ddof=1))


def cv(values: Sequence[float]) -> float:
    """Coefficient of variation stdev/mean; 0.0 for one value or all zeros, inf if mean is 0."""
    sd = stdev(values)
    if sd == 0.0:
        return 0.0
    m = mean(values)
    return math.inf if m == 0 else sd / abs(m)


def is_noisy(values: Sequence[float], threshold: float = NOISY_CV) -> bool:
    return len(values) >= 2 and cv(values) > threshold


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (the common 'type 7' definition, numpy's
    'linear'). The values need not be sorted: numpy sorts them."""
    if not sorted_values:
        raise ValueError("quantile of no values")
    return float(np.quantile(sorted_values, q, method="linear"))


# --- bootstrap -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Estimate:
    """A figure with its confidence interval (None: no interval), and the evidence behind it
    that verdicts compare (None: the figure has none, e.g. one repetition without a series)."""

    value: float
    low: float | None
    high: float | None
    n: int
    evidence: Evidence | None = None
    # Why no verdict may rest on this figure although it has evidence (a disturbed level)
    caveat: str | None = None
    # The figure understates its server (a loader-bound level): verdicts read it as a floor
    # on the server's performance (verdicts.read_floors)
    floor: bool = False

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None


def bootstrap_median(
    values: Sequence[float],
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> Estimate:
    """Median with a percentile-bootstrap confidence interval of the median (seeded numpy
    generator: the same values and seed give the same interval)."""
    vals = [float(v) for v in values]
    center = median(vals)
    if len(vals) < 2:
        return Estimate(center, None, None, len(vals))
    if min(vals) == max(vals):  # every resample is the same value
        return Estimate(center, center, center, len(vals))
    medians = resample(vals, resamples, np.random.default_rng(seed))
    low, high = percentile_bounds(medians, confidence)
    return Estimate(center, low, high, len(vals))


# --- per-second jitter -----------------------------------------------------------------------
@dataclass(frozen=True)
class Jitter:
    seconds: int  # full seconds considered
    cv: float  # of completed requests per second
    max_over_min: float | None  # None when some second completed nothing (see zero_seconds)
    zero_seconds: int  # full seconds with no completed request: stalls


def jitter(completed_per_second: Sequence[float]) -> Jitter | None:
    """Steadiness of a level: the first and last seconds are partial, so they are skipped.

    None when fewer than two full seconds remain (nothing to compare)."""
    full = [float(v) for v in completed_per_second[1:-1]]
    if len(full) < 2:
        return None
    low, high = min(full), max(full)
    zeros = sum(1 for v in full if v == 0)
    return Jitter(len(full), cv(full), high / low if low > 0 else None, zeros)


# --- SLO -------------------------------------------------------------------------------------
def slo_from_settings(value: SloSettings | None) -> Slo | None:
    """The suite's SLO from the store's copy of it (converted: Slo checks its bounds)."""
    return None if value is None else msgspec.convert(msgspec.structs.asdict(value), Slo)


@dataclass(frozen=True)
class Breakpoint:
    level_index: int
    level_value: float
    reason: str
    last_passing: float | None  # highest earlier level that passed, if any


def find_breakpoint(outcomes: Sequence[tuple[int, float, SloOutcome]]) -> Breakpoint | None:
    """First level in sweep order (level_index) that breaks the SLO; unknown levels are skipped."""
    last_passing: float | None = None
    for index, value, outcome in sorted(outcomes, key=lambda o: o[0]):
        if outcome.status is SloStatus.FAIL:
            return Breakpoint(index, value, outcome.reason, last_passing)
        if outcome.status is SloStatus.PASS:
            last_passing = value
    return None


@dataclass(frozen=True)
class Crossing:
    """Where a sweep crosses a limit and stays across: the position lies in (low, high].

    A level crosses when every repetition of it crosses, keeps within when none does. A
    crossing holds at the first crossing level that is repeated (two or more repetitions, all
    across) or whose next level crosses too: a one-level blip is not a breakpoint, and the
    sweep's last level crossing once is not yet one. `low` is the last level before `high`
    that kept within (0 when none did; with no held crossing, the last such level of the
    sweep), `high` the first level of the held crossing (inf: none held)."""

    low: float
    high: float
    reached: float  # the highest level judged
    blips: tuple[float, ...]  # levels that crossed (or some repetitions did) but did not hold
    unconfirmed: float | None  # the last level crossed (once, or in some repetitions): unheld

    @property
    def held(self) -> bool:
        return math.isfinite(self.high)


def held_crossing(levels: Sequence[tuple[float, Sequence[bool]]]) -> Crossing:
    """The crossing of a sweep from each level's repetitions (True: that repetition crossed),
    levels in any order. With single repetitions, each crossing by chance with probability q
    independently, a sweep of n levels shows a held crossing by chance with probability at
    most (n - 1) q^2 (two neighbours must both cross), where the first crossing level alone
    gives 1 - (1 - q)^n (tests/analysis/test_stats.py checks both by simulation)."""
    ordered = sorted((float(v), tuple(o)) for v, o in levels)
    low, blips = 0.0, []
    for i, (value, outcomes) in enumerate(ordered):
        crosses = bool(outcomes) and all(outcomes)
        if not crosses:
            if any(outcomes):
                blips.append(value)
            else:
                low = value
            continue
        following = ordered[i + 1][1] if i + 1 < len(ordered) else None
        if len(outcomes) >= 2 or (following is not None and following and all(following)):
            return Crossing(low, value, ordered[-1][0], tuple(blips), None)
        if following is None:
            return Crossing(low, math.inf, value, tuple(blips), value)
        blips.append(value)
    reached = ordered[-1][0] if ordered else 0.0
    # the last level crossed in some repetitions: nothing after it can confirm or dismiss that
    last_mixed = reached if blips and blips[-1] == reached else None
    return Crossing(low, math.inf, reached, tuple(blips), last_mixed)


# --- trend line ------------------------------------------------------------------------------
def lowess(points: Sequence[tuple[float, float]], frac: float = 0.7) -> list[tuple[float, float]]:
    """Locally weighted linear regression (Cleveland 1979, tricube weights over the nearest
    ceil(frac * n) points), evaluated at each distinct x.

    Deterministic and without robustness iterations: repetitions already give several y per x
    and the median markers show outliers. Few distinct x values degrade gracefully to a line.
    (statsmodels' lowess is not a dependency; this is the same local fit, on numpy.)"""
    pts = np.array(sorted((float(x), float(y)) for x, y in points), dtype=np.float64)
    if len(pts) == 0:
        return []
    k = min(len(pts), max(3, math.ceil(frac * len(pts))))
    return [
        (float(x0), _local_fit(pts[:, 0], pts[:, 1], float(x0), k)) for x0 in np.unique(pts[:, 0])
    ]


PEAK_FRAC = 0.3  # the share of the sweep's levels each point of the peak's trend rests on
PEAK_MIN_POINTS = 5  # ... and at least this many (3 evenly spaced points barely smooth)


def fitted_peak(points: Sequence[tuple[float, float]], frac: float = PEAK_FRAC) -> float | None:
    """The level where the sweep's trend (lowess over about `frac` of its levels) is highest,
    the lowest such level on a tie; None for no points. The peak's figure is then read at that
    level: its own measurement weighs only a share of the fit that chose it, so its noise is
    less selected than the highest of n single medians' is (that one is biased upwards by the
    expected maximum of n noise draws: +1.87 sigma for 20 flat levels, against about +1 sigma
    here, measured in tests/analysis/test_stats.py; less with more levels).

    The trend runs over the levels' logarithms (where every level is positive): a sweep's
    levels are connections or rates that grow by factors, and on a linear axis the sparse
    low end (1, 100, 500 beside 500 levels 250 apart) shares one local line with the dense
    plateau, which then carries the plateau's slope past the sharp rise and misplaces the
    peak (003's Apache, measured 3,929 req/s at 1 connection and 5,577 at 100, was given
    4,766 and 4,741 and peaked at 1)."""
    if not points:
        return None
    axis = peak_axis([x for x, _ in points])
    curve = lowess([(axis(x), y) for x, y in points], max(frac, PEAK_MIN_POINTS / len(points)))
    level_at = {axis(x): x for x, _ in points}  # the level itself, not exp(log(level))
    return level_at[max(curve, key=lambda p: p[1])[0]]


def peak_axis(levels: Sequence[float]) -> Callable[[float], float]:
    """Where fitted_peak places a level: its logarithm when every level is positive (they
    grow by factors), else the level itself."""
    if all(x > 0 for x in levels):
        return math.log
    return float


def _local_fit(xs: FloatArray, ys: FloatArray, x0: float, k: int) -> float:
    # Stable sort: among equally distant points the earlier (smaller x, then y) are kept.
    nearest = np.argsort(np.abs(xs - x0), kind="stable")[:k]
    x, y = xs[nearest], ys[nearest]
    radius = float(np.max(np.abs(x - x0))) * 1.0001 or 1.0
    weights = (1.0 - (np.abs(x - x0) / radius) ** 3) ** 3
    mx = float(np.sum(weights * x) / np.sum(weights))
    my = float(np.sum(weights * y) / np.sum(weights))
    sxx = float(np.sum(weights * (x - mx) ** 2))
    if sxx == 0:
        return my
    sxy = float(np.sum(weights * (x - mx) * (y - my)))
    return my + sxy / sxx * (x0 - mx)


# --- per-level figures -----------------------------------------------------------------------
def level_error_rate(row: LevelRow) -> float:
    return error_rate(row.completed, row.errors)


def measured_latency(row: LevelRow) -> dict[str, float]:
    """The latency figures a level really measured: none when no request completed (some
    drivers print zeros then, which are not latencies)."""
    return dict(row.latency_us) if row.completed > 0 else {}


def completed_series(row: LevelRow) -> list[float]:
    return [float(p.completed) for p in row.timeseries or ()]


# --- aggregation of repetitions --------------------------------------------------------------
@dataclass(frozen=True)
class LevelAggregate:
    """All repetitions of one (case, level): medians with intervals, union of flags."""

    case_id: int
    level_index: int
    level_value: float
    repetitions: int
    throughput: Estimate
    throughput_cv: float
    latency_us: dict[str, Estimate]  # only figures every repetition measured
    error_rate: Estimate
    errors_total: int
    cpu_by_role: dict[str, float]  # median cpu_percent per role
    # figures.LEVEL_FIGURES by name: the median over the repetitions that have the figure
    # (None: none has it).
    figures: dict[str, float | None]
    flags: tuple[Flag, ...]
    status: str  # worst of the repetitions: ok < invalid < failed
    slo: SloOutcome | None

    def value(self, figure: LevelFigure) -> float | None:
        return self.figures[figure.name]

    @property
    def noisy(self) -> bool:
        return has_flag(self.flags, LevelFlag.NOISY)

    def latency_value(self, key: str) -> float | None:
        est = self.latency_us.get(key)
        return None if est is None else est.value


def leave_out_disturbed(rows: Sequence[LevelRow]) -> list[LevelRow]:
    """A case's repetitions as its verdicts read them: at each level, those no other process
    or steal disturbed, where the level has some. A repetition still disturbed after its
    re-measure is left out, as the re-measure would have replaced it; the flag comes from the
    cores' account, not from the figure, so leaving it out chooses no result. A level
    disturbed in every repetition keeps them all, and decides nothing (its caveat)."""
    clean = {r.level_index for r in rows if not has_flag(r.flags, LevelFlag.DISTURBED)}
    return [
        r for r in rows if r.level_index not in clean or not has_flag(r.flags, LevelFlag.DISTURBED)
    ]


def left_out_flag(rows: Sequence[LevelRow], kept: Sequence[LevelRow]) -> Flag | None:
    """What `leave_out_disturbed` left out of one level, as its aggregate's flag."""
    if len(kept) == len(rows):
        return None
    return LevelFlag.LEFT_OUT.detail(
        f"{len(rows) - len(kept)} of {len(rows)} repetitions still disturbed after their "
        "re-measure; the level's figures are its other repetitions'"
    )


def aggregate_levels(
    levels: Sequence[LevelRow],
    slo: Slo | None = None,
    noisy_cv: float = NOISY_CV,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> list[LevelAggregate]:
    """One aggregate per (case_id, level_index), in case then sweep order."""
    groups: dict[tuple[int, int], list[LevelRow]] = {}
    for row in levels:
        groups.setdefault((row.case_id, row.level_index), []).append(row)
    return [_aggregate(groups[key], slo, noisy_cv, resamples, seed) for key in sorted(groups)]


def _median_of(rows: Sequence[LevelRow], get: Callable[[LevelRow], float | None]) -> float | None:
    values = [v for v in (get(r) for r in rows) if v is not None]
    return median(values) if values else None


def _aggregate(
    rows: list[LevelRow], slo: Slo | None, noisy_cv: float, resamples: int, seed: int
) -> LevelAggregate:
    def boot(values: Sequence[float]) -> Estimate:
        return bootstrap_median(values, resamples, seed=seed)

    rps = [r.requests_per_s for r in rows]
    measured = [measured_latency(r) for r in rows]
    keys = [k for k in LATENCY_KEYS if all(k in m for m in measured)]
    keys += sorted(set.intersection(*(set(m) for m in measured)) - set(keys))
    latency = {k: _latency_estimate(k, [m[k] for m in measured], resamples, seed) for k in keys}
    err = boot([level_error_rate(r) for r in rows])
    roles = sorted({role for r in rows for role in r.usage})
    cpu_by_role = {
        role: v for role in roles if (v := _median_of(rows, _role_cpu(role))) is not None
    }
    throughput_cv = cv(rps)
    flags = sorted({f for r in rows for f in r.flags})
    if len(rps) >= 2 and throughput_cv > noisy_cv and not has_flag(flags, LevelFlag.NOISY):
        flags.append(LevelFlag.NOISY.alone)
    if any(r.completed == 0 for r in rows):
        flags.append(NO_COMPLETED)
    outcome = None
    if slo is not None:
        outcome = evaluate_slo({k: e.value for k, e in latency.items()}, err.value, slo)
    return LevelAggregate(
        case_id=rows[0].case_id,
        level_index=rows[0].level_index,
        level_value=rows[0].level_value,
        repetitions=len(rows),
        throughput=boot(rps),
        throughput_cv=throughput_cv,
        latency_us=latency,
        error_rate=err,
        errors_total=sum(r.errors_total for r in rows),
        cpu_by_role=cpu_by_role,
        figures={f.name: _median_of(rows, f.of_level) for f in LEVEL_FIGURES},
        flags=tuple(flags),
        status=max((r.status for r in rows), key=lambda s: _STATUS_RANK.get(s, 1)),
        slo=outcome,
    )


def _role_cpu(role: str) -> Callable[[LevelRow], float | None]:
    return lambda row: u.cpu_percent if (u := row.usage.get(role)) is not None else None


def _latency_estimate(key: str, values: list[float], resamples: int, seed: int) -> Estimate:
    """Percentiles get an interval; min/max/mean/stdev are reported as plain medians."""
    if key.startswith("p"):
        return bootstrap_median(values, resamples, seed=seed)
    return Estimate(median(values), None, None, len(values))


def case_breakpoint(aggregates: Sequence[LevelAggregate]) -> Breakpoint | None:
    """Breakpoint of one case from its aggregates (each judged on the median repetition)."""
    return find_breakpoint(
        [(a.level_index, a.level_value, a.slo) for a in aggregates if a.slo is not None]
    )
