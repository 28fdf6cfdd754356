"""Splitting a level over loaders and merging their results, against hand-computed values."""

import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
from hdrh.histogram import HdrHistogram
from hypothesis import given, settings
from hypothesis import strategies as st

from stackbench.config.loadspec import DriverKind, LoadRequest, LoadResult, LoadSettings, Mode
from stackbench.config.measured import OpenLoop, OpenLoopWaits, Second
from stackbench.drivers.merge import (
    latency_figures,
    merge_results,
    merge_timeseries,
    split_connections,
    split_rate,
    split_request,
)
from stackbench.drivers.native import NativeDriver
from stackbench.errors import DriverError, InputError

DATA = Path(__file__).parent / "data"
HIGHEST = 3_000_000  # the loader's bound for a 3 s timeout


def histogram(values: Sequence[int], highest: int = HIGHEST) -> Any:
    h = HdrHistogram(1, highest, 3)
    for v in values:
        h.record_value(v)
    return h


def encoded(values: Sequence[int], highest: int = HIGHEST) -> str:
    return bytes(histogram(values, highest).encode()).decode("ascii")


def counts(h: Any) -> list[int]:
    return [int(c) for c in np.ctypeslib.as_array(h.counts)[: h.counts_len]]


def second(
    t_s: int, values: Sequence[int], errors: int = 0, partial: bool = False, duration_s: float = 1.0
) -> Second:
    """A per-second entry as the native driver stores it (its p* are not read by the merge)."""
    return Second(
        t_s=t_s,
        completed=len(values),
        errors=errors,
        p50_us=-1,
        p99_us=-1,
        p90_us=-1,
        max_us=-1,
        duration_s=duration_s,
        partial=partial,
        histogram=encoded(values),
    )


def result(values: Sequence[int], **fields: Any) -> LoadResult:
    base: dict[str, Any] = dict(
        driver=DriverKind.NATIVE,
        command=("stackbench-load", "http://s/x", "-c", "2"),
        duration_s=5.0,
        completed=len(values),
        ok=len(values),
        errors={},
        requests_per_s=len(values) / 5.0,
        latency_us={},
        histogram=encoded(values),
        timeseries=(),
        loader_cpu_s=(0.0, 0.0),
        unanswered_at_end=(0, 0.0),
    )
    base.update(fields)
    return LoadResult(**base)


# --- splits ----------------------------------------------------------------------------------


def test_connections_split_as_evenly_as_possible() -> None:
    assert split_connections(10, 3) == (4, 3, 3)
    assert split_connections(11, 3) == (4, 4, 3)
    assert split_connections(3, 3) == (1, 1, 1)
    assert split_connections(7, 1) == (7,)


def test_fewer_connections_than_loaders_is_refused_naming_both() -> None:
    with pytest.raises(InputError, match=r"level of 2 connection.*3 loaders"):
        split_connections(2, 3)
    with pytest.raises(InputError, match="at least one loader"):
        split_connections(5, 0)


def test_rate_split_in_equal_shares() -> None:
    shares = split_rate(1000.0, 3)
    assert shares == (1000.0 / 3, 1000.0 / 3, 1000.0 / 3)
    assert math.fsum(shares) == pytest.approx(1000.0, rel=1e-15)
    assert split_rate(900.0, 2) == (450.0, 450.0)
    for bad in (0.0, -5.0, math.nan, math.inf):
        with pytest.raises(InputError, match="positive"):
            split_rate(bad, 3)


def request(**overrides: Any) -> LoadRequest:
    fields: dict[str, Any] = dict(
        url="http://10.231.0.11:8080/x",
        settings=LoadSettings(),
        connections=10,
        rate=None,
        loader_cpus=frozenset({0, 1}),
    )
    fields.update(overrides)
    return LoadRequest(**fields)


CPUS = [frozenset({0}), frozenset({1}), frozenset({2, 3})]


