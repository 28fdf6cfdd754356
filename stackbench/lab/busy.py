"""Is something else using the machine? The checks that make a measurement unfit.

A benchmark measures the machine as much as the stack: another process on the server's or the
loader's core, a hypervisor stealing cycles, swapping or a high load average all move the
figures, and one fresh start then differs from the next by more than the verdicts allow for.
`doctor` prints these checks, and a suite run prints their warnings in its plan and stores them
with the run's environment. One sample of `SAMPLE_S` seconds: a busy loop shows at once; a
process that wakes every minute may not (the advice says to look again). Then the suite's cores
are kept busy for `BUSY_STEAL_S` to read the hypervisor's steal, which an idle core never shows.
"""

import os
import subprocess
import sys
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import psutil

from stackbench.lab.machine import Check, Verdict

SAMPLE_S = 1.0
BUSY_CORE = 0.15  # a core more than 15% busy with nothing of ours running is busy
BUSY_PROCESS = 0.05  # a process using 5% of a core is worth naming
LOAD_PER_CORE = 0.5  # the 1-minute load average per usable core
STEAL = 0.02  # 2% of the CPU taken by the hypervisor
# How long each core is kept busy to read the hypervisor's steal: an idle vCPU asks nothing of
# the host, so only a busy one shows what a CPU-bound level would lose.
BUSY_STEAL_S = 2.0
_SPIN_START_S = 0.3  # the spinners' start and pinning, before the reading
# A loop pinned to one CPU (argv: cpu, seconds); it ends by itself, and is killed if not.
_SPIN = (
    "import os, sys, time\n"
    "os.sched_setaffinity(0, {int(sys.argv[1])})\n"
    "end = time.monotonic() + float(sys.argv[2])\n"
    "while time.monotonic() < end: pass\n"
)


@dataclass(frozen=True)
class Sample:
    """What the machine did during one sample."""

    busy_by_cpu: dict[int, float]  # 0..1 per CPU (everything but idle and iowait)
    processes: tuple[tuple[int, str, float, int | None], ...]  # pid, name, cores, last CPU


def sample(seconds: float = SAMPLE_S, exclude: Iterable[int] = ()) -> Sample:
    """Per-CPU busy share and the processes using CPU, over `seconds` (this process and
    `exclude` left out)."""
    skip = {os.getpid(), *exclude}
    procs = {p.pid: p for p in psutil.process_iter(["name"]) if p.pid not in skip}
    for p in procs.values():
        _cpu_percent(p)  # first call primes the counter
    before = psutil.cpu_times(percpu=True)
    time.sleep(seconds)
    after = psutil.cpu_times(percpu=True)
    busy = {cpu: _busy(b, a) for cpu, (b, a) in enumerate(zip(before, after, strict=True))}
    found = []
    for pid, p in procs.items():
        share = _cpu_percent(p) / 100.0
        if share >= BUSY_PROCESS:
            found.append((pid, str(p.info.get("name") or "?"), share, _cpu_num(p)))
    found.sort(key=lambda item: -item[2])
    return Sample(busy, tuple(found))


def wait_for_quiet(cpus: Collection[int], limit_s: float, share: float) -> bool:
    """Sample the machine second by second until every one of `cpus` is busy at most `share`
    of its time (nothing of ours runs on them between two levels), for at most `limit_s`;
    whether it became quiet."""
    deadline = time.monotonic() + limit_s
    while True:
        found = sample(SAMPLE_S)
        if all(found.busy_by_cpu.get(cpu, 0.0) <= share for cpu in cpus):
            return True
        if time.monotonic() >= deadline:
            return False


def steal_while_busy(cpus: Collection[int], seconds: float = BUSY_STEAL_S) -> dict[int, float]:
    """Each of `cpus` kept busy by a loop pinned to it for `seconds`: the share of each one's
    time the hypervisor took. On the guests of the findings an idle sample showed no steal
    while busy cores lost 2-10% of theirs, every level then flagged disturbed."""
    spinners: list[subprocess.Popen[bytes]] = []
    try:  # a spinner that fails to start leaves none of those started before it behind
        for cpu in sorted(cpus):
            spinners.append(
                subprocess.Popen(
                    [sys.executable, "-c", _SPIN, str(cpu), str(seconds + _SPIN_START_S)],
                    stdin=subprocess.DEVNULL,
                )
            )
        time.sleep(_SPIN_START_S)
        before = psutil.cpu_times(percpu=True)
        time.sleep(seconds)
        after = psutil.cpu_times(percpu=True)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    return {cpu: _steal(before[cpu], after[cpu]) for cpu in sorted(cpus) if cpu < len(after)}


def _cpu_percent(p: psutil.Process) -> float:
    try:
        return float(p.cpu_percent(None))
    except psutil.Error:
        return 0.0


def _cpu_num(p: psutil.Process) -> int | None:
    try:
        return int(p.cpu_num())
    except (psutil.Error, AttributeError):
        return None


def _busy(before: object, after: object) -> float:
    fields = ("user", "nice", "system", "irq", "softirq", "steal")
    total = sum(getattr(after, f) - getattr(before, f) for f in after._fields)  # type: ignore[attr-defined]
    used = sum(getattr(after, f, 0.0) - getattr(before, f, 0.0) for f in fields)
    return max(0.0, min(1.0, used / total)) if total > 0 else 0.0


