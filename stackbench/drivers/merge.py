"""One load level spread over several loaders, and their results merged back into one, exactly.

Pure functions, no I/O: the engine splits a level with `split_request`, runs one native loader
per part (on its own host and cores), then hands their `LoadResult`s to `merge_results`.

Splitting. Closed loop spreads the connections (as evenly as possible, at least one each), open
loop spreads the rate in equal shares, and a total request count follows the connections so
that every connection does about the same work. A per-connection request count needs no split.

Merging. Latency is measured on each loader against its own clock, so no clock sync enters a
latency figure: the loaders' full-run HDR histograms are added bucket by bucket (the merged
histogram is the histogram of the union of their requests) and every latency figure is read
from that sum by the loader's own rules, so one part merged alone gives back that loader's
figures. Counts are summed. Throughput is the sum of the loaders' rates: they ran concurrently,
each over its own recorded phase, whose starts differ by the measured start skew. The
per-second series are merged second by second by index (second i of every loader is second i
of the level; its edges are blurred by the start skew), each second's histograms added.
What cannot be merged exactly (the loader gives no connect-time or open-loop wait histogram)
is bounded and said so in `MergedLoad.notes`.
"""

import binascii
import dataclasses
import math
import shlex
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np
from hdrh.codec import HdrCookieException, HdrHistogramSettingsException, HdrLengthException
from hdrh.histogram import HdrHistogram

from stackbench.config.loadspec import LoadRequest, LoadResult
from stackbench.config.measured import OpenLoop, OpenLoopWaits, Second
from stackbench.drivers.native import histogram_percentiles
from stackbench.errors import DriverError, InputError

# --- splitting -------------------------------------------------------------------------------


def split_connections(total: int, loaders: int) -> tuple[int, ...]:
    """`total` connections over `loaders` loaders, as evenly as possible (the first ones get
    the remainder: 10 over 3 is 4, 3, 3); every loader gets at least one."""
    _check_loader_count(loaders)
    if total < loaders:
        raise InputError(
            f"the level of {total} connection(s) cannot be spread over {loaders} "
            f"loaders: each loader needs at least one connection; use levels of "
            f"{loaders} connections or more, or place fewer loaders"
        )
    return _even_split(total, loaders)


def split_rate(rate: float, loaders: int) -> tuple[float, ...]:
    """An open-loop rate (requests/s) over `loaders` loaders in equal shares."""
    _check_loader_count(loaders)
    if not (math.isfinite(rate) and rate > 0):
        raise InputError(
            f"the open-loop level of {rate:g} requests/s cannot be spread over "
            f"{loaders} loaders: the rate must be a positive number"
        )
    return tuple(rate / loaders for _ in range(loaders))


def split_request(
    req: LoadRequest, loader_cpus: Sequence[frozenset[int]]
) -> tuple[LoadRequest, ...]:
    """One level as one request per loader: loader i gets `loader_cpus[i]`, its share of the
    connections and of the open-loop rate, and its share of a total request count
    (proportional to its connections; `requests_per_connection` applies to each loader's own
    connections unchanged, so the counts add up either way). Every other setting (threads,
    timeout, warm-up, duration) applies to each loader as it is."""
    loaders = len(loader_cpus)
    connections = split_connections(req.connections, loaders)
    rates: tuple[float | None, ...] = (
        (None,) * loaders if req.rate is None else split_rate(req.rate, loaders)
    )
    requests = _split_request_count(req, connections)
    return tuple(
        dataclasses.replace(
            req,
            connections=connections[i],
            rate=rates[i],
            loader_cpus=frozenset(loader_cpus[i]),
            settings=msgspec.structs.replace(req.settings, requests=requests[i]),
        )
        for i in range(loaders)
    )


def _split_request_count(req: LoadRequest, connections: tuple[int, ...]) -> tuple[int | None, ...]:
    total = req.settings.requests
    if total is None or req.settings.requests_per_connection is not None:
        # no total, or one the per-connection count overrides (LoadRequest.request_count)
        return (total,) * len(connections)
    if total < len(connections):
        raise InputError(
            f"[load] requests = {total} cannot be spread over {len(connections)} "
            f"loaders: each loader needs at least one request; raise requests or "
            f"place fewer loaders"
        )
    return _proportional_split(total, connections)


