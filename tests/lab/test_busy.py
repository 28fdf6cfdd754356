"""The busy-machine checks: hand-made samples, and a real busy loop pinned to a core."""

import os
import subprocess
import sys

import pytest

from stackbench.lab.busy import (
    FIND_BUSY,
    Sample,
    busy_checks,
    sample,
    steal_check,
    steal_while_busy,
)
from stackbench.lab.machine import Verdict


def test_a_busy_server_core_is_named_with_the_process_on_it():
    found = Sample({0: 0.97, 1: 0.02}, ((4242, "spin", 0.95, 0), (7, "sshd", 0.06, 1)))
    server, loader = busy_checks({"server": [0], "loader": [1]}, found)
    assert server.verdict is Verdict.WARN and "CPU 0 97%" in server.value
    assert "spin (pid 4242, 95% of a core)" in server.value and "sshd" not in server.value
    assert "kill 4242" in server.hint and "no core is spare" in server.hint
    assert server.commands == ()  # two cores, both in use: nowhere to move it
    assert loader.verdict is Verdict.OK


def test_a_busy_process_is_moved_to_the_spare_cores_when_there_are_some():
    found = Sample({0: 0.97, 1: 0.02}, ((4242, "spin", 0.95, 0),))
    server, _ = busy_checks({"server": [0], "loader": [1]}, found, spare=[3, 2])
    assert server.commands == ("taskset -apc 2,3 4242",)
    assert server.advice.endswith(": taskset -apc 2,3 4242")


def test_a_busy_core_without_a_named_process_says_how_to_find_it():
    server, _ = busy_checks({"server": [0], "loader": [1]}, Sample({0: 0.5}, ()))
    assert server.verdict is Verdict.WARN and server.commands == (FIND_BUSY,)


def test_steal_from_a_busy_core_above_two_percent_is_a_warning_naming_the_core():
    quiet = steal_check({0: 0.004, 1: 0.02})
    assert quiet.verdict is Verdict.OK
    assert quiet.value == "CPU 0 0.4%, CPU 1 2.0% of a busy core, each kept busy 2 s"
    warned = steal_check({0: 0.0, 1: 0.044}, seconds=3.0)
    assert warned.verdict is Verdict.WARN and "CPU 1 4.4%" in warned.value
    assert "each kept busy 3 s" in warned.value
    assert "flagged disturbed" in warned.hint and "measured again" in warned.hint
    assert steal_check({}).value.startswith("no core read")


# Reads /proc/stat while two loops spin: beside other tests (pytest -n) it would only share the
# cores, which steal does not count, but the loops would slow those tests.
@pytest.mark.serial
def test_steal_is_read_from_each_core_kept_busy_and_no_spinner_is_left():
    import psutil

    cores = sorted(os.sched_getaffinity(0))[:2]
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    stolen = steal_while_busy(cores, seconds=0.5)
    assert sorted(stolen) == cores
    assert all(0.0 <= share <= 1.0 for share in stolen.values())
    assert {p.pid for p in psutil.Process().children(recursive=True)} == before


# The two tests below measure a core's use: beside them (pytest -n), another test's work would
# share the spinning core, so they run alone (`serial`, scripts/test.sh).
@pytest.mark.serial
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two usable cores")
def test_a_real_busy_loop_shows_in_the_sample():
    core = max(os.sched_getaffinity(0))
    spin = subprocess.Popen(
        [sys.executable, "-c", "import time\nend = time.time() + 5\nwhile time.time() < end: pass"],
        preexec_fn=lambda: os.sched_setaffinity(0, {core}),
    )
    try:
        found = sample(1.0)
    finally:
        spin.kill()
        spin.wait()
    assert found.busy_by_cpu[core] > 0.5  # a spinning process holds its core
    assert any(pid == spin.pid for pid, _, share, _ in found.processes)


@pytest.mark.serial
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two usable cores")
def test_the_monitor_counts_what_else_used_the_levels_cores():
    """A busy loop that is none of the level's roles shows as OTHER_ROLE, on the cores of
    the role pinned there, and the judge flags the level disturbed, naming it."""
    from stackbench.config.placement import OTHER_ROLE
    from stackbench.engine.judge import disturbed_flag
    from stackbench.lab.monitor import Monitor

    core = max(os.sched_getaffinity(0))
    pinned = lambda: os.sched_setaffinity(0, {core})  # noqa: E731
    role = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(8)"], preexec_fn=pinned)
    spin = subprocess.Popen(
        [sys.executable, "-c", "import time\nend = time.time() + 5\nwhile time.time() < end: pass"],
        preexec_fn=pinned,
    )
    try:
        monitor = Monitor({"server": role.pid}, cpus=frozenset({core})).start()
        import time

        time.sleep(1.5)
        usage = monitor.stop()
    finally:
        for p in (spin, role):
            p.kill()
            p.wait()
    assert usage[OTHER_ROLE].cpu_percent > 30
    flag = disturbed_flag(monitor.account)
    assert flag is not None and flag.detail.startswith("other processes used ")
    assert f"of core {core} (server)" in flag.detail
    assert any(u.pid == spin.pid for u in monitor.account.top), monitor.account
