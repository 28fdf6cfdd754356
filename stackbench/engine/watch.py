"""Watching the processes under test: a stack's processes and its data services.

While a level runs, a thread polls every watched process; the first exit stops the load at
once (the rest of the level would only hit a dead port) and the level is recorded as failed
with error class `server-exited`, the exit status or signal and the last lines of the dead
process's log. Between levels the runner polls the same way before it sends load.
"""

import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType

from stackbench.engine.judge import LevelFailure
from stackbench.lab import fs
from stackbench.lab.stack import StackInstance
from stackbench.services import ServiceKind
from stackbench.session.stacks import Services, exited_processes

LOG_TAIL_LINES = 20
POLL_INTERVAL_S = 0.2
# The loader's own error: this many characters of it (its stderr is at the end) are kept.
LOADER_ERROR_CHARS = 4000


@dataclass(frozen=True)
class ProcessExit:
    """A watched process that is no longer running."""

    name: str  # e.g. "node process 'server'" or "service redis"
    # its exit status; negative: the signal that killed it (as subprocess gives); None: not a
    # child of stackbench (an external server's process), whose status it cannot know
    status: int | None
    log_tail: str

    def describe(self) -> str:
        if self.status is None:
            return f"{self.name} is gone (not started by stackbench: its exit status is unknown)"
        return f"{self.name} {describe_exit(self.status)}"


ExitCheck = Callable[[], list[ProcessExit]]


def describe_exit(status: int) -> str:
    """`exited with status 3`, `killed by signal 9 (SIGKILL)`."""
    if status >= 0:
        return f"exited with status {status}"
    number = -status
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"killed by signal {number}"
    return f"killed by signal {number} ({name})"


def server_exited(exits: Sequence[ProcessExit], before_level: bool = False) -> LevelFailure:
    """The failure recorded on a level during (or before) which a watched process died."""
    when = "before the level started" if before_level else "during the level"
    error = "; ".join(e.describe() for e in exits) + f" ({when})"
    tails = "\n".join(f"--- {e.name}:\n{e.log_tail}" for e in exits)
    return LevelFailure("server-exited", error, tails)


def loader_failed(error: str) -> LevelFailure:
    """The load tool could not finish the level (crash, non-zero exit, time-out, bad output).
    The driver's message ends with the tool's stderr: its tail is kept as the log."""
    lines = error.strip().splitlines() or [""]
    return LevelFailure(
        "loader-failed",
        lines[0][:300],
        "\n".join(error[-LOADER_ERROR_CHARS:].splitlines()[-LOG_TAIL_LINES:]),
    )


def stack_exits(
    instance: StackInstance, services: Services, service_kinds: frozenset[ServiceKind]
) -> ExitCheck:
    """The check for one started stack: its processes and the services it uses."""

    def check() -> list[ProcessExit]:
        return [
            ProcessExit(e.name, e.status, fs.log_tail(e.log_path, LOG_TAIL_LINES))
            for e in exited_processes(instance, services.running(), service_kinds)
        ]

    return check


class Watcher:
    """Polls `check` in a thread while a level runs; on the first exit calls `on_exit` once
    (the runner stops the load with it), then stops polling."""

    def __init__(
        self, check: ExitCheck, on_exit: Callable[[], None], interval_s: float = POLL_INTERVAL_S
    ) -> None:
        self._check = check
        self._on_exit = on_exit
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="crash-watch", daemon=True)
        self.fired = False

    def _loop(self) -> None:
        while not self._stop.wait(self._interval_s):
            if self._check():
                self.fired = True
                self._on_exit()
                return

    def __enter__(self) -> "Watcher":
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
