"""The monitor's process counts: what a role runs, counted in its process tree."""

import os
import subprocess
import sys
import time

import pytest

from stackbench.config.placement import OTHER_ROLE
from stackbench.lab import cgroups
from stackbench.lab.monitor import Monitor, process_counts
from stackbench.lab.procs import child_setup


def test_process_counts_say_what_each_role_runs_now():
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import threading, time\n"
            "for _ in range(3): threading.Thread(target=time.sleep, "
            "args=(30,), daemon=True).start()\n"
            "time.sleep(30)",
        ]
    )
    try:
        deadline = time.monotonic() + 10
        while "4 threads" not in process_counts({"py": child.pid}):
            assert time.monotonic() < deadline, process_counts({"py": child.pid})
            time.sleep(0.05)
        assert process_counts({"py": child.pid}) == "py 1 process (4 threads)"
    finally:
        child.kill()
        child.wait()
    assert process_counts({"gone": child.pid}) == "gone 0 processes (0 threads)"


def test_cpu_time_a_role_spent_is_measured():
    """By construction, not by timing luck: told to go, the child spins until its own CPU
    clock has advanced 0.3 s, then says so and waits; the monitor, started before the go,
    must count at least that (less a clock tick at each end)."""

    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "input()\n"
            "start = time.process_time()\n"
            "while time.process_time() - start < 0.3: pass\n"
            "print('spent', flush=True)\n"
            "time.sleep(30)",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdin is not None and child.stdout is not None
        monitor = Monitor({"spin": child.pid}).start()
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "spent\n"
        usage = monitor.stop()["spin"]
    finally:
        child.kill()
        child.wait()
    assert usage.cpu_user_s + usage.cpu_sys_s >= 0.25
    assert usage.cpu_percent > 0 and usage.rss_max_bytes > 0


def test_a_role_in_its_group_is_counted_whole_and_its_cores_accounted():
    """Children born and gone between two samples are the role's, counted by its group; the
    account of the role's core names how it was counted."""
    group = cgroups.new_group("forker")
    if group is None:
        pytest.skip(f"no control group here: {cgroups.why_not()}")
    script = (
        "import os, time\n"
        "input()\n"
        "for _ in range(4):\n"
        "    if os.fork() == 0:\n"
        "        end = time.process_time() + 0.08\n"
        "        while time.process_time() < end: pass\n"
        "        os._exit(0)\n"
        "    os.wait()\n"
        "print('spent', flush=True)\n"
        "time.sleep(30)\n"
    )
    cpu = min(os.sched_getaffinity(0))
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=child_setup(frozenset({cpu}), group=group),
    )
    try:
        assert child.stdin is not None and child.stdout is not None
        monitor = Monitor({"forker": child.pid}, interval_s=1.0, cpus=frozenset({cpu})).start()
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "spent\n"
        usage = monitor.stop()
    finally:
        child.kill()
        child.wait()
        group.close()
    assert usage["forker"].cpu_user_s + usage["forker"].cpu_sys_s >= 0.3
    account = monitor.account
    assert account is not None and account.method.startswith("cgroup")
    assert account.sampled == ""
    (core,) = account.sets
    assert core.cores == (cpu,) and core.roles == ("forker",)
    spent = usage["forker"].cpu_user_s + usage["forker"].cpu_sys_s
    assert core.roles_s == pytest.approx(spent, abs=0.01)  # read a moment apart
    assert OTHER_ROLE in usage


def test_without_control_groups_roles_are_sampled_and_the_account_says_so(monkeypatch):
    """Where no group can be made, the roles are counted by sampling their process trees,
    as before, and the level's record says which and why."""
    monkeypatch.setattr(cgroups, "group_of", lambda pid: None)
    monkeypatch.setattr(cgroups, "why_not", lambda: "cannot make a control group (test)")
    cpu = min(os.sched_getaffinity(0))
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"],
        preexec_fn=child_setup(frozenset({cpu})),
    )
    try:
        monitor = Monitor({"server": child.pid}, interval_s=0.5, cpus=frozenset({cpu})).start()
        time.sleep(1.2)
        monitor.stop()
    finally:
        child.kill()
        child.wait()
    account = monitor.account
    assert account is not None and account.method == "sampling"
    assert account.sampled == ("server: sampled process trees (cannot make a control group (test))")


def test_the_account_says_how_fast_the_levels_cores_ran():
    """A reference loop beside the level on its core (lab/corespeed.py): each second's
    speed is in the account, relative to the core's prevailing time (the median of the
    saturated seconds this process has seen there, this level's included), which it names;
    the loop's thread is stackbench's own, not another process's."""
    cpu = min(os.sched_getaffinity(0))
    spin = "import time\nend = time.time() + 30\nwhile time.time() < end: pass\n"
    server = subprocess.Popen(
        [sys.executable, "-c", spin], preexec_fn=child_setup(frozenset({cpu}))
    )
    try:
        monitor = Monitor({"server": server.pid}, cpus=frozenset({cpu})).start()
        time.sleep(3.2)
        monitor.stop()
    finally:
        server.kill()
        server.wait()
    account = monitor.account
    assert account is not None
    assert account.speed_reference.startswith(f"prevailing: core {cpu} "), account
    (core,) = account.sets
    assert len(core.speed_per_s) >= 2 and all(v > 0 for v in core.speed_per_s)
    assert core.slowed_s >= 0 and core.stackbench_s > 0
