"""`stackbench run`: suite -> plan -> pre-run checks -> runner -> store -> report, with a live
progress view.

Exit codes (errors.ExitCode): 0 every case completed; 4 a stack or service failed (did not
start or verify, a process exited, given up after its restarts); 3 only the load tool failed
(or the machine lacks something); 2 bad input; 128 + n when signal n stopped the run (130
Ctrl-C, 143 SIGTERM, 129 SIGHUP): what was measured is kept and reported, and
`run --resume N` continues it. See engine/outcome.py.
"""

import contextlib
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console
from rich.text import Text

from stackbench.analysis.analysis import Analysis, analyse
from stackbench.analysis.capacity import CapacityAsk
from stackbench.analysis.claims import Readiness
from stackbench.analysis.gate import slo_breaches, slo_rule
from stackbench.commands.claims import (
    plan_readiness,
    print_claims,
    run_claims,
    suite_claims,
    suite_columns,
)
from stackbench.commands.decide import keep_deciding
from stackbench.commands.live import LiveView, signal_number, stop_signals_as_interrupt
from stackbench.commands.plantime import calibrate_before
from stackbench.commands.preflight import print_preflight, probe_lines
from stackbench.commands.resultsdir import (
    STORE_NAME,
    check_results_dir,
    open_existing_store,
    open_store,
    report_write_failure,
    results_dir,
)
from stackbench.commands.settle import settle_advice
from stackbench.config.estimate import Timeline
from stackbench.config.paths import DEFAULT_SUITE
from stackbench.config.plan import Plan, build_plan, settle_note
from stackbench.config.status import StackEntry
from stackbench.config.suite import Suite, parse_suite, resolve_hosts
from stackbench.config.todecide import MAX_LOOKS, remeasure_room
from stackbench.engine.outcome import RunOutcome, run_outcome
from stackbench.engine.pastruns import PastRuns, past_runs
from stackbench.engine.preflight import Asked, ClaimsCheck, preflight
from stackbench.engine.resume import Selection, check_resumable, check_same_request, resume_suite
from stackbench.engine.runner import Runner, RunSetup
from stackbench.errors import ExitCode, StackbenchError
from stackbench.lab import external
from stackbench.lab.cpufeatures import with_machine_deviations
from stackbench.lab.inventory import load_inventory
from stackbench.lab.stack import PlannedParams
from stackbench.remote import stackfiles
from stackbench.report import write_all
from stackbench.report.terminal import print_run
from stackbench.report.termtable import print_wrapped
from stackbench.store.store import Store


@dataclass(frozen=True)
class RunRequest:
    """What `run` (or `calibrate`) is asked to do."""

    suite: Path | None = None  # None: suites/quick.toml (or, resuming, the run's own)
    stacks: tuple[str, ...] = ()  # --stacks (empty: the suite's)
    workloads: tuple[str, ...] = ()  # --workloads (empty: the suite's)
    dry_run: bool = False
    out: Path | None = None  # the results directory (None: the default)
    resume: int | None = None  # the interrupted run to continue
    hosts_file: Path | None = None  # --hosts
    keep_remote: bool = False  # --keep: the other hosts keep their run directories
    until_decided_s: float | None = None  # --until-decided's budget (None: not asked)
    budget_s: float | None = None  # --budget: the most the whole run may take
    no_calibrate: bool = False  # --no-calibrate: an article suite does not calibrate first
    capacity: CapacityAsk = CapacityAsk()  # --target-rps, --price-per-core-hour
    label: str = ""  # --label: a name for the run (compare and history take it)
    settle: bool = False  # --settle: a JIT warm-up lengthened after an unsteady first level
    probe: bool = False  # --probe: the rates the plan would guess are measured first

    @property
    def selection(self) -> Selection:
        return Selection(self.stacks, self.workloads)


def run_command(
    console: Console, request: RunRequest, calibrate: Callable[[], int] | None = None
) -> int:
    return run_suite(console, request, calibrate)[0]


