"""How fast a level's cores ran: the arithmetic on hand-made loops, the detector's error rates
by simulation (a quiet host, a host that slows a core for seconds at a time), and the probe
on this machine's own cores."""

import random
import time

import pytest

from stackbench.config.measured import CoreAccount, CoreSetUse
from stackbench.engine.judge import SLOWED_BAND, disturbed_flag
from stackbench.lab.corespeed import (
    MIN_LOOPS,
    SATURATED_SHARE,
    TOLERANCE,
    CoreSpeed,
    Fastest,
    Loop,
    SpeedProbe,
    second_medians,
    slowed,
    speeds,
    with_speeds,
)
from tests.measured import account as measured_account
from tests.measured import core_set


def loops_at(start: float, per_second: list[list[float]]) -> list[Loop]:
    return [
        Loop(start + s + i / 10, us)
        for s, times in enumerate(per_second)
        for i, us in enumerate(times)
    ]


def test_each_second_is_the_median_of_its_loops_and_a_short_one_has_none() -> None:
    # second 0: an interrupt in one loop (900) moves no median; second 2: 3 loops, no figure
    loops = loops_at(100.0, [[400, 410, 900, 405, 402], [640, 650, 645, 660, 655], [400, 401, 402]])
    assert second_medians(loops, 100.0) == [405, 650, None]
    assert second_medians([], 100.0) == []
    assert MIN_LOOPS == 5


def test_a_seconds_speed_is_the_fastest_over_its_median_and_only_a_slower_one_loses() -> None:
    per_s = speeds([400.0, None, 440.0, 640.0, 380.0], 400.0)
    assert per_s == (1.0, 0.9091, 0.625, 1.0)  # faster than the fastest: 1 (the cap)
    # 440 us is 10% slower: within the 25% tolerance (php-fpm's core reads 0.905-0.95 in
    # every second), full speed; 640 us (the host's 1.6x) loses 1 - 0.625
    assert slowed(per_s) == pytest.approx(0.375)
    assert slowed([1 / (1 + TOLERANCE) + 1e-9]) == 0.0
    assert slowed([0.75]) == pytest.approx(0.25)


def test_the_fastest_is_kept_per_core_across_levels() -> None:
    fastest = Fastest()
    assert fastest.update(0, [None]) is None
    assert fastest.update(0, [650.0, 640.0]) == 640.0  # a run that starts slow...
    assert fastest.update(0, [402.0, None, 650.0]) == 402.0  # ...learns the core's speed
    assert fastest.update(0, [700.0]) == 402.0  # and keeps it
    assert fastest.update(1, [390.0]) == 390.0  # each core its own


def use(
    cores: tuple[int, ...], roles: tuple[str, ...], roles_per_s: tuple[float, ...] = ()
) -> CoreSetUse:
    """A set whose roles' shares are `roles_per_s` (none: not known)."""
    return core_set(list(roles_per_s), roles=roles, cores=cores)


def account(*sets: CoreSetUse, elapsed_s: float = 15.0) -> CoreAccount:
    """A 15-s level's account (the judge divides by its cores' capacity)."""
    return measured_account(*sets, elapsed_s=elapsed_s)


def test_the_account_gets_each_sets_lost_seconds_and_speed() -> None:
    found = (
        CoreSpeed(0, 401.0, (1.0, 0.6, 0.6, 1.0)),
        CoreSpeed(1, 398.0, (1.0, 1.0, 0.96, 0.5)),
    )
    server, loader, idle = use((0,), ("node",)), use((1,), ("loader",)), use((2,), ())
    got = with_speeds(account(server, loader, idle), found)
    assert [s.slowed_s for s in got.sets] == [0.8, 0.5, 0.0]
    assert got.sets[0].speed_per_s == (1.0, 0.6, 0.6, 1.0)
    assert got.sets[2] == idle  # no probe there: nothing said
    assert got.speed_reference == "core 0 401 us, core 1 398 us"
    both = with_speeds(account(use((0, 1), ("node", "loader"))), found)
    # two cores at their average speed: 2 x (0.22 + 0.25), 0.8 within the tolerance
    assert both.sets[0].slowed_s == pytest.approx(0.94)
    assert both.sets[0].speed_per_s == (1.0, 0.8, 0.78, 0.75)
    assert with_speeds(account(server), ()) == account(server)


