"""Every core of a level accounted for, second by second: what used it besides the level.

The busy time of a set of cores (/proc/stat: user, nice, system, irq and softirq) is split into
  - the roles' own time (their control groups, or their sampled process trees),
  - stackbench's own (the monitor, the progress line),
  - kernel threads (kthreadd's children: ksoftirqd, kworkers, kswapd ...),
  - other processes, named when they live across a snapshot, and the remainder nobody was
    seen to use (processes born and gone between two snapshots: a build's compilers),
and beside it the time the hypervisor stole. The remainder is what makes the account complete:
a disturbance need not be seen to be counted.

Interrupts: where the kernel counts irq time by the tick (CONFIG_IRQ_TIME_ACCOUNTING off), the
softirq work done in a process's context (loopback networking, in the server's and the
loader's) is in that process's time as well as in /proc/stat's softirq, so it must not be
taken away twice; where irq time is counted apart, it is in no task's time and is taken
away from the remainder. `irq_time_apart` says which.

Ticks against clocks: the busy columns are counted by the tick (what ran when it fired), but
where the kernel stops the tick on an idle core (NO_HZ) the idle and iowait columns are
measured by clock. A level whose wake-ups fall in step with the tick is then over-counted
busy: the columns add up to more than the time that passed (issue #32: the loader's core
74% busy and 34% idle or waiting over 13 s, 1.2 s more than there was, while its process's
exact run time left 1.4 s "unseen"). The core cannot have been busy while it slept, so the
busy time the remainder is taken from is at most the time less the clock's idle and steal.

Kernel work in no task: what is left of the clock's awake time once every task's is taken
away is either processes born and gone between two snapshots or the kernel's own work outside
any task (a wake-up's interrupt and the idle loop's exit on an idle core: the level's own
traffic, thousands of times a second at 7,000 new connections a second). A process cannot run
without being forked, so an interval in which the machine forked nothing more than the
processes and threads alive at its end cannot hold a short-lived one: its remainder is the
kernel's work in no task, which the level itself causes, and is kept apart (`no_task_s`),
less what other processes were counted on other cores in it (a process is placed by the
core it last ran on: one that moved may have used these).
Where there were such forks, or the fork counter was not read, the remainder stays unseen, a
disturbance: nothing that forks can hide there.

Short-lived processes, reaped: a process born and gone between two snapshots is seen by no
sample, but its parent, when it waits for it, adds its exact CPU time to its own children's
times (/proc/<pid>/stat cutime + cstime: a shell's, make's, a burner's). That time, less what
was already counted of the children seen alive before they went, is placed on the sets whose
clock shows awake time no task explains, in proportion to it (the cores outside the level
take their share), and counted unseen: at least it, whatever the ticks say. Needed where the
ticks under-count: on the loader's core, busy by the tick 7.86 s while the loader alone ran
8.13 s, short commands of 6% of a core were hidden entirely (issue #32).

Readers of /proc are here; the arithmetic (`account`) is pure and tested on hand-made
snapshots (tests/lab/test_coreaccount.py).
"""

import contextlib
import dataclasses
import gzip
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from stackbench.config.measured import CoreAccount, CoreSetUse, CpuUser

PF_KTHREAD = 0x00200000  # /proc/<pid>/stat flags: a kernel thread
KTHREADD = 2
TOP_USERS = 5  # other processes and kernel threads named in the record
NAMED_MIN_SHARE = 0.005  # ...when they used at least this share of one core over the level


@dataclass(frozen=True)
class CoreTicks:
    """One core's cumulative times from /proc/stat, in seconds."""

    user: float
    nice: float
    system: float
    idle: float
    iowait: float
    irq: float
    softirq: float
    steal: float

    @property
    def busy(self) -> float:
        """Everything the core did but idle, wait for I/O and be stolen (guest time is in
        user)."""
        return self.user + self.nice + self.system + self.irq + self.softirq

    @property
    def interrupts(self) -> float:
        return self.irq + self.softirq


