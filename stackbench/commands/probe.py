"""`run`'s rate probes, told to people: the levels counted in requests whose rate this machine
never measured are probed for a few seconds each before the plan is estimated (engine/probe.py)
with `--probe`, and on a real run whose length a budget judges (`--budget`, the suite's
`load_budget_min`); otherwise the plan says what it could only guess and what probing costs."""

from dataclasses import replace

from rich.console import Console

from stackbench.commands.live import stop_signals_as_interrupt
from stackbench.config.hosts import HostsFile
from stackbench.config.plan import Plan
from stackbench.config.status import StackEntry
from stackbench.config.suite import Suite
from stackbench.engine.pastruns import PastRuns
from stackbench.engine.probe import PROBE_S, probe_need, run_probes
from stackbench.engine.progress import Phase, ProgressEvent
from stackbench.engine.resume import Selection
from stackbench.report.termtable import print_wrapped


def probed(
    console: Console,
    plan: Plan,
    past: PastRuns,
    inventory: dict[str, StackEntry],
    where: tuple[Selection, HostsFile | None],
    run_them: bool,
) -> PastRuns:
    """`past` with the probes' rates added (`run_them`), or as it is, said why."""
    need = probe_need(plan, past.levels)
    if need.plan is None:
        return past
    if not run_them:
        print_wrapped(
            console,
            f"{need.guessed} level(s) counted in requests have no rate measured here, so their "
            f"time below is a guess (the ETA corrects it as levels finish); `--probe` first "
            f"measures them: {need.probes} probe(s) of {PROBE_S:g} s, about {need.seconds:.0f} s "
            f"in all",
            "estimate: ",
            indent=2,
        )
        return past
    console.print(
        f"probing {need.probes} rate(s) this machine never measured, for the plan's estimate "
        f"(about {need.seconds:.0f} s; not part of the results)"
    )
    selection, hosts = where
    stop_signals_as_interrupt()  # a stop mid-probe stops its stack, as mid-run
    rates = run_probes(need.plan, inventory, lambda e: _tell(console, e), selection, hosts)
    return replace(past, levels=past.levels + rates)


def probe_wanted(asked: bool, dry_run: bool, budget_s: float | None, suite: Suite) -> bool:
    """--probe, or a real run whose plan a budget judges (--budget, load_budget_min)."""
    budgeted = budget_s is not None or suite.load_budget_s is not None
    return asked or (budgeted and not dry_run)


def _tell(console: Console, event: ProgressEvent) -> None:
    if event.phase is Phase.LEVEL and event.row is not None and event.level is not None:
        rate = event.row.requests_per_s
        console.print(
            f"  probe {event.stack} {event.case} @{event.level.value:g}: {rate:,.0f} req/s"
            if rate
            else f"  probe {event.stack} {event.case} @{event.level.value:g}: no rate "
            f"({event.row.status}); the estimate keeps its guess"
        )
    elif event.phase is Phase.FAILED:
        console.print(f"  probe {event.describe()}")