def run_suite(
    console: Console, request: RunRequest, calibrate: Callable[[], int] | None = None
) -> tuple[int, int | None]:
    """Run (or plan) a suite: (the exit code, the stored run's id; None for a dry run).
    `calibrate`: runs `stackbench calibrate` first when an article suite finds the machine
    uncalibrated (config/calibrate_first.py), unless --no-calibrate."""
    store, suite, request = _request_of(console, request)
    inventory = load_inventory(own=suite.own_stacks)
    selection = request.selection
    plan = build_plan(
        suite, inventory, list(selection.stacks) or None, list(selection.workloads) or None
    )
    hosts = resolve_hosts(suite, request.hosts_file)
    stackfiles.check_own_stacks_travel(plan)
    # Every input checked before the plan is printed: --out too (a dry run creates nothing).
    if request.dry_run:
        check_results_dir(request.out)
    else:
        store = store or open_store(request.out, console)
    past = past_runs(results_dir(request.out) / STORE_NAME)
    asked = Asked(
        request.no_calibrate or calibrate is None,
        request.resume is not None,
        request.probe,
        request.dry_run,
        request.budget_s,
        selection,
    )
    claims = _claims_check(inventory, past)
    checks = preflight(plan, inventory, hosts, claims, past, asked, probe_lines(console))
    choice = checks.calibration
    print_preflight(console, checks, request.until_decided_s, request.budget_s)
    if request.settle:
        print_wrapped(console, settle_note(plan), indent=2)
    if request.dry_run:
        return 0, None
    assert store is not None  # opened above
    external.attach_all(plan)
    if choice.run_first and calibrate is not None:
        calibrate_before(console, calibrate)
    started = time.monotonic()  # the budget is the run's, the calibration aside
    setup = RunSetup(
        inventory,
        store,
        results_dir(request.out),
        LiveView(
            console, suite.level_kind, history=checks.past.levels, scripts=checks.past.scripts
        ),
        selection=selection,
        hosts=hosts,
        keep_remote=request.keep_remote,
        decision_looks=MAX_LOOKS if request.until_decided_s is not None else 1,
        machine_warnings=checks.machine_warnings,
        label=request.label,
        settle=settle_advice if request.settle else None,
        remeasure_s=remeasure_room(checks.timeline, suite.load_budget_s),
    )
    return _execute(console, plan, setup, request, started)


def _request_of(console: Console, request: RunRequest) -> tuple[Store | None, Suite, RunRequest]:
    """The suite to run; resuming: the run's own suite (refused if its file changed) and
    selection, and the store it lives in."""
    if request.resume is None:
        return None, with_machine_deviations(parse_suite(request.suite or DEFAULT_SUITE)), request
    store = open_existing_store(request.out, console)
    run = store.run(store.resolve_run(str(request.resume)))
    check_resumable(run)
    check_same_request(run, request.suite, request.selection)
    resumed = replace(request, resume=run.id, stacks=run.only_stacks, workloads=run.only_workloads)
    return store, resume_suite(run, parse_suite), resumed


def _claims_check(inventory: dict[str, StackEntry], past: PastRuns) -> ClaimsCheck[Readiness]:
    """The readiness of the suite's article claims (None: no article), judged with `past`."""

    def check(
        plan: Plan, params: Sequence[PlannedParams], timeline: Timeline
    ) -> tuple[Readiness, ...] | None:
        if suite_claims(plan.suite.name) is None:
            return None  # the suite reproduces no article
        return plan_readiness(plan, inventory, params, timeline, past)

    return check


def _execute(
    console: Console, plan: Plan, setup: RunSetup, request: RunRequest, started: float
) -> tuple[int, int]:
    """The plan run with the live progress view (`setup.progress`), then --until-decided's
    looks within what the budget leaves, then the report: (the exit code, the run's id)."""
    stop_signals_as_interrupt()
    store, out, view = setup.store, request.out, setup.progress
    assert isinstance(view, LiveView)
    runner = Runner(plan, setup, request.resume)
    stopped_by = 0
    with view:
        try:
            runner.execute()
            if request.until_decided_s is not None:
                elapsed = time.monotonic() - started
                rounds, budget = request.until_decided_s, request.budget_s
                keep_deciding(plan, setup, runner.run_id, rounds, budget, elapsed)
        except KeyboardInterrupt as exc:
            view.live.stop()
            stopped_by = signal_number(exc)
        except StackbenchError:
            # E.g. the disk filled up mid-run: report what was measured, then the error.
            view.live.stop()
            if runner.run_id:
                _report_despite(console, store, runner.run_id, out)
            raise
    run_id = runner.run_id
    try:
        if stopped_by:
            return _interrupted(console, store, run_id, request, stopped_by), run_id
        return _finish(console, store, run_id, out, ask=request.capacity), run_id
    except KeyboardInterrupt as exc:  # stopped while writing the report: 'stackbench report'
        return 128 + signal_number(exc), run_id