@dataclass(frozen=True)
class Task:
    """A process or kernel thread (not ours) as /proc/<pid>/stat showed it."""

    pid: int
    name: str
    kernel_thread: bool
    cpu_s: float  # user + system, cumulative
    cpu: int  # the core it last ran on
    started_s: float  # since boot
    ppid: int
    threads: int = 1
    children_s: float = 0.0  # its reaped children's user + system, cumulative (cutime, cstime)


@dataclass(frozen=True)
class Snapshot:
    """One instant of the machine, as the monitor read it."""

    at: float  # time.monotonic()
    uptime_s: float  # since boot, on the clock /proc/<pid>/stat's start times use
    cores: Mapping[int, CoreTicks]
    roles: Mapping[str, float]  # role -> its CPU seconds so far (this level's)
    own: Mapping[int, float]  # stackbench's threads: tid -> CPU seconds ...
    own_cpu: Mapping[int, int]  # ... and the core each last ran on
    tasks: Mapping[int, Task] = field(default_factory=dict)  # every other process
    # /proc/stat "processes": processes and threads forked since boot (None: not read) ...
    forks: int | None = None
    # ... and every process's and thread's id alive (roles' and ours included)
    tids: frozenset[int] = frozenset()
    # the threads of every other process that has more than one: pid -> tid -> the thread
    # (each runs on its own core, the leader's is only one of them)
    threads: Mapping[int, Mapping[int, Task]] = field(default_factory=dict)


@dataclass(frozen=True)
class CoreSet:
    """Cores accounted together: those a group of roles is pinned to (the server's, the
    loader's), or the level's cores no role is pinned to."""

    cores: frozenset[int]
    roles: tuple[str, ...]


def parse_proc_stat(text: str, ticks_per_s: float) -> dict[int, CoreTicks]:
    """The per-core lines of /proc/stat ("cpu0 user nice system idle iowait irq softirq
    steal ..."), in seconds."""
    out = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu":
            continue
        values = [int(v) / ticks_per_s for v in rest.split()]
        values += [0.0] * (8 - len(values))
        out[int(name[3:])] = CoreTicks(*values[:8])
    return out


def parse_forks(text: str) -> int | None:
    """/proc/stat's "processes" line: every process and thread forked since boot."""
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if name == "processes" and rest.strip().isdigit():
            return int(rest)
    return None


def parse_pid_stat(text: str, ticks_per_s: float) -> Task | None:
    """/proc/<pid>/stat. The name is between the first '(' and the last ')': it may hold
    spaces and parentheses itself."""
    head, close, tail = text.rpartition(")")
    if not close:
        return None
    pid_text, _, name = head.partition(" (")
    fields = tail.split()
    # fields[0] is the state (field 3 of proc(5)); field n is fields[n - 3]
    if len(fields) < 37 or not pid_text.strip().isdigit():
        return None
    pid, ppid, flags = int(pid_text), int(fields[1]), int(fields[6])
    return Task(
        pid=pid,
        name=name,
        kernel_thread=bool(flags & PF_KTHREAD) or ppid == KTHREADD or pid == KTHREADD,
        cpu_s=(int(fields[11]) + int(fields[12])) / ticks_per_s,
        cpu=int(fields[36]),
        started_s=int(fields[19]) / ticks_per_s,
        ppid=ppid,
        threads=int(fields[17]),
        children_s=(int(fields[13]) + int(fields[14])) / ticks_per_s,
    )


