"""The results directory of `--out` and its store, checked before any work.

`run` creates the directory and its store before it prints the plan; `run --dry-run` only
checks that it could (a probe directory made and removed at once, nothing left); the commands
that read (`results`, `report`, `compare`, `run --resume`) create nothing: a missing directory
or store is bad input naming `--out`. `report --to DIR` (a report written elsewhere) is checked
the same way before any work: a folder that exists or can be created, and is writable. Every
problem is the project's own error naming the
flag and the path, with what to do.
"""

import errno
import os
import tempfile
from pathlib import Path

from rich.console import Console
from rich.text import Text

from stackbench.config.paths import DEFAULT_RESULTS_DIR
from stackbench.engine.recovery import recover_stale_runs
from stackbench.errors import EnvironmentProblem, InputError, StackbenchError
from stackbench.store.store import DISK_FULL_ERRNOS, Store

STORE_NAME = "stackbench.sqlite"


def results_dir(out: Path | None) -> Path:
    return (out or DEFAULT_RESULTS_DIR).resolve()


def _flag(out: Path | None) -> str:
    """How the messages name the directory: the flag and the path the user gave."""
    return (
        f"--out {out}"
        if out is not None
        else f"the results directory {DEFAULT_RESULTS_DIR} (the default of --out)"
    )


def _unusable(out: Path | None, exc: OSError, what: str) -> StackbenchError:
    if exc.errno in DISK_FULL_ERRNOS:
        return EnvironmentProblem(
            f"{_flag(out)}: {what}: the disk is full ({exc.strerror}); "
            "free some space or give --out another disk"
        )
    return InputError(
        f"{_flag(out)}: {what} ({exc.strerror or exc}); give --out a directory you can write to"
    )


def _probe_writable(directory: Path, flag: str) -> None:
    """`directory` (or its nearest existing parent) is a folder this process can create and
    write files in: probed with a directory made and removed at once, nothing left behind."""
    existing = next(p for p in (directory, *directory.parents) if p.exists())
    if not existing.is_dir():
        raise InputError(f"{flag}: {existing} is a file, not a folder; give a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".stackbench-probe-", dir=existing))
    except OSError as exc:
        if exc.errno in DISK_FULL_ERRNOS:
            raise EnvironmentProblem(
                f"{flag}: the disk of {existing} is full "
                f"({exc.strerror}); free some space or give another "
                "folder"
            ) from exc
        raise InputError(
            f"{flag}: cannot write in {existing} ({exc.strerror or exc}); give "
            "a folder you can write to"
        ) from exc


def check_report_dir(to: Path) -> Path:
    """`report --to DIR`: DIR exists or can be created, is a folder, and is writable."""
    directory = to.resolve()
    _probe_writable(directory, f"--to {to}")
    return directory


def check_results_dir(out: Path | None) -> Path:
    """`run --dry-run`: the results directory could be created and written (probed in its
    nearest existing folder with a directory made and removed at once) and an existing store
    there is one this stackbench reads; nothing is left behind."""
    directory = results_dir(out)
    existing = next(p for p in (directory, *directory.parents) if p.exists())
    if not existing.is_dir():
        raise _unusable(
            out,
            NotADirectoryError(errno.ENOTDIR, "not a directory"),
            f"{existing} is a file, not a folder",
        )
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".stackbench-probe-", dir=existing))
    except OSError as exc:
        raise _unusable(out, exc, f"cannot create the results directory in {existing}") from exc
    if (directory / STORE_NAME).exists():
        Store(directory / STORE_NAME, create=False).close()
    return directory


def open_store(out: Path | None, console: Console | None = None) -> Store:
    """`run`: the results directory and its store, created if need be (checked with the
    store's schema before anything is started)."""
    directory = results_dir(out)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unusable(out, exc, "cannot create the results directory") from exc
    return _recovered(Store(directory / STORE_NAME), console)


def open_existing_store(out: Path | None, console: Console | None = None) -> Store:
    """The commands that read stored runs: the store must be there; nothing is created."""
    path = results_dir(out) / STORE_NAME
    if not path.is_file():
        why = "is not a file" if path.exists() else "does not exist"
        raise InputError(
            f"{_flag(out)}: no results store there ({path} {why}); "
            "give the --out of an earlier 'stackbench run' (nothing was "
            "created)"
        )
    return _recovered(Store(path, create=False), console)


def _recovered(store: Store, console: Console | None) -> Store:
    """Runs left `running` by a process that is gone (killed, power loss) are marked
    interrupted and their temporary files removed, and the user is told."""
    for recovered in recover_stale_runs(store):
        (console or Console(stderr=True)).print(
            Text.assemble(("note", "yellow"), f": {recovered.describe()}")
        )
    return store


def report_write_failure(
    directory: Path, run_id: int, store_path: Path | str, exc: OSError
) -> EnvironmentProblem:
    """Why a run's report could not be written, and what to do (the levels are kept)."""
    if exc.errno in DISK_FULL_ERRNOS:
        return EnvironmentProblem(
            f"writing the report to {directory}: the disk is full ({exc.strerror}); every "
            f"finished level is kept in {store_path}. Free some space, then 'stackbench "
            f"report {run_id}'"
        )
    return EnvironmentProblem(
        f"writing the report to {directory} failed: {exc}; fix the "
        f"directory, then 'stackbench report {run_id}'"
    )