def _interrupted(
    console: Console, store: Store, run_id: int, request: RunRequest, signum: int
) -> int:
    """Stopped by a signal: the report of what was measured, exit 128 + n."""
    if run_id:
        # A closed terminal (SIGHUP) cannot be written to: the files still are.
        quiet = signum == signal.SIGHUP
        with contextlib.suppress(OSError) if quiet else contextlib.nullcontext():
            console.print(
                Text.assemble(
                    ("interrupted", "yellow"),
                    f" ({signal.Signals(signum).name}): run {run_id} "
                    "keeps its finished levels; continue it with 'stackbench run --resume "
                    f"{run_id}'",
                )
            )
        _finish(console, store, run_id, request.out, quiet=quiet, ask=request.capacity)
    return 128 + signum


def _report_despite(console: Console, store: Store, run_id: int, out: Path | None) -> None:
    """The report of a run that ends with an error; that error, not this one, is the exit."""
    try:
        _finish(console, store, run_id, out)
    except StackbenchError as exc:
        console.print(Text.assemble(("the report could not be written either", "red"), f": {exc}"))


def _finish(
    console: Console,
    store: Store,
    run_id: int,
    out: Path | None,
    quiet: bool = False,
    ask: CapacityAsk | None = None,
) -> int:
    """Write the report files, print the run, return the exit code (engine/outcome.py).
    `ask`: the capacity's target load and price (--target-rps, --price-per-core-hour)."""
    data = store.load_run(run_id)
    directory = results_dir(out) / f"run-{run_id}"
    claims = run_claims(data, load_inventory())
    analysis = analyse(data)
    try:  # the files first: a closed terminal must not cost the report
        target = write_all(data, directory, claims=claims, analysis=analysis, ask=ask)
    except OSError as exc:
        raise report_write_failure(directory, run_id, store.path, exc) from exc
    outcome = with_slo_gate(run_outcome(data), analysis)
    with contextlib.suppress(OSError) if quiet else contextlib.nullcontext():
        # ends at a glance and the capacity at the SLO
        print_run(console, data, suite_columns(data.run.suite_name), analysis, ask=ask)
        print_claims(console, claims)  # an article suite: its claims, confirmed or not
        console.print()
        console.print(Text.assemble(("report: ", "bold"), str(target / "report.html")))
        console.print(
            Text(
                f"(also {target / 'summary.md'}, results.csv, results.json, "
                f"charts/; store {store.path}; rewrite with 'stackbench report "
                f"{run_id}')"
            )
        )
        for problem in outcome.problems:
            console.print(Text.assemble((f"exit {outcome.exit_code}", "red"), f": {problem}"))
    return outcome.exit_code


def with_slo_gate(outcome: RunOutcome, analysis: Analysis) -> RunOutcome:
    """A run that measured everything but broke its SLO (with `gate`, the default) exits 1,
    naming the rule and the levels; failures of the stacks keep their own code."""
    breaches = slo_breaches(analysis)
    if outcome.exit_code != ExitCode.OK or not breaches:
        return outcome
    shown = "; ".join(breaches[:5]) + (
        f"; and {len(breaches) - 5} more" if len(breaches) > 5 else ""
    )
    return RunOutcome(
        ExitCode.RULE_BROKEN,
        (
            f"SLO ({slo_rule(analysis)}) broken at {len(breaches)} level(s): {shown} "
            "(set gate = false in [slo] when breaking it is the finding)",
        ),
    )
