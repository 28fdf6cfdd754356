"""Per-role resource use during a load level, and the level's cores accounted completely.

Roles are a stack's process roles (nginx, php-fpm, server ...), its backing services, and the
loader. A role started in a control group of its own (lab/cgroups.py) is counted there: every
process it ever held, children that lived less than a sample included. A role in no group of
ours (no writable cgroup hierarchy, a service) is counted as before, by sampling its process
tree every `interval_s`: each pid's first and last observation give its share, and a pid born
mid-level counts from zero; the level's record says which roles were sampled, and why.

With `cpus` (the level's cores) the monitor also takes a snapshot of the machine each second
(lab/coreaccount.py) and accounts those cores completely at the end: the roles', stackbench's,
kernel threads', other processes' time, what no one was seen to use, and steal
(`Monitor.account`). The other processes' share is also given as the OTHER_ROLE usage. A
reference loop on each of those cores (lab/corespeed.py) says how fast the host ran them.
"""

import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import psutil

from stackbench.config.measured import CoreAccount, RoleUsage
from stackbench.config.placement import OTHER_ROLE
from stackbench.lab import cgroups, coreaccount, corespeed
from stackbench.lab.cgroups import CpuGroup
from stackbench.lab.coreaccount import Snapshot
from stackbench.lab.procs import tree

LOADER_BOUND_SHARE = corespeed.SATURATED_SHARE  # loader busier than 90% of its cores...
SERVER_IDLE_SHARE = corespeed.SATURATED_SHARE  # ...while the server is below 90% of its cores
SNAPSHOT_S = 1.0  # the cores are accounted second by second


@dataclass
class _PidState:
    first_user: float
    first_sys: float
    last_user: float
    last_sys: float
    first_vol: int
    first_invol: int
    last_vol: int
    last_invol: int


@dataclass
class _RoleState:
    pids: dict[int, _PidState] = field(default_factory=dict)
    rss_samples: list[int] = field(default_factory=list)
    threads_max: int = 0
    processes_max: int = 0
    group: CpuGroup | None = None
    group_base: tuple[float, float, float] = (0.0, 0.0, 0.0)  # user, system, total at start
    cpus: frozenset[int] | None = None  # the cores it is pinned to (None: unknown)


