"""Verdicts: which of two figures is better, by how much, and how sure. Pure functions.

Every sentence of stackbench that says faster, slower, equivalent, confirmed or refuted comes
from here (docs/methods.md, "Verdicts", explains it in plain words). The procedure:

1. Evidence of one side (`Evidence`). Either the per-second series of one level's steady
   window, or the headline figures of several repetitions of that level (Kalibera & Jones,
   ISMM 2013: the repetition, a level on a freshly started server, is the unit; seconds are
   never pooled across repetitions). All arithmetic is on the log scale: a ratio of figures
   is a difference of logs, and its interval is symmetric there.
   - Seconds: the variance of the window's log mean is s^2 / n_eff, s^2 the variance of the
     relative per-second values (delta method: Var(ln x) ~ Var(x / mean)), n_eff the effective
     sample size n (1 - r) / (1 + r) of an AR(1) series (Santer et al. 2000), with the lag-1
     autocorrelation r corrected for its small-sample bias, r = clip(r1 + (1 + 4 r1) / n, 0,
     0.9); df = n_eff - 1. A driver without a per-second series (ab) has no such evidence.
   - Repetitions: Welch on the logs of the repetitions' figures, df = r - 1. With 3 or fewer
     repetitions the sample variance is too unstable to trust alone, so it is floored at what
     one repetition is known to vary by: the run-to-run spread plus its within-level variance.
     That floor is a variance taken as known (no degrees of freedom of its own): the interval
     is the wider of z sqrt(floor / r) and t(r - 1) sqrt(s^2 / r).
   - One whole level (a driver without a per-second series: wrk, ab; a standalone timing):
     one figure whose uncertainty is the machine's run-to-run spread of whole levels
     (`whole_level_sigma`): calibrated on levels at least as long, else assumed (10%).
2. Run-to-run spread (`RunSpread`): a freshly started server differs from the last by more than
   one level's own noise says (machine drift, memory layout, the scheduler). A comparison of
   single repetitions adds sigma_run^2 for each side; sigma_run is measured per machine by
   `stackbench calibrate`, and until then a conservative default is assumed, and said.
3. Comparison: d = ln(a) - ln(b), se = sqrt(v_a + v_b + run terms), Welch-Satterthwaite df,
   interval e^(d +- t se). Against the noise band [1/(1+delta), 1+delta] (delta: 2% for
   throughput, 5% for latency percentiles, as criterion's noise threshold):
   - faster/slower: the interval lies wholly beyond the band, and Holm's step-down procedure
     over the comparisons shown together keeps p = 2 P(T > (|d| - ln(1+delta)) / se) <= alpha;
   - equivalent: the interval lies wholly inside the band (two one-sided tests);
   - real but within the threshold: inside the band, but not containing 1;
   - not enough evidence: anything else, with the smallest ratio this design can resolve and
     what would decide this comparison (longer levels, or more repetitions).
   "No difference" is never said for lack of evidence: only `EQUIVALENT` is worded as a tie.
4. Gate (`gate`): a one-sided test of "B regressed beyond the limit"; Holm over the gated cases
   for "regressed", every case one-sided for "shown not to regress" (an intersection-union
   test needs no adjustment).
"""

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

# The bands are defined in config (the judge of a level uses them too); named here as well.
# scipy and ruptures are imported in the functions that use them: together 0.7 s of CPU at
# start-up, which every command that analyses nothing (stacks, doctor, --version) would pay.
from stackbench.config.noise import PERCENTILE_THRESHOLD as PERCENTILE_THRESHOLD
from stackbench.config.noise import THROUGHPUT_THRESHOLD as THROUGHPUT_THRESHOLD

ALPHA = 0.05
CONFIDENCE = 0.95
# Run-to-run spread assumed before `stackbench calibrate` has measured this machine: go's hello
# at 50 connections on a shared 2-core VM spread 4.8% (CV) over 15 fresh 10-s levels in 4 min.
ASSUMED_RUN_SPREAD = 0.05
# Run-to-run spread assumed for one whole level without a per-second series (wrk, ab, a
# standalone timing) until a calibration on levels at least as long covers it: twice the
# steady windows' 5%, since a whole level keeps its start, which a steady window drops, and
# no steadiness can be shown for it (docs/methods.md, "One figure without a series").
ASSUMED_WHOLE_LEVEL_SPREAD = 0.10
# Degrees of freedom of a variance taken as known (the run-to-run floor): t is then z.
KNOWN_DF = 1e6
# The bias-corrected lag-1 autocorrelation is capped: beyond 0.9 a window of ten seconds would
# count as half a second, and no level of a benchmark is that close to a random walk.
MAX_AUTOCORRELATION = 0.9
MIN_SECONDS = 3  # a lag-1 autocorrelation needs at least three seconds
MAX_REPETITIONS_ADVISED = 50
# Up to this many repetitions, their sample variance is floored at the run-to-run spread
FLOORED_REPETITIONS = 3


