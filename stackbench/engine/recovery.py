"""Runs left `running` by a process that is gone (SIGKILL, OOM killer, power loss).

Each run records its owner: pid, the pid's start time and the host. The next stackbench
command (run, results, report) finds the runs whose owner is gone, marks them `interrupted`
and removes their temporary files, so the run can be reported and resumed
(`stackbench run --resume N`). A pid alone is not enough: after a reboot or a long time the
same number may belong to another process, whose start time then differs.

`owner_gone` and `removable_scratch` decide; `recover_stale_runs` acts.
"""

import os
import shutil
import socket
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

from stackbench.store.records import RunRow
from stackbench.store.store import Store

# psutil derives a start time from the boot time and the process's start tick: the same
# process always gets the same value (to the tick); another process started in the same
# second as the owner is as good as impossible.
START_TIME_TOLERANCE_S = 1.0
SCRATCH_PREFIX = "stackbench-"


@dataclass(frozen=True)
class Owner:
    pid: int
    started_at: float
    host: str


def current_owner() -> Owner:
    return Owner(os.getpid(), psutil.Process().create_time(), socket.gethostname())


def process_start_time(pid: int) -> float | None:
    """The start time of process `pid`, or None when there is no such process."""
    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None
    except psutil.AccessDenied:  # it exists; its start time is unknown: count it as alive
        return -1.0


def owner_gone(run: RunRow, host: str, start_time_of: Callable[[int], float | None]) -> bool:
    """Is this run marked running although the process that ran it is gone?

    Only a run on this host with a recorded owner can be judged; `start_time_of` gives a
    pid's start time (None: no such process; negative: exists but unknown)."""
    if run.status != "running" or run.owner_pid <= 0:
        return False
    if run.owner_host and run.owner_host != host:
        return False  # a store shared with another machine: its processes are not ours to see
    started = start_time_of(run.owner_pid)
    if started is None:
        return True
    if started < 0:
        return False
    return abs(started - run.owner_started_at) > START_TIME_TOLERANCE_S


def removable_scratch(path_text: str, temp_root: Path) -> Path | None:
    """The scratch directory to remove, or None: only a directory directly inside the
    system temp dir, named stackbench-*, not a symlink, is ever removed (the path comes from
    the store file, which anyone able to write it could have edited)."""
    if not path_text:
        return None
    path = Path(path_text)
    if not path.is_absolute() or path.is_symlink() or not path.is_dir():
        return None
    real = path.resolve()
    if real.parent != temp_root.resolve() or not real.name.startswith(SCRATCH_PREFIX):
        return None
    return real


@dataclass(frozen=True)
class Recovered:
    run_id: int
    owner_pid: int
    removed: Path | None  # the scratch directory removed, if any

    def describe(self) -> str:
        removed = f"; removed its temporary files {self.removed}" if self.removed else ""
        return (
            f"run {self.run_id} was left running by process {self.owner_pid}, which is "
            f"gone: marked interrupted{removed}. Continue it with 'stackbench run "
            f"--resume {self.run_id}'"
        )


def recover_stale_runs(
    store: Store,
    host: str | None = None,
    start_time_of: Callable[[int], float | None] = process_start_time,
    temp_root: Path | None = None,
) -> list[Recovered]:
    """Mark every run whose owner is gone `interrupted` and remove its scratch directory."""
    host = socket.gethostname() if host is None else host
    root = Path(tempfile.gettempdir()) if temp_root is None else temp_root
    recovered = []
    for run in store.running_runs():
        if not owner_gone(run, host, start_time_of):
            continue
        store.finish_run(run.id, "interrupted")
        scratch = removable_scratch(run.scratch_dir, root)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        recovered.append(Recovered(run.id, run.owner_pid, scratch))
    return recovered