# --- the arithmetic --------------------------------------------------------------------
@dataclass
class _SetTotals:
    busy: float = 0.0
    interrupts: float = 0.0
    idle: float = 0.0  # idle + iowait (by clock where the tick stops on an idle core)
    capacity: float = 0.0  # the time that passed, once per core
    steal: float = 0.0
    roles: float = 0.0
    own: float = 0.0
    kernel: float = 0.0
    named: float = 0.0
    # other processes' time counted on a core outside the set: by the core they last ran
    # on, some of it may have been this set's
    elsewhere: float = 0.0
    reaped: float = 0.0  # short-lived processes' time, reaped by a process seen, placed here
    roles_per_s: list[float] = field(default_factory=list)
    other_per_s: list[float] = field(default_factory=list)
    steal_per_s: list[float] = field(default_factory=list)

    @property
    def accounted(self) -> float:
        """The time a task was seen to use: the roles', stackbench's, kernel threads', the
        named other processes'."""
        return self.roles + self.own + self.kernel + self.named

    @property
    def clock_awake(self) -> float:
        """The time the cores neither slept nor lost to the hypervisor, by the clock."""
        return max(0.0, self.capacity - self.idle - self.steal)


def unexplained_forks(before: Snapshot, after: Snapshot) -> int | None:
    """Forks between two snapshots not alive at the second: processes or threads born and
    gone in between (a short command, a thread of a seen process; the two cannot be told
    apart, so both count). None where the fork counter was not read."""
    if before.forks is None or after.forks is None:
        return None
    return max(0, after.forks - before.forks - len(after.tids - before.tids))


def same_process(a: Task, b: Task) -> bool:
    """Two looks at one process (or thread): a pid reused by a new one has another start."""
    return abs(a.started_s - b.started_s) < 1e-6


def baseline(before: Snapshot, task: Task) -> Task | None:
    """What `task`'s cumulative times were at `before`: its record then; zero for a process
    born in between (also one that reuses a pid seen then); None for one that was alive at
    `before` but missed by its scan, whose times since cannot be told."""
    prev = before.tasks.get(task.pid)
    if prev is not None and same_process(prev, task):
        return prev
    if task.started_s >= before.uptime_s - 0.02:  # born in between (start: tick-exact)
        return dataclasses.replace(task, cpu_s=0.0, children_s=0.0)
    return None


def task_deltas(before: Snapshot, after: Snapshot) -> dict[int, tuple[Task, float]]:
    """Each process's CPU seconds between two snapshots. One born in between counts from
    zero; one seen before under the same pid but another start time is a new process;
    one gone by `after` is not seen (its time stays in the remainder)."""
    out = {}
    for pid, task in after.tasks.items():
        prev = baseline(before, task)
        if prev is not None:
            out[pid] = (task, max(0.0, task.cpu_s - prev.cpu_s))
    return out


def reaped(before: Snapshot, after: Snapshot) -> dict[int, float]:
    """Each process's children's CPU seconds it reaped between two snapshots (pid -> s), less
    what was counted of them while they were seen alive: a child seen before and gone now was
    counted up to its last look (its time and its own reaped children's), so only the rest
    is new. Kernel threads reap nothing of interest; a parent born in between counts from
    zero (a new process's children's times start at zero)."""
    seen_gone: dict[int, float] = {}
    for pid, child in before.tasks.items():
        now = after.tasks.get(pid)
        if now is None or not same_process(now, child):
            seen_gone[child.ppid] = seen_gone.get(child.ppid, 0.0) + child.cpu_s + child.children_s
    out = {}
    for pid, task in after.tasks.items():
        if task.kernel_thread:
            continue
        prev = baseline(before, task)
        if prev is None:
            continue
        new = task.children_s - prev.children_s - seen_gone.get(pid, 0.0)
        if new > 0:
            out[pid] = new
    return out


def place_reaped(total: float, room: Sequence[float], outside: float) -> list[float]:
    """`total` seconds of short-lived processes, placed on the sets in proportion to each
    one's `room` (the clock's awake time no task explains, its positive part) against the
    cores outside the level (`outside`, their awake time less what the processes seen there
    used), never more than a set's room: where the clock shows no room, nothing is placed."""
    rooms = [max(0.0, r) for r in room]
    whole = sum(rooms) + max(0.0, outside)
    if total <= 0 or whole <= 0:
        return [0.0] * len(rooms)
    return [min(r, total * r / whole) for r in rooms]


