"""Start and stop process trees: each in its own session, pinned to a CPU set, always reaped.

Servers are started directly as the unprivileged stack user (see privilege.py) when
stackbench runs as root; the switch happens in the child before exec, so no server code ever
runs as root.

Stopping sends SIGTERM to the process group, waits, then SIGKILLs the group and every
descendant still alive (a server that re-parents or changes its process group must not
survive the run).
"""

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

import psutil

from stackbench.lab import cgroups
from stackbench.lab.cgroups import CpuGroup
from stackbench.lab.fs import open_log
from stackbench.lab.privilege import RunAs, drop_to

_PR_SET_PDEATHSIG = 1


def child_setup(
    cpus: frozenset[int] | None, run_as: RunAs | None = None, group: CpuGroup | None = None
) -> Callable[[], None]:
    """For every child stackbench starts (server, service, loader, script), run between fork
    and exec: place it in its role's control group (if given: its children follow it),
    switch to run_as (if given), pin it to its CPUs, and make it die with stackbench.
    """

    def setup() -> None:
        # Before the switch: the group's files are root's.
        if group is not None:
            cgroups.join(group)
        # First: the kernel clears the parent-death signal when the uid changes.
        if run_as is not None:
            drop_to(run_as)
        if cpus:
            os.sched_setaffinity(0, cpus)
        # If stackbench itself is killed (even with SIGKILL) the kernel sends SIGTERM to the
        # server, so no orphan survives. Caveat: the signal fires when the *thread* that
        # started the process exits, so start servers from a long-lived thread.
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)

    return setup


def spawn(
    command: Sequence[str],
    cwd: Path,
    env: Mapping[str, str] | None,
    log_path: Path,
    cpus: frozenset[int] | None = None,
    run_as: RunAs | None = None,
    group: CpuGroup | None = None,
) -> subprocess.Popen[bytes]:
    """Start `command` in a new session (as run_as, in `group`) with stdout+stderr appended
    to log_path.

    The log is opened here, by stackbench, without following a symlink at log_path.
    """
    log = open_log(log_path)
    try:
        return subprocess.Popen(
            list(command),
            cwd=cwd,
            env=None if env is None else dict(env),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=child_setup(cpus, run_as, group),
        )
    finally:
        os.close(log)


def tree(pid: int) -> list[psutil.Process]:
    """The process and all its descendants that are still alive."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def stop(proc: subprocess.Popen[bytes], grace_s: float = 10.0) -> None:
    """SIGTERM the group, wait up to grace_s, then SIGKILL everything left, and remove its
    control group (with anything still in it) if it has one of ours. Idempotent."""
    group = cgroups.group_of(proc.pid)
    members = tree(proc.pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    for p in members:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.terminate()
    _, alive = psutil.wait_procs(members, timeout=grace_s)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    for p in alive + tree(proc.pid):
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    psutil.wait_procs(alive, timeout=5)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    if group is not None:
        group.close()


def free_port(host: str = "127.0.0.1") -> int:
    return free_ports(1, host)[0]


def free_ports(count: int, host: str = "127.0.0.1", exclude: Collection[int] = ()) -> list[int]:
    """`count` distinct free ports, none of them in `exclude`: all stay bound until every one
    is picked, so the kernel cannot hand out the same port twice."""
    with contextlib.ExitStack() as held:
        ports: list[int] = []
        while len(ports) < count:
            s = held.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            s.bind((host, 0))
            port: int = s.getsockname()[1]
            if port not in exclude:
                ports.append(port)
        return ports


def port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def wait_for_unix_socket(path: Path, deadline: float) -> bool:
    while time.monotonic() < deadline:
        if path.exists():
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                try:
                    s.connect(str(path))
                    return True
                except OSError:
                    pass
        time.sleep(0.05)
    return False


def wait_for_tcp(host: str, port: int, deadline: float) -> bool:
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as err:
        return f"(log {path} unreadable: {err.strerror})"
    return "\n".join(text.splitlines()[-lines:]) or "(log is empty)"


def exit_status(proc: subprocess.Popen[bytes]) -> int | None:
    """None while `proc` runs; then its exit status (negative: the signal that killed it), as
    Popen gives it. The child is not reaped (WNOWAIT): its pid cannot be reused by another
    process before `stop` cleans up its group."""
    if proc.returncode is not None:
        return proc.returncode
    try:
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # reaped already
        return proc.poll()
    if info is None:
        return None
    if info.si_code in (os.CLD_KILLED, os.CLD_DUMPED):
        return -info.si_status
    return info.si_status
