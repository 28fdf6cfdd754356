"""Steady-state figures of stored levels: hand-built per-second series with known answers."""

import math

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from stackbench.analysis import verdicts
from stackbench.analysis.analysis import analyse
from stackbench.analysis.levelsteady import (
    INTERVAL_REPETITIONS,
    INTERVAL_WHOLE_LEVEL,
    SOURCE_NO_SERIES,
    SOURCE_NO_STEADY,
    SOURCE_WINDOW,
    aggregate_steady,
    level_steady,
    merged_percentiles,
    percentile_values,
)
from stackbench.analysis.steady import SteadyClass
from stackbench.analysis.verdicts import RunSpread, Unit
from stackbench.config.measured import Second
from stackbench.store.records import CaseRecord, LevelRow
from stackbench.store.store import RunData, Store
from tests.analysis.synthetic_series import flat, ramp_then_plateau
from tests.measured import second
from tests.store.test_store import level, run_record

SPREAD = RunSpread(0.05, False, "test")


def histogram(latencies_us: dict[int, int]) -> str:
    h = HdrHistogram(1, 60_000_000, 3)
    for value, count in latencies_us.items():
        h.record_value(value, count)
    encoded = h.encode()
    return encoded.decode() if isinstance(encoded, bytes) else str(encoded)


FAST = histogram({100: 90, 1000: 10})  # p50 100 us, p99 1000 us
SLOW = histogram({300: 90, 5000: 10})  # p50 300 us, p99 5000 us


def series(
    rps: list[float], hist: list[str] | None = None, partial_last: bool = True
) -> tuple[Second, ...]:
    out = [
        second(
            i + 1,
            value,
            p50_us=100,
            p90_us=200,
            p99_us=1000,
            max_us=2000,
            histogram=None if hist is None else hist[i],
        )
        for i, value in enumerate(rps)
    ]
    if partial_last:  # the loader's last, cut-short second: a cliff that must not count
        out.append(
            second(
                len(rps) + 1,
                10,
                p50_us=1,
                p90_us=1,
                p99_us=1,
                max_us=1,
                duration_s=0.3,
                partial=True,
            )
        )
    return tuple(out)


def row(
    rps: list[float] | None,
    repetition: int = 0,
    hist: list[str] | None = None,
    requests_per_s: float = 1.0,
    case_id: int = 1,
) -> LevelRow:
    record = level(
        case_id,
        0,
        repetition=repetition,
        requests_per_s=requests_per_s,
        timeseries=None if rps is None else series(rps, hist),
        duration_s=float(len(rps or [])) or 5.0,
    )
    return LevelRow(**{**{f: getattr(record, f) for f in record.__struct_fields__}, "id": 1})


@settings(max_examples=60)
@given(
    st.lists(st.integers(1, 50_000_000), min_size=1, max_size=300),
    st.lists(st.floats(0.001, 100.0), min_size=1, max_size=5),
)
def test_percentile_values_are_hdrhs_own(latencies: list[int], wanted: list[float]) -> None:
    histogram = HdrHistogram(1, 60_000_000, 3)
    for value in latencies:
        histogram.record_value(value)
    assert percentile_values(histogram, wanted) == [
        float(histogram.get_value_at_percentile(p)) for p in wanted
    ]


def test_merged_percentiles_are_those_of_all_seconds_together() -> None:
    # 90x100, 10x1000 + 90x300, 10x5000 us: the 100th of 200 sorted values is 300 us, the
    # 198th 5000 us (the mean of the two seconds' p50s would say 200 us).
    merged = merged_percentiles([FAST, SLOW])
    assert merged["p50"] == pytest.approx(300, rel=0.01)
    assert merged["p99"] == pytest.approx(5000, rel=0.01)
    assert merged_percentiles([]) == {}


def test_a_warm_up_is_left_out_of_the_headline() -> None:
    rps = list(ramp_then_plateau(30, 10, 0.01, seed=3))
    hist = [SLOW] * 10 + [FAST] * 20
    steady = level_steady(row(rps, hist=hist, requests_per_s=sum(rps) / 30))
    assert steady.source == SOURCE_WINDOW
    assert steady.steady_class is SteadyClass.WARMUP
    assert steady.warmup_s is not None and 9 <= steady.warmup_s <= 12
    assert steady.partial_seconds == 1 and steady.full_seconds == 30
    assert steady.throughput is not None and steady.throughput.low is not None
    assert steady.throughput.low <= 10_000 <= (steady.throughput.high or 0.0)
    # Only fast seconds in the window: the merged p99 is the fast histogram's.
    assert steady.latency_us["p99"].value == pytest.approx(1000, rel=0.01)


