"""Steady-state figures of stored levels, computed at analysis time (pure, no I/O).

For a level with a per-second series (the native loader writes one): partial seconds are
dropped (the last second of a level is cut short and would look like a cliff), the steady
window is found on per-second throughput (steady.detect_steady_state), and the level's headline
becomes the window's figures: throughput = the window's mean with its batch-means 95% interval;
p50/p90/p99 = the percentiles of the per-second HDR histograms merged over the window (exact,
not an average of per-second percentiles) with percentile_interval.

A level without a series (wrk, ab) or without a steady state keeps the driver's whole-level
figures, and `source` says so. Across repetitions (LevelSteadyAggregate) the repetition is the
unit (Kalibera & Jones): the figure is the geometric mean of the repetitions' headline figures,
its interval Welch's on their logs (verdicts.repetition_evidence, floored for 3 or fewer
repetitions by the run-to-run spread); with one repetition, the window's own interval, or
for a level without a series the machine's run-to-run spread of whole levels
(verdicts.whole_level_evidence).
Each figure carries the evidence its verdicts use, computed here once.
"""

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from hdrh.histogram import HdrHistogram

from stackbench.analysis.intervals import FigureInterval, evidence_interval, window_interval
from stackbench.analysis.settle import Settle, settle_time
from stackbench.analysis.stats import Estimate, measured_latency
from stackbench.analysis.steady import SteadyClass, SteadyState, detect_steady_state
from stackbench.analysis.verdicts import (
    RunSpread,
    repetition_evidence,
    whole_level_evidence,
    whole_level_sigma,
)
from stackbench.config.measured import Second
from stackbench.store.store import LevelRow

STEADY_PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0}
SOURCE_WINDOW = "steady window"
SOURCE_NO_SERIES = "whole level: the driver gave no per-second series"
SOURCE_NO_STEADY = "whole level: no steady state found"
INTERVAL_REPETITIONS = "Welch over repetitions"
NORMAL_95 = NormalDist().inv_cdf(0.975)  # z of a 95% interval
INTERVAL_WITHIN_LEVEL = "within the level's steady window"
INTERVAL_WHOLE_LEVEL = "the machine's run-to-run spread of whole levels"
INTERVAL_NONE = "none"


@dataclass(frozen=True)
class LevelSteady:
    """One repetition of one level: its steady window and the figures taken from it."""

    state: SteadyState | None  # None: no per-second series
    source: str  # SOURCE_*: where the headline comes from
    throughput: FigureInterval | None  # None: the whole-level figure stands
    latency_us: dict[str, FigureInterval]  # merged percentiles of the window
    window_throughput: tuple[float, ...]  # per-second req/s inside the window
    window_latency_us: dict[str, tuple[float, ...]]  # per-second percentiles in the window
    full_seconds: int  # seconds of the series after dropping partials
    partial_seconds: int  # seconds dropped as partial
    # When its steadiness is not shown: how long a warm-up would have settled it (None: shown,
    # or no series)
    settle: Settle | None = None

    @property
    def steady_class(self) -> SteadyClass | None:
        return None if self.state is None else self.state.steady_class

    @property
    def warmup_s(self) -> int | None:
        return None if self.state is None else self.state.warmup_s


@dataclass(frozen=True)
class LevelSteadyAggregate:
    """All repetitions of one (case, level) seen through their steady windows."""

    case_id: int
    level_index: int
    level_value: float
    repetitions: tuple[LevelSteady, ...]
    throughput: Estimate  # over repetitions, interval per below
    latency_us: dict[str, Estimate]  # p50/p90/p99 when every repetition has them
    interval_source: str  # INTERVAL_*: which interval the Estimates carry
    note: str | None  # e.g. why a figure has no interval

    @property
    def steady(self) -> bool:
        """Every repetition's headline comes from its steady window."""
        return all(r.source == SOURCE_WINDOW for r in self.repetitions)

    @property
    def has_series(self) -> bool:
        """Some repetition has a per-second series (aggregate_steady then reads no whole-level
        spread: wrk's and ab's levels have none)."""
        return not all(r.source == SOURCE_NO_SERIES for r in self.repetitions)

    @property
    def whole_level_sources(self) -> tuple[str, ...]:
        """Why some repetitions' headlines are their whole level's ('whole level: ...'), each
        reason once, sorted (empty when every headline is a steady window's)."""
        return tuple(sorted({r.source for r in self.repetitions if r.source != SOURCE_WINDOW}))

    @property
    def classes(self) -> tuple[SteadyClass, ...]:
        return tuple(r.steady_class for r in self.repetitions if r.steady_class is not None)


