"""A control group per role, so that no process a role starts escapes its CPU time.

Sampling a role's process tree misses what lives shorter than a sample (Apache's dynamic
prefork children, a php-fpm respawn) and what leaves the tree (a daemon that re-parents to
init). A control group counts every task placed in it and its children, from fork to exit,
and keeps the count after they are gone: systemd-run and BenchExec measure the same way.

Layout: `<hierarchy>/stackbench/<our pid>/<role>.<n>`, made by stackbench (which must be
allowed to write there: root, or a delegated subtree), each process placed in its role's
group between fork and exec (procs.child_setup), its children following it. Where no
hierarchy is writable, `unavailable()` says why, and the monitor samples process trees as
before and records that it did.

Both layouts are read: cgroup v2's `cpu.stat` (usage_usec, present in every group even with
the cpu controller elsewhere) and cgroup v1's cpuacct (`cpuacct.usage` in ns). v2 is used
when mounted and writable, as on a hybrid host (cgroup2 at /sys/fs/cgroup/unified) too.
"""

import atexit
import contextlib
import itertools
import os
import re
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

MOUNTS = Path("/proc/self/mounts")
PARENT = "stackbench"
# A group is emptied by SIGKILL; its processes are gone within this (then it is removed).
EMPTY_WAIT_S = 5.0
_ROLE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class CpuTime:
    """A group's CPU time since it was made, every process it ever held."""

    user_s: float
    system_s: float
    total_s: float  # the scheduler's run time (exact); user and system split it by ticks


@dataclass(frozen=True)
class Hierarchy:
    """Where groups are made: the mount point and its version (2: cpu.stat, 1: cpuacct)."""

    root: Path
    version: int

    @property
    def label(self) -> str:
        return "cgroup v2 (cpu.stat)" if self.version == 2 else "cgroup v1 (cpuacct)"