def test_request_split_closed_loop() -> None:
    parts = split_request(request(settings=LoadSettings(threads=0)), CPUS)
    assert [p.connections for p in parts] == [4, 3, 3]
    assert [p.loader_cpus for p in parts] == CPUS
    assert [p.rate for p in parts] == [None, None, None]
    assert [p.threads for p in parts] == [1, 1, 2]  # one per loader core of each part
    assert all(p.url == "http://10.231.0.11:8080/x" and p.expect_status == 200 for p in parts)


def test_request_split_open_loop_splits_the_rate() -> None:
    parts = split_request(request(settings=LoadSettings(mode=Mode.OPEN), rate=900.0), CPUS)
    assert [p.rate for p in parts] == [300.0, 300.0, 300.0]
    assert [p.connections for p in parts] == [4, 3, 3]


def test_request_count_follows_the_connections() -> None:
    by_total = split_request(request(settings=LoadSettings(duration_s=None, requests=100)), CPUS)
    assert [p.settings.requests for p in by_total] == [40, 30, 30]
    assert [p.request_count for p in by_total] == [40, 30, 30]
    # 11 x (4, 3, 3) / 10 = 4.4, 3.3, 3.3: the largest remainder (0.4) gets the 11th request
    odd = split_request(request(settings=LoadSettings(duration_s=None, requests=11)), CPUS)
    assert [p.request_count for p in odd] == [5, 3, 3]
    per_connection = split_request(
        request(settings=LoadSettings(requests_per_connection=100)), CPUS
    )
    assert [p.request_count for p in per_connection] == [400, 300, 300]  # 1000 in all
    with pytest.raises(InputError, match=r"requests = 2 .* 3 loaders"):
        split_request(request(settings=LoadSettings(duration_s=None, requests=2)), CPUS)


# --- full-run merge --------------------------------------------------------------------------

A = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
B = [15, 25, 35, 1000, 1500, 2000]
# The union, sorted (16 values, all below 2048: recorded exactly at 3 significant digits):
# 10 15 20 25 30 35 40 50 60 70 80 90 100 1000 1500 2000
UNION_FIGURES = {
    "min": 10.0,
    "max": 2000.0,
    "mean": 5125 / 16,  # 320.3125, exact in binary
    # the loader's rule: the ceil(q * 16)-th smallest value
    "p50": 50.0,  # 8th
    "p75": 90.0,  # 12th
    "p90": 1500.0,  # 14.4 -> 15th
    "p99": 2000.0,
    "p99_9": 2000.0,
    "p99_99": 2000.0,  # 16th
    # native.py's extra percentiles (hdrh's rule: the int(q * 16 + 0.5)-th smallest value)
    "p66": 80.0,  # 11.06 -> 11th
    "p80": 100.0,  # 13.3 -> 13th
    "p95": 1500.0,  # 15.7 -> 15th
    "p98": 2000.0,  # 16.18 -> 16th
}


def two_parts() -> tuple[LoadResult, LoadResult]:
    a = result(
        A,
        errors={"status": 2, "timeout": 1},
        ok=8,
        requests_per_s=1000.0,
        loader_cpu_s=(1.0, 0.5),
        unanswered_at_end=(1, 500.0),
        warnings=("w-a",),
        duration_s=5.0,
        raw_output="{a}",
    )
    b = result(
        B,
        errors={"timeout": 3, "connect": 1},
        requests_per_s=600.0,
        loader_cpu_s=(0.25, 0.125),
        unanswered_at_end=(2, 300.0),
        warnings=("w-b",),
        duration_s=5.25,
        command=("stackbench-load", "http://s/x", "-c", "1"),
        raw_output="{b}",
    )
    return a, b


