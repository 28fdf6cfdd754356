"""How fast each of a level's cores ran: a reference loop beside the level, timed by its own
CPU clock, against the speed the host kept that core at in this run.

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
(an interrupt that lands in one loop moves no median).

A second's speed is against the core's **prevailing** speed: the median second of all the
seconds this process has seen the level's roles saturate that core (this level's included),
not the fastest (a freshly booted host here ran the cores fast for a minute, then at 0.57 of
that for a quarter of an hour). A second off it by more than TOLERANCE either way, with the
level's roles saturating the core, is off by `|1 - speed|` of it; the account keeps each
set's seconds and their sum.

Recorded, not judged (engine/judge.py): on this project's guest a server's throughput did not
follow the loop second by second (benchmarks/core_speed_effect.py; docs/methods.md §3.1).

The thread is stackbench's own: the core account counts it as stackbench's, not another
process's. The arithmetic (`speeds`, `off_speed`) is pure; the probe threads are the edge.
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
# A second within this of the prevailing speed (either way) is at it: quiet seconds' medians
# lie within 8% of one another here, beside php-fpm's processes 5-10% slower in every second
# (0.905-0.95: the caches they leave); the host's two speeds are 1.6x apart (0.56-0.65). A
# change under 1.25x is not told apart from that.
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
    """One core over one level: each second's median loop, in microseconds (the seconds
    without a figure left out)."""

    core: int
    medians_us: tuple[float, ...]


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


def speeds(medians: Sequence[float], prevailing_us: float) -> tuple[float, ...]:
    """Each second's speed: the prevailing time over its median (1 = at the prevailing
    speed, 0.6 = slower, 1.6 = faster)."""
    return tuple(round(prevailing_us / m, 4) for m in medians if m > 0)


def off_speed(per_s: Sequence[float], busy: Sequence[float] = ()) -> float:
    """Core-seconds off the prevailing speed: each second off it by more than TOLERANCE
    (slower or faster), in which the level's roles kept the core saturated (`busy`: their
    share of it each second, at least SATURATED_SHARE; a second without a share counts
    whole), is off by |1 - its speed|. A role with room left did all it was given, only
    slower: the change is in its CPU time (and its latency), not in what it could do. A core
    mostly idle also reads slower (a woken core: the loader of a SHA-256 level at 5-25% of its
    core read 0.56-0.65 in most seconds; the held-back test's, idle while its server was
    stopped, was flagged for it)."""
    return sum(abs(1.0 - speed) * weight for speed, weight in _off(per_s, busy))


def _shares(use: CoreSetUse) -> list[float]:
    """The level's roles' share of the set's cores each second (the monitor's seconds,
    started a moment before the probe's)."""
    return [r / len(use.cores) for r in use.roles_per_s]


def _weights(count: int, busy: Sequence[float]) -> list[float]:
    """Each second's weight: the roles' share of the core where they saturated it (at most
    1), 0 where they left room, 1 where no share is known."""
    return [_saturated(busy[i]) if i < len(busy) else 1.0 for i in range(count)]


def _off(per_s: Sequence[float], busy: Sequence[float]) -> list[tuple[float, float]]:
    """(speed, weight) of the seconds off the prevailing speed, with the core saturated."""
    low, high = 1.0 / (1.0 + TOLERANCE), 1.0 + TOLERANCE
    return [
        (speed, weight)
        for speed, weight in zip(per_s, _weights(len(per_s), busy), strict=True)
        if weight > 0 and not low <= speed <= high
    ]


def _saturated(share: float) -> float:
    return min(1.0, share) if share >= SATURATED_SHARE else 0.0


class Prevailing:
    """Each core's saturated seconds seen by this process (their median loops), whose median
    is the speed the host keeps that core at: the reference every second is read against."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._us: dict[int, list[float]] = {}

    def update(self, core: int, saturated: Iterable[float]) -> tuple[float, int] | None:
        """The prevailing median with this level's saturated seconds taken in, and how many
        seconds it rests on (None: the core has none yet)."""
        with self._lock:
            seen = self._us.setdefault(core, [])
            seen.extend(m for m in saturated if m > 0)
            return (statistics.median(seen), len(seen)) if seen else None


PREVAILING = Prevailing()


class SpeedProbe:
    """The reference loop on each of `cores`, from `start` to `stop`: one daemon thread per
    core, pinned to it. A core the process may not run on is left out (no figure)."""

    def __init__(self, cores: Iterable[int]) -> None:
        self.cores = sorted(set(cores))
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
        found = []
        for core in self.cores:
            medians = second_medians(list(self._loops[core]), self.started)
            seconds = tuple(m for m in medians if m is not None and m > 0)
            if seconds:
                found.append(CoreSpeed(core, seconds))
        return tuple(found)

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


def _reference(
    speed: CoreSpeed, busy: Sequence[float], prevailing: Prevailing
) -> tuple[float, int]:
    """The core's prevailing time with this level's saturated seconds taken in; a core never
    saturated yet is read against this level's own median second (nothing is judged there:
    no second of it counts)."""
    weights = _weights(len(speed.medians_us), busy)
    saturated = [m for m, w in zip(speed.medians_us, weights, strict=True) if w > 0]
    found = prevailing.update(speed.core, saturated)
    return found if found is not None else (statistics.median(speed.medians_us), 0)


def with_speeds(
    account: CoreAccount, found: Sequence[CoreSpeed], prevailing: Prevailing = PREVAILING
) -> CoreAccount:
    """The account with each set's core-seconds off the prevailing speed (its seconds off it
    in which the level's roles saturated it) and per-second speed (its cores' average), and
    the prevailing times they are relative to."""
    if not found:
        return account
    cores = by_core(found)
    sets: list[CoreSetUse] = []
    references: dict[int, tuple[float, int]] = {}
    for use in account.sets:
        mine = [cores[c] for c in use.cores if c in cores]
        if not mine:
            sets.append(use)
            continue
        shares = _shares(use)
        per_core = []
        for speed in mine:
            reference = references.setdefault(speed.core, _reference(speed, shares, prevailing))
            per_core.append(speeds(speed.medians_us, reference[0]))
        length = min(len(s) for s in per_core)
        per_s = tuple(round(statistics.fmean(s[i] for s in per_core), 4) for i in range(length))
        off = len(use.cores) * off_speed(per_s, shares)
        sets.append(msgspec.structs.replace(use, slowed_s=round(off, 4), speed_per_s=per_s))
    said = ", ".join(
        f"core {core} {us:,.0f} us" + (f" ({n} s)" if n else " (not saturated yet)")
        for core, (us, n) in sorted(references.items())
    )
    return msgspec.structs.replace(account, sets=tuple(sets), speed_reference=f"prevailing: {said}")