def by_core(before: Snapshot, after: Snapshot, pid: int, spent: float) -> list[tuple[int, float]]:
    """A process's CPU seconds between two snapshots, by the core each part ran on: each
    thread seen in both by the core it last ran on, the rest (the leader's alone, or threads
    gone or born in between) by the process's. A process whose worker threads run on the
    level's cores while its leader waits elsewhere is then counted where it ran."""
    task = after.tasks[pid]
    was, now = before.threads.get(pid, {}), after.threads.get(pid, {})
    parts: dict[int, float] = {}
    rest = spent
    for tid, thread in now.items():
        prev = was.get(tid)
        if prev is None or not same_process(prev, thread):
            continue
        used = min(rest, max(0.0, thread.cpu_s - prev.cpu_s))
        parts[thread.cpu] = parts.get(thread.cpu, 0.0) + used
        rest -= used
    if rest > 0:
        parts[task.cpu] = parts.get(task.cpu, 0.0) + rest
    return sorted(parts.items())


def _set_of(cpu: int, sets: Sequence[CoreSet]) -> int | None:
    for i, s in enumerate(sets):
        if cpu in s.cores:
            return i
    return None


def account(
    snapshots: Sequence[Snapshot],
    sets: Sequence[CoreSet],
    irq_time_apart: bool,
    method: str,
    sampled: str = "",
) -> CoreAccount:
    """The level's cores accounted over consecutive snapshots (the first is the level's
    start, the last its end), set by set and interval by interval."""
    totals = [_SetTotals() for _ in sets]
    # the same, over the intervals that forked nothing unseen (their remainder: no task's)
    still = [_SetTotals() for _ in sets]
    forks: int | None = 0
    users: dict[tuple[int, str, bool], float] = {}
    role_set = {role: i for i, s in enumerate(sets) for role in s.roles}
    for before, after in zip(snapshots, snapshots[1:], strict=False):
        elapsed = max(after.at - before.at, 1e-9)
        step = [_SetTotals() for _ in sets]
        for i, s in enumerate(sets):
            for cpu in s.cores:
                if cpu in before.cores and cpu in after.cores:
                    b, a = before.cores[cpu], after.cores[cpu]
                    step[i].busy += a.busy - b.busy
                    step[i].idle += (a.idle + a.iowait) - (b.idle + b.iowait)
                    step[i].capacity += elapsed
                    step[i].interrupts += a.interrupts - b.interrupts
                    step[i].steal += a.steal - b.steal
        for role, spent in after.roles.items():
            if role in role_set:
                step[role_set[role]].roles += spent - before.roles.get(role, 0.0)
        for tid, spent in after.own.items():
            where = _set_of(after.own_cpu.get(tid, -1), sets)
            if where is not None:
                step[where].own += spent - before.own.get(tid, 0.0)
        roaming = 0.0  # the other processes' time in the interval, wherever it was counted
        for pid, (task, spent) in task_deltas(before, after).items():
            here = 0.0
            for cpu, part in by_core(before, after, pid, spent):
                if not task.kernel_thread and part > 0:
                    roaming += part
                where = _set_of(cpu, sets)
                if where is None or part <= 0:
                    continue
                here += part
                if task.kernel_thread:
                    step[where].kernel += part
                else:
                    step[where].named += part
            if here > 0:
                key = (pid, task.name, task.kernel_thread)
                users[key] = users.get(key, 0.0) + here
        _place_reaped(before, after, sets, step, roaming, irq_time_apart, users)
        unexplained = unexplained_forks(before, after)
        forks = None if unexplained is None or forks is None else forks + unexplained
        for total, quiet, one in zip(totals, still, step, strict=True):
            one.elsewhere = roaming - one.named
            _add(total, one, elapsed, irq_time_apart, no_fork=unexplained == 0)
            if unexplained == 0:
                _add(quiet, one, elapsed, irq_time_apart, no_fork=True)
    elapsed_s = snapshots[-1].at - snapshots[0].at if len(snapshots) > 1 else 0.0
    return CoreAccount(
        method=method,
        sampled=sampled,
        irq_time_apart=irq_time_apart,
        elapsed_s=round(elapsed_s, 3),
        sets=tuple(
            _set_use(s, t, q, irq_time_apart) for s, t, q in zip(sets, totals, still, strict=True)
        ),
        top=_top(users, elapsed_s),
        unexplained_forks=forks,
    )