class Outcome(enum.Enum):
    FASTER = "faster"
    SLOWER = "slower"
    EQUIVALENT = "equivalent"
    WITHIN_THRESHOLD = "real but within the threshold"
    UNDECIDED = "not enough evidence"

    @property
    def decided(self) -> bool:
        return self is not Outcome.UNDECIDED


class Unit(enum.Enum):
    SECONDS = "seconds"
    REPETITIONS = "repetitions"
    RUN = "one run"  # one whole level without a series (wrk, ab, a standalone timing)


@dataclass(frozen=True)
class RunSpread:
    """sigma_run: the run-to-run spread (relative SD, log scale) of a level's figure between
    fresh server starts on this machine."""

    sigma: float
    assumed: bool
    source: str  # for people: "assumed 5% (not calibrated: run `stackbench calibrate`)"
    # The calibration's windows' own variance of ln(figure) (what `sigma` excludes), and the
    # length of its levels: a whole level at least as long varies by at most both together.
    within: float = 0.0
    level_s: float | None = None  # None: assumed, no calibration to cover whole levels

    @property
    def variance(self) -> float:
        return self.sigma * self.sigma


def assumed_spread() -> RunSpread:
    return RunSpread(
        ASSUMED_RUN_SPREAD,
        True,
        f"run-to-run spread assumed {ASSUMED_RUN_SPREAD:.0%} (this machine is not "
        "calibrated: `stackbench calibrate` measures it)",
    )


@dataclass(frozen=True)
class Evidence:
    """What one side of a comparison knows about its figure."""

    value: float  # the figure shown (req/s, or a latency percentile in µs)
    log_mean: float  # the log of the figure the comparison uses
    variance: float  # variance of log_mean from the measurement itself
    df: float  # its degrees of freedom
    n: int  # seconds of the window, or repetitions
    unit: Unit
    within: float  # one repetition's within-level variance (for what-would-decide)
    # One whole level without a series: the run-to-run spread of whole levels it carries
    # (the spread a verdict on it names: "assumed 10%" rather than the windows' 5%)
    whole_level: "RunSpread | None" = None

    @property
    def single_run(self) -> bool:
        """One fresh start: the run-to-run spread is not in `variance`."""
        return self.unit is not Unit.REPETITIONS


# --- evidence of one side --------------------------------------------------------------------
def lag1_autocorrelation(values: Sequence[float] | np.ndarray) -> float:
    """Sample lag-1 autocorrelation (may be negative); 0 for a constant series."""
    x = np.asarray(values, dtype=np.float64)
    centred = x - float(np.mean(x))
    denominator = float(np.sum(centred * centred))
    if denominator == 0.0:
        return 0.0
    return float(np.sum(centred[1:] * centred[:-1])) / denominator


def corrected_autocorrelation(n: int, r1: float) -> float:
    """clip(r1 + (1 + 4 r1) / n, 0, 0.9): the lag-1 estimate is biased low by about
    (1 + 4 r1) / n in short series, and a negative one would flatter."""
    return min(max(r1 + (1.0 + 4.0 * r1) / n, 0.0), MAX_AUTOCORRELATION)


def effective_size(n: int, r1: float) -> float:
    """n (1 - r) / (1 + r), r the corrected lag-1 autocorrelation."""
    r = corrected_autocorrelation(n, r1)
    return n * (1.0 - r) / (1.0 + r)