def test_levels_without_a_series_or_a_steady_state_say_so() -> None:
    assert level_steady(row(None)).source == SOURCE_NO_SERIES
    short = level_steady(row([100.0, 100.0, 100.0, 100.0]))
    assert short.source == SOURCE_NO_STEADY and short.throughput is None


def test_few_repetitions_are_floored_by_the_run_to_run_spread() -> None:
    rows = [row(list(flat(20, 0.01, seed=s)), repetition=s) for s in range(3)]
    agg = aggregate_steady(rows, SPREAD)
    assert agg.steady and agg.interval_source == INTERVAL_REPETITIONS
    evidence = agg.throughput.evidence
    assert evidence is not None and evidence.unit is Unit.REPETITIONS
    # three near-identical repetitions: the spread between them (~0.1%) is floored at
    # sigma_run^2 + a window's own variance, taken as known (z, not t with 2 df), so the
    # interval is not falsely narrow
    assert evidence.df == verdicts.KNOWN_DF
    assert evidence.variance >= SPREAD.variance / 3
    assert agg.throughput.low < agg.throughput.value < agg.throughput.high


def test_one_level_without_a_series_carries_the_whole_level_spread() -> None:
    """wrk or ab: one whole level, 5 s (shorter than a calibration's levels), so the assumed
    10% run-to-run spread of whole levels: 1000 ×/÷ e^(1.96 * 0.10)."""
    one = row(None, requests_per_s=1000.0)
    agg = aggregate_steady([one], SPREAD)
    assert agg.interval_source == INTERVAL_WHOLE_LEVEL and agg.note is None
    half = math.exp(scipy_stats.norm.ppf(0.975) * 0.10)
    assert (agg.throughput.low, agg.throughput.high) == pytest.approx((1000 / half, 1000 * half))
    evidence = agg.throughput.evidence
    assert evidence is not None and evidence.unit is Unit.RUN
    # a comparison adds sigma_run^2 = 0.05^2: the evidence carries the rest of 0.10^2
    assert evidence.variance == pytest.approx(0.10**2 - SPREAD.variance)


def test_six_repetitions_give_welchs_interval_of_their_logs() -> None:
    rows = [row([1000.0 * (1 + s / 100)] * 20, repetition=s) for s in range(6)]
    agg = aggregate_steady(rows, SPREAD)
    assert agg.interval_source == INTERVAL_REPETITIONS
    logs = np.log([1000.0 * (1 + s / 100) for s in range(6)])
    centre = math.exp(float(np.mean(logs)))
    half = scipy_stats.t.ppf(0.975, 5) * float(np.std(logs, ddof=1)) / math.sqrt(6)
    assert (agg.throughput.low, agg.throughput.value, agg.throughput.high) == pytest.approx(
        (centre * math.exp(-half), centre, centre * math.exp(half))
    )


def test_analysis_headline_is_the_steady_window() -> None:
    # Built as RunData directly: the store this branch started from read back per-second
    # entries as floats only (no `partial` flag or histogram string).
    store = Store(":memory:")
    run = store.start_run(run_record())
    store.add_case(
        CaseRecord(
            run_id=run,
            stack="php",
            workload="sha256",
            label="sha256?n=1",
            path="/sha256?n=1",
            params={},
        )
    )
    data = store.load_run(run)
    case_id = data.cases[0].id
    rps = list(ramp_then_plateau(30, 10, 0.01, seed=5))
    levels = [row(rps, hist=[FAST] * 30, requests_per_s=sum(rps) / 30, case_id=case_id)]
    a = analyse(RunData(data.run, data.cases, levels, []))
    view = a.workloads[0].cases[0]
    agg = view.aggregates[0]
    assert agg.throughput.value == pytest.approx(10_000, rel=0.02)
    assert agg.latency_us["p99"].value == pytest.approx(1000, rel=0.01)
    assert view.steady[0].repetitions[0].steady_class is SteadyClass.WARMUP
