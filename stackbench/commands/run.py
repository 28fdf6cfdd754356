"""`stackbench run`: suite -> plan -> runner -> store -> report, with a live progress view.

Exit codes (errors.ExitCode): 0 every case completed; 4 a stack or service failed (did not
start or verify, a process exited, given up after its restarts); 3 only the load tool failed
(or the machine lacks something); 2 bad input; 128 + n when signal n stopped the run (130
Ctrl-C, 143 SIGTERM, 129 SIGHUP): what was measured is kept and reported, and
`run --resume N` continues it. See engine/outcome.py.
"""

import contextlib
import signal
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from stackbench.config.paths import DEFAULT_RESULTS_DIR, DEFAULT_SUITE
from stackbench.config.placement import format_cpus
from stackbench.config.plan import Plan, build_plan
from stackbench.config.suite import Suite, parse_suite
from stackbench.engine.outcome import run_outcome
from stackbench.engine.recovery import recover_stale_runs
from stackbench.engine.resume import Selection, check_resumable, check_same_request, resume_suite
from stackbench.engine.runner import LevelEvent, Runner
from stackbench.engine.runner import Progress as RunnerProgress
from stackbench.errors import EnvironmentProblem, StackbenchError
from stackbench.lab.inventory import load_inventory
from stackbench.lab.machine import plan_limits
from stackbench.store.store import DISK_FULL_ERRNOS, Store


def results_dir(out: Path | None) -> Path:
    return (out or DEFAULT_RESULTS_DIR).resolve()


def open_store(out: Path | None, console: Console | None = None) -> Store:
    """The results store; runs left `running` by a process that is gone (killed, power loss)
    are marked interrupted and their temporary files removed, and the user is told."""
    directory = results_dir(out)
    directory.mkdir(parents=True, exist_ok=True)
    store = Store(directory / "stackbench.sqlite")
    for recovered in recover_stale_runs(store):
        (console or Console(stderr=True)).print(f"[yellow]note[/]: {recovered.describe()}",
                                                highlight=False)
    return store


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


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, handled like Ctrl-C: stop everything, keep and report what was
    measured, exit 128 + the signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _stop_signals_as_interrupt() -> None:
    def handler(signum: int, _frame: object) -> None:
        # One orderly stop: a second SIGTERM/SIGHUP must not cut the clean-up short.
        for other in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(other, signal.SIG_IGN)
        raise Interrupted(signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, handler)


def _signal_number(exc: KeyboardInterrupt) -> int:
    return exc.signum if isinstance(exc, Interrupted) else int(signal.SIGINT)


def _resume_request(store: Store, run_ref: int, suite_path: Path | None,
                    selection: Selection) -> tuple[int, Suite, Selection]:
    """The run to resume, its suite parsed again (refused if the file changed) and its
    selection."""
    run = store.run(store.resolve_run(str(run_ref)))
    check_resumable(run)
    check_same_request(run, suite_path, selection)
    return run.id, resume_suite(run, parse_suite), Selection(run.only_stacks,
                                                             run.only_workloads)


def run_command(console: Console, suite_path: Path | None, stacks: list[str] | None,
                workloads: list[str] | None, dry_run: bool, out: Path | None,
                resume: int | None = None) -> int:
    selection = Selection(tuple(stacks or ()), tuple(workloads or ()))
    store: Store | None = None
    if resume is not None:
        store = open_store(out, console)
        resume, suite, selection = _resume_request(store, resume, suite_path, selection)
    else:
        suite = parse_suite(suite_path or DEFAULT_SUITE)
    inventory = load_inventory()
    plan = build_plan(suite, inventory, list(selection.stacks) or None,
                      list(selection.workloads) or None)
    print_plan(console, plan)
    if dry_run:
        return 0
    _stop_signals_as_interrupt()
    store = store or open_store(out, console)
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
                        RunnerProgress(message, level_done), selection, resume)
        stopped_by = 0
        try:
            runner.execute()
        except KeyboardInterrupt as exc:
            stopped_by = _signal_number(exc)
        except StackbenchError:
            # E.g. the disk filled up mid-run: report what was measured, then the error.
            if runner.run_id:
                _report_despite(console, store, runner.run_id, out)
            raise
    try:
        if stopped_by:
            return _interrupted(console, store, runner.run_id, out, stopped_by)
        return _finish(console, store, runner.run_id, out)
    except KeyboardInterrupt as exc:  # stopped while writing the report: 'stackbench report'
        return 128 + _signal_number(exc)


def _interrupted(console: Console, store: Store, run_id: int, out: Path | None,
                 signum: int) -> int:
    """Stopped by a signal: the report of what was measured, exit 128 + n."""
    if run_id:
        # A closed terminal (SIGHUP) cannot be written to: the files still are.
        quiet = contextlib.suppress(OSError) if signum == signal.SIGHUP \
            else contextlib.nullcontext()
        with quiet:
            console.print(f"[yellow]interrupted[/] ({signal.Signals(signum).name}): run {run_id} "
                          "keeps its finished levels; continue it with 'stackbench run "
                          f"--resume {run_id}'")
        _finish(console, store, run_id, out, quiet=signum == signal.SIGHUP)
    return 128 + signum


def _report_despite(console: Console, store: Store, run_id: int, out: Path | None) -> None:
    """The report of a run that ends with an error; that error, not this one, is the exit."""
    try:
        _finish(console, store, run_id, out)
    except StackbenchError as exc:
        console.print(f"[red]the report could not be written either[/]: {exc}", highlight=False)


def _finish(console: Console, store: Store, run_id: int, out: Path | None,
            quiet: bool = False) -> int:
    """Write the report files, print the run, return the exit code (engine/outcome.py)."""
    from stackbench.report import write_all
    from stackbench.report.terminal import print_run

    data = store.load_run(run_id)
    directory = results_dir(out) / f"run-{run_id}"
    try:
        target = write_all(data, directory)
    except OSError as exc:
        raise _report_write_failure(directory, run_id, store, exc) from exc
    outcome = run_outcome(data)
    with contextlib.suppress(OSError) if quiet else contextlib.nullcontext():
        print_run(console, data)
        console.print(f"\n[bold]report:[/] {target / 'report.html'}")
        console.print(f"(also {target / 'summary.md'}, results.csv, results.json; "
                      f"store {store.path}; rewrite with 'stackbench report {run_id}')")
        for problem in outcome.problems:
            console.print(f"[red]exit {outcome.exit_code}[/]: {problem}", highlight=False)
    return outcome.exit_code


def _report_write_failure(directory: Path, run_id: int, store: Store,
                          exc: OSError) -> EnvironmentProblem:
    if exc.errno in DISK_FULL_ERRNOS:
        return EnvironmentProblem(
            f"writing the report to {directory}: the disk is full ({exc.strerror}); every "
            f"finished level is kept in {store.path}. Free some space, then 'stackbench "
            f"report {run_id}'")
    return EnvironmentProblem(f"writing the report to {directory} failed: {exc}; fix the "
                              f"directory, then 'stackbench report {run_id}'")