def series_evidence(
    per_second: Sequence[float] | np.ndarray, shown: float | None = None
) -> Evidence | None:
    """Evidence of a steady window's per-second values (NaN seconds, with no figure, are
    skipped); `shown` is the headline when it is not the window's mean (a merged percentile).
    None with fewer than MIN_SECONDS seconds or a mean of zero."""
    x = np.asarray(per_second, dtype=np.float64)
    x = x[~np.isnan(x)]
    if len(x) < MIN_SECONDS or not np.all(np.isfinite(x)):
        return None
    mean = float(np.mean(x))
    value = mean if shown is None else float(shown)
    if mean <= 0.0 or value <= 0.0:
        return None
    relative = x / mean
    r = corrected_autocorrelation(len(x), lag1_autocorrelation(relative))
    n_eff = len(x) * (1.0 - r) / (1.0 + r)
    variance = float(np.var(relative, ddof=1)) / n_eff
    return Evidence(
        value, math.log(value), variance, variance_df(len(x), r), len(x), Unit.SECONDS, variance
    )


def variance_df(n: int, r: float) -> float:
    """Degrees of freedom of the sample variance of an AR(1) series: n (1 - r^2) / (1 + r^2)
    - 1 (Bartlett 1946: the variance's own effective size, larger than the mean's n_eff); at
    least 1."""
    return max(n * (1.0 - r * r) / (1.0 + r * r) - 1.0, 1.0)


def repetition_evidence(
    figures: Sequence[float],
    within: Sequence[float],
    spread: RunSpread,
    whole_level_s: float | None = None,
) -> Evidence | None:
    """Evidence of several repetitions of one level: their figures' logs, Welch-style. For 3
    or fewer the sample variance s^2 is too unstable alone: the interval is the wider of
    t(r - 1) sqrt(s^2 / r) and z sqrt(floor / r), the floor what one repetition is known to
    vary by, taken as known: sigma_run^2 plus a repetition's within-level variance (`within`:
    each repetition's), or for whole levels without a series (`whole_level_s`: their
    seconds) the whole-level spread. None below 2 figures."""
    x = np.asarray(figures, dtype=np.float64)
    if len(x) < 2 or np.any(x <= 0.0) or not np.all(np.isfinite(x)):
        return None
    logs = np.log(x)
    one_within = float(np.mean(within)) if len(within) else 0.0
    sample = float(np.var(logs, ddof=1))
    df = len(x) - 1.0
    if len(x) <= FLOORED_REPETITIONS:
        floor = repetition_floor(spread, one_within, whole_level_s)
        sample, df = at_least_the_floor(sample, df, floor)
    log_mean = float(np.mean(logs))
    return Evidence(
        math.exp(log_mean),
        log_mean,
        sample / len(x),
        df,
        len(x),
        Unit.REPETITIONS,
        one_within,
    )


def repetition_floor(spread: RunSpread, one_within: float, whole_level_s: float | None) -> float:
    """What one repetition is known to vary by (a log variance): sigma_run^2 plus its
    within-level variance, or for whole levels without a series (`whole_level_s`: their
    seconds) the whole-level spread."""
    if whole_level_s is None:
        return spread.variance + one_within
    return whole_level_sigma(spread, whole_level_s) ** 2


def at_least_the_floor(sample: float, df: float, floor: float) -> tuple[float, float]:
    """(variance, df) of the wider interval: t(df) sqrt(sample), or z sqrt(floor) with the
    floor taken as known."""
    z = t_quantile(0.5 + CONFIDENCE / 2.0, KNOWN_DF)
    if t_quantile(0.5 + CONFIDENCE / 2.0, df) ** 2 * sample < z * z * floor:
        return floor, KNOWN_DF
    return sample, df


def whole_level_sigma(spread: RunSpread, level_s: float) -> float:
    """Run-to-run spread (log SD) of one whole level's figure: the calibrated spread plus its
    windows' own noise when the calibration's levels were no longer than this one (a longer
    level averages more), else the assumed ASSUMED_WHOLE_LEVEL_SPREAD (or the calibrated
    total, if larger)."""
    total = math.sqrt(spread.variance + spread.within)
    if not spread.assumed and spread.level_s is not None and level_s >= spread.level_s:
        return total
    return max(ASSUMED_WHOLE_LEVEL_SPREAD, total)


def whole_level_evidence(value: float, level_s: float, spread: RunSpread) -> Evidence | None:
    """One figure of a whole level without a per-second series (one wrk or ab repetition, a
    standalone timing of `level_s` seconds): all its uncertainty is the machine's run-to-run
    spread of such figures. A comparison adds sigma_run^2 for it (a single run); the evidence
    carries the rest, whole_level_sigma^2 - sigma_run^2, as a variance taken as known."""
    if value <= 0.0 or not math.isfinite(value):
        return None
    sigma = whole_level_sigma(spread, level_s)
    extra = max(sigma**2 - spread.variance, 0.0)
    calibrated = not spread.assumed and sigma == math.sqrt(spread.variance + spread.within)
    shown = RunSpread(
        sigma,
        not calibrated,
        f"run-to-run spread of whole levels {'calibrated' if calibrated else 'assumed'} "
        f"{sigma:.0%} (a level without a per-second series)",
    )
    return Evidence(value, math.log(value), extra, KNOWN_DF, 1, Unit.RUN, extra, shown)


