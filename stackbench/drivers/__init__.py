"""Load drivers behind one interface: start a load level, then collect its `LoadResult`.

Each driver turns a `LoadRequest` into a command line and parses the tool's output into the
same record. The tool runs pinned to the loader cores; the monitor watches its pid.
"""

import os
import subprocess
import time
from dataclasses import dataclass
from typing import Protocol

from stackbench.config.loadspec import DriverKind, LoadRequest, LoadResult
from stackbench.drivers.ab import AbDriver
from stackbench.drivers.native import NativeDriver
from stackbench.drivers.wrk import WrkDriver
from stackbench.errors import DriverError
from stackbench.lab.cgroups import CpuGroup
from stackbench.lab.procs import child_setup

# How much of a load tool's output a failure keeps (its end, where tools say what went wrong).
OUTPUT_TAIL_CHARS = 800


class Driver(Protocol):
    kind: DriverKind

    def command(self, req: LoadRequest) -> list[str]: ...

    # A separate pass whose results are discarded, for tools without a warm-up of their own
    # (wrk, ab); None when the tool warms up itself or warmup_s is 0.
    def warmup_command(self, req: LoadRequest) -> list[str] | None: ...

    def parse(
        self,
        req: LoadRequest,
        command: list[str],
        stdout: str,
        stderr: str,
        wall_s: float,
        cpu_s: tuple[float, float],
    ) -> LoadResult: ...


@dataclass
class RunningLoad:
    driver: Driver
    request: LoadRequest
    command: list[str]
    proc: subprocess.Popen[str]
    started: float

    @property
    def pid(self) -> int:
        return self.proc.pid

    def finish(self, timeout_s: float) -> LoadResult:
        try:
            stdout, stderr = self.proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            stdout, stderr = self.proc.communicate()
            raise DriverError(
                f"{self.command[0]} did not finish within {timeout_s:.0f} s; "
                f"killed. stderr: {stderr[-500:]}"
            ) from None
        wall = time.monotonic() - self.started
        usage = _child_cpu()
        if self.proc.returncode != 0:
            raise DriverError(
                f"{' '.join(self.command)} exited {self.proc.returncode}: "
                f"{(stderr or stdout)[-OUTPUT_TAIL_CHARS:]}"
            )
        try:
            return self.driver.parse(self.request, self.command, stdout, stderr, wall, usage)
        except ValueError as exc:
            raise unreadable_output(self.command, exc, stdout, stderr) from exc

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def unreadable_output(command: list[str], exc: ValueError, stdout: str, stderr: str) -> DriverError:
    """A load tool that ran but printed output its parser does not recognise (another
    version, a locale, a crash message): it fails the level, its output's tail kept as the
    level's log (engine.watch.loader_failed keeps the message's last lines)."""
    output = "\n".join(part.strip() for part in (stdout, stderr) if part.strip())
    return DriverError(
        f"{command[0]} printed output stackbench cannot read ({exc}); check "
        f"that `{command[0]}` is the version scripts/setup.sh installs. "
        f"Its output ends:\n{output[-OUTPUT_TAIL_CHARS:] or '(nothing)'}"
    )


_last_children = [0.0, 0.0]


def _child_cpu() -> tuple[float, float]:
    """CPU seconds of the child just reaped (difference of the cumulative children times)."""
    t = os.times()
    user, sys = t.children_user - _last_children[0], t.children_system - _last_children[1]
    _last_children[0], _last_children[1] = t.children_user, t.children_system
    return max(user, 0.0), max(sys, 0.0)


def warm_up(driver: Driver, req: LoadRequest, new_session: bool = False) -> list[str] | None:
    """Run the driver's warm-up pass to its end and discard what it measured (warmup_s of the
    same load: JIT, caches and pools reach their working state before the measured pass).
    Returns the command run, None when the driver needs none. `new_session`: in a process
    group of its own (`stackbench agent` kills its groups when the controller is lost)."""
    command = driver.warmup_command(req)
    if command is None:
        return None
    budget = req.settings.warmup_s + 10 * req.settings.timeout_s + 60
    try:
        done = subprocess.run(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=budget,
            preexec_fn=child_setup(req.loader_cpus),
            check=False,
            start_new_session=new_session,
        )
    except FileNotFoundError as exc:
        raise DriverError(
            f"load tool not found: {command[0]} ({driver.kind.value} driver); "
            "run 'make setup' or scripts/setup.sh"
        ) from exc
    except subprocess.TimeoutExpired:
        raise DriverError(
            f"warm-up pass {' '.join(command)} did not finish within {budget:.0f} s; killed"
        ) from None
    if done.returncode != 0:
        raise DriverError(
            f"warm-up pass {' '.join(command)} exited {done.returncode}: "
            f"{(done.stderr or '')[-OUTPUT_TAIL_CHARS:]}"
        )
    return command


def start_load(
    driver: Driver,
    req: LoadRequest,
    warm_up_first: bool = True,
    new_session: bool = False,
    group: CpuGroup | None = None,
) -> RunningLoad:
    """Start the measured pass, after the driver's warm-up pass unless the caller ran it
    (warm_up) already, e.g. before starting its monitor so that the warm-up's CPU is not
    counted in the level's usage. `new_session`: the tool runs in a process group of its own
    (its pid is the group's id). `group`: the control group the monitor counts it in."""
    if warm_up_first:
        warm_up(driver, req, new_session)
    command = driver.command(req)
    _child_cpu()  # reset the baseline: only this tool's CPU counts
    try:
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            preexec_fn=child_setup(req.loader_cpus, group=group),
            start_new_session=new_session,
        )
    except FileNotFoundError as exc:
        raise DriverError(
            f"load tool not found: {command[0]} ({driver.kind.value} driver); "
            "run 'make setup' or scripts/setup.sh"
        ) from exc
    return RunningLoad(driver, req, command, proc, time.monotonic())


_DRIVERS: dict[DriverKind, type[Driver]] = {
    DriverKind.NATIVE: NativeDriver,
    DriverKind.WRK: WrkDriver,
    DriverKind.AB: AbDriver,
}


def get_driver(kind: DriverKind) -> Driver:
    return _DRIVERS[kind]()
