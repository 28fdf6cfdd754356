"""A server the user runs ([external.NAME], config/external.py), found on this machine.

stackbench only looks: it checks that the url answers and that the processes the table names
are there, and hands the monitor their pids to sample. It never signals, stops or restarts
them. The rules for the processes, each refused with what to do instead:

- a pid must exist now, and is watched by its start time too (a pid the kernel reuses for
  another process is not the server any more);
- not a root process: stackbench runs every server it starts as an unprivileged user, and a
  root pid is most often a system daemon given by mistake, whose tree is half the machine;
- not stackbench itself nor one of its ancestors (a shell's pid): its tree would hold the
  load generator, whose CPU would be counted as the server's;
- not a descendant of another listed pid, which is sampled with its children already.

`unit = "x.service"` reads the unit's main process from systemd (`systemctl show`), where
systemd runs; elsewhere it is refused (exit 3) with the pids to give instead.
"""

import os
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

import psutil

from stackbench.config.external import ExternalStack
from stackbench.config.plan import Plan
from stackbench.errors import EnvironmentProblem, InputError, StackError

CONNECT_TIMEOUT_S = 3.0
SYSTEMD_RUNNING = Path("/run/systemd/system")  # sd_booted(3): systemd is the init system
_SYSTEMCTL_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Watched:
    """One process of the server: its pid and its start time (psutil's create_time)."""

    pid: int
    created: float

    def alive(self) -> bool:
        try:
            return psutil.Process(self.pid).create_time() == self.created
        except psutil.Error:
            return False


@dataclass(frozen=True)
class ExternalProcesses:
    """What the monitor samples of an external server: role -> pid, and the watched pids."""

    roles: dict[str, int]
    watched: tuple[Watched, ...]
    cpus: frozenset[int]  # the cores its processes may run on (empty: none given)

    def gone(self) -> list[int]:
        """The watched pids that are no longer the server's processes."""
        return [w.pid for w in self.watched if not w.alive()]


def attach_all(plan: Plan) -> None:
    """Every external server of the plan answers and its processes are there, before any
    load: one that does not refuses the run (nothing is started or stored), naming its table.
    On a multi-host run only its url is checked here; the server host's agent finds its
    processes when it starts (remote/agent.py attach-external)."""
    remote = plan.suite.placement.server_host is not None
    for st in plan.stacks:
        if st.external is None:
            continue
        where = f"{plan.suite.path}: [external.{st.name}]"
        if remote:
            check_reachable(st.external, where)
        else:
            attach(st.external, where)


def attach(ext: ExternalStack, where: str) -> ExternalProcesses:
    """The external server checked on this machine: it answers at its url and its processes
    are there. `where` names the suite table in the messages. Raises StackError (exit 4)
    when nothing answers, InputError (2) for a pid that breaks a rule, EnvironmentProblem (3)
    for a unit where systemd does not run."""
    check_reachable(ext, where)
    pids = ext.pids
    if ext.unit is not None:
        pids = (unit_main_pid(ext.unit, where),)
    watched = tuple(_watched(pid, pids, where) for pid in pids)
    roles = {"server": pids[0]} if len(pids) == 1 else {f"server-{pid}": pid for pid in pids}
    return ExternalProcesses(roles, watched, _cpus(pids))


def check_reachable(ext: ExternalStack, where: str) -> None:
    """A TCP connection to the url's address and port, or StackError naming what to do."""
    try:
        with socket.create_connection((ext.address, ext.port), timeout=CONNECT_TIMEOUT_S):
            return
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
    raise StackError(
        f"{where}: nothing answers at {ext.url} ({reason}): start your server there, or "
        "correct the url; stackbench does not start an external stack"
    )


def unit_main_pid(unit: str, where: str) -> int:
    """The main process of a running systemd service unit."""
    if not SYSTEMD_RUNNING.is_dir():
        raise EnvironmentProblem(
            f"{where} key 'unit': systemd is not running on this machine "
            f"({SYSTEMD_RUNNING} is missing), so unit {unit!r} cannot be read; give the "
            "server's pids instead (pids = [...], e.g. from `pgrep -f myserver`)"
        )
    try:
        done = subprocess.run(
            ["systemctl", "show", "--property=MainPID", "--value", "--", unit],
            capture_output=True,
            text=True,
            timeout=_SYSTEMCTL_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentProblem(f"{where} key 'unit': systemctl failed: {exc}") from exc
    text = done.stdout.strip()
    if done.returncode != 0 or not text.isdigit() or int(text) == 0:
        raise InputError(
            f"{where} key 'unit': {unit} has no main process (is it running? "
            f"`systemctl status {unit}`); start it, or give its pids instead"
        )
    return int(text)


def _watched(pid: int, listed: tuple[int, ...], where: str) -> Watched:
    at = f"{where} key 'pids': {pid}"
    try:
        proc = psutil.Process(pid)
        created = proc.create_time()
        uid = proc.uids().real
        ancestors = [p.pid for p in proc.parents()]
    except psutil.Error:
        raise InputError(
            f"{at}: no such process is running; give the pids of your server's processes "
            "as they run now (e.g. `pgrep -f myserver`)"
        ) from None
    if uid == 0:
        raise InputError(
            f"{at}: the process runs as root; stackbench samples only servers run by an "
            "unprivileged user (as every stack it starts is): run your server as one"
        )
    ours = {os.getpid(), *(p.pid for p in psutil.Process().parents())}
    if pid in ours:
        raise InputError(
            f"{at}: that is stackbench itself or one of its parents (a shell?), whose "
            "children include the load generator; give the server's own pid"
        )
    parent = next((a for a in ancestors if a in listed), None)
    if parent is not None:
        raise InputError(
            f"{at}: a child of {parent}, which is listed too and sampled with its "
            f"children; list {parent} alone"
        )
    return Watched(pid, created)


def _cpus(pids: tuple[int, ...]) -> frozenset[int]:
    cpus: set[int] = set()
    for pid in pids:
        try:
            cpus |= os.sched_getaffinity(pid)
        except OSError:
            continue
    return frozenset(cpus)
