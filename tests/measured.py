"""Typed measurement records for tests (config/measured.py): a role's usage, an open-loop
schedule, one second of a per-second series and a level's cores accounted, the figures a test
does not set at zero."""

import functools

import msgspec
from hdrh.histogram import HdrHistogram

from stackbench.config.measured import (
    CoreAccount,
    CoreSetUse,
    OpenLoop,
    OpenLoopWaits,
    RoleUsage,
    Second,
)


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


def core_set(
    roles_per_s: list[float],
    other_per_s: list[float] | None = None,
    steal_per_s: list[float] | None = None,
    roles: tuple[str, ...] = ("server",),
    cores: tuple[int, ...] = (0,),
) -> CoreSetUse:
    """One set of a level's cores: its roles' share each second, nothing else on it."""
    n = len(roles_per_s)
    return CoreSetUse(
        cores=cores,
        roles=roles,
        busy_s=sum(roles_per_s),
        interrupts_s=0.0,
        roles_s=sum(roles_per_s),
        stackbench_s=0.0,
        kernel_threads_s=0.0,
        named_other_s=0.0,
        unseen_s=0.0,
        other_s=0.0,
        steal_s=0.0,
        roles_per_s=tuple(roles_per_s),
        other_per_s=tuple(other_per_s or [0.0] * n),
        steal_per_s=tuple(steal_per_s or [0.0] * n),
    )


def account(*sets: CoreSetUse, elapsed_s: float = 12.0) -> CoreAccount:
    """A level's cores accounted by control groups over `elapsed_s`."""
    return CoreAccount(
        method="cgroup v2 (cpu.stat)",
        sampled="",
        irq_time_apart=False,
        elapsed_s=elapsed_s,
        sets=sets,
        top=(),
    )