def _steal(before: object, after: object) -> float:
    total = sum(getattr(after, f) - getattr(before, f) for f in after._fields)  # type: ignore[attr-defined]
    used = getattr(after, "steal", 0.0) - getattr(before, "steal", 0.0)
    return max(0.0, used / total) if total > 0 else 0.0


FIND_BUSY = "ps -eo pid,psr,pcpu,comm --sort=-pcpu | head -8"  # psr: the CPU it is on


def busy_checks(
    roles: Mapping[str, Sequence[int]], found: Sample, spare: Sequence[int] = ()
) -> list[Check]:
    """The cores of each role ('server', 'loader', ...) busy with something else, the processes
    using them (moved to the `spare` cores, if there are any), and the hypervisor's steal."""
    checks = []
    for role, cpus in roles.items():
        busy = {cpu: found.busy_by_cpu.get(cpu, 0.0) for cpu in cpus}
        worst = max(busy.values(), default=0.0)
        shown = ", ".join(f"CPU {cpu} {share:.0%}" for cpu, share in busy.items())
        if worst <= BUSY_CORE:
            checks.append(Check(f"{role} cores", Verdict.OK, f"idle: {shown or 'none'}"))
            continue
        users = [
            (pid, name, share)
            for pid, name, share, cpu in found.processes
            if cpu is None or cpu in cpus
        ][:4]
        named = ", ".join(
            f"{name} (pid {pid}, {share:.0%} of a core)" for pid, name, share in users
        )
        checks.append(
            Check(
                f"{role} cores",
                Verdict.WARN,
                f"{shown} busy with something else" + (f": {named}" if named else ""),
                _busy_hint([pid for pid, _, _ in users], spare),
                _busy_commands(users, spare),
            )
        )
    return checks


def _busy_hint(pids: Sequence[int], spare: Sequence[int]) -> str:
    what = "it shifts every figure and widens every verdict: "
    it = "it" if len(pids) == 1 else "them"
    stop = f"stop {it} (kill {' '.join(map(str, pids))}, if yours)"
    if pids and spare:
        return what + f"{stop}, or move {it} to the spare cores, then run stackbench doctor again"
    if pids:
        return what + (
            f"{stop} or wait for {it} to end (no core is spare to move {it} to), "
            "then run stackbench doctor again"
        )
    return (
        what + "find what runs there (PSR is the CPU) and stop it, then run stackbench doctor again"
    )


def _busy_commands(
    users: Sequence[tuple[int, str, float]], spare: Sequence[int]
) -> tuple[str, ...]:
    if users and spare:
        cpus = ",".join(str(c) for c in sorted(spare))
        return tuple(f"taskset -apc {cpus} {pid}" for pid, _, _ in users)
    return () if users else (FIND_BUSY,)


def steal_check(stolen: Mapping[int, float], seconds: float = BUSY_STEAL_S) -> Check:
    """The hypervisor's steal from each busy core (`steal_while_busy`) against the noise band
    the judge flags a level at (engine/judge.disturbed_flag)."""
    shown = ", ".join(f"CPU {cpu} {share:.1%}" for cpu, share in sorted(stolen.items()))
    value = f"{shown or 'no core read'} of a busy core, each kept busy {seconds:g} s"
    if max(stolen.values(), default=0.0) <= STEAL:
        return Check("steal under load", Verdict.OK, value)
    return Check(
        "steal under load",
        Verdict.WARN,
        value + " (taken by the hypervisor)",
        f"other guests compete for this host: a level on whose cores steal takes more than "
        f"{STEAL:.0%} is flagged disturbed (a figure 8% lower, benchmarks/disturbed_effect.py) "
        "and measured again, and one still disturbed decides nothing, so an article suite may "
        "spend its load budget on re-measures and decide less; run at a quieter hour or on "
        "dedicated cores, and run stackbench doctor again to see",
    )


def load_check(cores: int) -> Check:
    one, five, _ = os.getloadavg()
    value = f"{one:.2f} (1 min), {five:.2f} (5 min) on {cores} usable core(s)"
    if one <= LOAD_PER_CORE * cores:
        return Check("load average", Verdict.OK, value)
    return Check(
        "load average",
        Verdict.WARN,
        value,
        "other work is running: find it, stop it, and wait for the load average to fall",
        (FIND_BUSY,),
    )


def swap_check() -> Check:
    swap = psutil.swap_memory()
    if swap.total == 0 or swap.used == 0:
        return Check("swap", Verdict.OK, "not in use")
    return Check(
        "swap",
        Verdict.WARN,
        f"{swap.used / 2**20:,.0f} MiB swapped out",
        "swapping adds latency spikes: free memory, or bring the swapped pages back "
        "(needs as much free memory as is swapped out)",
        ("swapoff -a && swapon -a",),
    )


def quiet_machine_checks(
    roles: Mapping[str, Sequence[int]],
    usable: Collection[int],
    exclude: Iterable[int] = (),
    read_steal: bool = True,
) -> list[Check]:
    """Every check of this module, from one sample and (`read_steal`) the roles' cores kept
    busy; `usable`: the CPUs stackbench may use (those no role uses are where other work can
    go)."""
    used = {cpu for cpus in roles.values() for cpu in cpus}
    spare = sorted(set(usable) - used)
    checks = [load_check(len(usable)), *busy_checks(roles, sample(exclude=exclude), spare)]
    if read_steal:
        checks.append(steal_check(steal_while_busy(used & set(usable))))
    return [*checks, swap_check()]