@dataclass(frozen=True)
class CpuGroup:
    """One role's group."""

    path: Path
    version: int

    @property
    def procs_file(self) -> Path:
        return self.path / "cgroup.procs"

    def pids(self) -> list[int]:
        """The processes in it now (none once it is removed)."""
        try:
            text = self.procs_file.read_text()
        except OSError:
            return []
        return [int(line) for line in text.split()]

    def cpu(self) -> CpuTime | None:
        """Its CPU time so far; None when it cannot be read (removed)."""
        try:
            if self.version == 2:
                return parse_cpu_stat((self.path / "cpu.stat").read_text())
            return parse_cpuacct(
                (self.path / "cpuacct.usage").read_text(),
                (self.path / "cpuacct.stat").read_text(),
            )
        except (OSError, ValueError):
            return None

    def close(self) -> None:
        """Kill whatever is still in it (a child that outlived its parent's stop), wait for
        it to be empty, remove it. Idempotent."""
        if not self.path.is_dir():
            return
        deadline = time.monotonic() + EMPTY_WAIT_S
        while self.pids() and time.monotonic() < deadline:
            self._kill_all()
            time.sleep(0.02)
        with contextlib.suppress(OSError):
            self.path.rmdir()

    def _kill_all(self) -> None:
        if self.version == 2 and (self.path / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                (self.path / "cgroup.kill").write_text("1")
            return
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def parse_cpu_stat(text: str) -> CpuTime:
    """cgroup v2 `cpu.stat`: usage_usec, user_usec, system_usec (microseconds)."""
    fields = dict(line.split() for line in text.splitlines() if len(line.split()) == 2)
    return CpuTime(
        user_s=int(fields["user_usec"]) / 1e6,
        system_s=int(fields["system_usec"]) / 1e6,
        total_s=int(fields["usage_usec"]) / 1e6,
    )


def parse_cpuacct(usage: str, stat: str) -> CpuTime:
    """cgroup v1: `cpuacct.usage` (ns, exact) split by `cpuacct.stat`'s user and system
    ticks in proportion (the ticks alone are as coarse as the clock tick)."""
    total = int(usage.strip()) / 1e9
    ticks = dict(line.split() for line in stat.splitlines() if len(line.split()) == 2)
    user, system = int(ticks.get("user", 0)), int(ticks.get("system", 0))
    share = user / (user + system) if user + system else 1.0
    return CpuTime(user_s=total * share, system_s=total * (1 - share), total_s=total)


def hierarchies(mounts_text: str) -> list[Hierarchy]:
    """The mounted hierarchies that can count CPU, v2 first."""
    v2, v1 = [], []
    for line in mounts_text.splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        _, where, fstype, options = parts[:4]
        if fstype == "cgroup2":
            v2.append(Hierarchy(Path(where), 2))
        elif fstype == "cgroup" and "cpuacct" in options.split(","):
            v1.append(Hierarchy(Path(where), 1))
    return v2 + v1


class Groups:
    """This process's parent group, made on first use; removed when stackbench exits.
    The module's functions use one instance; a test may make its own on a chosen hierarchy."""

    def __init__(self, tag: str = "") -> None:
        # Our parent group's name: our pid (a dead pid's groups are stale), and a test's tag.
        self.name = f"{os.getpid()}.{tag}" if tag else str(os.getpid())
        self._lock = threading.Lock()
        self._resolved = False
        self.hierarchy: Hierarchy | None = None
        self.parent: Path | None = None
        self.why_not = ""
        self._counter = itertools.count(1)

    def resolve(self, candidates: list[Hierarchy] | None = None) -> None:
        with self._lock:
            if self._resolved:
                return
            self._resolved = True
            if candidates is None:
                try:
                    candidates = hierarchies(MOUNTS.read_text())
                except OSError as exc:
                    self.why_not = f"cannot read {MOUNTS}: {exc.strerror}"
                    return
            if not candidates:
                self.why_not = "no cgroup v2 or cgroup v1 cpuacct hierarchy is mounted"
                return
            problems = []
            for h in candidates:
                top = h.root / PARENT
                try:
                    top.mkdir(exist_ok=True)
                    remove_stale(top)
                    mine = top / self.name
                    mine.mkdir(exist_ok=True)
                except OSError as exc:
                    problems.append(f"{top}: {exc.strerror}")
                    continue
                self.hierarchy, self.parent = h, mine
                atexit.register(self.remove)
                return
            self.why_not = "cannot make a control group (" + "; ".join(problems) + ")"

    def new_group(self, role: str) -> CpuGroup | None:
        self.resolve()
        if self.parent is None or self.hierarchy is None:
            return None
        name = f"{_ROLE_NAME.sub('_', role) or 'role'}.{next(self._counter)}"
        path = self.parent / name
        try:
            path.mkdir()
        except OSError as exc:
            self.why_not = f"cannot make {path}: {exc.strerror}"
            return None
        return CpuGroup(path, self.hierarchy.version)

    def group_of(self, pid: int) -> CpuGroup | None:
        """The group of ours that `pid` is in; None when it is in none of them."""
        if self.parent is None or self.hierarchy is None:
            return None
        relative = _group_path(pid, self.hierarchy.version)
        if relative is None:
            return None
        path = self.hierarchy.root / relative.lstrip("/")
        if path.parent != self.parent:
            return None
        return CpuGroup(path, self.hierarchy.version)

    def remove(self) -> None:
        """Every group of this process, emptied, then its parent (at exit; tests)."""
        parent = self.parent
        if parent is None or self.hierarchy is None:
            return
        for child in _children(parent):
            CpuGroup(child, self.hierarchy.version).close()
        with contextlib.suppress(OSError):
            parent.rmdir()


def _children(path: Path) -> list[Path]:
    try:
        return [p for p in path.iterdir() if p.is_dir()]
    except OSError:
        return []


def remove_stale(top: Path) -> None:
    """The groups left by a stackbench that died (SIGKILL): empty ones are removed, so no
    run's groups outlive it by more than the next start."""
    for parent in _children(top):
        pid = parent.name.split(".", 1)[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        for child in _children(parent):
            with contextlib.suppress(OSError):
                child.rmdir()
        with contextlib.suppress(OSError):
            parent.rmdir()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _group_path(pid: int, version: int) -> str | None:
    """`pid`'s group in the v2 hierarchy ("0::/x") or the v1 cpuacct one ("4:cpu,cpuacct:/x")."""
    try:
        text = Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        number, controllers, path = line.split(":", 2)
        if version == 2 and number == "0" and controllers == "":
            return path
        if version == 1 and "cpuacct" in controllers.split(","):
            return path
    return None


_REGISTRY = Groups()


def new_group(role: str) -> CpuGroup | None:
    """A new group for one start of `role` (None: no group can be made here, see why_not)."""
    return _REGISTRY.new_group(role)


def group_of(pid: int) -> CpuGroup | None:
    return _REGISTRY.group_of(pid)


def why_not() -> str:
    """Why roles are not in groups here ("" when they are)."""
    _REGISTRY.resolve()
    return _REGISTRY.why_not if _REGISTRY.parent is None else ""


def hierarchy() -> Hierarchy | None:
    _REGISTRY.resolve()
    return _REGISTRY.hierarchy


def join(group: CpuGroup) -> None:
    """Move the calling process into `group` (between fork and exec: its children follow).
    A failure leaves it where it was: the monitor then finds it in no group of ours and
    samples it instead, and says so."""
    with contextlib.suppress(OSError):
        group.procs_file.write_text(str(os.getpid()))