def clopper_pearson(
    failed: int, attempts: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a rate from `failed` of `attempts`: the
    Beta(k, n - k + 1) and Beta(k + 1, n - k) quantiles; 0 and 1 at the ends. A level's
    failures are a count, not a sampled figure: one failed request of 35,000 gives a rate
    whose interval reaches 0.0001, not a rate shown above zero with certainty."""
    from scipy import stats as scipy_stats

    if attempts <= 0 or not 0 <= failed <= attempts:
        raise ValueError(f"a rate needs 0 <= failed <= attempts > 0, got {failed}/{attempts}")
    tail = (1.0 - confidence) / 2.0
    low = 0.0 if failed == 0 else float(scipy_stats.beta.ppf(tail, failed, attempts - failed + 1))
    high = (
        1.0
        if failed == attempts
        else float(scipy_stats.beta.ppf(1.0 - tail, failed + 1, attempts - failed))
    )
    return low, high


# --- a comparison ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    """a against b for one figure: the ratio a/b with its interval, and what it shows.
    For throughput a ratio above 1 is better; for latency (higher_is_better False) below."""

    outcome: Outcome
    ratio: float | None  # a / b; None when a side has no figure
    low: float | None  # interval of the ratio at `confidence`
    high: float | None
    log_diff: float | None  # ln(a / b)
    se: float | None  # its standard error (measurement + run-to-run)
    df: float | None
    p_raw: float | None  # p of "beyond the threshold", before Holm
    p_value: float | None  # after Holm over the comparisons shown together
    threshold: float
    higher_is_better: bool
    n_a: int
    n_b: int
    unit: str  # what n counts: seconds | repetitions (or "a/b" when mixed)
    spread: RunSpread | None  # the run-to-run term used (None: repetitions on both sides)
    resolvable: float | None  # smallest ratio (>= 1) this design can tell beyond the band
    decide: str | None  # UNDECIDED: what would decide it
    confidence: float = CONFIDENCE
    alpha: float = ALPHA
    # UNDECIDED: the repetitions a side that would decide it if the ratio stayed (None: more
    # than MAX_REPETITIONS_ADVISED, or it sits at the threshold); run --until-decided reads it
    repetitions_needed: int | None = None
    # (a's, b's) figure is a floor on its server's, a loader-bound level (read_floors)
    floors: tuple[bool, bool] = (False, False)

    @property
    def a_better(self) -> bool | None:
        if self.ratio is None:
            return None
        return (self.ratio > 1.0) == self.higher_is_better


def undecided(
    reason: str,
    *,
    threshold: float,
    higher_is_better: bool,
    ratio: float | None = None,
    n_a: int = 0,
    n_b: int = 0,
) -> Verdict:
    """No comparison could be made (a side without evidence): `reason` says what would."""
    return Verdict(
        Outcome.UNDECIDED,
        ratio,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        threshold,
        higher_is_better,
        n_a,
        n_b,
        "",
        None,
        None,
        reason,
    )


def compare(
    a: Evidence | None,
    b: Evidence | None,
    *,
    higher_is_better: bool = True,
    threshold: float = THROUGHPUT_THRESHOLD,
    spread: RunSpread | None = None,
    confidence: float = CONFIDENCE,
) -> Verdict:
    """a against b (a family of one: pass a list of verdicts shown together to `holm`)."""
    spread = spread or assumed_spread()
    if a is None or b is None:
        ratio = a.value / b.value if a is not None and b is not None and b.value else None
        missing = "either side" if a is None and b is None else ("a" if a is None else "b")
        return undecided(
            f"no evidence on {missing}: a level needs a per-second series "
            f"(at least {MIN_SECONDS} steady seconds) or 2 repetitions",
            threshold=threshold,
            higher_is_better=higher_is_better,
            ratio=ratio,
        )
    lr = log_ratio([a], [b], spread)
    d, se, df = lr.d, lr.se, lr.df
    t = t_quantile(0.5 + confidence / 2.0, df)
    band = math.log1p(threshold)
    low, high = d - t * se, d + t * se
    p = _p_beyond(d, se, df, band)
    run_terms = lr.run_variance
    unit = a.unit.value if a.unit is b.unit else f"{a.unit.value}/{b.unit.value}"
    verdict = Verdict(
        _outcome(low, high, band, higher_is_better),
        math.exp(d),
        math.exp(low),
        math.exp(high),
        d,
        se,
        df,
        p,
        p,
        threshold,
        higher_is_better,
        a.n,
        b.n,
        unit,
        _named_spread(spread, a, b) if run_terms else None,
        math.exp(band + t * se),
        None,
        confidence,
        round(1.0 - confidence, 12),
    )
    if verdict.outcome is Outcome.UNDECIDED:
        text, reps = what_would_decide(verdict, a, b, spread)
        verdict = replace(verdict, decide=text, repetitions_needed=reps)
    return verdict


# Where a loader-bound figure cannot decide, what would (the claims say it too).
FASTER_LOADER = (
    "a loader faster than the server tests it: more loader cores ([placement]) or a "
    "loader host ([placement] loader_hosts, docs/multi-host.md)"
)
LOADER_FLOOR = (
    "a level it rests on was loader-bound (the loader, not the server, was saturated): its "
    "figure is a floor on the server's, which can show that stack ahead but not behind or "
    "level, and no repetition on this machine lifts it; " + FASTER_LOADER
)


def read_floors(verdict: Verdict, a_floor: bool, b_floor: bool) -> Verdict:
    """The verdict with a side whose figure is a floor on its server's (a loader-bound
    level: the server could have done better, in throughput and, in a closed loop, in
    latency) read one-sided: a floor that comes out ahead stands, since the server is at
    least that far ahead, and one ahead but undecided keeps what would decide it; behind or
    level it says nothing about the server, and more repetitions of the same placement would
    measure the loader again (so none are asked for). Two floors decide nothing. A verdict
    without an interval keeps its own reason (a side without evidence yet)."""
    if not (a_floor or b_floor):
        return verdict
    verdict = replace(verdict, floors=(a_floor, b_floor))
    if verdict.se is None:
        return verdict
    ahead = verdict.a_better if a_floor else verdict.a_better is False
    won = verdict.outcome in (
        Outcome.UNDECIDED,
        Outcome.FASTER if a_floor else Outcome.SLOWER,
    )
    if ahead and won and not (a_floor and b_floor):
        return verdict
    return replace(verdict, outcome=Outcome.UNDECIDED, decide=LOADER_FLOOR, repetitions_needed=None)


def _named_spread(spread: RunSpread, a: Evidence, b: Evidence) -> RunSpread:
    """The spread a verdict names: a whole level's (the larger) when a side is one."""
    wholes = [e.whole_level for e in (a, b) if e.whole_level is not None]
    return max(wholes, key=lambda w: w.sigma) if wholes else spread