def test_a_slowed_server_core_disturbs_the_level_and_says_how() -> None:
    """Node's hello at 6,510 req/s (12,900 the repetition before): its core at 0.6 of its
    speed for 7 of 15 seconds, nothing stolen, no other process."""
    per_s = (1.0,) * 8 + (0.6,) * 7
    slow = with_speeds(account(use((0,), ("node",))), (CoreSpeed(0, 401.0, per_s),))
    flag = disturbed_flag(slow)
    assert flag is not None
    assert flag.detail.startswith(
        "the host ran core 0 (node) slower than it has run in 7 of 15 seconds while the level "
        "kept it saturated (a reference loop beside the level, at 60% of its fastest at worst), "
        "18.7% of it lost, more than the 10% of a host's own slowdowns allows"
    )
    # one slow second of 15 (2.7% lost): part of the run-to-run spread, no flag
    once = with_speeds(account(use((0,), ("node",))), (CoreSpeed(0, 401.0, (1.0,) * 14 + (0.6,)),))
    assert disturbed_flag(once) is None


def test_a_slower_second_costs_the_level_only_where_its_roles_saturated_the_core() -> None:
    """The held-back test's loader (make test, 2026-11-27): its core idle while the server
    was stopped, and slower in those seconds, was flagged; a role with room left did all it
    was given. Only seconds at 90% of the core or more count (the loader-bound share)."""
    per_s = (0.58, 1.0, 1.0, 0.6, 0.58, 0.6, 1.0)
    busy = (0.1, 0.99, 0.98, 0.5, 0.95, 0.0)  # the last second has no share: counted whole
    assert slowed(per_s, busy) == pytest.approx(0.42 * 0.95)
    assert slowed(per_s[:6] + (0.6,), busy) == pytest.approx(0.42 * 0.95 + 0.4)
    loader = use((1,), ("loader",), roles_per_s=busy)
    got = with_speeds(account(loader), (CoreSpeed(1, 398.0, per_s),))
    assert got.sets[0].slowed_s == pytest.approx(0.399)
    assert slowed((0.5, 0.5), (2.0, 0.89)) == pytest.approx(0.5)  # a share is at most 1
    assert SATURATED_SHARE == 0.90


# --- the detector's error rates, by simulation ----------------------------------------------
FAST_US = 400.0


def simulated_level(rng: random.Random, seconds: int, slow: set[int], factor: float) -> list[Loop]:
    """Ten loops a second: each the core's time times a 3% jitter, one in 20 hit by an
    interrupt (1.5-3x), and in the `slow` seconds the host's slowdown `factor`."""
    loops = []
    for s in range(seconds):
        for i in range(10):
            us = FAST_US * rng.lognormvariate(0.0, 0.03)
            if rng.random() < 0.05:
                us *= rng.uniform(1.5, 3.0)
            if s in slow:
                us *= factor
            loops.append(Loop(s + i / 10 + 0.01, us))
    return loops


def flagged(rng: random.Random, fastest: Fastest, slow: set[int], factor: float = 1.6) -> bool:
    medians = second_medians(simulated_level(rng, 15, slow, factor), 0.0)
    best = fastest.update(0, medians)
    assert best is not None
    level = with_speeds(account(use((0,), ("node",))), (CoreSpeed(0, best, speeds(medians, best)),))
    return disturbed_flag(level) is not None


def test_a_quiet_host_is_almost_never_called_slow() -> None:
    """A/A: 2,000 levels of a host that never slows: at most 2% flagged (none expected: a
    quiet second's median lies within 4% of the fastest, inside the 10% tolerance)."""
    rng, fastest = random.Random(31), Fastest()
    rate = sum(flagged(rng, fastest, set()) for _ in range(2000)) / 2000
    assert rate <= 0.02, rate


def test_a_host_slowing_a_core_for_seconds_is_caught() -> None:
    """Power: slowed 1.6x for 5 of 15 seconds (12.5% lost), or for the whole level after a
    fast one: flagged at least 95% of the time; 2 slow seconds (5% lost): within the band."""
    rng, fastest = random.Random(32), Fastest()
    flagged(rng, fastest, set())  # the run's first level: the core seen at its speed
    for slow, expected in ((set(range(5, 10)), True), (set(range(15)), True), ({3, 4}, False)):
        rate = sum(flagged(rng, fastest, slow) for _ in range(500)) / 500
        assert (rate >= 0.95) if expected else (rate <= 0.02), (slow, rate)
    assert SLOWED_BAND == 0.10


def test_the_probe_times_the_loop_on_each_core_it_may_run_on() -> None:
    """On this machine's cores: about ten loops a second each, every second's speed a share
    of the fastest (what the host did meanwhile is not asserted: it is what is measured)."""
    probe = SpeedProbe([0, 1, 10_000], Fastest()).start()  # 10,000: no such core, no figure
    time.sleep(2.3)
    found = probe.stop()
    assert [s.core for s in found] == [0, 1]
    for speed in found:
        assert speed.fastest_us > 0 and len(speed.per_s) >= 2
        assert all(0.0 < v <= 1.0 for v in speed.per_s)
        assert max(speed.per_s) == 1.0  # the fastest second is one of its own
