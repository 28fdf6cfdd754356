"""Steady-state figures of stored levels, computed at analysis time (pure, no I/O).

For a level with a per-second series (the native loader writes one): partial seconds are
dropped (the last second of a level is cut short and would look like a cliff), the steady
window is found on per-second throughput (steady.detect_steady_state), and the level's headline
becomes the window's figures: throughput = the window's mean with its batch-means 95% interval;
p50/p90/p99 = the percentiles of the per-second HDR histograms merged over the window (exact,
not an average of per-second percentiles) with percentile_interval.

A level without a series (wrk, ab) or without a steady state keeps the driver's whole-level
figures, and `source` says so. Across repetitions (LevelSteadyAggregate): the median of the
repetitions' steady figures, with the order-statistic interval when there are at least 6
repetitions (intervals.median_interval), else the within-level interval of the median
repetition; `interval_source` says which.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from hdrh.histogram import HdrHistogram

from stackbench.analysis.intervals import (
    BatchMeansInterval,
    MedianInterval,
    batch_means_interval,
    median_interval,
    percentile_interval,
    repetitions_needed,
)
from stackbench.analysis.stats import Estimate
from stackbench.analysis.steady import SteadyClass, SteadyState, detect_steady_state
from stackbench.store.store import LevelRow

STEADY_PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0}
SOURCE_WINDOW = "steady window"
SOURCE_NO_SERIES = "whole level: the driver gave no per-second series"
SOURCE_NO_STEADY = "whole level: no steady state found"
INTERVAL_REPETITIONS = "order statistics over repetitions"
INTERVAL_WITHIN_LEVEL = "within-level batch means of the median repetition"
INTERVAL_NONE = "none"


@dataclass(frozen=True)
class LevelSteady:
    """One repetition of one level: its steady window and the figures taken from it."""

    state: SteadyState | None                 # None: no per-second series
    source: str                               # SOURCE_*: where the headline comes from
    throughput: BatchMeansInterval | None     # None: the whole-level figure stands
    latency_us: dict[str, BatchMeansInterval]  # merged percentiles of the window
    window_throughput: tuple[float, ...]      # per-second req/s inside the window
    window_latency_us: dict[str, tuple[float, ...]]  # per-second percentiles in the window
    full_seconds: int                         # seconds of the series after dropping partials
    partial_seconds: int                      # seconds dropped as partial

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
    throughput: Estimate                      # median over repetitions, interval per below
    latency_us: dict[str, Estimate]           # p50/p90/p99 when every repetition has them
    interval_source: str                      # INTERVAL_*: which interval the Estimates carry
    note: str | None                          # e.g. too few repetitions for an order interval

    @property
    def steady(self) -> bool:
        """Every repetition's headline comes from its steady window."""
        return all(r.source == SOURCE_WINDOW for r in self.repetitions)

    @property
    def classes(self) -> tuple[SteadyClass, ...]:
        return tuple(r.steady_class for r in self.repetitions if r.steady_class is not None)


def full_seconds(series: Sequence[Mapping[str, object]]) -> list[Mapping[str, object]]:
    """The seconds of a series that are whole: partial ones (the last, cut short) dropped."""
    return [p for p in series if not p.get("partial") and _number(p.get("duration_s"), 1.0) > 0]


def per_second_throughput(seconds: Sequence[Mapping[str, object]]) -> list[float]:
    return [_number(p.get("completed"), 0.0) / _number(p.get("duration_s"), 1.0)
            for p in seconds]


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
    state = detect_steady_state(rps)
    if state.window_start is None or state.window_end is None:
        return LevelSteady(state, SOURCE_NO_STEADY, None, {}, (), {}, len(seconds), dropped)
    window = seconds[state.window_start:state.window_end]
    window_rps = rps[state.window_start:state.window_end]
    per_second_latency = {key: tuple(_latency(p, key) for p in window)
                          for key in STEADY_PERCENTILES}
    latency = _window_latency(window, per_second_latency)
    return LevelSteady(state, SOURCE_WINDOW, batch_means_interval(window_rps), latency,
                       tuple(window_rps), per_second_latency, len(seconds), dropped)


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
    return {key: float(merged.get_value_at_percentile(p))
            for key, p in STEADY_PERCENTILES.items()}


def _window_latency(window: Sequence[Mapping[str, object]],
                    per_second: Mapping[str, tuple[float, ...]]
                    ) -> dict[str, BatchMeansInterval]:
    histograms = [p.get("histogram") for p in window]
    if not histograms or not all(isinstance(h, str) and h for h in histograms):
        return {}  # a second without its histogram: no exact merged figure, none claimed
    merged = merged_percentiles([str(h) for h in histograms])
    out = {}
    for key, value in merged.items():
        values = per_second[key]
        if any(not np.isnan(v) for v in values):
            out[key] = percentile_interval(values, merged=value)
    return out


def _latency(second: Mapping[str, object], key: str) -> float:
    """A second's percentile; NaN when it completed nothing (no latency in that second)."""
    value = second.get(f"{key}_us")
    if _number(second.get("completed"), 0.0) <= 0 or not isinstance(value, int | float):
        return float("nan")
    return float(value)


def _number(value: object, default: float) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else default


# --- across repetitions ----------------------------------------------------------------------
def aggregate_steady(rows: Sequence[LevelRow]) -> LevelSteadyAggregate:
    """The repetitions of one (case, level): median of their headline figures, with the
    order-statistic interval from 6 repetitions on, else the within-level interval of the
    median repetition (the one whose throughput is the median, the lower of the two middle
    ones for an even count)."""
    steadies = tuple(level_steady(r) for r in rows)
    throughputs = [headline_throughput(r, s) for r, s in zip(rows, steadies, strict=True)]
    needed = repetitions_needed()
    enough = len(rows) >= needed
    middle = int(np.argsort(throughputs, kind="stable")[(len(throughputs) - 1) // 2])
    throughput = _combine(throughputs, enough, steadies[middle].throughput)
    latency: dict[str, Estimate] = {}
    for key in STEADY_PERCENTILES:
        values = [s.latency_us[key] for s in steadies if key in s.latency_us]
        if len(values) == len(steadies):
            latency[key] = _combine([v.value for v in values], enough,
                                    steadies[middle].latency_us[key])
    if enough:
        source, note = INTERVAL_REPETITIONS, None
    elif steadies[middle].throughput is not None:
        source = INTERVAL_WITHIN_LEVEL
        note = (None if len(rows) == 1 else
                f"{len(rows)} repetitions, fewer than the {needed} a 95% interval of their "
                "median needs: the interval shown is the median repetition's within-level one")
    else:
        source, note = INTERVAL_NONE, None
    row = rows[0]
    return LevelSteadyAggregate(row.case_id, row.level_index, row.level_value, steadies,
                                throughput, latency, source, note)


def headline_throughput(row: LevelRow, steady: LevelSteady) -> float:
    return steady.throughput.value if steady.throughput is not None else row.requests_per_s


def _combine(values: Sequence[float], enough: bool,
             within: BatchMeansInterval | None) -> Estimate:
    center = float(np.median(values))
    if enough:
        interval = median_interval(values)
        if isinstance(interval, MedianInterval):
            return Estimate(interval.value, interval.low, interval.high, len(values))
    if within is not None and within.low is not None and within.high is not None:
        # The median repetition's own half-widths around the median (with an odd count the
        # median is that repetition's figure, with an even count it sits next to it).
        return Estimate(center, center - (within.value - within.low),
                        center + (within.high - within.value), len(values))
    return Estimate(center, None, None, len(values))