def full_seconds(series: Sequence[Second]) -> list[Second]:
    """The seconds of a series that are whole: partial ones (the last, cut short) dropped."""
    return [p for p in series if p.full]


def per_second_throughput(seconds: Sequence[Second]) -> list[float]:
    return [p.rate for p in seconds]


@functools.lru_cache(maxsize=8192)
def _steady_state(rps: tuple[float, ...]) -> SteadyState:
    """detect_steady_state, once per series: a run's claims read each level's window for
    the run's prior and again for their points, and the design check reads the same
    synthetic levels for every claim (its pool-and-cluster check: 74 of its 85 s)."""
    return detect_steady_state(rps)


def level_steady(row: LevelRow) -> LevelSteady:
    """The steady-state figures of one stored level (one repetition)."""
    series = list(row.timeseries or [])
    if not series:
        return LevelSteady(None, SOURCE_NO_SERIES, None, {}, (), {}, 0, 0)
    seconds = full_seconds(series)
    dropped = len(series) - len(seconds)
    if not seconds:
        return LevelSteady(None, SOURCE_NO_SERIES, None, {}, (), {}, 0, dropped)
    rps = per_second_throughput(seconds)
    state = _steady_state(tuple(rps))
    settle = None if state.steady_shown else settle_time(rps, state)
    if state.window_start is None or state.window_end is None:
        return LevelSteady(state, SOURCE_NO_STEADY, None, {}, (), {}, len(seconds), dropped, settle)
    window = seconds[state.window_start : state.window_end]
    window_rps = rps[state.window_start : state.window_end]
    per_second_latency = {
        key: tuple(_latency(p, key) for p in window) for key in STEADY_PERCENTILES
    }
    latency = _window_latency(window, per_second_latency)
    return LevelSteady(
        state,
        SOURCE_WINDOW,
        window_interval(window_rps),
        latency,
        tuple(window_rps),
        per_second_latency,
        len(seconds),
        dropped,
        settle,
    )


def merged_percentiles(encoded: Sequence[str]) -> dict[str, float]:
    """p50/p90/p99 of the per-second HDR histograms merged (exact over the whole window);
    empty when no request completed in them."""
    merged: HdrHistogram | None = None
    for text in encoded:
        histogram = HdrHistogram.decode(text)
        if merged is None:
            merged = histogram
        else:
            merged.add(histogram)
    if merged is None or merged.get_total_count() == 0:
        return {}
    values = percentile_values(merged, STEADY_PERCENTILES.values())
    return dict(zip(STEADY_PERCENTILES, values, strict=True))


def percentile_values(histogram: HdrHistogram, wanted: Iterable[float]) -> list[float]:
    """hdrh's get_value_at_percentile of each of `wanted` (each in (0, 100]), looked up in one
    cumulative sum of the counts: hdrh walks its buckets in Python, a call per bucket, which
    took a third of the claims overview's time (each synthetic level is three walks)."""
    counts = np.ctypeslib.as_array(histogram.counts)[: histogram.counts_len]
    cumulative = np.cumsum(counts, dtype=np.int64)
    values = []
    for p in wanted:
        index = int(np.searchsorted(cumulative, histogram.get_target_count_at_percentile(p)))
        if index >= len(cumulative):  # a total above the counts' sum: hdrh answers 0 too
            values.append(0.0)
            continue
        value = histogram.get_highest_equivalent_value(histogram.get_value_from_index(index))
        values.append(float(value))
    return values


def _window_latency(
    window: Sequence[Second], per_second: Mapping[str, tuple[float, ...]]
) -> dict[str, FigureInterval]:
    merged = merged_percentiles([p.histogram for p in window])
    out = {}
    for key, value in merged.items():
        values = per_second[key]
        if any(not np.isnan(v) for v in values):
            out[key] = window_interval(values, shown=value)
    return out