@dataclass(frozen=True)
class LogRatio:
    """ln(prod numerators / prod denominators) with its standard error and df."""

    d: float
    se: float
    df: float
    run_variance: float  # the run-to-run terms inside se^2
    per_run: float  # sum over the sides of sigma_run^2 + one repetition's within
    paired: bool = False  # from r pairs of repetitions (analysis.paired): df r - 1, not 2r - 2
    prior_df: float = 0.0  # what the run's other levels add to df (analysis.moderated)


def log_ratio(
    numerators: Sequence[Evidence], denominators: Sequence[Evidence], spread: RunSpread
) -> LogRatio:
    """The arithmetic of every comparison: logs subtract, variances add (each single
    repetition adds sigma_run^2), Welch-Satterthwaite df. A claim comparing a ratio of two
    ratios (four sides) uses it as a verdict does with two."""
    sides = [*numerators, *denominators]
    d = math.fsum(e.log_mean for e in numerators) - math.fsum(e.log_mean for e in denominators)
    run_variance = spread.variance * sum(1 for e in sides if e.single_run)
    variance = math.fsum(e.variance for e in sides) + run_variance
    df = _welch_df([(e.variance, e.df) for e in sides], variance)
    per_run = math.fsum(_one_repetition(e, spread) for e in sides)
    return LogRatio(d, math.sqrt(variance), df, run_variance, per_run)