def test_merged_histogram_equals_the_sum_of_the_parts() -> None:
    merged = merge_results(two_parts(), [100.0, 100.5]).result
    assert merged.histogram is not None
    decoded = HdrHistogram.decode(merged.histogram)
    union = histogram(A + B)
    assert decoded.get_total_count() == len(A) + len(B) == 16
    assert counts(decoded) == counts(union)
    for v in A + B:
        assert decoded.get_count_at_value(v) == 1


def test_merged_latency_figures_are_the_union_histograms() -> None:
    merged = merge_results(two_parts(), [100.0, 100.5]).result
    stdev = merged.latency_us.pop("stdev")
    assert merged.latency_us == UNION_FIGURES
    assert stdev == pytest.approx(statistics.pstdev(A + B), rel=1e-12)
    assert latency_figures(histogram(A + B)) == {**UNION_FIGURES, "stdev": stdev}


def test_merged_counts_and_facts() -> None:
    a, b = two_parts()
    merged = merge_results([a, b], [100.0, 100.004], ["h2", "h3"])
    r = merged.result
    assert (r.completed, r.ok) == (16, 14)
    assert r.errors == {"status": 2, "timeout": 4, "connect": 1}
    assert r.requests_per_s == 1600.0  # the loaders ran concurrently: their rates add
    assert r.duration_s == 5.25
    assert r.loader_cpu_s == (1.25, 0.625)
    assert r.unanswered_at_end == (3, 500.0)
    assert r.warnings == ("h2: w-a", "h3: w-b")
    assert r.command == (
        "[h2] stackbench-load http://s/x -c 2",
        "[h3] stackbench-load http://s/x -c 1",
    )
    assert r.raw_output == "--- h2 ---\n{a}\n--- h3 ---\n{b}\n"
    assert merged.start_skew_s == pytest.approx(0.004)
    assert merged.started_at == (100.0, 100.004) and merged.loader_names == ("h2", "h3")
    assert merged.parts == (a, b) and merged.notes == ()
    assert r.connect_us is None and r.open_loop is None


def test_one_real_loader_document_gives_back_its_own_figures() -> None:
    """Merging one part alone reproduces what the loader itself computed, to the last bit:
    the merge reads the histograms by the loader's rules."""
    doc = (DATA / "loader-closed.json").read_text()
    part = NativeDriver().parse(request(), ["stackbench-load"], doc, "", 1.0, (0.0, 0.0))
    alone = merge_results([part], [0.0]).result
    assert alone.latency_us == part.latency_us
    assert part.timeseries and alone.timeseries
    # the histograms too: a part's second re-encoded is the same histogram
    assert [msgspec.structs.replace(s, histogram="") for s in alone.timeseries] == [
        msgspec.structs.replace(s, histogram="") for s in part.timeseries
    ]
    assert [counts(HdrHistogram.decode(s.histogram)) for s in alone.timeseries] == [
        counts(HdrHistogram.decode(s.histogram)) for s in part.timeseries
    ]
    twice = merge_results([part, part], [0.0, 0.0]).result
    assert twice.completed == 2 * part.completed
    assert twice.histogram is not None and part.histogram is not None
    assert counts(HdrHistogram.decode(twice.histogram)) == [
        2 * c for c in counts(HdrHistogram.decode(part.histogram))
    ]
    assert twice.latency_us["p99"] == part.latency_us["p99"]


def test_histograms_of_different_ranges_add_exactly() -> None:
    wide = result([5_000_000, 20], histogram=encoded([5_000_000, 20], highest=10_000_000))
    merged = merge_results([result([10, 20, 30]), wide], [0.0, 0.0]).result
    assert merged.histogram is not None
    decoded = HdrHistogram.decode(merged.histogram)
    assert counts(decoded) == counts(histogram([10, 20, 30, 5_000_000, 20], 10_000_000))
    assert merged.latency_us["max"] == decoded.get_highest_equivalent_value(5_000_000)
    assert merged.latency_us["p50"] == 20.0  # 3rd of 10 20 20 30 5e6


