"""Typed measurement records for tests (config/measured.py): a role's usage, an open-loop
schedule and one second of a per-second series, the figures a test does not set at zero."""

import functools

import msgspec
from hdrh.histogram import HdrHistogram

from stackbench.config.measured import OpenLoop, OpenLoopWaits, RoleUsage, Second


def usage(cpu_percent: float = 0.0, **figures: float) -> RoleUsage:
    """A role's usage; integer figures (bytes, counts) are rounded down as the monitor's are."""
    values: dict[str, float] = {name: 0 for name in RoleUsage.__struct_fields__}
    values.update(figures, cpu_percent=cpu_percent)
    types = {f.name: f.type for f in msgspec.structs.fields(RoleUsage)}
    return RoleUsage(**{k: types[k](v) for k, v in values.items()})


def open_loop(rate: float = 1000.0, sustained: bool = True, unsent: int = 0) -> OpenLoop:
    """An open-loop level's schedule at `rate` over one second, `unsent` never sent."""
    scheduled = int(rate)
    return OpenLoop(
        target_rate=rate,
        achieved_rate=rate - unsent,
        sustained=sustained,
        waited=unsent,
        wait_us=OpenLoopWaits(p50=0, p99=0, max=0),
        scheduled=scheduled,
        unsent=unsent,
    )


@functools.cache
def empty_histogram() -> str:
    """An encoded HDR histogram of no request: a second that completed nothing."""
    encoded = HdrHistogram(1, 60_000_000, 3).encode()
    return encoded.decode() if isinstance(encoded, bytes) else str(encoded)


def second(
    t_s: int,
    completed: float,
    *,
    errors: int = 0,
    p50_us: float = 0,
    p90_us: float = 0,
    p99_us: float = 0,
    max_us: float = 0,
    duration_s: float = 1.0,
    partial: bool = False,
    histogram: str | None = None,
) -> Second:
    """One second; `completed` is rounded to whole responses, latencies to whole µs."""
    return Second(
        t_s=t_s,
        completed=round(completed),
        errors=errors,
        p50_us=round(p50_us),
        p90_us=round(p90_us),
        p99_us=round(p99_us),
        max_us=round(max_us),
        duration_s=duration_s,
        partial=partial,
        histogram=empty_histogram() if histogram is None else histogram,
    )
