"""`stackbench doctor`: is this machine fit for benchmarking, and what to change if not.

Printed to fit the console: each check's value and advice share one wrapping column, so the
advice is never cut, even at 80 columns. The commands that fix what was found (a sysctl, a
ulimit, a taskset) come after the table, one a line and never wrapped by stackbench, under a
comment naming their check: the block can be copied and pasted into a root shell as it is.
"""

import shlex
from collections.abc import Sequence
from pathlib import Path

import msgspec
from rich.console import Console
from rich.text import Text

from stackbench.analysis.calibration import spread_of
from stackbench.analysis.verdicts import ASSUMED_RUN_SPREAD
from stackbench.commands.invocation import program
from stackbench.commands.resultsdir import open_existing_store
from stackbench.config.paths import DEFAULT_SUITE
from stackbench.config.placement import Placement, allowed_cpus
from stackbench.config.plan import build_plan
from stackbench.config.status import unavailable_reason
from stackbench.config.suite import parse_suite
from stackbench.errors import StackbenchError
from stackbench.lab.busy import quiet_machine_checks
from stackbench.lab.environment import cpu_model, snapshot, tool_versions
from stackbench.lab.inventory import load_inventory
from stackbench.lab.machine import Check, Verdict, all_checks, plan_limits
from stackbench.report.termtable import Cell, Col, print_commands, print_table
from stackbench.store.records import Environment, machine_key


def placement_roles(placement: Placement) -> dict[str, Sequence[int]]:
    """The cores a measurement needs quiet: the server's and the loader's (the services share
    the server's by default)."""
    return {"server": sorted(placement.server), "loader": sorted(placement.loader)}


def spread_check(out: Path | None) -> Check:
    """The machine's run-to-run spread, as calibrated in the results store of `out`."""
    try:
        store = open_existing_store(out)
    except StackbenchError:
        store = None
    calibration = None
    if store is not None:
        try:
            calibration = store.calibration(machine_key(msgspec.convert(snapshot(), Environment)))
        finally:
            store.close()
    calibrate = (f"{program()} calibrate" + (f" --out {shlex.quote(str(out))}" if out else ""),)
    if calibration is None:
        return Check(
            "run-to-run spread",
            Verdict.WARN,
            f"not calibrated: verdicts assume {ASSUMED_RUN_SPREAD:.0%}",
            "measure it (about 2 min)",
            calibrate,
        )
    spread = spread_of(calibration)
    if calibration.sigma_used > NOISY_SPREAD:
        return Check(
            "run-to-run spread",
            Verdict.WARN,
            spread.source,
            "fresh starts differ a lot on this machine: find what else runs (the "
            "checks above), then calibrate again",
            calibrate,
        )
    return Check("run-to-run spread", Verdict.OK, spread.source)


NOISY_SPREAD = 0.05  # above the assumed default: a machine noisier than verdicts expect


VERDICT_STYLE = {Verdict.OK: "green", Verdict.WARN: "yellow", Verdict.FAIL: "red"}


def value_and_advice(check: Check, command_mark: str) -> Text:
    cell = Text(check.value)
    fix = bool(check.commands) and check.verdict is not Verdict.OK  # printed below the table
    if check.hint or fix:
        advice = check.hint + (f" ({command_mark})" if fix else "")
        cell.append("\n→ " + advice.strip(), style=VERDICT_STYLE[check.verdict])
    return cell


def print_fixes(console: Console, checks: Sequence[Check]) -> None:
    """The fixes of the checks not ok, under a comment naming their checks (the same commands
    shown once)."""
    by_commands: dict[tuple[str, ...], list[str]] = {}
    for c in checks:
        if c.commands and c.verdict is not Verdict.OK:
            by_commands.setdefault(c.commands, []).append(c.name)
    print_commands(
        console,
        "commands (as root; one a line, copy them as they are):",
        [(", ".join(names), commands) for commands, names in by_commands.items()],
    )


def suite_checks(suite_path: Path) -> tuple[Placement, list[Check]]:
    """The suite's placement, and the limits its largest level needs (open files, accept
    queue, ports)."""
    suite = parse_suite(suite_path)
    plan = build_plan(suite, load_inventory(), None, None)
    default = suite_path.resolve() == DEFAULT_SUITE.resolve()
    name = suite_path.name + (" (the default suite)" if default else "")
    return suite.placement, plan_limits(plan) or [
        Check(f"limits for {name}", Verdict.OK, "enough for the suite's largest level")
    ]


def run_doctor(console: Console, suite_path: Path | None = None, out: Path | None = None) -> None:
    """SUITE (default: the default suite) decides the cores checked and the limits needed."""
    console.print(Text.assemble(("machine", "bold"), f": {cpu_model()}"))
    placement, limits = suite_checks(suite_path or DEFAULT_SUITE)
    checks = [
        *all_checks(),
        *limits,
        *quiet_machine_checks(placement_roles(placement), allowed_cpus()),
        spread_check(out),
    ]
    rows: list[list[Cell]] = [
        [
            Text(c.name),
            Text(c.verdict.value, style=VERDICT_STYLE[c.verdict]),
            value_and_advice(c, "command below" if len(c.commands) == 1 else "commands below"),
        ]
        for c in checks
    ]
    print_table(
        console,
        "checks",
        [
            Col("check", wrap=True, min_width=12),
            Col(""),
            Col("value and advice", wrap=True, min_width=40),
        ],
        rows,
    )
    print_fixes(console, checks)
    console.print()
    print_table(
        console,
        "runtimes and servers",
        [Col("tool"), Col("version", wrap=True, min_width=30)],
        [[name, version] for name, version in tool_versions().items()],
    )
    console.print()
    stacks: list[list[Cell]] = []
    for name, entry in load_inventory().items():
        status = (
            Text("available", style="green")
            if entry.status.available
            else Text.assemble(
                (entry.status.availability.value, "red"), f": {unavailable_reason(entry)}"
            )
        )
        stacks.append([name, status])
    print_table(console, "stacks", [Col("stack"), Col("status", wrap=True, min_width=30)], stacks)
