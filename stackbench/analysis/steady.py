"""Steady-state detection on a level's per-second throughput: a pure function.

The method follows Barrett et al., "Virtual Machine Warmup Blows Hot and Cold" (OOPSLA 2017),
adapted from in-process iteration times to per-second throughput (higher is better):

1. A fixed floor, the first max(2 s, 10%) of the level, is never used: connections are being
   opened and caches filled, and a changepoint method needs no evidence for that.
2. PELT changepoint detection (Killick et al. 2012, via `ruptures`) segments the rest. Cost
   "normal" (a change of mean and/or variance of a Gaussian): it is the cost Barrett et al. use
   (R changepoint's cpt.meanvar), and it is scale-free: the cost of a segment is
   n * log(variance), so multiplying the series by a constant shifts every segmentation's cost
   by the same amount, and one penalty serves a 300 req/s stack and a 60k req/s stack alike.
   The "l2" cost is the sum of squared deviations: its penalty would have to be scaled by the
   noise variance of each series. The normal cost also sees a change of variance (a level that
   turns erratic), which the l2 cost does not. Minimum segment 3 s; penalty
   PENALTY_PER_LOG_N * ln(n), tuned on synthetic series (see PENALTY_PER_LOG_N).
3. Segments are compared with the last one by their medians: two segments whose medians differ
   by at most EQUIVALENCE_TOLERANCE (2%, the noise threshold for throughput comparisons) are
   the same level. The normal cost is scale-free, so a quiet series can show a statistically
   clear but practically meaningless 1% shift; Barrett et al. merge such segments the same way
   (their "delta"). Medians keep a single stalled second inside a segment from moving it.
4. Walking back from the last segment, segments equivalent to it extend the steady window. A
   run of non-equivalent segments shorter than MIN_WINDOW_S with an equivalent segment before
   it is a transient (a stall or a burst, e.g. a GC pause) inside the steady state, not a change
   of level: it stays inside the window (its seconds count in the mean, so the headline is not
   flattered) and is listed in `transients`. A longer departure ends the window.
5. Drift check. The normal cost sees a slow trend as extra variance, so a slow decline (or the
   flat end of a warm-up) can sit inside one segment. The window's linear trend is tested
   (OLS slope, standard error widened for autocorrelation, level DRIFT_ALPHA); while it is
   significant and moves the throughput by more than the tolerance across the window, the
   window's start moves one second later. The seconds so trimmed count as an earlier level
   when they are at least a segment (3 s) long.
6. Steadiness is shown, not assumed: the window's fitted change (the same AR(1)-adjusted
   linear fit) must be shown within STEADY_TOLERANCE, i.e. |change| plus its one-sided 95%
   margin at most the tolerance (an equivalence test). A window that neither drifts
   significantly nor shows that bound (a short or noisy window: a 10% decline over 12 s cannot
   be told from noise) keeps its figures but says "steadiness not shown", with the level length
   that would show it (`steady_shown`, `message`).
7. The window must cover at least MIN_WINDOW_S and a third of the level, else the level has no
   steady state (Barrett et al.: changes within the last part of the run), and the message says
   that a longer level is the fix. Otherwise the class is, as in the paper: flat (no other
   level before the window), slowdown (some earlier level was higher: steady after a fall),
   else warm-up (every earlier level was lower: steady after a rise); warmup_s is then the
   window's start (seconds from the start of the level, floor included).

Consequences, tested in tests/analysis/test_steady.py: a continuing slow decline has no steady
state (never a "slowdown" whose window still declines); a stall of up to 4 s between two
stretches at the same level leaves the level flat; a level that ends in a stall has no steady
state; a multi-second dip of 5 s or more ends the window, and what follows it is classed like
any other level (a recovery is then a warm-up, as in Barrett et al.).
"""

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# scipy and ruptures are imported in the functions that use them: together 0.7 s of CPU at
# start-up, which every command that analyses nothing (stacks, doctor, --version) would pay.
from stackbench.analysis.intervals import FloatArray, Values, finite_array
from stackbench.analysis.verdicts import t_quantile

