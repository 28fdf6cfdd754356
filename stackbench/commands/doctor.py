"""`stackbench doctor`: is this machine fit for benchmarking, and what to change if not.

Printed to fit the console: each check's value and advice share one wrapping column, so the
advice (e.g. the sysctl to run) is never cut, even at 80 columns.
"""

from pathlib import Path

from rich.console import Console
from rich.text import Text

from stackbench.config.plan import build_plan
from stackbench.config.status import unavailable_reason
from stackbench.config.suite import parse_suite
from stackbench.lab.environment import cpu_model, tool_versions
from stackbench.lab.inventory import load_inventory
from stackbench.lab.machine import Check, Verdict, all_checks, plan_limits
from stackbench.report.termtable import Cell, Col, print_table

VERDICT_STYLE = {Verdict.OK: "green", Verdict.WARN: "yellow", Verdict.FAIL: "red"}


def value_and_advice(check: Check) -> Text:
    cell = Text(check.value)
    if check.advice:
        cell.append("\n→ " + check.advice, style=VERDICT_STYLE[check.verdict])
    return cell


def run_doctor(console: Console, suite_path: Path | None = None) -> None:
    console.print(Text.assemble(("machine", "bold"), f": {cpu_model()}"))
    checks = all_checks()
    if suite_path is not None:
        plan = build_plan(parse_suite(suite_path), load_inventory(), None, None)
        checks += plan_limits(plan) or [Check(f"limits for {suite_path.name}", Verdict.OK,
                                              "enough for the suite's largest level")]
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
