"""`stackbench script`: time a workload's code inside one process of a stack's runtime, no HTTP.

The PHP-vs-Node database article timed 1000 iterations of the work before putting a server in
front; every stack provides the same entry point (`[script] command WORKLOAD QUERY ITERATIONS`,
docs/contracts.md section 5). Wall, user and sys time come from the OS (wait4), and the body
the script prints for its last iteration is checked like an HTTP response.
"""

import os
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from stackbench.config.placement import Placement
from stackbench.config.status import StackEntry, unavailable_reason
from stackbench.config.workloads import WorkloadSpec
from stackbench.errors import InputError, StackError
from stackbench.lab.privilege import RunAs
from stackbench.lab.procs import child_setup
from stackbench.lab.stack import StackConfig, StackInstance
from stackbench.lab.templating import render
from stackbench.session.stacks import Services


@dataclass(frozen=True)
class ScriptTiming:
    stack: str
    label: str
    iterations: int
    wall_s: float
    user_s: float
    sys_s: float
    check: str  # "ok", "not checked (...)" or the mismatch

    @property
    def per_iteration_ms(self) -> float:
        return 1000.0 * self.wall_s / self.iterations


def _query(spec: WorkloadSpec) -> str:
    w = spec.workload
    return "" if w.param is None or spec.value is None else f"{w.param}={spec.value}"


def _check(spec: WorkloadSpec, body: bytes) -> str:
    expected = spec.expected_body()
    if expected is None:
        return "not checked (body depends on the database)" if body else "empty output"
    if body.rstrip(b"\n") == expected:
        return "ok"
    return f"wrong output: {body[:60]!r}, expected {expected[:60]!r}"


def run_script(
    entry: StackEntry,
    spec: WorkloadSpec,
    iterations: int,
    placement: Placement,
    params: Mapping[str, str],
) -> ScriptTiming:
    m = entry.manifest
    if m.script is None:
        raise InputError(f"{m.path}: stack '{m.name}' has no [script] entry point")
    if not entry.status.available:
        raise StackError(f"{m.name} is unavailable: {unavailable_reason(entry)}")
    if iterations < 1:
        raise InputError(f"--iterations: must be at least 1, got {iterations}")
    with (
        tempfile.TemporaryDirectory(prefix="stackbench-script-") as tmp,
        Services(Path(tmp) / "services", placement.services) as services,
    ):
        access = services.prepare([spec.name])
        return run_script_with_env(
            entry, spec, iterations, placement, params, access.env, Path(tmp)
        )


def run_script_with_env(
    entry: StackEntry,
    spec: WorkloadSpec,
    iterations: int,
    placement: Placement,
    params: Mapping[str, str],
    service_env: Mapping[str, str],
    scratch: Path | None = None,
) -> ScriptTiming:
    """Run the script entry point with services already running (their env given)."""
    m = entry.manifest
    if m.script is None:
        raise StackError(f"{m.path}: stack '{m.name}' has no [script] entry point")
    with tempfile.TemporaryDirectory(prefix="stackbench-script-") as tmp:
        run_dir = (scratch or Path(tmp)) / "script-run"
        cfg = StackConfig(m, entry.status, run_dir, placement.server, params, service_env)
        instance = StackInstance(cfg)
        instance.build()
        instance.prepare_run_dir()  # owned by the stack user, which the script runs as
        command = [render(a, instance.variables, f"{m.path} [script]") for a in m.script]
        command += [spec.name, _query(spec), str(iterations)]
        return _timed(
            m.name,
            spec,
            iterations,
            command,
            instance.env,
            m.stack_dir,
            placement.server,
            instance.run_as,
        )


def _timed(
    name: str,
    spec: WorkloadSpec,
    iterations: int,
    command: list[str],
    env: Mapping[str, str],
    cwd: Path,
    cpus: frozenset[int],
    run_as: RunAs | None,
) -> ScriptTiming:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                command,
                cwd=cwd,
                env=dict(env),
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                preexec_fn=child_setup(cpus, run_as),
            )
        except OSError as exc:
            raise StackError(f"{name}: cannot run {command[0]}: {exc}") from exc
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        body, errors = out.read(), err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise StackError(
            f"{name}: script exited {proc.returncode}: {' '.join(command)}\n{errors[-1500:]}"
        )
    return ScriptTiming(
        name, spec.label, iterations, wall, usage.ru_utime, usage.ru_stime, _check(spec, body)
    )