FLOOR_MIN_S = 2
FLOOR_FRACTION = 0.10
MIN_SEGMENT_S = 3
MIN_WINDOW_S = 5
MIN_WINDOW_FRACTION = 1 / 3
EQUIVALENCE_TOLERANCE = 0.02
# Level of the drift test on the window. 1%, not 5%: at 5% it misclassified 6% of flat
# white-noise series with 5-10% CV (a trimmed noisy second looked like a warm-up), at 1% none;
# the 20% declines of the tuning set are found at either level.
DRIFT_ALPHA = 0.01
# Penalty = PENALTY_PER_LOG_N * ln(n), n the seconds analysed. Barrett et al. use 15 * ln(n)
# on 2000 in-process iterations; per-second series are 10-300 points. Tuned with
# tests/analysis/tune_steady_penalty.py (table in docs/methods.md) on 20 seeds each of flat
# (white and AR(1), 1-10% CV, 12-120 s), ramp, exponential warm-up, step, stall and decline
# series: below 8 flat AR(1) series are split into false levels (16% classed wrong at 5), at
# 15 and above 10% steps in 15-20 s levels and ramps with 3% noise start to be missed; 10-12
# score best (98.8% of all series right); 10 keeps the lower end, the more sensitive to short
# levels, of that plateau.
PENALTY_PER_LOG_N = 10.0
# A steady window's fitted change across it must be shown within this (both ways, 95%): looser
# than the 2% that merges segments, because a 10-s window of 1% per-second noise can show no
# better than about +-2.5%; tighter would call every short level unsteady, looser would let a
# 10% decline pass as steady.
STEADY_TOLERANCE = 0.05
# Residual variance below this share of the series' own is an exact line's rounding error.
EXACT_LINE = 1e-20


class SteadyClass(enum.Enum):
    FLAT = "flat"
    WARMUP = "warm-up"
    SLOWDOWN = "slowdown"
    NO_STEADY_STATE = "no-steady-state"