class Monitor:
    def __init__(
        self, roles: Mapping[str, int], interval_s: float = 0.25, cpus: frozenset[int] = frozenset()
    ) -> None:
        """`cpus`: the cores the level runs on, accounted completely (`account`); what else
        used them is the OTHER_ROLE."""
        self.cpus = cpus
        self.roles = dict(roles)
        self.interval_s = interval_s
        self.state = {role: _RoleState() for role in roles}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="monitor", daemon=True)
        self._lock = threading.Lock()
        self.started = 0.0
        self.elapsed = 0.0
        self._baseline_done = False
        self._snapshots: list[Snapshot] = []
        self.account: CoreAccount | None = None
        # how fast the level's cores ran (lab/corespeed.py): only where they are accounted
        self._speed = corespeed.SpeedProbe(cpus) if cpus else None

    def add_role(self, role: str, pid: int) -> None:
        with self._lock:
            self.roles[role] = pid
            state = self.state.setdefault(role, _RoleState())
            self._attach(state, pid, from_zero=self._baseline_done)

    def _attach(self, state: _RoleState, pid: int, from_zero: bool) -> None:
        """Find the role's control group and cores. A role added once the level runs is
        new (the loader): its group counts from zero, like a pid born mid-level."""
        state.group = cgroups.group_of(pid)
        if state.group is not None and not from_zero:
            spent = state.group.cpu()
            if spent is not None:
                state.group_base = (spent.user_s, spent.system_s, spent.total_s)
        try:
            state.cpus = frozenset(os.sched_getaffinity(pid))
        except OSError:
            state.cpus = None

    def start(self) -> "Monitor":
        self.started = time.monotonic()
        for role, pid in self.roles.items():
            self._attach(self.state[role], pid, from_zero=False)
        self.sample()
        self._baseline_done = True
        self._snapshot()
        self._thread.start()
        if self._speed is not None:
            self._speed.start()
        return self

    def stop(self) -> dict[str, RoleUsage]:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sample()
        self._snapshot()
        self.elapsed = time.monotonic() - self.started
        # after the last snapshot: the probe's threads are stackbench's own to its end
        found = self._speed.stop() if self._speed is not None else ()
        usage = self.usage()
        if self.cpus and len(self._snapshots) > 1:
            self.account = corespeed.with_speeds(self._account(), found)
            usage[OTHER_ROLE] = other_usage(self.account, self.elapsed)
        return usage

    @property
    def snapshots(self) -> tuple[Snapshot, ...]:
        """The machine as each second's snapshot saw it (what `account` was computed from)."""
        return tuple(self._snapshots)

    def _account(self) -> CoreAccount:
        role_cpus = {role: st.cpus for role, st in self.state.items()}
        sets = coreaccount.core_sets(self.cpus, role_cpus)
        sampled = sorted(role for role, st in self.state.items() if st.group is None)
        hierarchy = cgroups.hierarchy()
        why = cgroups.why_not() or "not started in a control group"
        return coreaccount.account(
            self._snapshots,
            sets,
            coreaccount.irq_time_apart(),
            method=hierarchy.label if hierarchy and len(sampled) < len(self.state) else "sampling",
            sampled=f"{', '.join(sampled)}: sampled process trees ({why})" if sampled else "",
        )

    def _loop(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(self.interval_s):
            self.sample()
            if time.monotonic() - last >= SNAPSHOT_S - self.interval_s / 2:
                last = time.monotonic()
                self._snapshot()

    def _snapshot(self) -> None:
        if not self.cpus:
            return
        with self._lock:
            spent = {role: self._cpu(st)[2] for role, st in self.state.items()}
            ours: set[int] = set()
            for role, st in self.state.items():
                ours.update(st.group.pids() if st.group is not None else st.pids)
                ours.add(self.roles[role])
        self._snapshots.append(coreaccount.snapshot(spent, ours))

    def sample(self) -> None:
        with self._lock:
            for role, root in list(self.roles.items()):
                self._sample_role(self.state[role], root)

    def _sample_role(self, state: _RoleState, root: int) -> None:
        rss = threads = procs = 0
        members = _processes(state.group.pids()) if state.group is not None else tree(root)
        for p in members:
            try:
                with p.oneshot():
                    cpu = p.cpu_times()
                    ctx = p.num_ctx_switches()
                    rss += p.memory_info().rss
                    threads += p.num_threads()
            except psutil.Error:
                continue
            procs += 1
            self._record(state, p.pid, cpu, ctx)
        if procs:
            state.rss_samples.append(rss)
            state.threads_max = max(state.threads_max, threads)
            state.processes_max = max(state.processes_max, procs)

    def _record(self, state: _RoleState, pid: int, cpu: Any, ctx: Any) -> None:
        known = state.pids.get(pid)
        if known is None:
            # A pid present at the first sample is measured from that sample on; one born
            # during the level (a php-fpm/Apache respawn, the loader) from zero.
            base = 1.0 if not self._baseline_done else 0.0
            state.pids[pid] = _PidState(
                cpu.user * base,
                cpu.system * base,
                cpu.user,
                cpu.system,
                int(ctx.voluntary * base),
                int(ctx.involuntary * base),
                ctx.voluntary,
                ctx.involuntary,
            )
            return
        known.last_user, known.last_sys = cpu.user, cpu.system
        known.last_vol, known.last_invol = ctx.voluntary, ctx.involuntary

    def _cpu(self, st: _RoleState) -> tuple[float, float, float]:
        """The role's user, system and total CPU seconds so far in this level."""
        if st.group is not None:
            spent = st.group.cpu()
            if spent is not None:
                user0, sys0, total0 = st.group_base
                return spent.user_s - user0, spent.system_s - sys0, spent.total_s - total0
        user = sum(p.last_user - p.first_user for p in st.pids.values())
        sys = sum(p.last_sys - p.first_sys for p in st.pids.values())
        return user, sys, user + sys

    def usage(self) -> dict[str, RoleUsage]:
        elapsed = self.elapsed or (time.monotonic() - self.started) or 1e-9
        out = {}
        for role, st in self.state.items():
            user, sys, total = self._cpu(st)
            rss = st.rss_samples or [0]
            out[role] = RoleUsage(
                cpu_user_s=round(user, 4),
                cpu_sys_s=round(sys, 4),
                cpu_percent=round(100.0 * total / elapsed, 2),
                rss_max_bytes=max(rss),
                rss_mean_bytes=int(sum(rss) / len(rss)),
                threads_max=st.threads_max,
                processes_max=st.processes_max,
                ctx_voluntary=sum(p.last_vol - p.first_vol for p in st.pids.values()),
                ctx_involuntary=sum(p.last_invol - p.first_invol for p in st.pids.values()),
            )
        return out


def _processes(pids: list[int]) -> list[psutil.Process]:
    out = []
    for pid in pids:
        try:
            out.append(psutil.Process(pid))
        except psutil.Error:
            continue
    return out


def other_usage(account: CoreAccount, elapsed: float) -> RoleUsage:
    """The other processes' time on the level's cores, as a usage pseudo-role (the reports
    show it beside the stack's roles)."""
    other = sum(s.other_s for s in account.sets)
    return RoleUsage(
        cpu_user_s=round(other, 4),
        cpu_sys_s=0.0,
        cpu_percent=round(100.0 * other / (elapsed or 1e-9), 2),
        rss_max_bytes=0,
        rss_mean_bytes=0,
        threads_max=0,
        processes_max=0,
        ctx_voluntary=0,
        ctx_involuntary=0,
    )


def process_counts(roles: Mapping[str, int]) -> str:
    """'nginx 2 processes, php-fpm 5 processes (5 threads)': what each role runs right now,
    for the line a run prints when a stack has started (its workers, children, threads)."""
    parts = []
    for role, root in roles.items():
        procs = threads = 0
        for proc in tree(root):
            try:
                threads += proc.num_threads()
            except psutil.Error:
                continue
            procs += 1
        parts.append(
            f"{role} {procs} process{'es' if procs != 1 else ''} "
            f"({threads} thread{'s' if threads != 1 else ''})"
        )
    return ", ".join(parts)


def loader_bound(
    usage: Mapping[str, RoleUsage],
    loader_cores: int,
    server_roles: list[str],
    server_cores: int,
    loader_role: str = "loader",
) -> bool:
    """The loader (`loader_role`: one loader host's, `loader@HOST`, in a spread level), not
    the server, was the saturated side of this level."""
    loader = usage.get(loader_role)
    if loader is None or loader_cores <= 0:
        return False
    loader_share = loader.cpu_percent / (100.0 * loader_cores)
    server_pct = sum(usage[r].cpu_percent for r in server_roles if r in usage)
    server_share = server_pct / (100.0 * max(server_cores, 1))
    return loader_share >= LOADER_BOUND_SHARE and server_share < SERVER_IDLE_SHARE