def _check_loader_count(loaders: int) -> None:
    if loaders < 1:
        raise InputError(f"a level needs at least one loader, not {loaders}; place a loader")


def _even_split(total: int, parts: int) -> tuple[int, ...]:
    share, remainder = divmod(total, parts)
    return tuple(share + 1 if i < remainder else share for i in range(parts))


def _proportional_split(total: int, weights: Sequence[int]) -> tuple[int, ...]:
    """`total` in integer shares proportional to `weights` that add up to `total` (largest
    remainder; ties go to the earlier part). Integer arithmetic: no rounding drift."""
    weight = sum(weights)
    shares = [total * w // weight for w in weights]
    by_remainder = sorted(range(len(weights)), key=lambda i: (-(total * weights[i] % weight), i))
    for i in by_remainder[: total - sum(shares)]:
        shares[i] += 1
    return tuple(shares)


# --- merging ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MergedLoad:
    """A level measured by several loaders, as one result plus the facts of the merge."""

    result: LoadResult  # the level as one result: what the store records for it
    parts: tuple[LoadResult, ...]  # each loader's own result, in loader order
    loader_names: tuple[str, ...]  # the name each part is reported under (warnings, command)
    started_at: tuple[float, ...]  # when each loader started, on the controller's clock (s)
    start_skew_s: float  # max(started_at) - min(started_at)
    notes: tuple[str, ...]  # every figure of `result` that is not exact, and why; () if none


def merge_results(
    parts: Sequence[LoadResult],
    started_at: Sequence[float],
    loader_names: Sequence[str] | None = None,
) -> MergedLoad:
    """The loaders' results of one level as one `LoadResult` (see the module docstring).

    `started_at[i]` is when loader i started, already on the controller's clock (offsets
    corrected); `loader_names[i]` names it in warnings and in the command (default
    "loader 1" ...). Every part needs the native driver's full-run histogram.

    The merged result, field by field: completed, ok and errors (per class) summed;
    histogram = the parts' histograms added; latency_us read from it (`latency_figures`);
    requests_per_s = the sum of the parts' rates (they ran concurrently, each over its own
    recorded phase); duration_s = the longest part's; timeseries by `merge_timeseries`;
    loader_cpu_s summed; unanswered_at_end = (count summed, oldest of all); connect_us and
    open_loop as their helpers say; warnings prefixed with the loader's name; command = one
    "[name] argv" entry per loader; raw_output = the parts' outputs one after the other."""
    names = _names(parts, started_at, loader_names)
    _check_histograms(parts, names)
    notes: list[str] = []
    histogram = _add_encoded(
        [p.histogram or "" for p in parts], [f"{n}'s histogram" for n in names]
    )
    connect, connect_note = _merge_connect(parts)
    open_loop, open_loop_note = _merge_open_loop(parts, names)
    cpu, cpu_note = _merge_loader_cpu(parts, names)
    notes += [n for n in (connect_note, open_loop_note, cpu_note) if n]
    errors: Counter[str] = Counter()
    for p in parts:
        errors.update(p.errors)
    named = list(zip(names, parts, strict=True))
    result = LoadResult(
        driver=parts[0].driver,
        command=tuple(f"[{name}] {shlex.join(p.command)}" for name, p in named),
        duration_s=max(p.duration_s for p in parts),
        completed=sum(p.completed for p in parts),
        ok=sum(p.ok for p in parts),
        errors=dict(errors),
        requests_per_s=math.fsum(p.requests_per_s for p in parts),
        latency_us=latency_figures(histogram),
        connect_us=connect,
        histogram=_encode(histogram),
        timeseries=merge_timeseries([p.timeseries for p in parts], names),
        open_loop=open_loop,
        loader_cpu_s=cpu,
        unanswered_at_end=_merge_unanswered(parts),
        loader_engine=", ".join(sorted({p.loader_engine for p in parts if p.loader_engine}))
        or None,
        warnings=tuple(f"{name}: {w}" for name, p in named for w in p.warnings),
        raw_output="".join(f"--- {name} ---\n{p.raw_output}\n" for name, p in named),
    )
    return MergedLoad(
        result=result,
        parts=tuple(parts),
        loader_names=names,
        started_at=tuple(started_at),
        start_skew_s=max(started_at) - min(started_at),
        notes=tuple(notes),
    )


def _names(
    parts: Sequence[LoadResult], started_at: Sequence[float], loader_names: Sequence[str] | None
) -> tuple[str, ...]:
    if not parts:
        raise ValueError("merge_results needs at least one loader's result")
    names = (
        tuple(loader_names)
        if loader_names is not None
        else tuple(f"loader {i + 1}" for i in range(len(parts)))
    )
    if not len(parts) == len(started_at) == len(names):
        raise ValueError(
            f"{len(parts)} results, {len(started_at)} start times and "
            f"{len(names)} names: one of each per loader"
        )
    return names


def _check_histograms(parts: Sequence[LoadResult], names: Sequence[str]) -> None:
    for name, p in zip(names, parts, strict=True):
        if not p.histogram:
            raise InputError(
                f"{name} ran the {p.driver.value} driver, which gives no latency "
                f"histogram to merge: a level spread over {len(parts)} loaders "
                f'needs [load] driver = "native"'
            )
    if len({p.driver for p in parts}) > 1:
        drivers = ", ".join(f"{n}: {p.driver.value}" for n, p in zip(names, parts, strict=True))
        raise DriverError(
            f"the loaders of one level ran different drivers ({drivers}); every "
            "loader of a level must run the same one"
        )


# --- HDR histograms --------------------------------------------------------------------------

# What a damaged encoded histogram raises when decoded.
_UNREADABLE = (
    ValueError,
    TypeError,
    zlib.error,
    binascii.Error,
    HdrCookieException,
    HdrLengthException,
    HdrHistogramSettingsException,
)


def _decode(encoded: str, what: str) -> Any:
    try:
        return HdrHistogram.decode(encoded)
    except _UNREADABLE as exc:
        raise DriverError(
            f"{what} is not a readable HdrHistogram ({exc!r}); rebuild the "
            "loader on that host (cargo build --release in loadgen/)"
        ) from exc


def _add_encoded(encoded: Sequence[str], what: Sequence[str]) -> Any:
    """The histograms added bucket by bucket into a new one as wide as the widest."""
    histograms = [_decode(text, label) for text, label in zip(encoded, what, strict=True)]
    shapes = {(h.lowest_trackable_value, h.significant_figures) for h in histograms}
    if len(shapes) > 1:
        raise DriverError(
            f"{', '.join(what)} have different resolutions "
            f"(lowest value, significant digits: {sorted(shapes)}); they cannot "
            "be added exactly: run the same loader build on every host"
        )
    lowest, digits = shapes.pop()
    merged = HdrHistogram(lowest, max(h.highest_trackable_value for h in histograms), digits)
    for h in histograms:
        merged.add(h)  # same bucket layout: counts added in place; else value by value, exact
    return merged


def _encode(histogram: Any) -> str:
    return bytes(histogram.encode()).decode("ascii")


def _counts(histogram: Any) -> np.ndarray[Any, np.dtype[np.uint64]]:
    return np.ctypeslib.as_array(histogram.counts)[: histogram.counts_len]


def _quantiles(histogram: Any, quantiles: Sequence[float]) -> list[int]:
    """Values at quantiles by the loader's rule (Rust hdrhistogram `value_at_quantile`): the
    highest value equivalent to the bucket holding the ceil(q * count)-th smallest value; 0
    for an empty histogram."""
    cumulative = np.cumsum(_counts(histogram), dtype=np.uint64)
    total = int(cumulative[-1]) if len(cumulative) else 0
    if total == 0:
        return [0 for _ in quantiles]
    values = []
    for q in quantiles:
        target = max(1, math.ceil(min(q, 1.0) * total))
        index = int(np.searchsorted(cumulative, target, side="left"))
        values.append(
            int(histogram.get_highest_equivalent_value(histogram.get_value_from_index(index)))
        )
    return values


def _max_value(histogram: Any) -> int:
    nonzero = np.flatnonzero(_counts(histogram))
    if len(nonzero) == 0:
        return 0
    return int(
        histogram.get_highest_equivalent_value(histogram.get_value_from_index(int(nonzero[-1])))
    )


# The loader's summary (loadjson.Summary, loadgen's Stats::of), by name and quantile.
SUMMARY_QUANTILES = {
    "p50": 0.5,
    "p75": 0.75,
    "p90": 0.9,
    "p99": 0.99,
    "p99_9": 0.999,
    "p99_99": 0.9999,
}


def latency_figures(histogram: Any) -> dict[str, float]:
    """The latency figures the native driver reports for a histogram, by the same names and
    rules: the loader's summary (min mean stdev max p50 p75 p90 p99 p99_9 p99_99, as loadgen
    computes them) plus native.py's extra percentiles (p66 p80 p95 p98). Empty when nothing
    was recorded (no latency, not zeros)."""
    counts = _counts(histogram)
    nonzero = np.flatnonzero(counts)
    if len(nonzero) == 0:
        return {}
    total = int(counts.sum(dtype=np.uint64))
    medians = [(_median_equivalent(histogram, int(i)), int(counts[i])) for i in nonzero]
    # The same fold as Rust hdrhistogram's mean()/stdev(), in the same order, so that one
    # loader's histogram gives back the loader's own figures to the last bit.
    mean = 0.0
    for value, count in medians:
        mean += float(value) * float(count) / float(total)
    square_deviations = 0.0
    for value, count in medians:
        deviation = float(value) - mean
        square_deviations += deviation * deviation * float(count)
    first = int(nonzero[0])
    figures = {
        "min": 0.0 if first == 0 else float(histogram.get_value_from_index(first)),
        "mean": mean,
        "stdev": math.sqrt(square_deviations / float(total)),
        "max": float(_max_value(histogram)),
    }
    figures.update(
        zip(
            SUMMARY_QUANTILES,
            map(float, _quantiles(histogram, list(SUMMARY_QUANTILES.values()))),
            strict=True,
        )
    )
    figures.update(histogram_percentiles(_encode(histogram)))
    return figures


def _median_equivalent(histogram: Any, index: int) -> int:
    value = histogram.get_value_from_index(index)
    lowest = int(histogram.get_lowest_equivalent_value(value))
    size = int(histogram.get_highest_equivalent_value(value)) - lowest + 1
    return lowest + (size >> 1)


# --- per-second series -----------------------------------------------------------------------


def merge_timeseries(
    series: Sequence[Sequence[Second] | None], names: Sequence[str]
) -> tuple[Second, ...] | None:
    """The loaders' per-second series merged second by second, by index. A second's counts
    are summed and its histograms added, its percentiles read from the sum. It is partial
    when any loader's is, or when a loader has no such second (it stopped earlier): then it
    lacks that loader's load. Its duration_s is the longest any loader covered of it.
    None when no loader has a series."""
    if all(s is None for s in series):
        return None
    lists = [list(s or ()) for s in series]
    return tuple(_merge_second(index, lists, names) for index in range(max(map(len, lists))))


def _merge_second(index: int, series: Sequence[Sequence[Second]], names: Sequence[str]) -> Second:
    present = [(name, s[index]) for name, s in zip(names, series, strict=True) if index < len(s)]
    for name, second in present:
        if second.t_s != index + 1:
            raise DriverError(
                f"{name}'s per-second series has t_s = {second.t_s} "
                f"at position {index + 1}: the series is not one entry per "
                "second from 1; rebuild the loader on that host"
            )
    histogram = _add_encoded(
        [s.histogram for _, s in present], [f"{name}'s second {index + 1}" for name, _ in present]
    )
    p50, p90, p99 = _quantiles(histogram, (0.5, 0.9, 0.99))
    return Second(
        t_s=index + 1,
        completed=sum(s.completed for _, s in present),
        errors=sum(s.errors for _, s in present),
        p50_us=p50,
        p90_us=p90,
        p99_us=p99,
        max_us=_max_value(histogram),
        duration_s=max(s.duration_s for _, s in present),
        partial=len(present) < len(series) or any(s.partial for _, s in present),
        histogram=_encode(histogram),
    )


# --- figures without a histogram -------------------------------------------------------------


def _merge_connect(parts: Sequence[LoadResult]) -> tuple[dict[str, float] | None, str]:
    """Connect times: the loader reports their summary only, no histogram. The min and the
    max of the union are exact; the other figures are the largest loader's, not the pooled
    ones (noted)."""
    summaries = [p.connect_us for p in parts if p.connect_us is not None]
    if not summaries:
        return None, ""
    if len(summaries) == 1:  # the other loaders connected nothing in the recorded phase
        return dict(summaries[0]), ""
    keys = [k for k in summaries[0] if all(k in s for s in summaries)]
    merged = {k: (min if k == "min" else max)(s[k] for s in summaries) for k in keys}
    approximate = [k for k in keys if k not in ("min", "max")]
    note = (
        (
            f"connect_us {', '.join(approximate)}: the largest of the {len(summaries)} loaders' "
            "figures, not the pooled ones (the loader reports no connect-time histogram); "
            "min and max are exact"
        )
        if approximate
        else ""
    )
    return merged, note


def _merge_open_loop(
    parts: Sequence[LoadResult], names: Sequence[str]
) -> tuple[OpenLoop | None, str]:
    """Open-loop facts: rates and counts summed, sustained only if every loader sustained
    its share; the wait percentiles are the largest loader's (noted), the wait max exact."""
    loops = [p.open_loop for p in parts]
    if all(o is None for o in loops):
        return None, ""
    if any(o is None for o in loops):
        raise DriverError(
            "some loaders of the level ran open loop and others closed ("
            + ", ".join(
                f"{n}: {'open' if o else 'closed'}" for n, o in zip(names, loops, strict=True)
            )
            + ")"
        )
    present = [o for o in loops if o is not None]
    merged = OpenLoop(
        target_rate=math.fsum(o.target_rate for o in present),
        achieved_rate=math.fsum(o.achieved_rate for o in present),
        sustained=all(o.sustained for o in present),
        waited=sum(o.waited for o in present),
        wait_us=OpenLoopWaits(
            p50=max(o.wait_us.p50 for o in present),
            p99=max(o.wait_us.p99 for o in present),
            max=max(o.wait_us.max for o in present),
        ),
        scheduled=sum(o.scheduled for o in present),
        unsent=sum(o.unsent for o in present),
    )
    note = (
        ""
        if len(present) == 1
        else (
            f"open_loop wait_us p50, p99: the largest of the {len(present)} loaders' figures, not "
            "the pooled ones (the loader reports no wait histogram); max is exact"
        )
    )
    return merged, note


def _merge_loader_cpu(
    parts: Sequence[LoadResult], names: Sequence[str]
) -> tuple[tuple[float, float] | None, str]:
    measured = [p.loader_cpu_s for p in parts if p.loader_cpu_s is not None]
    if not measured:
        return None, ""
    missing = [n for n, p in zip(names, parts, strict=True) if p.loader_cpu_s is None]
    note = (
        (f"loader_cpu_s: the sum without {', '.join(missing)}, which did not report its CPU time")
        if missing
        else ""
    )
    return (math.fsum(u for u, _ in measured), math.fsum(s for _, s in measured)), note


def _merge_unanswered(parts: Sequence[LoadResult]) -> tuple[int, float] | None:
    ends = [p.unanswered_at_end for p in parts if p.unanswered_at_end is not None]
    if not ends:
        return None
    return sum(count for count, _ in ends), max(oldest for _, oldest in ends)