@dataclass(frozen=True)
class Segment:
    """Seconds [start, end) of the level between two changepoints."""

    start: int
    end: int
    mean: float
    median: float

    @property
    def seconds(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class SteadyState:
    """Where a level's steady state is, and how it got there. Indices are seconds from the
    start of the series given (second i covers [i, i + 1)); windows are [start, end)."""

    steady_class: SteadyClass
    window_start: int | None  # None: no steady state
    window_end: int | None
    steady_mean: float | None  # mean throughput of the window
    warmup_s: int | None  # warm-up: seconds before the window; flat: 0; else None
    changepoints: tuple[int, ...]  # seconds where PELT starts a new segment
    segments: tuple[Segment, ...]  # the segments after the floor
    transients: tuple[tuple[int, int], ...]  # stalls/bursts [start, end) kept in the window
    floor_s: int  # seconds always dropped at the start
    seconds: int  # length of the series
    message: str
    # Steadiness shown (item 6 above): the window's fitted change is within STEADY_TOLERANCE
    # with 95% confidence; False also when there is no window.
    steady_shown: bool = False
    change: float | None = None  # the window's fitted relative change
    change_bound: float | None = None  # |change| + its one-sided 95% margin (None: unknown)

    @property
    def has_steady_state(self) -> bool:
        return self.window_start is not None

    @property
    def window_seconds(self) -> int:
        if self.window_start is None or self.window_end is None:
            return 0
        return self.window_end - self.window_start


def floor_seconds(seconds: int) -> int:
    """The first max(2 s, 10%) of the level, always dropped."""
    return max(FLOOR_MIN_S, math.ceil(FLOOR_FRACTION * seconds))


def min_window_seconds(seconds: int) -> int:
    """The shortest steady window a level of `seconds` may have: 5 s and a third of it."""
    return max(MIN_WINDOW_S, math.ceil(MIN_WINDOW_FRACTION * seconds))


def detect_steady_state(
    per_second: Values,
    penalty_per_log_n: float = PENALTY_PER_LOG_N,
    tolerance: float = EQUIVALENCE_TOLERANCE,
) -> SteadyState:
    """Steady-state window and class of a level from its per-second throughput.

    `per_second` holds full seconds only: the caller drops the partial last second."""
    values = finite_array(per_second, "steady-state detection")
    n = len(values)
    floor = floor_seconds(n)
    needed = min_window_seconds(n)
    if n - floor < needed:
        return _no_steady_state(
            n,
            floor,
            (),
            (),
            f"the level is too short to find a steady state ({n} s: "
            f"{floor} s are always dropped and a steady window needs "
            f"{needed} s); {_longer_level(n)}",
        )
    segments = _segment(values, floor, penalty_per_log_n)
    changepoints = tuple(s.start for s in segments[1:])
    first, transients = _window_start(segments, tolerance)
    end = segments[-1].end
    last_level = segments[first].start
    length = end - last_level
    if length < needed:
        return _no_steady_state(
            n,
            floor,
            changepoints,
            tuple(segments),
            f"no steady state: throughput still changed {last_level} s into the {n}-s level "
            f"(the last stable stretch is {length} s, a steady window needs {needed} s); "
            f"{_longer_level(n)}",
        )
    start = _undrifted_start(values, last_level, end, needed, tolerance)
    if start is None:
        drift = _drift(values[end - needed : end]).change
        return _no_steady_state(
            n,
            floor,
            changepoints,
            tuple(segments),
            f"no steady state: throughput still drifts ({drift:+.1%} over the last "
            f"{needed} s of the {n}-s level); {_longer_level(n)}",
        )
    earlier = list(segments[:first])
    if start - last_level >= MIN_SEGMENT_S:
        # The start of the last level drifted: a level of its own before the window. Shorter
        # than a segment it is too short to call a level (as PELT's minimum size), and it
        # would make a warm-up or a slowdown of a few noisy seconds.
        trimmed = values[last_level:start]
        earlier.append(
            Segment(last_level, start, float(np.mean(trimmed)), float(np.median(trimmed)))
        )
    steady_mean = float(np.mean(values[start:end]))
    # Earlier levels are judged against the last segment, as the window was built.
    steady_class = _classify(earlier, segments[-1].median, tolerance)
    warmup_s = {SteadyClass.FLAT: 0, SteadyClass.WARMUP: start}.get(steady_class)
    kept = tuple(t for t in transients if t[0] >= start)
    shown = steadiness(values[start:end])
    message = _message(steady_class, start, end, earlier, steady_mean)
    if not shown.shown:
        message += f"; {shown.why(n - (end - start))}"
    return SteadyState(
        steady_class,
        start,
        end,
        steady_mean,
        warmup_s,
        changepoints,
        tuple(segments),
        kept,
        floor,
        n,
        message,
        shown.shown,
        shown.change,
        shown.bound,
    )


def _segment(values: FloatArray, floor: int, penalty_per_log_n: float) -> list[Segment]:
    analysed = values[floor:]
    ends = _pelt_ends(analysed, penalty_per_log_n)
    starts = [0, *ends[:-1]]
    return [
        Segment(
            floor + s, floor + e, float(np.mean(analysed[s:e])), float(np.median(analysed[s:e]))
        )
        for s, e in zip(starts, ends, strict=True)
    ]


def _pelt_ends(analysed: FloatArray, penalty_per_log_n: float) -> list[int]:
    """Segment ends (exclusive, the last is len(analysed)) by PELT with the normal cost."""
    # jump=1: changepoints at any second (the default, 5, would round the warm-up length).
    import ruptures

    # NormalCost is a BaseCost by registration, so that this module imports without ruptures.
    ruptures.base.BaseCost.register(NormalCost)
    pelt = ruptures.Pelt(custom_cost=NormalCost(), min_size=MIN_SEGMENT_S, jump=1)
    penalty = penalty_per_log_n * math.log(len(analysed))
    ends: list[int] = pelt.fit(analysed).predict(pen=penalty)
    return [int(e) for e in ends]


class NormalCost:
    """ruptures' "normal" cost for one dimension, n * log(variance + 1e-6), from prefix sums.

    ruptures.costs.CostNormal computes each segment's variance afresh (and slogdet of a 1x1
    matrix): PELT evaluates O(n^2) segments in the worst case, so a 5-minute level took 1-2 s.
    Prefix sums make each evaluation O(1). The series is centred first so that the sums stay
    small and a constant segment's variance comes out exactly 0 (like CostNormal, 1e-6 is added
    so that its cost is finite)."""

    model = "normal"
    min_size = 2

    def fit(self, signal: FloatArray) -> "NormalCost":
        self.signal = signal  # ruptures reads the length from it
        centred = signal - float(np.median(signal))
        self._sums = np.concatenate(([0.0], np.cumsum(centred)))
        self._squares = np.concatenate(([0.0], np.cumsum(centred * centred)))
        return self

    def error(self, start: int, end: int) -> float:
        n = end - start
        if n < self.min_size:
            from ruptures.exceptions import NotEnoughPoints

            raise NotEnoughPoints
        mean = (self._sums[end] - self._sums[start]) / n
        variance = max((self._squares[end] - self._squares[start]) / n - mean * mean, 0.0)
        return float(n * math.log(variance + 1e-6))


def _equivalent(segment: Segment, reference: float, tolerance: float) -> bool:
    return abs(segment.median - reference) <= tolerance * abs(reference)


def _window_start(
    segments: Sequence[Segment], tolerance: float
) -> tuple[int, list[tuple[int, int]]]:
    """Index of the first segment of the steady window, and the transients inside it."""
    reference = segments[-1].median
    first = len(segments) - 1
    transients: list[tuple[int, int]] = []
    i = first - 1
    while i >= 0:
        if _equivalent(segments[i], reference, tolerance):
            first = i
            i -= 1
            continue
        j = i  # segments[j..i] is a run of departures from the steady level
        while j > 0 and not _equivalent(segments[j - 1], reference, tolerance):
            j -= 1
        departure = segments[i].end - segments[j].start
        if j == 0 or departure >= MIN_WINDOW_S:
            break  # a change of level (or the start of the level): the window begins after it
        transients.insert(0, (segments[j].start, segments[i].end))
        first = j - 1
        i = j - 2
    return first, transients


@dataclass(frozen=True)
class Drift:
    change: float  # fitted relative change from the first to the last second
    significant: bool  # the slope differs from 0 at DRIFT_ALPHA (AR(1)-adjusted)
    se: float | None = None  # standard error of `change` (None: too short or too correlated)
    df: float = 0.0


@dataclass(frozen=True)
class Steadiness:
    """Whether a window's fitted change is shown within STEADY_TOLERANCE."""

    shown: bool
    change: float
    bound: float | None  # |change| + t(0.95, df) * se; None when it cannot be estimated
    seconds: int
    tolerance: float

    def why(self, outside_window: int) -> str:
        """'steadiness not shown: ...' with the level length that would show it."""
        if self.bound is None:
            return (
                f"steadiness not shown: the {self.seconds}-s window is too short or too "
                f"autocorrelated to bound its change (fitted {self.change:+.1%}); "
                f"{_longer_level(self.seconds + outside_window)}"
            )
        margin = self.bound - abs(self.change)
        head = (
            f"steadiness not shown: throughput changes {self.change:+.1%} across the "
            f"{self.seconds}-s window (95% bound {self.bound:.1%}, tolerance "
            f"±{self.tolerance:.0%})"
        )
        room = self.tolerance - abs(self.change)
        if room <= 0.2 * self.tolerance or margin <= 0:
            return head + "; a longer level would show whether it settles"
        # the margin shrinks as 1 / sqrt(seconds) (the slope's standard error over n seconds)
        seconds = math.ceil(self.seconds * (margin / room) ** 2) + outside_window
        return head + f"; a level of about {seconds} s would show it"


def steadiness(window: FloatArray, tolerance: float = STEADY_TOLERANCE) -> Steadiness:
    """The window's fitted change, shown within `tolerance` or not (one-sided 95% bound)."""
    drift = _drift(window)
    if drift.se is None:
        return Steadiness(False, drift.change, None, len(window), tolerance)
    bound = abs(drift.change) + t_quantile(0.95, drift.df) * drift.se
    return Steadiness(bound <= tolerance, drift.change, bound, len(window), tolerance)


def _drift(window: FloatArray) -> Drift:
    """Linear trend of a stretch, relative to its mean. The standard error of the OLS slope
    is widened for autocorrelated residuals by the effective sample size
    n (1 - r1) / (1 + r1), r1 the lag-1 autocorrelation of the residuals (Santer et al.
    2000): per-second throughput is autocorrelated, and an unadjusted test would see trends
    in plain noise."""
    n = len(window)
    center = float(np.mean(window))
    if center != 0.0 and n >= 4 and float(np.ptp(window)) == 0.0:
        return Drift(0.0, False, 0.0, 1e6)  # a constant series: exactly no change
    if center == 0.0 or n < 4:
        return Drift(0.0, False)
    slope, residuals, slope_se = _ols(window / center)
    change = slope * (n - 1)
    r1 = _lag1_autocorrelation(residuals)
    effective = n * (1.0 - r1) / (1.0 + r1)
    if slope_se == 0.0:  # an exact line: no noise to doubt it
        return Drift(change, True, 0.0, 1e6)
    if effective <= 3.0:  # too autocorrelated to tell a trend from a slow wander
        return Drift(change, False)
    stderr = slope_se * math.sqrt((n - 2) / (effective - 2))
    critical = t_quantile(1.0 - DRIFT_ALPHA / 2.0, effective - 2)
    return Drift(change, abs(slope) / stderr > critical, stderr * (n - 1), effective - 2)


def _ols(y: FloatArray) -> tuple[float, FloatArray, float]:
    """Least-squares line through (i, y[i]): its slope, the residuals and the slope's standard
    error (scipy.stats.linregress's arithmetic, without its 0.3 ms of argument handling: a
    claims design check fits hundreds of thousands of windows)."""
    n = len(y)
    x = np.arange(n, dtype=np.float64)
    dx = x - x.mean()
    sxx = float(dx @ dx)
    centred = y - y.mean()
    slope = float(dx @ centred) / sxx
    residuals = centred - slope * dx
    squares = float(residuals @ residuals)
    if squares <= EXACT_LINE * float(centred @ centred):  # rounding error of an exact line
        return slope, residuals, 0.0
    return slope, residuals, math.sqrt(squares / (n - 2) / sxx)


def _lag1_autocorrelation(residuals: FloatArray) -> float:
    """In [0, 1): negative autocorrelation would narrow the interval, so it is not used."""
    denominator = float(np.sum(residuals * residuals))
    if denominator == 0.0:
        return 0.0
    r1 = float(np.sum(residuals[1:] * residuals[:-1])) / denominator
    return min(max(r1, 0.0), 0.99)


def _drifting(window: FloatArray, tolerance: float) -> bool:
    drift = _drift(window)
    return drift.significant and abs(drift.change) > tolerance


def _undrifted_start(
    values: FloatArray, start: int, end: int, needed: int, tolerance: float
) -> int | None:
    """The earliest second from `start` on after which the stretch up to `end` does not drift
    by more than `tolerance`, leaving at least `needed` seconds; None if there is none."""
    for candidate in range(start, end - needed + 1):
        if not _drifting(values[candidate:end], tolerance):
            return candidate
    return None


def _classify(earlier: Sequence[Segment], steady: float, tolerance: float) -> SteadyClass:
    levels = [s for s in earlier if not _equivalent(s, steady, tolerance)]
    if not levels:
        return SteadyClass.FLAT
    if any(s.median > steady for s in levels):
        return SteadyClass.SLOWDOWN
    return SteadyClass.WARMUP


def _no_steady_state(
    n: int, floor: int, changepoints: tuple[int, ...], segments: tuple[Segment, ...], message: str
) -> SteadyState:
    return SteadyState(
        SteadyClass.NO_STEADY_STATE,
        None,
        None,
        None,
        None,
        changepoints,
        segments,
        (),
        floor,
        n,
        message,
    )


def _longer_level(n: int) -> str:
    return f"a longer level (at least {max(2 * n, 20)} s) gives it room to settle"


def _message(
    steady_class: SteadyClass, start: int, end: int, earlier: Sequence[Segment], steady_mean: float
) -> str:
    window = f"steady from {start} s to {end} s ({end - start} s, mean {_rate(steady_mean)})"
    if steady_class is SteadyClass.FLAT:
        return f"flat: {window}"
    if steady_class is SteadyClass.WARMUP:
        lowest = min(s.median for s in earlier)
        return f"warm-up of {start} s: throughput rose from {_rate(lowest)}; {window}"
    highest = max(s.median for s in earlier)
    return f"slowdown: throughput fell from {_rate(highest)}; {window}"


def _rate(per_second: float) -> str:
    return f"{per_second:,.0f}/s" if abs(per_second) >= 100 else f"{per_second:.3g}/s"