def _place_reaped(
    before: Snapshot,
    after: Snapshot,
    sets: Sequence[CoreSet],
    step: Sequence[_SetTotals],
    roaming: float,
    irq_time_apart: bool,
    users: dict[tuple[int, str, bool], float],
) -> None:
    """One interval's reaped children placed on its sets (`step`), their parents named."""
    by_parent = reaped(before, after)
    if not by_parent:
        return
    elapsed = max(after.at - before.at, 1e-9)
    room = [remainder(t.clock_awake, t.interrupts, t.accounted, irq_time_apart) for t in step]
    level = {c for s in sets for c in s.cores}
    outside = [c for c in after.cores if c not in level and c in before.cores]
    asleep = sum(
        (after.cores[c].idle + after.cores[c].iowait + after.cores[c].steal)
        - (before.cores[c].idle + before.cores[c].iowait + before.cores[c].steal)
        for c in outside
    )
    named_outside = roaming - sum(t.named for t in step)
    placed = place_reaped(
        sum(by_parent.values()), room, len(outside) * elapsed - asleep - named_outside
    )
    for t, part in zip(step, placed, strict=True):
        t.reaped += part
    share = sum(placed) / sum(by_parent.values())
    for pid, spent in by_parent.items():
        if spent * share > 0:
            key = (pid, f"short commands of {after.tasks[pid].name}", False)
            users[key] = users.get(key, 0.0) + spent * share


def remainder(busy: float, interrupts: float, accounted: float, irq_time_apart: bool) -> float:
    """Busy time no one was seen to use (signed: the clock-tick sampling of /proc/stat makes
    it a little negative on a core the level alone used)."""
    return busy - (interrupts if irq_time_apart else 0.0) - accounted


def _add(
    total: _SetTotals, one: _SetTotals, elapsed: float, irq_time_apart: bool, no_fork: bool
) -> None:
    total.busy += one.busy
    total.interrupts += one.interrupts
    total.idle += one.idle
    total.capacity += one.capacity
    total.steal += one.steal
    total.roles += one.roles
    total.own += one.own
    total.kernel += one.kernel
    total.named += one.named
    total.elsewhere += one.elsewhere
    total.reaped += one.reaped
    unseen = remainder(one.busy, one.interrupts, one.accounted, irq_time_apart)
    total.roles_per_s.append(round(one.roles / elapsed, 4))
    # a second's remainder is noisy both ways: kept signed here, clamped only over the level;
    # in a second that forked nothing unseen it is no task's (the module's docstring)
    unseen = 0.0 if no_fork else unseen
    if one.reaped > 0:
        unseen = max(unseen, one.reaped)
    total.other_per_s.append(round((one.named + unseen) / elapsed, 4))
    total.steal_per_s.append(round(one.steal / elapsed, 4))


def awake(busy: float, idle: float, steal: float, capacity: float) -> float:
    """The busy time a remainder may be taken from: the ticks' busy, but never more than the
    time the cores neither slept nor lost to the hypervisor (the clock's idle, see the
    module's docstring). Over a level, not per second, where the ticks' own noise would be
    clipped."""
    return min(busy, max(0.0, capacity - idle - steal)) if capacity > 0 else busy


def _remainder(t: _SetTotals, irq_time_apart: bool) -> float:
    return remainder(
        awake(t.busy, t.idle, t.steal, t.capacity), t.interrupts, t.accounted, irq_time_apart
    )