def test_nothing_completed_gives_no_latency() -> None:
    merged = merge_results([result([]), result([])], [0.0, 0.0]).result
    assert merged.completed == 0 and merged.latency_us == {}
    assert merged.histogram is not None
    assert HdrHistogram.decode(merged.histogram).get_total_count() == 0


# --- per-second series -----------------------------------------------------------------------


def test_per_second_series_merged_by_hand() -> None:
    series_a = [second(1, [10, 20, 30]), second(2, [40, 50], errors=1), second(3, [60])]
    series_b = [
        second(1, [15, 25], errors=2),
        second(2, [35, 1000, 1500, 2000], partial=True, duration_s=0.6),
    ]
    merged = merge_timeseries([series_a, series_b], ["h2", "h3"])
    assert merged is not None
    plain = [
        {k: v for k, v in msgspec.structs.asdict(s).items() if k != "histogram"} for s in merged
    ]
    assert plain == [
        # 10 15 20 25 30: p50 = 3rd (ceil 2.5), p90 = 5th (ceil 4.5), p99 = 5th
        {
            "t_s": 1,
            "completed": 5,
            "errors": 2,
            "p50_us": 20,
            "p90_us": 30,
            "p99_us": 30,
            "max_us": 30,
            "duration_s": 1.0,
            "partial": False,
        },
        # 35 40 50 1000 1500 2000: p50 = 3rd, p90 = 6th (ceil 5.4); h3's second is partial
        {
            "t_s": 2,
            "completed": 6,
            "errors": 1,
            "p50_us": 50,
            "p90_us": 2000,
            "p99_us": 2000,
            "max_us": 2000,
            "duration_s": 1.0,
            "partial": True,
        },
        # h3 has no third second: the level's third second lacks its load
        {
            "t_s": 3,
            "completed": 1,
            "errors": 0,
            "p50_us": 60,
            "p90_us": 60,
            "p99_us": 60,
            "max_us": 60,
            "duration_s": 1.0,
            "partial": True,
        },
    ]
    assert counts(HdrHistogram.decode(merged[1].histogram)) == counts(
        histogram([35, 40, 50, 1000, 1500, 2000])
    )


def test_quiet_second_and_absent_series() -> None:
    quiet = merge_timeseries([[second(1, [])], [second(1, [])]], ["a", "b"])
    assert quiet is not None
    assert (quiet[0].completed, quiet[0].p50_us, quiet[0].p99_us, quiet[0].max_us) == (0, 0, 0, 0)
    assert merge_timeseries([None, None], ["a", "b"]) is None


def test_series_out_of_step_is_refused() -> None:
    with pytest.raises(DriverError, match="h3's per-second series has t_s = 2 at position 1"):
        merge_timeseries([[second(1, [5])], [second(2, [5])]], ["h2", "h3"])


# --- figures without a histogram -------------------------------------------------------------

CONNECT_A = {"min": 5.0, "mean": 10.0, "stdev": 2.0, "max": 20.0, "p50": 9.0, "p99": 19.0}
CONNECT_B = {"min": 7.0, "mean": 30.0, "stdev": 1.0, "max": 40.0, "p50": 31.0, "p99": 39.0}


def test_connect_times_bounded_and_said_so() -> None:
    merged = merge_results(
        [result(A, connect_us=CONNECT_A), result(B, connect_us=CONNECT_B)], [0.0, 0.0]
    )
    assert merged.result.connect_us == {
        "min": 5.0,
        "mean": 30.0,
        "stdev": 2.0,
        "max": 40.0,
        "p50": 31.0,
        "p99": 39.0,
    }
    assert len(merged.notes) == 1
    assert merged.notes[0].startswith("connect_us mean, stdev, p50, p99: the largest")
    # one loader connected in the recorded phase: its figures are the union's, exactly
    only = merge_results([result(A, connect_us=CONNECT_A), result(B)], [0.0, 0.0])
    assert only.result.connect_us == CONNECT_A and only.notes == ()


