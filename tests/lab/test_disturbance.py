"""Injected background loads of known size on the server's core are measured.

A bounded burner, pinned to the server's core, busy 2%, 5%, 13% and 30% of every 100 ms for a
few seconds, beside a server role (in its control group, spinning on that core as a
CPU-bound server does). Its real CPU time is the ground truth (on a busy machine it gets less
than its duty cycle): a forking one's rusage, its reaped children's included, once it is done;
a single process's own, read when the monitor stops, before it ends.

- A burner seen across snapshots is named with its share within 2 points of the truth.
- One that forks a new process for each burst (short commands, never seen by a sample) is
  counted in the remainder: the core's "other" share is never below the truth by more than 2
  points (it can be above: whatever else runs on a shared machine is counted too). Each
  burst is a fork, so no second of the level can pass its remainder off as the kernel's work
  in no task.
- The level is flagged disturbed wherever the share, measured two points low at worst, would
  still exceed the 2% noise band (5% and up).
Each case prints what it measured (figures, not timed assertions).
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stackbench.config.noise import THROUGHPUT_THRESHOLD
from stackbench.engine.judge import disturbed_flag
from stackbench.lab import cgroups
from stackbench.lab.coreaccount import TICKS_PER_S, parse_pid_stat, task_deltas
from stackbench.lab.monitor import Monitor
from stackbench.lab.procs import child_setup

pytestmark = pytest.mark.integration
BURNER = Path(__file__).resolve().parents[2] / "scripts" / "burner.py"
# A one-process burner's remainder runs 0.6-2.0 points negative (the server's and the
# burner's exact run times against /proc/stat's busy ticks, read a few tens of ms apart): at
# 4 s a 5% burner was measured 2.0 points low, at the tolerance (make test, 2026-11-27);
# the suites' levels last 10 s and more.
SECONDS = 6.0
TOLERANCE = 0.02  # two points of one core


def _server_core() -> int:
    return min(os.sched_getaffinity(0))


def _burn(cpu: int, duty: float, fork: bool, seconds: float) -> tuple[int, subprocess.Popen[bytes]]:
    command = [sys.executable, str(BURNER), "--cpu", str(cpu), "--on-ms", f"{duty * 100:g}"]
    command += ["--seconds", str(seconds)] + (["--fork"] if fork else [])
    proc = subprocess.Popen(command)
    return proc.pid, proc


def _spent_so_far(pid: int) -> float:
    """A live process's CPU seconds (its /proc/<pid>/stat, to the tick)."""
    task = parse_pid_stat(Path(f"/proc/{pid}/stat").read_text(), TICKS_PER_S)
    assert task is not None
    return task.cpu_s


def _truth(proc: subprocess.Popen[bytes]) -> float:
    """The burner's CPU seconds, its reaped children's included (wait4's rusage)."""
    _, status, rusage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0
    return rusage.ru_utime + rusage.ru_stime


@pytest.mark.parametrize("fork", [False, True], ids=["one-process", "short-commands"])
@pytest.mark.parametrize("duty", [0.02, 0.05, 0.13, 0.30])
def test_a_background_load_on_the_servers_core_is_measured(duty, fork):
    group = cgroups.new_group("server")
    if group is None:
        pytest.skip(f"no control group here: {cgroups.why_not()}")
    cpu = _server_core()
    spin = "import time\nend = time.time() + 30\nwhile time.time() < end: pass\n"
    server = subprocess.Popen(
        [sys.executable, "-c", spin], preexec_fn=child_setup(frozenset({cpu}), group=group)
    )
    try:
        monitor = Monitor({"server": server.pid}, cpus=frozenset({cpu})).start()
        if fork:
            burner_pid, burner = _burn(cpu, duty, fork, SECONDS)
            truth_s = _truth(burner)
            time.sleep(0.3)  # the monitor's last second sees the burner gone
            monitor.stop()
        else:
            # stopped while the burner still runs: a process gone between two snapshots
            # takes its last part-second with it (into the remainder), which would make its
            # named share up to a second's duty low, by where the snapshots fell (flaky)
            burner_pid, burner = _burn(cpu, duty, fork, SECONDS + 5)
            time.sleep(SECONDS)
            monitor.stop()
            truth_s = _spent_so_far(burner_pid)
            burner.kill()
            burner.wait()
    finally:
        server.kill()
        server.wait()
        group.close()
    account = monitor.account
    assert account is not None and account.method.startswith("cgroup")
    (core,) = account.sets
    elapsed = account.elapsed_s
    truth = truth_s / elapsed
    other = core.other_s / elapsed
    # the burner's own share as the account saw it (the record names only the top users)
    snaps = monitor.snapshots
    named = (
        sum(
            spent
            for before, after in zip(snaps, snaps[1:], strict=False)
            for pid, (task, spent) in task_deltas(before, after).items()
            if pid == burner_pid and task.cpu == cpu
        )
        / elapsed
    )
    print(
        f"\nburner {duty:.0%} duty ({'forking' if fork else 'one process'}) on CPU {cpu}: "
        f"truth {truth:.1%} of the core over {elapsed:.1f} s; measured other {other:.1%} "
        f"(named burner {named:.1%}, unseen {core.unseen_s / elapsed:.1%}, named others "
        f"{core.named_other_s / elapsed - named:.1%}); server {core.roles_s / elapsed:.1%}; "
        f"kernel work in no task {core.no_task_s / elapsed:.1%} (not counted), unexplained "
        f"forks {account.unexplained_forks}; stolen {core.steal_s / elapsed:.1%}"
    )
    assert other >= truth - TOLERANCE
    if not fork:
        assert abs(named - truth) <= TOLERANCE
    # The flag is owed only where the account, two points off at most, must exceed the band:
    # a 2.6% burner measured at 2.0% is within the tolerance and under the 2% band (make test,
    # 2026-11-26), so a 2% duty checks the measurement and not the flag.
    if truth - TOLERANCE > THROUGHPUT_THRESHOLD:
        flag = disturbed_flag(account)
        assert flag is not None and "of core" in flag.detail