def split_remainder(whole: float, still: float, elsewhere: float = 0.0) -> tuple[float, float]:
    """The level's remainder (`whole`, over every interval) split into the unseen, a
    disturbance, and the kernel's work in no task: the remainder over the intervals that
    forked nothing unseen (`still`) less what other processes used there but were counted
    on another core (`elsewhere`: a process that moved may have used this set's cores),
    never below zero nor above the whole's positive part (each is taken from its own
    intervals' awake time, so the two need not add up: the unseen is what the whole leaves,
    so a disturbance is never hidden by the split)."""
    no_task = min(max(0.0, still - max(0.0, elsewhere)), max(0.0, whole))
    return whole - no_task, no_task


def _set_use(s: CoreSet, t: _SetTotals, q: _SetTotals, irq_time_apart: bool) -> CoreSetUse:
    unseen, no_task = split_remainder(
        _remainder(t, irq_time_apart),
        _remainder(q, irq_time_apart) if q.capacity else 0.0,
        q.elsewhere,
    )
    # short commands seen reaped are unseen whatever the ticks say (the module's docstring);
    # the no-task work is what the clock leaves beside them
    if t.reaped > 0:  # (else kept signed, as the ticks left it)
        unseen = max(unseen, t.reaped)
    return CoreSetUse(
        cores=tuple(sorted(s.cores)),
        roles=s.roles,
        busy_s=round(t.busy, 4),
        interrupts_s=round(t.interrupts, 4),
        roles_s=round(t.roles, 4),
        stackbench_s=round(t.own, 4),
        kernel_threads_s=round(t.kernel, 4),
        named_other_s=round(t.named, 4),
        unseen_s=round(unseen, 4),
        no_task_s=round(no_task, 4),
        reaped_s=round(t.reaped, 4),
        # the named are attributed by the core they last ran on, which a process that moves
        # between cores makes approximate: the sum with the remainder is exact, so it is
        # what is clamped (never below zero), not the remainder alone
        other_s=round(max(0.0, t.named + unseen), 4),
        steal_s=round(t.steal, 4),
        roles_per_s=tuple(t.roles_per_s),
        other_per_s=tuple(t.other_per_s),
        steal_per_s=tuple(t.steal_per_s),
    )


def _top(users: Mapping[tuple[int, str, bool], float], elapsed_s: float) -> tuple[CpuUser, ...]:
    ranked = sorted(users.items(), key=lambda item: -item[1])
    return tuple(
        CpuUser(pid=pid, name=name, kernel_thread=kernel, cpu_s=round(spent, 4))
        for (pid, name, kernel), spent in ranked[:TOP_USERS]
        if spent >= NAMED_MIN_SHARE * elapsed_s
    )


def core_sets(
    cpus: frozenset[int], role_cpus: Mapping[str, frozenset[int] | None]
) -> list[CoreSet]:
    """The level's cores grouped by the roles pinned to them: roles whose cores overlap are
    accounted together (a shared placement is one set); a role whose cores are unknown
    joins every set into one; the cores no role uses form a set of their own."""
    groups: list[tuple[set[int], list[str]]] = []
    for role, pinned in role_cpus.items():
        cores = set(cpus) if pinned is None else set(pinned & cpus)
        if not cores:
            continue
        merged_cores, merged_roles = cores, [role]
        rest = []
        for g_cores, g_roles in groups:
            if g_cores & merged_cores:
                merged_cores |= g_cores
                merged_roles = g_roles + merged_roles
            else:
                rest.append((g_cores, g_roles))
        groups = [*rest, (merged_cores, merged_roles)]
    free = set(cpus) - {c for g_cores, _ in groups for c in g_cores}
    out = [CoreSet(frozenset(c), tuple(r)) for c, r in groups]
    if free:
        out.append(CoreSet(frozenset(free), ()))
    return sorted(out, key=lambda s: min(s.cores))


# --- reading the machine -----------------------------------------------------------------
TICKS_PER_S = float(os.sysconf("SC_CLK_TCK"))


def read_cores() -> dict[int, CoreTicks]:
    return parse_proc_stat(Path("/proc/stat").read_text(), TICKS_PER_S)


