"""A control group per role: every process counted, children included; nothing left behind.

The parsers are tested on hand-written files; the groups themselves on this machine's
hierarchies (cgroup v2 and v1 cpuacct where mounted and writable, skipped elsewhere)."""

import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from stackbench.lab import cgroups, procs
from stackbench.lab.cgroups import CpuTime, Groups, Hierarchy
from stackbench.lab.procs import child_setup

MOUNTS = """sysfs /sys sysfs rw 0 0
cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
"""


def test_hierarchies_v2_first_then_v1_cpuacct():
    assert cgroups.hierarchies(MOUNTS) == [
        Hierarchy(Path("/sys/fs/cgroup/unified"), 2),
        Hierarchy(Path("/sys/fs/cgroup/cpuacct"), 1),
    ]
    assert cgroups.hierarchies("cgroup /c cgroup rw,cpu,cpuacct 0 0\n") == [
        Hierarchy(Path("/c"), 1)
    ]
    assert cgroups.hierarchies("tmpfs /tmp tmpfs rw 0 0\n") == []


def test_cpu_stat_v2_in_microseconds():
    text = "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 0\n"
    assert cgroups.parse_cpu_stat(text) == CpuTime(user_s=2.0, system_s=0.5, total_s=2.5)


def test_cpuacct_v1_exact_total_split_by_ticks():
    spent = cgroups.parse_cpuacct("3000000000\n", "user 300\nsystem 100\n")
    assert spent == CpuTime(user_s=2.25, system_s=0.75, total_s=3.0)
    assert cgroups.parse_cpuacct("0\n", "user 0\nsystem 0\n").total_s == 0.0


def _gone(pid: int) -> bool:
    """Killed (a zombie until init reaps it, or reaped)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def test_groups_say_why_not_when_no_group_can_be_made(tmp_path):
    groups = Groups(tag="test-none")
    groups.resolve([Hierarchy(tmp_path / "not-mounted", 2)])
    assert groups.new_group("server") is None
    assert "cannot make a control group" in groups.why_not


SPIN_AND_FORK = (
    "import os, time\n"
    "def spin(s):\n"
    "    end = time.process_time() + s\n"
    "    while time.process_time() < end: pass\n"
    "for _ in range(5):\n"  # five children, each gone long before any sample could see it
    "    pid = os.fork()\n"
    "    if pid == 0:\n"
    "        spin(0.06)\n"
    "        os._exit(0)\n"
    "    os.waitpid(pid, 0)\n"
    "if os.fork() == 0:\n"  # and one that outlives its parent: close() must kill it
    "    time.sleep(60)\n"
    "    os._exit(0)\n"
    "print('done', flush=True)\n"
)


def _writable(h: Hierarchy) -> bool:
    return Path(h.root).is_dir() and (Path(h.root) / "cgroup.procs").exists()


@pytest.mark.parametrize("version", [2, 1])
def test_a_group_counts_short_lived_children_and_is_removed(version):
    found = [h for h in cgroups.hierarchies(cgroups.MOUNTS.read_text()) if h.version == version]
    if not found or not _writable(found[0]):
        pytest.skip(f"no cgroup v{version} hierarchy with CPU accounting here")
    groups = Groups(tag=f"test-v{version}")
    groups.resolve(found[:1])
    if groups.parent is None:
        pytest.skip(f"cgroup v{version} not writable here: {groups.why_not}")
    try:
        group = groups.new_group("php fpm/x")
        assert group is not None and group.path.name == "php_fpm_x.1"
        child = subprocess.Popen(
            [sys.executable, "-c", SPIN_AND_FORK],
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=child_setup(None, group=group),
        )
        assert child.stdout is not None
        assert child.stdout.readline() == "done\n"
        assert groups.group_of(child.pid) == group
        child.wait(timeout=10)
        survivor = group.pids()
        assert len(survivor) == 1  # the grandchild that outlived its parent
        spent = group.cpu()
        assert spent is not None
        # 5 x 60 ms in children no sample saw, less a clock tick each for the split
        assert spent.total_s >= 0.28
        group.close()
        assert not group.path.exists()
        assert _gone(survivor[0])
        assert groups.group_of(child.pid) is None  # gone: in no group of ours
    finally:
        groups.remove()
    assert groups.parent is not None and not groups.parent.exists()


def test_stale_groups_of_a_dead_stackbench_are_removed(tmp_path):
    top = tmp_path / "stackbench"
    dead = top / "999999999"  # no such pid
    (dead / "server.1").mkdir(parents=True)
    alive = top / "1"
    (alive / "server.1").mkdir(parents=True)
    cgroups.remove_stale(top)
    assert not dead.exists()
    assert (alive / "server.1").exists()


def test_stopping_a_spawned_process_removes_its_group(tmp_path):
    """procs.stop removes the group of what it stops (a service's, a stack role's), with a
    child that left the process group still in it."""
    group = cgroups.new_group("service")
    if group is None:
        pytest.skip(f"no control group here: {cgroups.why_not()}")
    # a grandchild in a session of its own, its parent gone: re-parented, out of the tree
    script = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(60)\n"
        "    os._exit(0)\n"
        "time.sleep(60)\n"
    )
    proc = procs.spawn(
        [sys.executable, "-c", script], tmp_path, None, tmp_path / "log", group=group
    )

    def escaped() -> list[int]:
        """The grandchild once re-parented: its parent leaves the group on exit a moment
        before the kernel hands its children to init, so the group alone is not enough."""
        others = [pid for pid in group.pids() if pid != proc.pid]
        in_tree = {p.pid for p in procs.tree(proc.pid)}
        return others if len(others) == 1 and others[0] not in in_tree else []

    deadline = time.monotonic() + 5
    while not escaped() and time.monotonic() < deadline:
        time.sleep(0.05)
    grandchild = escaped()
    assert len(grandchild) == 1
    procs.stop(proc, grace_s=0.5)
    assert not group.path.exists()
    assert _gone(grandchild[0])
