"""`stackbench doctor`: is this machine fit for benchmarking, and what to change if not.

Printed to fit the console: each check's value and advice share one wrapping column, so the
advice (e.g. the sysctl to run) is never cut, even at 80 columns.
"""

from collections.abc import Sequence
from pathlib import Path

import msgspec
from rich.console import Console
from rich.text import Text

from stackbench.analysis.calibration import spread_of
from stackbench.analysis.verdicts import ASSUMED_RUN_SPREAD
from stackbench.commands.resultsdir import open_existing_store
from stackbench.config.placement import Placement, allowed_cpus, default_placement
from stackbench.config.plan import build_plan
from stackbench.config.status import unavailable_reason
from stackbench.config.suite import parse_suite
from stackbench.errors import StackbenchError
from stackbench.lab.busy import quiet_machine_checks
from stackbench.lab.environment import cpu_model, snapshot, tool_versions
from stackbench.lab.inventory import load_inventory
from stackbench.lab.machine import Check, Verdict, all_checks, plan_limits
from stackbench.report.termtable import Cell, Col, print_table
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
    if calibration is None:
        return Check("run-to-run spread", Verdict.WARN, f"not calibrated: verdicts assume "
                     f"{ASSUMED_RUN_SPREAD:.0%}", "stackbench calibrate (about 2 min)")
    spread = spread_of(calibration)
    if calibration.sigma_used > NOISY_SPREAD:
        return Check("run-to-run spread", Verdict.WARN, spread.source,
                     "fresh starts differ a lot on this machine: find what else runs (the "
                     "checks above), then stackbench calibrate again")
    return Check("run-to-run spread", Verdict.OK, spread.source)


NOISY_SPREAD = 0.05  # above the assumed default: a machine noisier than verdicts expect


VERDICT_STYLE = {Verdict.OK: "green", Verdict.WARN: "yellow", Verdict.FAIL: "red"}


def value_and_advice(check: Check) -> Text:
    cell = Text(check.value)
    if check.advice:
        cell.append("\n→ " + check.advice, style=VERDICT_STYLE[check.verdict])
    return cell


def run_doctor(console: Console, suite_path: Path | None = None,
               out: Path | None = None) -> None:
    console.print(Text.assemble(("machine", "bold"), f": {cpu_model()}"))
    checks = all_checks()
    placement = default_placement()
    if suite_path is not None:
        suite = parse_suite(suite_path)
        placement = suite.placement
        plan = build_plan(suite, load_inventory(), None, None)
        checks += plan_limits(plan) or [Check(f"limits for {suite_path.name}", Verdict.OK,
                                              "enough for the suite's largest level")]
    checks += quiet_machine_checks(placement_roles(placement), len(allowed_cpus()))
    checks.append(spread_check(out))
    rows: list[list[Cell]] = [
        [Text(c.name), Text(c.verdict.value, style=VERDICT_STYLE[c.verdict]),
         value_and_advice(c)] for c in checks]
    print_table(console, "checks", [Col("check", wrap=True, min_width=12), Col(""),
                                    Col("value and advice", wrap=True, min_width=40)], rows)
    console.print()
    print_table(console, "runtimes and servers",
                [Col("tool"), Col("version", wrap=True, min_width=30)],
                [[name, version] for name, version in tool_versions().items()])
    console.print()
    stacks: list[list[Cell]] = []
    for name, entry in load_inventory().items():
        status = (Text("available", style="green") if entry.status.available
                  else Text.assemble((entry.status.availability.value, "red"),
                                     f": {unavailable_reason(entry)}"))
        stacks.append([name, status])
    print_table(console, "stacks", [Col("stack"), Col("status", wrap=True, min_width=30)],
                stacks)
