"""`stackbench doctor`: is this machine fit for benchmarking, and what to change if not."""

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from stackbench.config.plan import build_plan
from stackbench.config.status import unavailable_reason
from stackbench.config.suite import parse_suite
from stackbench.lab.environment import cpu_model, tool_versions
from stackbench.lab.inventory import load_inventory
from stackbench.lab.machine import Check, Verdict, all_checks, plan_limits


def run_doctor(console: Console, suite_path: Path | None = None) -> None:
    console.print(f"[bold]machine[/]: {cpu_model()}")
    checks = all_checks()
    if suite_path is not None:
        plan = build_plan(parse_suite(suite_path), load_inventory(), None, None)
        checks += plan_limits(plan) or [Check(f"limits for {suite_path.name}", Verdict.OK,
                                              "enough for the suite's largest level")]
    table = Table(title="checks")
    for col in ("check", "", "value", "advice"):
        table.add_column(col)
    colours = {Verdict.OK: "green", Verdict.WARN: "yellow", Verdict.FAIL: "red"}
    for c in checks:
        table.add_row(c.name, f"[{colours[c.verdict]}]{c.verdict.value}[/]", c.value, c.advice)
    console.print(table)
    tools = Table(title="runtimes and servers")
    tools.add_column("tool")
    tools.add_column("version")
    for name, version in tool_versions().items():
        tools.add_row(name, version)
    console.print(tools)
    stacks = Table(title="stacks")
    stacks.add_column("stack")
    stacks.add_column("status")
    for name, entry in load_inventory().items():
        stacks.add_row(name, "[green]available[/]" if entry.status.available
                       else f"[red]unavailable[/]: {escape(unavailable_reason(entry))}")
    console.print(stacks)