def open_loop(
    target: float,
    achieved: float,
    sustained: bool,
    waited: int,
    waits: tuple[int, int, int],
    scheduled: int,
    unsent: int,
) -> OpenLoop:
    p50, p99, most = waits
    return OpenLoop(
        target_rate=target,
        achieved_rate=achieved,
        sustained=sustained,
        waited=waited,
        wait_us=OpenLoopWaits(p50=p50, p99=p99, max=most),
        scheduled=scheduled,
        unsent=unsent,
    )


def test_open_loop_merged() -> None:
    a = result(A, open_loop=open_loop(500.0, 499.5, True, 3, (10, 100, 400), 2500, 0))
    b = result(B, open_loop=open_loop(500.0, 450.25, False, 5, (20, 90, 300), 2500, 7))
    merged = merge_results([a, b], [0.0, 0.0])
    assert merged.result.open_loop == open_loop(1000.0, 949.75, False, 8, (20, 100, 400), 5000, 7)
    assert any(n.startswith("open_loop wait_us p50, p99") for n in merged.notes)
    with pytest.raises(DriverError, match="h2: open, h3: closed"):
        merge_results([a, result(B)], [0.0, 0.0], ["h2", "h3"])


def test_missing_loader_cpu_is_noted() -> None:
    merged = merge_results(
        [result(A, loader_cpu_s=(1.0, 2.0)), result(B, loader_cpu_s=None)], [0.0, 0.0], ["h2", "h3"]
    )
    assert merged.result.loader_cpu_s == (1.0, 2.0)
    assert merged.notes == ("loader_cpu_s: the sum without h3, which did not report its CPU time",)


# --- refusals --------------------------------------------------------------------------------


def test_parts_without_histogram_need_the_native_driver() -> None:
    wrk = result(B, driver=DriverKind.WRK, histogram=None, timeseries=None)
    with pytest.raises(InputError, match=r'h3 ran the wrk driver.*driver = "native"'):
        merge_results([result(A), wrk], [0.0, 0.0], ["h2", "h3"])


def test_damaged_histogram_names_the_loader() -> None:
    with pytest.raises(DriverError, match="h3's histogram is not a readable HdrHistogram"):
        merge_results(
            [result(A), result(B, histogram="bm90IGEgaGlzdG9ncmFt")], [0.0, 0.0], ["h2", "h3"]
        )


def test_one_start_time_and_name_per_part() -> None:
    with pytest.raises(ValueError, match="2 results, 1 start times"):
        merge_results([result(A), result(B)], [0.0])
    with pytest.raises(ValueError, match="at least one"):
        merge_results([], [])


# --- property: merge == union ----------------------------------------------------------------

latencies = st.lists(st.integers(min_value=1, max_value=HIGHEST), max_size=300)


@settings(max_examples=60, deadline=None)
@given(values=latencies, cut=st.integers(min_value=0, max_value=300))
def test_merge_of_a_split_equals_the_union(values: list[int], cut: int) -> None:
    left, right = values[:cut], values[cut:]
    merged = merge_results([result(left), result(right)], [0.0, 0.0]).result
    union = histogram(values)
    assert merged.histogram is not None
    assert counts(HdrHistogram.decode(merged.histogram)) == counts(union)
    assert merged.latency_us == latency_figures(union)
    if values:  # the loader's rule, straight from the sorted values
        ordered = sorted(values)
        for key, q in (("p50", 0.5), ("p75", 0.75), ("p90", 0.9), ("p99", 0.99)):
            nth = ordered[math.ceil(q * len(values)) - 1]
            assert merged.latency_us[key] == union.get_highest_equivalent_value(nth)
        assert merged.latency_us["max"] == union.get_highest_equivalent_value(ordered[-1])
        assert merged.latency_us["min"] == union.get_lowest_equivalent_value(ordered[0])
    else:
        assert merged.latency_us == {}