def _latency(second: Second, key: str) -> float:
    """A second's percentile; NaN when it completed nothing (no latency in that second)."""
    return second.percentile_us(key) if second.completed > 0 else float("nan")


# --- across repetitions ----------------------------------------------------------------------
def aggregate_steady(rows: Sequence[LevelRow], spread: RunSpread) -> LevelSteadyAggregate:
    """The repetitions of one (case, level): each figure with the evidence its verdicts use.
    One repetition: its steady window's figure and interval (none without a window). Several:
    Welch over the repetitions' headline figures (window figures when every repetition has a
    steady window, else the whole-level ones)."""
    steadies = tuple(level_steady(r) for r in rows)
    # A level without a series counts as one whole level (wrk, ab); one that has a series but
    # no steady state was shown unsteady, and gets no evidence from one repetition.
    whole_s = (
        min(r.duration_s for r in rows)
        if all(s.source == SOURCE_NO_SERIES for s in steadies)
        else None
    )
    throughput = combine(
        [headline_throughput(r, s) for r, s in zip(rows, steadies, strict=True)],
        [s.throughput for s in steadies],
        spread,
        whole_s,
    )
    all_steady = all(s.source == SOURCE_WINDOW for s in steadies)
    latency: dict[str, Estimate] = {}
    for key in STEADY_PERCENTILES:
        if all_steady and all(key in s.latency_us for s in steadies):
            within = [s.latency_us[key] for s in steadies]
            latency[key] = combine([w.value for w in within], list(within), spread)
        elif (len(rows) >= 2 or whole_s is not None) and all(
            key in measured_latency(r) for r in rows
        ):
            latency[key] = combine(
                [measured_latency(r)[key] for r in rows], [None] * len(rows), spread, whole_s
            )
    if len(rows) >= 2:
        source, note = INTERVAL_REPETITIONS, None
    elif steadies[0].throughput is not None:
        source, note = INTERVAL_WITHIN_LEVEL, None
    elif whole_s is not None:
        source, note = INTERVAL_WHOLE_LEVEL, None
    else:
        source = INTERVAL_NONE
        note = (
            "one repetition without a steady per-second series: no interval (repeat the "
            "level for one)"
        )
    row = rows[0]
    return LevelSteadyAggregate(
        row.case_id, row.level_index, row.level_value, steadies, throughput, latency, source, note
    )


def headline_throughput(row: LevelRow, steady: LevelSteady) -> float:
    return steady.throughput.value if steady.throughput is not None else row.requests_per_s


def combine(
    figures: Sequence[float],
    within: Sequence[FigureInterval | None],
    spread: RunSpread,
    whole_level_s: float | None = None,
) -> Estimate:
    """One figure from its repetitions (see aggregate_steady); `whole_level_s`: the seconds of
    levels without a series, whose figures carry the whole-level run-to-run spread."""
    if len(figures) == 1:
        one = within[0]
        if one is not None:
            return Estimate(one.value, one.low, one.high, one.n, one.evidence)
        if whole_level_s is None:
            return Estimate(figures[0], None, None, 1)
        return whole_level_estimate(figures[0], whole_level_s, spread)
    variances = [w.evidence.variance for w in within if w is not None and w.evidence]
    evidence = repetition_evidence(figures, variances, spread, whole_level_s)
    if evidence is None:  # a zero figure: no log, no interval
        return Estimate(float(np.median(figures)), None, None, len(figures))
    interval = evidence_interval(evidence, evidence.value)
    return Estimate(interval.value, interval.low, interval.high, len(figures), evidence)


def whole_level_estimate(value: float, level_s: float, spread: RunSpread) -> Estimate:
    """One whole level's figure with its interval: value ×/÷ e^(z sigma), sigma the machine's
    run-to-run spread of whole levels this long (the interval a comparison of it uses)."""
    evidence = whole_level_evidence(value, level_s, spread)
    if evidence is None:
        return Estimate(value, None, None, 1)
    half = NORMAL_95 * whole_level_sigma(spread, level_s)
    return Estimate(value, value * math.exp(-half), value * math.exp(half), 1, evidence)
