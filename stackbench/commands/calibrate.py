"""`stackbench calibrate [SUITE]`: measure this machine's run-to-run spread and store it.

Runs a calibration suite (default suites/calibrate.toml: one stack, one workload, one level,
repeated on fresh starts), then stores the spread of its repetitions per machine; every later
verdict on this machine uses it instead of the assumed default (analysis/calibration.py)."""

from pathlib import Path

from rich.console import Console
from rich.text import Text

from stackbench.analysis.calibration import (
    MIN_STARTS,
    calibration_of,
    drift_warning,
    spread_of,
)
from stackbench.commands.resultsdir import open_existing_store
from stackbench.commands.run import RunRequest, run_suite
from stackbench.config.paths import CALIBRATION_SUITE
from stackbench.config.suite import parse_suite
from stackbench.errors import EnvironmentProblem, ExitCode, InputError


def calibrate_command(console: Console, suite_path: Path | None, out: Path | None) -> int:
    path = suite_path or CALIBRATION_SUITE
    check_calibration_suite(path)
    code, run_id = run_suite(console, RunRequest(suite=path, out=out))
    if run_id is None or code != ExitCode.OK:
        console.print(
            Text.assemble(
                ("calibration not stored", "red"), ": the calibration run did not finish cleanly"
            )
        )
        return code or ExitCode.STACK_FAILED
    store = open_existing_store(out, console)
    try:
        record = calibration_of(store.load_run(run_id))
    except EnvironmentProblem as exc:  # the run is stored; its spread is not one to keep
        console.print(Text.assemble(("calibration not stored", "red"), f": {exc}"))
        return exc.exit_code
    store.add_calibration(record)
    spread = spread_of(store.calibration(record.machine))
    console.print()
    console.print(Text.assemble(("calibrated: ", "bold"), spread.source))
    console.print(
        Text(
            f"stored for machine {record.machine}; every verdict on this machine "
            "uses it from now on, including reports rewritten from older runs"
        )
    )
    warning = drift_warning(record.figures)
    if warning:
        console.print(Text.assemble(("warning", "yellow"), f": {warning}"))
    return ExitCode.OK


def check_calibration_suite(path: Path) -> None:
    """One stack, one workload, one level, repeated at least MIN_STARTS times."""
    suite = parse_suite(path)
    problems = []
    if len(suite.stacks) != 1:
        problems.append(f"key 'stacks' lists {len(suite.stacks)}, a calibration takes one")
    if len(suite.workloads) != 1:
        problems.append(f"key 'workloads' lists {len(suite.workloads)}, a calibration takes one")
    if len(suite.levels) != 1:
        problems.append(f"[load] has {len(suite.levels)} levels, a calibration takes one")
    if suite.load.repeat < MIN_STARTS:
        problems.append(
            f"[load] repeat = {suite.load.repeat}, a calibration needs at least "
            f"{MIN_STARTS} fresh starts"
        )
    if suite.search is not None:
        problems.append("[search] is set: a calibration repeats one fixed level")
    if problems:
        raise InputError(f"{path}: not a calibration suite: " + "; ".join(problems))
