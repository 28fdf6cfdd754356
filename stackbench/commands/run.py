"""`stackbench run`: suite -> plan -> runner -> store -> report, with a live progress view."""

import signal
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from stackbench.config.paths import DEFAULT_RESULTS_DIR, DEFAULT_SUITE
from stackbench.config.placement import format_cpus
from stackbench.config.plan import Plan, build_plan
from stackbench.config.suite import parse_suite
from stackbench.engine.runner import LevelEvent, Runner
from stackbench.engine.runner import Progress as RunnerProgress
from stackbench.errors import StackbenchError
from stackbench.lab.inventory import load_inventory
from stackbench.lab.machine import plan_limits
from stackbench.store.store import Store


def results_dir(out: Path | None) -> Path:
    return (out or DEFAULT_RESULTS_DIR).resolve()


def open_store(out: Path | None) -> Store:
    directory = results_dir(out)
    directory.mkdir(parents=True, exist_ok=True)
    return Store(directory / "stackbench.sqlite")


def print_plan(console: Console, plan: Plan) -> None:
    suite = plan.suite
    s = suite.load
    console.print(f"[bold]suite[/] {suite.name} ({suite.path}) — {suite.description}")
    amount = f"{s.duration_s:g} s" if s.duration_s else f"{s.requests} requests"
    console.print(
        f"load: driver={s.driver.value} mode={s.mode.value} keepalive={s.keepalive.value} "
        f"{suite.level_kind}={', '.join(f'{v:g}' for v in suite.levels)} "
        f"each {amount} (+{s.warmup_s:g} s warm-up, {s.pause_s:g} s pause), repeat={s.repeat}")
    p = suite.placement
    console.print(f"cpus: server {format_cpus(p.server)}, loader {format_cpus(p.loader)}, "
                  f"services {format_cpus(p.services)}"
                  + (" [yellow](server and loader share cores)[/]" if p.shared else ""))
    table = Table(title="plan")
    for col in ("stack", "status", "workloads", "levels"):
        table.add_column(col)
    for st in plan.stacks:
        status = "[green]run[/]" if st.available else f"[red]unavailable[/]: {escape(st.reason)}"
        table.add_row(st.name, status, ", ".join(c.spec.label for c in st.cases),
                      str(sum(len(c.levels) for c in st.cases)))
    console.print(table)
    console.print(f"{plan.level_count()} load levels, about {plan.estimated_seconds() / 60:.1f} "
                  "min of load and pauses, plus builds, start-up and verification")
    for check in plan_limits(plan):
        console.print(f"[yellow]limit[/] {check.name}: {check.value}. {check.advice}",
                      highlight=False)


def _level_line(event: LevelEvent) -> str:
    from stackbench.report.terminal import level_line

    return level_line(event.stack, event.label, event.row)


def _sigterm_as_interrupt() -> None:
    def handler(_sig: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def run_command(console: Console, suite_path: Path | None, stacks: list[str] | None,
                workloads: list[str] | None, dry_run: bool, out: Path | None) -> int:
    suite = parse_suite(suite_path or DEFAULT_SUITE)
    inventory = load_inventory()
    plan = build_plan(suite, inventory, stacks, workloads)
    print_plan(console, plan)
    if dry_run:
        return 0
    _sigterm_as_interrupt()
    store = open_store(out)
    progress = Progress(TextColumn("{task.description}"), BarColumn(),
                        TextColumn("{task.completed}/{task.total} levels"), TimeElapsedColumn(),
                        TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=True)
    runner = None
    with progress:
        task = progress.add_task("running", total=plan.level_count())

        def level_done(event: LevelEvent) -> None:
            progress.console.print(_level_line(event), highlight=False)
            progress.advance(task)

        def message(text: str) -> None:
            progress.update(task, description=text[:60])
            progress.console.print(f"[dim]{text}[/]", highlight=False)

        runner = Runner(plan, inventory, store, results_dir(out),
                        RunnerProgress(message, level_done))
        try:
            runner.execute()
        except KeyboardInterrupt:
            console.print(f"[yellow]interrupted[/]: run {runner.run_id} keeps its finished levels")
            _finish(console, store, runner.run_id, out)
            raise
        except StackbenchError:
            # E.g. the load tool vanished mid-run: report what was measured, then the error.
            if runner.run_id:
                _finish(console, store, runner.run_id, out)
            raise
    return _finish(console, store, runner.run_id, out)


def _finish(console: Console, store: Store, run_id: int, out: Path | None) -> int:
    from stackbench.report import write_all
    from stackbench.report.terminal import print_run

    data = store.load_run(run_id)
    print_run(console, data)
    target = write_all(data, results_dir(out) / f"run-{run_id}")
    console.print(f"\n[bold]report:[/] {target / 'report.html'}")
    console.print(f"(also {target / 'summary.md'}, results.csv, results.json; "
                  f"store {store.path}; rewrite with 'stackbench report {run_id}')")
    failed = [c for c in data.cases if c.status == "failed"]
    return 1 if failed and len(failed) == len(data.cases) else 0