def read_tids() -> frozenset[int]:
    """Every process's and thread's id now alive (/proc/<pid>/task)."""
    out: set[int] = set()
    with os.scandir("/proc") as entries:
        for entry in entries:
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    out.update(int(t) for t in os.listdir(f"/proc/{entry.name}/task"))
    return frozenset(out)


def read_uptime() -> float:
    return float(Path("/proc/uptime").read_text().split()[0])


def read_tasks(exclude: Iterable[int], roles: Iterable[int] = ()) -> dict[int, Task]:
    """Every process but `exclude` and the children of `roles` (the roles' processes: a
    child forked between the role's list and this scan is the role's too)."""
    skip, parents = set(exclude), set(roles)
    out = {}
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit() or int(entry.name) in skip:
                continue
            with contextlib.suppress(OSError, ValueError):
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    task = parse_pid_stat(f.read().decode(errors="replace"), TICKS_PER_S)
                if task is not None and task.ppid not in parents:
                    out[task.pid] = task
    return out


def read_threads(tasks: Mapping[int, Task]) -> dict[int, dict[int, Task]]:
    """The threads of each process of `tasks` that has more than one."""
    out: dict[int, dict[int, Task]] = {}
    for pid, task in tasks.items():
        if task.threads <= 1:
            continue
        threads = {}
        with contextlib.suppress(OSError):
            for tid in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError, ValueError):
                    with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                        thread = parse_pid_stat(f.read().decode(errors="replace"), TICKS_PER_S)
                    if thread is not None:
                        threads[thread.pid] = thread
        out[pid] = threads
    return out


def read_own_threads() -> tuple[dict[int, float], dict[int, int]]:
    """stackbench's threads: their CPU seconds and the core each last ran on."""
    spent, where = {}, {}
    with os.scandir("/proc/self/task") as entries:
        for entry in entries:
            with contextlib.suppress(OSError, ValueError):
                task = parse_pid_stat(
                    Path(f"/proc/self/task/{entry.name}/stat").read_text(), TICKS_PER_S
                )
                if task is not None:
                    spent[task.pid], where[task.pid] = task.cpu_s, task.cpu
    return spent, where


def irq_time_apart() -> bool:
    """Whether this kernel counts irq time apart from the tasks' (CONFIG_IRQ_TIME_ACCOUNTING,
    not switched off by tsc=noirqtime). Unknown (no kernel config to read): assumed not,
    so that interrupts are never taken away from a disturbance."""
    release = os.uname().release
    for path in (Path("/proc/config.gz"), Path(f"/boot/config-{release}")):
        with contextlib.suppress(OSError, EOFError, gzip.BadGzipFile):
            raw = path.read_bytes()
            text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode(errors="replace")
            if "CONFIG_IRQ_TIME_ACCOUNTING=y" not in text:
                return False
            with contextlib.suppress(OSError):
                if "noirqtime" in Path("/proc/cmdline").read_text():
                    return False
            return True
    return False


def snapshot(roles: Mapping[str, float], role_pids: Iterable[int]) -> Snapshot:
    """The machine now; `roles`: each role's CPU seconds so far, read just before;
    `role_pids`: their processes (left out of the others, with their children)."""
    own, own_cpu = read_own_threads()
    pids = set(role_pids)
    # the ids, then at once the fork counter: a thread born between the two reads
    # (microseconds) counts as unexplained in this interval, the doubt given to a disturbance
    tids = read_tids()
    forks = parse_forks(Path("/proc/stat").read_text())
    # the time before the scan: a process born while it ran and missed by it is counted,
    # from zero, in the next interval (read after, a slow scan on a busy machine lost it)
    uptime_s = read_uptime()
    tasks = read_tasks(pids | {os.getpid()}, pids)
    threads = read_threads(tasks)
    return Snapshot(
        at=time.monotonic(),  # with the cores' times: the interval's length is theirs
        uptime_s=uptime_s,
        cores=read_cores(),
        roles=dict(roles),
        own=own,
        own_cpu=own_cpu,
        tasks=tasks,
        forks=forks,
        tids=tids,
        threads=threads,
    )