def _one_repetition(e: Evidence, spread: RunSpread) -> float:
    """The variance one repetition of this side adds: as observed between the repetitions,
    or, for a single one, the run-to-run spread plus its window's own variance."""
    if e.unit is Unit.REPETITIONS:
        return e.variance * e.n
    return spread.variance + e.within


def interval_of(ratio: LogRatio, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The interval of e^d at `confidence`."""
    t = t_quantile(0.5 + confidence / 2.0, ratio.df)
    return math.exp(ratio.d - t * ratio.se), math.exp(ratio.d + t * ratio.se)


def _welch_df(parts: Sequence[tuple[float, float]], total: float) -> float:
    """Welch-Satterthwaite: total^2 / sum(v_i^2 / df_i); the run-to-run term, a variance taken
    as known, has infinite degrees of freedom and adds nothing to the denominator."""
    denominator = sum(v * v / df for v, df in parts if v > 0.0)
    if denominator == 0.0:
        return 1e6
    return max(total * total / denominator, 1.0)


def _p_beyond(d: float, se: float, df: float, band: float) -> float:
    """Two-sided p of "the ratio lies beyond the band": the interval clears the band exactly
    when this is below 1 - confidence."""
    if se == 0.0:
        return 0.0 if abs(d) > band else 1.0
    return min(1.0, 2.0 * _t_sf((abs(d) - band) / se, df))


def _outcome(low: float, high: float, band: float, higher_is_better: bool) -> Outcome:
    if low > band or high < -band:
        return Outcome.FASTER if (low > band) == higher_is_better else Outcome.SLOWER
    if low > -band and high < band:
        return Outcome.WITHIN_THRESHOLD if low > 0.0 or high < 0.0 else Outcome.EQUIVALENT
    return Outcome.UNDECIDED


def holm(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts shown together, with Holm's step-down adjustment of their p-values of
    "beyond the threshold": a faster/slower whose adjusted p exceeds alpha becomes not enough
    evidence (its interval still clears the band, but not with this many comparisons)."""
    tested = [i for i, v in enumerate(verdicts) if v.p_raw is not None]
    m = len(tested)
    adjusted = holm_adjust([verdicts[i].p_raw or 0.0 for i in tested])
    out = list(verdicts)
    for i, p in zip(tested, adjusted, strict=True):
        v = replace(verdicts[i], p_value=p)
        if v.outcome in (Outcome.FASTER, Outcome.SLOWER) and p > v.alpha:
            v = replace(
                v,
                outcome=Outcome.UNDECIDED,
                decide=f"its interval clears the ±{_pct(v.threshold)} threshold, but not "
                f"after Holm's adjustment over {m} comparisons (p={p:.2g}); "
                "more repetitions would decide it",
            )
        out[i] = v
    return out


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: the i-th smallest p is
    multiplied by (m - i + 1), made non-decreasing in that order, and capped at 1."""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


# --- what would decide -----------------------------------------------------------------------
def what_would_decide(
    v: Verdict, a: Evidence, b: Evidence, used: RunSpread | None = None
) -> tuple[str, int | None]:
    """The measurement that would decide an undecided comparison, if the ratio stayed the
    same: the level length (single repetitions, while the run-to-run term leaves room) or the
    repetitions per side (from the same within-level and run-to-run variances)."""
    assert v.log_diff is not None and v.se is not None and v.df is not None
    band = math.log1p(v.threshold)
    needed = abs(abs(v.log_diff) - band)  # the half-width that would decide it
    target = "show it beyond" if abs(v.log_diff) > band else "show it inside"
    t = t_quantile(0.5 + v.confidence / 2.0, max(v.df, 1.0))
    if needed < 0.1 * band:
        return (
            f"the ratio sits at the ±{_pct(v.threshold)} threshold: no practical amount of "
            "measurement decides it"
        ), None
    # the spread the comparison added (`used`), not the one it names for a whole level
    spread = used or v.spread or RunSpread(0.0, False, "")
    reps = repetitions_to_decide(
        needed, _one_repetition(a, spread) + _one_repetition(b, spread), v.confidence
    )
    run_terms = v.se**2 - a.variance - b.variance
    within = a.variance + b.variance
    room = (needed / t) ** 2 - run_terms
    windows = a.unit is Unit.SECONDS and b.unit is Unit.SECONDS
    if windows and room > 0 and within > 0:
        factor = within / room
        seconds = math.ceil(max(a.n, b.n) * factor)
        if factor <= 20:
            return (
                f"levels of about {seconds + 2} s (steady windows of {seconds} s) would "
                f"{target} the ±{_pct(v.threshold)} threshold"
            ), reps
    if reps is None:
        return (
            f"more than {MAX_REPETITIONS_ADVISED} repetitions a side would be needed to "
            f"{target} the ±{_pct(v.threshold)} threshold"
        ), None
    return (
        f"{reps} repetitions a side (`repeat = {reps}`) would {target} the "
        f"±{_pct(v.threshold)} threshold"
    ), reps


def repetitions_to_decide(
    needed: float,
    per_run: float,
    confidence: float = CONFIDENCE,
    paired: bool = False,
    prior_df: float = 0.0,
) -> int | None:
    """Smallest r a side with t(2r - 2) sqrt(per_run / r) <= needed: `per_run` is the
    variance one repetition of every side adds (sigma_run^2 + its within-level variance,
    summed over the sides; `paired`: of one pair's log ratio, with t(r - 1 + prior_df), the
    moderation's); None beyond MAX_REPETITIONS_ADVISED."""
    for r in range(2, MAX_REPETITIONS_ADVISED + 1):
        df = (r - 1 + prior_df) if paired else 2 * r - 2
        t = t_quantile(0.5 + confidence / 2.0, df)
        if t * math.sqrt(per_run / r) <= needed:
            return r
    return None


# --- the gate --------------------------------------------------------------------------------
class GateOutcome(enum.Enum):
    REGRESSED = "regressed"
    CLEARED = "not regressed"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class GateResult:
    outcome: GateOutcome
    p_regressed: float  # one-sided p of "regressed beyond the limit", Holm-adjusted
    p_cleared: float  # one-sided p of "not regressed beyond the limit"
    limit: float  # the allowed change (0.05: 5%)


def gate(verdicts: Sequence[Verdict], limit: float, alpha: float = ALPHA) -> list[GateResult]:
    """Each verdict (candidate B against baseline A, one gated metric) tested against the
    limit: regressed when B is shown worse than A by more than `limit` (Holm over the gated
    cases), cleared when shown not to be, else undecided. A case without evidence is
    undecided."""
    raw = [_gate_ps(v, limit) for v in verdicts]
    adjusted = holm_adjust([r[0] for r in raw])
    out = []
    for (_, p_clear), p_adj in zip(raw, adjusted, strict=True):
        if p_adj <= alpha:
            outcome = GateOutcome.REGRESSED
        elif p_clear <= alpha:
            outcome = GateOutcome.CLEARED
        else:
            outcome = GateOutcome.UNDECIDED
        out.append(GateResult(outcome, p_adj, p_clear, limit))
    return out


def _gate_ps(v: Verdict, limit: float) -> tuple[float, float]:
    """(p of "regressed", p of "not regressed") for candidate a against baseline b. A floor
    (a loader-bound level) shows only what its server at least does: the candidate's cannot
    show a regression, the baseline's cannot show its absence."""
    if v.log_diff is None or v.se is None or v.df is None:
        return 1.0, 1.0
    regressed, cleared = _gate_tails(v.log_diff, v.se, v.df, v.higher_is_better, limit)
    candidate_floor, baseline_floor = v.floors
    return (1.0 if candidate_floor else regressed), (1.0 if baseline_floor else cleared)


def _gate_tails(
    log_diff: float, se: float, df: float, higher_is_better: bool, limit: float
) -> tuple[float, float]:
    # "worse" as a positive number: throughput lower, latency higher
    worse = -log_diff if higher_is_better else log_diff
    bound = -math.log1p(-limit) if higher_is_better else math.log1p(limit)
    if se == 0.0:
        return (0.0, 1.0) if worse > bound else (1.0, 0.0)
    z = (worse - bound) / se
    return _t_sf(z, df), _t_sf(-z, df)


def t_quantile(q: float, df: float) -> float:
    """Student t quantile (scipy.special's ufunc: a report computes thousands of these)."""
    from scipy import special

    return float(special.stdtrit(df, q))


def _t_sf(x: float, df: float) -> float:
    """P(T > x) for Student's t with df degrees of freedom."""
    from scipy import special

    return float(special.stdtr(df, -x))


def _pct(fraction: float) -> str:
    return f"{fraction:.0%}" if round(fraction * 100, 6).is_integer() else f"{fraction:.1%}"
