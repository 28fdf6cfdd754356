"""How fast each of a level's cores ran: a reference loop beside the level, timed by its own
CPU clock.

A virtual machine's core can run slower without the guest seeing why: the physical core's
other hyperthread busy with another tenant, a lower clock. Nothing is stolen (steal stays
near zero) and no other process runs, yet a server at 100% of its core does less. On the
2-core KVM guest these tools were built on, a core alternated for seconds at a time between
two speeds, 1.6x apart; Node's hello at 3,000 clients fell from 12,900 to 6,510 req/s in one
repetition with its core 100% busy and no flag (docs/findings.md, pool-and-cluster at 17:49).

So each core of a level runs a fixed loop of integer steps every PERIOD_S (about 0.5 ms of
CPU with its untimed warm-up: 0.5% of the core), on a thread of stackbench's pinned to it,
and times it by the thread's own CPU clock: waiting for the core (the server uses it) does
not count, only how fast the core ran the loop. A second's figure is the median of its loops
(an interrupt that lands in one loop moves no median); its speed is the fastest second's time
seen on that core by this process over its own (1 = as fast as it has run). A second slower
than the fastest by more than TOLERANCE, with the level's roles saturating the core, lost
`1 - speed` of it, which is what a CPU-bound server on it lost too (engine/judge.py flags a
level whose cores lost more than SLOWED_BAND).

The thread is stackbench's own: the core account counts it as stackbench's, not another
process's. The arithmetic (`speeds`, `slowed`) is pure; the probe threads are the edge.
"""

import os
import statistics
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import msgspec

from stackbench.config.measured import CoreAccount, CoreSetUse

LOOP_STEPS = 5_000  # about 0.4 ms of CPU on a 2020s server core, in CPython 3.11
# Untimed steps first: a core woken from idle runs its first loop about 8% slower here (416
# against 385 us), which on a server's partly idle core would read as the host's slowdown.
WARM_STEPS = 1_000
PERIOD_S = 0.1  # ten loops a second per core
MIN_LOOPS = 5  # a second with fewer loops has no figure (the level's cut first or last)
# A second within this of the fastest is full speed: quiet seconds' medians lie within 8% of
# the fastest here, beside php-fpm's processes 5-10% in every second (0.905-0.95 of it: the
# caches they leave); a host slowdown is 1.6x (0.56-0.65). A steady slowdown under 1.25x is
# not told apart from that.
TOLERANCE = 0.25
# The roles' share of a core from which they are its limit: a slower core costs them then
# (the monitor's loader-bound rule uses the same share)
SATURATED_SHARE = 0.90


def reference_loop(steps: int = LOOP_STEPS) -> int:
    """Integer steps of a linear congruential generator: no memory beyond registers and the
    interpreter's own, so its time is the core's speed, not the caches the server left."""
    x = 1
    for _ in range(steps):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
    return x


@dataclass(frozen=True)
class Loop:
    at_s: float  # monotonic seconds when it started
    cpu_us: float  # its thread's CPU time


@dataclass(frozen=True)
class CoreSpeed:
    """One core over one level: each second's speed relative to the fastest it has run."""

    core: int
    fastest_us: float  # the fastest second's median loop seen on this core by this process
    per_s: tuple[float, ...]  # fastest / that second's median (1 = as fast as it has run)


def second_medians(loops: Sequence[Loop], start_s: float) -> list[float | None]:
    """Each second's median loop time from `start_s` (None: fewer than MIN_LOOPS loops)."""
    if not loops:
        return []
    seconds: dict[int, list[float]] = {}
    for loop in loops:
        seconds.setdefault(int(max(0.0, loop.at_s - start_s)), []).append(loop.cpu_us)
    last = max(seconds)
    out: list[float | None] = []
    for s in range(last + 1):
        times = seconds.get(s, [])
        out.append(statistics.median(times) if len(times) >= MIN_LOOPS else None)
    return out


def speeds(medians: Sequence[float | None], fastest_us: float) -> tuple[float, ...]:
    """Each second's speed: the fastest time over its median, at most 1 (seconds without a
    figure are left out)."""
    return tuple(round(min(1.0, fastest_us / m), 4) for m in medians if m is not None and m > 0)


def slowed(per_s: Sequence[float], busy: Sequence[float] = ()) -> float:
    """Core-seconds lost: each second slower than the fastest by more than TOLERANCE, in
    which the level's roles kept the core saturated (`busy`: their share of it each second,
    at least SATURATED_SHARE; a second without a share counts whole), loses 1 - its speed.
    A role with room left did all it was given, only slower: the slowdown is in its CPU time
    (and its latency), not in what it could do. A core mostly idle also reads slower (a
    woken core: the loader of a SHA-256 level at 5-25% of its core read 0.56-0.65 in most
    seconds; the held-back test's, idle while its server was stopped, was flagged for it)."""
    return sum((1.0 - speed) * weight for speed, weight in _losing(per_s, busy))


