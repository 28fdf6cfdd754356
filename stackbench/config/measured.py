"""What a level measured beside the driver's totals, typed once for everything that handles it:
the CPU and memory of each role (lab/monitor.py measures it, the agent sends it, the store keeps
it, analysis and reports read it), an open-loop level's schedule, and the per-second series
(the native loader prints both, drivers/merge.py sums them over loader hosts, the store keeps
them, the judge, the steady-window analysis and the charts read them).

Here, below both the machine side and the store, so that neither imports the other.
"""

import msgspec


class RoleUsage(msgspec.Struct, frozen=True, kw_only=True):
    """One role's processes (a stack process role, a data service, the loader, or the
    'other processes' on the level's cores) over one level."""

    cpu_user_s: float
    cpu_sys_s: float
    cpu_percent: float  # 100 = one core busy for the whole level
    rss_max_bytes: int  # 0: no process sampled (the 'other processes' pseudo-role)
    rss_mean_bytes: int
    threads_max: int
    processes_max: int
    ctx_voluntary: int
    ctx_involuntary: int


class OpenLoopWaits(msgspec.Struct, frozen=True, kw_only=True):
    """How long requests waited for a free connection past their intended send time (µs)."""

    p50: int
    p99: int
    max: int


class OpenLoop(msgspec.Struct, frozen=True, kw_only=True):
    """An open-loop level's schedule as the native loader kept it (its document's
    `open_loop`; drivers/merge.py sums it over loader hosts; the store keeps it; the judge
    reads `sustained`). wrk and ab keep no schedule: their levels have none (None)."""

    target_rate: float
    achieved_rate: float
    sustained: bool  # False when more than 1% of the scheduled requests found no connection
    waited: int  # requests that found no free connection at their intended send time
    wait_us: OpenLoopWaits
    scheduled: int  # requests intended in the recorded phase
    unsent: int  # scheduled requests never sent for lack of a free connection


class CpuUser(msgspec.Struct, frozen=True, kw_only=True):
    """A process or kernel thread, not the level's, that used the level's cores."""

    pid: int
    name: str
    kernel_thread: bool
    cpu_s: float


class CoreSetUse(msgspec.Struct, frozen=True, kw_only=True):
    """One set of a level's cores (those its server roles are pinned to, its loader's ...)
    accounted completely over the level, in CPU seconds (lab/coreaccount.py):
    busy = roles + stackbench + kernel threads + named other processes + unseen + the
    kernel's work in no task (+ the interrupts, where the kernel counts them apart from the
    tasks)."""

    cores: tuple[int, ...]
    roles: tuple[str, ...]  # the roles pinned there (none: cores no role uses)
    busy_s: float  # user + nice + system + irq + softirq
    interrupts_s: float  # irq + softirq, part of busy_s
    roles_s: float  # the roles' own time
    stackbench_s: float  # stackbench's own (the monitor)
    kernel_threads_s: float
    named_other_s: float  # other processes seen across a snapshot
    unseen_s: float  # busy time no process was seen to use (signed: tick sampling)
    # other processes, the named and the unseen: busy less the roles, stackbench, kernel
    # threads (and the interrupts counted apart), never below zero
    other_s: float
    steal_s: float  # taken by the hypervisor
    # per second (the intervals between the monitor's snapshots), shares of one core:
    roles_per_s: tuple[float, ...]
    other_per_s: tuple[float, ...]  # signed: a second's remainder is noisy both ways
    steal_per_s: tuple[float, ...]
    # the remainder of the intervals that forked nothing unseen: the kernel's work in no
    # task (interrupts and idle exits on the idle core, the level's own), not in unseen_s
    # nor other_s (records stored before it was counted: 0)
    no_task_s: float = 0.0
    # short-lived processes' time their parents reaped (cutime + cstime), placed here by the
    # clock's awake time no task explains: part of unseen_s, which is at least this (0:
    # stored before it was counted)
    reaped_s: float = 0.0
    # How fast the cores ran (lab/corespeed.py): core-seconds off the speed the host kept them
    # at in the run (slower or faster; a CPU-bound server lost or gained as much; stored
    # before 2026-11-28: slower than the fastest only), and each second's speed relative to
    # that prevailing speed (the set's cores averaged; 1 = at it; before: relative to the
    # fastest, at most 1). Stored before it was measured, or not measured: 0 and ().
    slowed_s: float = 0.0
    speed_per_s: tuple[float, ...] = ()

    def capacity_s(self, elapsed_s: float) -> float:
        return len(self.cores) * elapsed_s

    def taken_share(self, elapsed_s: float) -> float:
        """What other processes and the hypervisor's steal took of the set's cores over
        `elapsed_s`: the share a level is flagged disturbed on (engine/judge.py)."""
        return (self.other_s + self.steal_s) / self.capacity_s(elapsed_s)


class CoreAccount(msgspec.Struct, frozen=True, kw_only=True):
    """A level's cores accounted completely: what besides the level used them."""

    method: str  # how the roles' own time was counted: "cgroup v2 (cpu.stat)", ...
    sampled: str  # the roles counted by sampling their process trees instead, and why
    irq_time_apart: bool  # the kernel counts irq time apart from the tasks' own
    elapsed_s: float
    sets: tuple[CoreSetUse, ...]
    top: tuple[CpuUser, ...]  # the other processes and kernel threads that used most
    # processes and threads the machine forked over the level that were gone by the next
    # snapshot (None: not counted; records stored before it was)
    unexplained_forks: int | None = None
    # the reference loop's prevailing time per core and the saturated seconds it rests on
    # ("prevailing: core 0 884 us (120 s), core 1 896 us (95 s)"; before 2026-11-28 the
    # fastest: "core 0 401 us, core 1 398 us"): what the sets' speeds are relative to ("": not
    # measured)
    speed_reference: str = ""


class Second(msgspec.Struct, frozen=True, kw_only=True):
    """One second of a level's per-second series (stackbench-load/2 and later: every second of
    the level, quiet ones included, with its own latency histogram)."""

    t_s: int  # 1, 2, ...: the second's index from the level's start
    completed: int
    errors: int
    p50_us: int
    p99_us: int
    p90_us: int
    max_us: int
    duration_s: float  # 1.0, or less for the cut last second
    partial: bool  # the last, cut second of a level: never plotted or used as a full one
    histogram: str  # that second's latencies, HdrHistogram V2 compressed, base64

    @property
    def full(self) -> bool:
        """A whole second, fit to be compared with the others."""
        return not self.partial and self.duration_s > 0

    @property
    def rate(self) -> float:
        """Responses per second over this second's span."""
        return self.completed / self.duration_s

    def percentile_us(self, key: str) -> float:
        """p50, p90 or p99 of this second (KeyError for any other key)."""
        return float({"p50": self.p50_us, "p90": self.p90_us, "p99": self.p99_us}[key])
