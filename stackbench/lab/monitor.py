"""Per-role resource sampling during a load level (psutil, in a background thread).

Roles are process trees: each stack process role (nginx, php-fpm, server ...), each backing
service, and the loader. CPU time is cumulative per pid, so each pid's first and last
observation give its share of the level; processes that appear mid-level are counted from
zero. RSS, threads and process counts are sampled every `interval_s`.
"""

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import psutil

from stackbench.config.measured import RoleUsage
from stackbench.config.placement import OTHER_ROLE
from stackbench.lab.procs import tree

LOADER_BOUND_SHARE = 0.90  # loader busier than 90% of its cores...
SERVER_IDLE_SHARE = 0.90  # ...while the server is below 90% of its cores


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


class Monitor:
    def __init__(
        self, roles: Mapping[str, int], interval_s: float = 0.25, cpus: frozenset[int] = frozenset()
    ) -> None:
        """`cpus`: the cores the level runs on; what else used them is the OTHER_ROLE."""
        self.cpus = cpus
        self._cpu_times: list[Any] = []
        self._own_start = 0.0
        self.roles = dict(roles)
        self.interval_s = interval_s
        self.state = {role: _RoleState() for role in roles}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="monitor", daemon=True)
        self.started = 0.0
        self.elapsed = 0.0
        self._baseline_done = False

    def add_role(self, role: str, pid: int) -> None:
        self.roles[role] = pid
        self.state.setdefault(role, _RoleState())

    def start(self) -> "Monitor":
        self.started = time.monotonic()
        self._cpu_times = psutil.cpu_times(percpu=True) if self.cpus else []
        self._own_start = _own_cpu_s()
        self.sample()
        self._baseline_done = True
        self._thread.start()
        return self

    def stop(self) -> dict[str, RoleUsage]:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sample()
        self.elapsed = time.monotonic() - self.started
        usage = self.usage()
        if self._cpu_times:
            usage[OTHER_ROLE] = self._other(psutil.cpu_times(percpu=True), usage)
        return usage

    def _other(self, after: list[Any], usage: Mapping[str, RoleUsage]) -> RoleUsage:
        """The measured cores' user + system time not spent by a monitored role (interrupts
        and softirqs, where loopback networking runs, are left out: they are the level's)."""
        cores = [c for c in self.cpus if c < min(len(after), len(self._cpu_times))]
        busy = sum(
            (after[c].user + after[c].nice + after[c].system)
            - (self._cpu_times[c].user + self._cpu_times[c].nice + self._cpu_times[c].system)
            for c in cores
        )
        # stackbench itself (this monitor, the live progress line) is not "other" either
        ours = sum(u.cpu_user_s + u.cpu_sys_s for u in usage.values()) + (
            _own_cpu_s() - self._own_start
        )
        other = max(0.0, busy - ours)
        elapsed = self.elapsed or 1e-9
        return RoleUsage(
            cpu_user_s=round(other, 4),
            cpu_sys_s=0.0,
            cpu_percent=round(100.0 * other / elapsed, 2),
            rss_max_bytes=0,
            rss_mean_bytes=0,
            threads_max=0,
            processes_max=0,
            ctx_voluntary=0,
            ctx_involuntary=0,
        )

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def sample(self) -> None:
        for role, root in list(self.roles.items()):
            state = self.state[role]
            rss = threads = procs = 0
            for p in tree(root):
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

    def usage(self) -> dict[str, RoleUsage]:
        elapsed = self.elapsed or (time.monotonic() - self.started) or 1e-9
        out = {}
        for role, st in self.state.items():
            user = sum(p.last_user - p.first_user for p in st.pids.values())
            sys = sum(p.last_sys - p.first_sys for p in st.pids.values())
            rss = st.rss_samples or [0]
            out[role] = RoleUsage(
                cpu_user_s=round(user, 4),
                cpu_sys_s=round(sys, 4),
                cpu_percent=round(100.0 * (user + sys) / elapsed, 2),
                rss_max_bytes=max(rss),
                rss_mean_bytes=int(sum(rss) / len(rss)),
                threads_max=st.threads_max,
                processes_max=st.processes_max,
                ctx_voluntary=sum(p.last_vol - p.first_vol for p in st.pids.values()),
                ctx_involuntary=sum(p.last_invol - p.first_invol for p in st.pids.values()),
            )
        return out


def _own_cpu_s() -> float:
    """This process's CPU seconds, all its threads (not its reaped children: the loader is a
    role of its own, counted there)."""
    t = psutil.Process().cpu_times()
    return float(t.user + t.system)


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