def lost_seconds(use: CoreSetUse) -> list[float]:
    """The speeds of a set's seconds that lost it something (slower than the tolerance, its
    cores saturated by the level's roles then, or no share known)."""
    return [speed for speed, _ in _losing(use.speed_per_s, _shares(use))]


def _shares(use: CoreSetUse) -> list[float]:
    """The level's roles' share of the set's cores each second (the monitor's seconds,
    started a moment before the probe's)."""
    return [r / len(use.cores) for r in use.roles_per_s]


def _losing(per_s: Sequence[float], busy: Sequence[float]) -> list[tuple[float, float]]:
    """(speed, weight) of the seconds that lost something: slower than the tolerance, with
    the core saturated (weight: the share, at most 1) or no share known (weight 1)."""
    seconds = [
        (speed, _saturated(busy[i]) if i < len(busy) else 1.0)
        for i, speed in enumerate(per_s)
        if speed < 1.0 / (1.0 + TOLERANCE)
    ]
    return [(speed, weight) for speed, weight in seconds if weight > 0]


def _saturated(share: float) -> float:
    return min(1.0, share) if share >= SATURATED_SHARE else 0.0


class Fastest:
    """The fastest second's median loop seen on each core by this process (a machine's fact:
    a host can slow a core, never make it run faster than it can)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._us: dict[int, float] = {}

    def update(self, core: int, medians: Iterable[float | None]) -> float | None:
        """The fastest with this level's seconds taken in (None: none seen yet)."""
        seen = [m for m in medians if m is not None and m > 0]
        with self._lock:
            best = min([*seen, *([self._us[core]] if core in self._us else [])], default=None)
            if best is not None:
                self._us[core] = best
            return best


FASTEST = Fastest()


class SpeedProbe:
    """The reference loop on each of `cores`, from `start` to `stop`: one daemon thread per
    core, pinned to it. A core the process may not run on is left out (no figure)."""

    def __init__(self, cores: Iterable[int], fastest: Fastest = FASTEST) -> None:
        self.cores = sorted(set(cores))
        self.fastest = fastest
        self._stop = threading.Event()
        self._loops: dict[int, list[Loop]] = {c: [] for c in self.cores}
        self._threads = [
            threading.Thread(target=self._run, args=(c,), name=f"speed-{c}", daemon=True)
            for c in self.cores
        ]
        self.started = 0.0

    def start(self) -> "SpeedProbe":
        self.started = time.monotonic()
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> tuple[CoreSpeed, ...]:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=2)
        return tuple(
            speed
            for core in self.cores
            if (speed := self._speed(core, list(self._loops[core]))) is not None
        )

    def _speed(self, core: int, loops: Sequence[Loop]) -> CoreSpeed | None:
        medians = second_medians(loops, self.started)
        fastest = self.fastest.update(core, medians)
        if fastest is None:
            return None
        return CoreSpeed(core, round(fastest, 1), speeds(medians, fastest))

    def _run(self, core: int) -> None:
        try:
            os.sched_setaffinity(0, {core})  # 0: this thread (Linux)
        except OSError:
            return  # not allowed there (a cpuset): that core gets no figure
        loops = self._loops[core]
        while not self._stop.wait(PERIOD_S):
            at = time.monotonic()
            reference_loop(WARM_STEPS)
            began = time.thread_time_ns()
            reference_loop()
            loops.append(Loop(at, (time.thread_time_ns() - began) / 1e3))


def by_core(found: Sequence[CoreSpeed]) -> Mapping[int, CoreSpeed]:
    return {s.core: s for s in found}


def with_speeds(account: CoreAccount, found: Sequence[CoreSpeed]) -> CoreAccount:
    """The account with each set's lost core-seconds (its slower seconds in which the level's
    roles saturated it) and per-second speed (its cores' average), and the
    fastest times they are relative to."""
    if not found:
        return account
    cores = by_core(found)
    sets = []
    for use in account.sets:
        mine = [cores[c] for c in use.cores if c in cores]
        if not mine:
            sets.append(use)
            continue
        length = min(len(s.per_s) for s in mine)
        per_s = tuple(round(statistics.fmean(s.per_s[i] for s in mine), 4) for i in range(length))
        lost = len(use.cores) * slowed(per_s, _shares(use))
        sets.append(msgspec.structs.replace(use, slowed_s=round(lost, 4), speed_per_s=per_s))
    reference = ", ".join(f"core {s.core} {s.fastest_us:,.0f} us" for s in found)
    return msgspec.structs.replace(account, sets=tuple(sets), speed_reference=reference)
