"""`stackbench run`: suite -> plan -> runner -> store -> report, with a live progress view.

Exit codes (errors.ExitCode): 0 every case completed; 4 a stack or service failed (did not
start or verify, a process exited, given up after its restarts); 3 only the load tool failed
(or the machine lacks something); 2 bad input; 128 + n when signal n stopped the run (130
Ctrl-C, 143 SIGTERM, 129 SIGHUP): what was measured is kept and reported, and
`run --resume N` continues it. See engine/outcome.py.
"""

import contextlib
import datetime
import functools
import math
import random
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from rich.console import Console
from rich.live import Live
from rich.text import Text

from stackbench.analysis.analysis import Analysis, analyse, decision_confidence
from stackbench.analysis.gate import slo_breaches, slo_rule
from stackbench.analysis.undecided import LevelKey, Undecided, next_round, undecided
from stackbench.commands.claims import (
    plan_readiness,
    print_claims,
    print_deviations,
    print_readiness,
    run_claims,
    suite_columns,
    suite_cores_note,
)
from stackbench.commands.plantime import print_time, stored_history, this_machine, unbuilt
from stackbench.commands.resultsdir import (
    check_results_dir,
    open_existing_store,
    open_store,
    results_dir,
)
from stackbench.commands.suitefile import shown
from stackbench.config.calibrate_first import calibrate_first
from stackbench.config.claims import claims_path_for
from stackbench.config.estimate import (
    PastLevel,
    Timeline,
    fitting_stacks,
    level_time,
    plan_timeline,
    rate_for,
    setup_key,
)
from stackbench.config.hosts import HostsFile
from stackbench.config.noise import THROUGHPUT_THRESHOLD
from stackbench.config.paths import CALIBRATION_SUITE, CLAIMS_DIR, DEFAULT_SUITE
from stackbench.config.placement import allowed_cpus, format_cpus
from stackbench.config.plan import Level, Plan, Round, build_plan
from stackbench.config.status import StackEntry
from stackbench.config.suite import Suite, parse_suite, resolve_hosts
from stackbench.engine.outcome import RunOutcome, run_outcome
from stackbench.engine.resume import Selection, check_resumable, check_same_request, resume_suite
from stackbench.engine.runner import QUIET_WAIT_S, LevelEvent, Runner
from stackbench.engine.runner import Progress as RunnerProgress
from stackbench.errors import EnvironmentProblem, ExitCode, InputError, StackbenchError
from stackbench.lab.busy import quiet_machine_checks
from stackbench.lab.cpufeatures import with_machine_deviations
from stackbench.lab.inventory import load_inventory
from stackbench.lab.machine import Check, plan_limits
from stackbench.lab.machine import Verdict as CheckVerdict
from stackbench.lab.stack import PlannedParams, planned_params
from stackbench.report import write_all
from stackbench.report.terminal import level_lines, print_run
from stackbench.report.termtable import Cell, Col, print_notes, print_table, print_wrapped
from stackbench.store.records import CalibrationRow
from stackbench.store.store import DISK_FULL_ERRNOS, RunData, Store


def print_plan(
    console: Console,
    plan: Plan,
    params: Sequence[PlannedParams] = (),
    cores_note: str = "",
    timeline: Timeline | None = None,
    not_built: Sequence[str] = (),
) -> None:
    """The plan: load, cores (and `cores_note`: what the server lacks against the article),
    stacks and workloads, (`params`) the parameters each stack will start with, and how long
    it takes (`timeline`; without one, estimated with no measured rates)."""
    suite = plan.suite
    s = suite.load
    console.print(
        Text.assemble(
            ("suite ", "bold"), f"{suite.name} ({shown(suite.path)}) — {suite.description}"
        )
    )
    amount = (
        f"{s.duration_s:g} s"
        if s.duration_s
        else f"{s.requests_per_connection} requests per connection"
        if s.requests_per_connection is not None
        else f"{s.requests} requests"
    )
    console.print(
        Text(
            f"load: driver={s.driver.value} mode={s.mode.value} keepalive={s.keepalive.value} "
            f"{suite.level_kind}={', '.join(f'{v:g}' for v in suite.levels)} "
            f"each {amount} (+{s.warmup_s:g} s warm-up, {s.pause_s:g} s pause), repeat={s.repeat}"
        )
    )
    if plan.interleaved:
        print_wrapped(console, interleaving_note(plan), indent=2)
    if suite.placement.server_host is None:
        print_wrapped(console, disturbance_note(), indent=2)
    p = suite.placement
    cpus = Text(
        f"cpus: server {format_cpus(p.server)}, loader {format_cpus(p.loader)}, "
        f"services {format_cpus(p.services)}"
    )
    if p.shared:
        cpus.append(" (server and loader share cores)", style="yellow")
    console.print(cpus)
    if cores_note:
        print_wrapped(console, cores_note, indent=0, style="yellow")
    rows: list[list[Cell]] = []
    notes: list[tuple[str, str]] = []  # why a stack is unavailable: under the table, full width
    for st in plan.stacks:
        if st.available:
            status = Text("run", style="green")
        else:
            notes.append((f"[{len(notes) + 1}]", f"{st.name}: {st.reason}"))
            status = Text(f"unavailable {notes[-1][0]}", style="red")
        rows.append(
            [
                st.name,
                status,
                ", ".join(c.spec.label for c in st.cases),
                str(sum(len(c.levels) for c in st.cases)),
            ]
        )
    print_table(
        console,
        "plan",
        [Col("stack"), Col("status"), Col("workloads", wrap=True), Col("levels", "right")],
        rows,
    )
    print_notes(console, notes, style="red")
    print_params(console, suite.server_cores, params)
    print_time(console, timeline or plan_timeline(plan), list(not_built))
    for check in plan_limits(plan):
        print_wrapped(
            console,
            f"{check.name}: {check.value}; {check.hint}",
            "limit ",
            indent=2,
            first_style="yellow",
        )
        print_check_commands(console, check)


def disturbance_note() -> str:
    """What a level other processes disturbed becomes (the judge, engine/judge.py)."""
    return (
        "a level on whose cores other processes or steal took more than the "
        f"{THROUGHPUT_THRESHOLD:.0%} noise band is measured again once, after up to "
        f"{QUIET_WAIT_S:g} s (at most the level's length) waiting for the machine to be quiet; "
        "a level still disturbed decides nothing"
    )


def interleaving_note(plan: Plan) -> str:
    """How the repetitions run: round-robin, shuffled, each on a fresh start."""
    rounds = plan.rounds()
    orders = "; ".join(
        f"round {r.repetition + 1 if r.repetition is not None else 1}: "
        + ", ".join(st.name for st in r.order if st.available)
        for r in rounds
    )
    warmups = ", ".join(
        f"{st.name} {st.jit_warmup_s:g} s" for st in plan.stacks if st.available and st.jit_warmup_s
    )
    text = (
        f"repetitions interleaved: {len(rounds)} rounds, each starting every stack afresh "
        f"(a stop and a start between rounds, for every stack) in a shuffled order, so "
        f"that machine drift spreads over all stacks ({orders})"
    )
    return text + (f"; the JIT warm-up repeats on every start ({warmups})" if warmups else "")


def print_params(console: Console, server_cores: int, params: Sequence[PlannedParams]) -> None:
    """Each stack's parameters as it will start: defaults, the suite's values, and what it
    derives from the server's cores (marked), e.g. php-fpm's workers=1 on one core."""
    if not params:
        return
    cores = f"{server_cores} server core" + ("" if server_cores == 1 else "s")
    console.print(Text(f"parameters each stack starts with on {cores} (* = from the cores):"))
    for p in params:
        text = (
            p.problem
            or ", ".join(f"{k}={v}{'*' if k in p.derived else ''}" for k, v in p.values.items())
            or "none"
        )
        print_wrapped(
            console, text, first=f"  {p.stack}: ", indent=4, style="red" if p.problem else ""
        )


# --- live progress ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Slot:
    """One planned load level, in the order the runner executes them."""

    stack: str
    label: str
    index: int | None  # None: a probe of a rate search (its rate is chosen during the run)
    value: float | None
    repetition: int
    repeat: int
    seconds: float  # estimated: warm-up, load, the loader's start and pause
    lead_s: float = 0.0  # estimated: what comes before it (a stack's start, a case's start)


def plan_slots(timeline: Timeline) -> list[Slot]:
    """The timeline's levels, each with the starts that precede it."""
    out = []
    lead = 0.0
    for step in timeline.steps:
        if step.kind in ("calibration", "report"):
            continue  # the calibration has its own live line; the report is the tracker's tail
        if step.kind != "level":
            lead += step.seconds
            continue
        out.append(
            Slot(
                step.stack,
                step.label,
                step.index,
                step.value,
                step.repetition,
                step.repeat,
                step.seconds,
                lead,
            )
        )
        lead = 0.0
    return out


class EtaTracker:
    """Where the run is and how long the plan says is left, from the runner's callbacks.

    The runner reports messages (building, starting, verifying...) and finished levels; a
    level is assumed to start at the last event before it. Levels the runner skips (a stack
    that failed, a sweep stopped early) drop out as soon as a later stack or level reports.
    The ETA covers every estimated step (config/estimate.py): starts, levels and the report
    (`tail_s`); `replan` takes the estimates made again from the levels measured so far."""

    def __init__(
        self,
        slots: Sequence[Slot],
        clock: Callable[[], float] = time.monotonic,
        tail_s: float = 0.0,
    ) -> None:
        self.slots = list(slots)
        self.clock = clock
        self.tail_s = tail_s
        self.position = 0  # index of the next slot to run
        self.started = clock()
        self.since = self.started  # last event: when the current level (probably) began
        self.slot_started = self.started  # the previous level's end: the current lead began
        self.phase = ""  # the last message, until a level finishes

    def _find(self, match: Callable[[Slot], bool]) -> int | None:
        return next(
            (i for i in range(self.position, len(self.slots)) if match(self.slots[i])), None
        )

    def message(self, text: str) -> None:
        self.phase = text
        self.since = self.clock()
        stack = text.split(":", 1)[0]
        current = self.current()
        if current is not None and current.stack != stack:
            found = self._find(lambda s: s.stack == stack)
            if found is not None:  # a later stack began: the earlier levels will not run
                self.position = found
                self.slot_started = self.since

    def level_done(self, stack: str, label: str, index: int, repetition: int) -> None:
        found = self._find(
            lambda s: (
                s.stack == stack
                and s.label == label
                and (s.index is None or (s.index == index and s.repetition == repetition))
            )
        )
        if found is not None:
            self.position = found + 1
        self.phase = ""
        self.since = self.slot_started = self.clock()

    def current(self) -> Slot | None:
        return self.slots[self.position] if self.position < len(self.slots) else None

    def replan(self, slots: Sequence[Slot]) -> None:
        """The same levels estimated again (the timeline rebuilt with the measured rates)."""
        if len(slots) == len(self.slots):
            self.slots = list(slots)

    def remaining_s(self) -> float:
        current = self.current()
        into = self.clock() - self.slot_started
        if current is None:  # the levels are done: the report is left
            return max(0.0, self.tail_s - into)
        later = sum(s.lead_s + s.seconds for s in self.slots[self.position + 1 :])
        return max(0.0, current.lead_s + current.seconds - into) + later + self.tail_s

    def line(self, level_kind: str, width: int | None = None) -> Text:
        """The live line; within `width` (if given) it drops the elapsed time, then cuts what
        runs with an ellipsis: it never wraps."""
        now = self.clock()
        current = self.current()
        total = len(self.slots)
        head = f"▶ {min(self.position + 1, total)}/{total} "
        if current is None:
            what = self.phase or "finishing"
        elif self.phase:
            what = self.phase
        else:
            where = (
                "probe"
                if current.value is None
                else f"rate {current.value:g}/s"
                if level_kind == "rate"
                else f"c={current.value:g}"
            )
            what = (
                f"{current.stack} {current.label} {where} "
                f"rep {current.repetition + 1}/{current.repeat} "
                f"{_clock(min(now - self.since, current.seconds))}/"
                f"{_clock(current.seconds)}"
            )
        elapsed = f" · elapsed {_clock(now - self.started)}"
        eta = f" · ETA ~{_clock(self.remaining_s())}"
        if width is not None and len(head + what + elapsed + eta) > width:
            elapsed = ""
            room = width - len(head + eta)
            if len(what) > room:
                what = what[: max(0, room - 1)] + "…"
        line = Text(head, style="bold", no_wrap=True, overflow="ellipsis")
        line.append(what)
        line.append(elapsed + eta, style="cyan")
        return line


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, handled like Ctrl-C: stop everything, keep and report what was
    measured, exit 128 + the signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


# The stop signal received, if any. The handler raises at once, but Python swallows an
# exception raised where it cannot propagate (e.g. inside logging's at-fork hook while a
# server is spawned): the progress callbacks raise it again from the runner's own frames.
_stop_requested: list[int] = []


def raise_if_stop_requested() -> None:
    if _stop_requested:
        raise Interrupted(_stop_requested.pop())


def _stop_signals_as_interrupt() -> None:
    def handler(signum: int, _frame: object) -> None:
        # One orderly stop: a second SIGTERM/SIGHUP must not cut the clean-up short.
        for other in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(other, signal.SIG_IGN)
        _stop_requested.append(signum)
        raise Interrupted(signum)

    # SIGINT too: Python's own KeyboardInterrupt is lost the same way when it lands in the
    # at-fork hook (a load tool being spawned), and the run went on after a Ctrl-C.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, handler)


def _signal_number(exc: KeyboardInterrupt) -> int:
    _stop_requested.clear()  # it reached the run: nothing left to raise again
    return exc.signum if isinstance(exc, Interrupted) else int(signal.SIGINT)


def _resume_request(
    store: Store, run_ref: int, suite_path: Path | None, selection: Selection
) -> tuple[int, Suite, Selection]:
    """The run to resume, its suite parsed again (refused if the file changed) and its
    selection."""
    run = store.run(store.resolve_run(str(run_ref)))
    check_resumable(run)
    check_same_request(run, suite_path, selection)
    return run.id, resume_suite(run, parse_suite), Selection(run.only_stacks, run.only_workloads)


def hosts_line(suite: Suite, hosts: HostsFile) -> str:
    """Where a multi-host run puts what, in one sentence."""
    placement = suite.placement
    server = hosts.hosts[placement.server_host] if placement.server_host else None
    apart = placement.separate_services_host
    services = None if apart is None else hosts.hosts[apart]
    where = (
        f"server{'' if services else ' and its services'} on host {server.name} ({server.address})"
        if server
        else "server on this machine"
    )
    if services is not None:
        where += (
            f"; data services on host {services.name} ({services.address}), "
            f"reached over the network by {placement.server_host} only"
            + (
                " (memcached, which has no authentication, by any host reaching "
                "that address: memcached_on_network)"
                if placement.memcached_on_network
                else ""
            )
        )
    loaders = ", ".join(f"{h} ({hosts.hosts[h].address})" for h in placement.loader_hosts)
    return (
        f"Hosts ({hosts.source}): {where}; "
        + (
            f"one loader on each of {loaders}, each level split over them and their "
            "histograms merged"
            if loaders
            else "the loader on this machine"
        )
        + "."
    )


def run_command(
    console: Console,
    suite_path: Path | None,
    stacks: list[str] | None,
    workloads: list[str] | None,
    dry_run: bool,
    out: Path | None,
    resume: int | None = None,
    hosts_file: Path | None = None,
    keep_remote: bool = False,
    until_decided_s: float | None = None,
    budget_s: float | None = None,
    no_calibrate: bool = False,
    calibrate: Callable[[], int] | None = None,
) -> int:
    return run_suite(
        console,
        suite_path,
        stacks,
        workloads,
        dry_run,
        out,
        resume,
        hosts_file,
        keep_remote,
        until_decided_s,
        budget_s,
        no_calibrate,
        calibrate,
    )[0]


def run_suite(
    console: Console,
    suite_path: Path | None,
    stacks: list[str] | None,
    workloads: list[str] | None,
    dry_run: bool,
    out: Path | None,
    resume: int | None = None,
    hosts_file: Path | None = None,
    keep_remote: bool = False,
    until_decided_s: float | None = None,
    budget_s: float | None = None,
    no_calibrate: bool = False,
    calibrate: Callable[[], int] | None = None,
) -> tuple[int, int | None]:
    """Run (or plan) a suite: (the exit code, the stored run's id; None for a dry run).
    `until_decided_s`: then keep repeating the levels of undecided comparisons for at most
    that many seconds (run --until-decided). `budget_s` (run --budget): the most the whole
    run may take: a plan estimated longer is refused, and the added rounds get what is left.
    `calibrate`: runs `stackbench calibrate` first when an article suite finds the machine
    uncalibrated (config/calibrate_first.py), unless `no_calibrate`."""
    selection = Selection(tuple(stacks or ()), tuple(workloads or ()))
    store: Store | None = None
    if resume is not None:
        store = open_existing_store(out, console)
        resume, suite, selection = _resume_request(store, resume, suite_path, selection)
    else:
        suite = with_machine_deviations(parse_suite(suite_path or DEFAULT_SUITE))
    inventory = load_inventory(own=suite.stack_folders)
    plan = build_plan(
        suite, inventory, list(selection.stacks) or None, list(selection.workloads) or None
    )
    hosts = resolve_hosts(suite, hosts_file)
    # Every input checked before the plan is printed: --out too (a dry run creates nothing).
    if dry_run:
        check_results_dir(out)
    else:
        store = store or open_store(out, console)
    params = planned_params(plan, inventory)
    readiness = plan_readiness(plan, inventory, params)
    history, scripts, calibration = stored_history(out)
    choice = calibrate_first(
        claims_path_for(CLAIMS_DIR, suite.name) is not None,
        calibration_date(calibration),
        no_calibrate or calibrate is None,
        resume is not None,
        suite.placement.server_host is not None,
    )
    timeline = plan_timeline(
        plan,
        history,
        script_iteration_s=scripts,
        calibration_s=calibration_seconds(inventory, history) if choice.run_first else 0.0,
    )
    # Up front, before anything starts: a dry run and a real run both begin with the plan.
    print_plan(
        console,
        plan,
        params,
        suite_cores_note(suite, readiness),
        timeline,
        unbuilt(plan, inventory),
    )
    if choice.why:
        print_wrapped(console, choice.why, "calibration: ", indent=2)
    if budget_s is not None:
        check_budget(timeline, budget_s)
    print_deviations(console, suite)
    print_readiness(console, readiness)
    if hosts is not None:
        console.print(Text(hosts_line(suite, hosts)))
    if until_decided_s is not None:
        left = until_decided_s
        if budget_s is not None:  # what the plan leaves of the budget
            left = max(0.0, budget_s - timeline.total_s + timeline.seconds_of("calibration"))
        print_wrapped(console, until_decided_note(left), indent=2)
    busy = busy_machine(suite)
    print_machine_checks(console, busy)
    warnings = [f"{c.name}: {c.value}" + (f" ({c.advice})" if c.advice else "") for c in busy]
    if dry_run:
        return 0, None
    _stop_signals_as_interrupt()
    assert store is not None  # opened above
    if choice.run_first and calibrate is not None:
        _calibrate_first(console, calibrate)
    started = time.monotonic()  # the budget is the run's, the calibration aside
    looks = MAX_LOOKS if until_decided_s is not None else 1
    run_id, stopped_by = _execute(
        console,
        plan,
        inventory,
        store,
        out,
        Execution(
            selection,
            resume,
            hosts,
            keep_remote,
            looks,
            tuple(warnings),
            tuple(history),
            scripts,
        ),
    )
    if until_decided_s is not None and budget_s is not None:  # what the plan left of it
        until_decided_s = budget_s - (time.monotonic() - started)
    if until_decided_s is not None and not stopped_by:
        stopped_by = _until_decided(
            console,
            plan,
            inventory,
            store,
            out,
            run_id,
            Execution(selection, run_id, hosts, keep_remote, looks, (), tuple(history), scripts),
            until_decided_s,
        )
    try:
        if stopped_by:
            return _interrupted(console, store, run_id, out, stopped_by), run_id
        return _finish(console, store, run_id, out), run_id
    except KeyboardInterrupt as exc:  # stopped while writing the report: 'stackbench report'
        return 128 + _signal_number(exc), run_id


@dataclass(frozen=True)
class Execution:
    """How a plan is executed: the selection, the run it continues (resume), the hosts."""

    selection: Selection
    resume: int | None
    hosts: HostsFile | None
    keep_remote: bool
    looks: int
    machine_warnings: tuple[str, ...] = ()  # doctor's, stored with the run's environment
    # The levels this machine measured before, for the ETA's estimates (config/estimate.py)
    history: tuple[PastLevel, ...] = ()
    scripts: dict[tuple[str, str], float] = field(default_factory=dict)


def _execute(
    console: Console,
    plan: Plan,
    inventory: dict[str, StackEntry],
    store: Store,
    out: Path | None,
    how: Execution,
) -> tuple[int, int]:
    """Run the plan with the live progress line: (the run's id, the signal that stopped it,
    0 when none did)."""
    suite = plan.suite
    measured: list[PastLevel] = []  # this run's levels: the ETA re-estimates from them

    def timeline() -> Timeline:
        return plan_timeline(plan, [*how.history, *measured], script_iteration_s=how.scripts)

    first = timeline()
    tracker = EtaTracker(plan_slots(first), tail_s=first.seconds_of("report"))
    # Redrawn twice a second from the tracker; transient, and silent when not a terminal.
    live = Live(
        console=console,
        refresh_per_second=2,
        transient=True,
        get_renderable=lambda: tracker.line(suite.level_kind, console.width),
    )
    runner = None
    shown_case: list[tuple[str, str]] = []  # the case of the last level printed
    with live:

        def level_done(event: LevelEvent) -> None:
            raise_if_stop_requested()
            tracker.level_done(event.stack, event.label, event.level.index, event.level.repetition)
            row = event.row
            if row.status == "ok" and row.requests_per_s > 0:
                setup = setup_key(suite.load_for(event.label))
                measured.append(
                    PastLevel(
                        event.stack,
                        event.label,
                        setup,
                        row.level_value,
                        row.requests_per_s,
                        row.started_at,
                    )
                )
                tracker.replan(plan_slots(timeline()))
            case = (event.stack, event.label)
            for line in level_lines(
                event.stack, event.label, event.row, console.width, shown_case[-1:] != [case]
            ):
                live.console.print(Text(line), no_wrap=True, overflow="fold")
            shown_case[:] = [case]

        def message(text: str) -> None:
            raise_if_stop_requested()
            tracker.message(text)
            shown_case.clear()  # the next level names its case again, under this message
            live.console.print(Text(text, style="dim"))

        runner = Runner(
            plan,
            inventory,
            store,
            results_dir(out),
            RunnerProgress(message, level_done),
            how.selection,
            how.resume,
            how.hosts,
            how.keep_remote,
            decision_looks=how.looks,
            machine_warnings=how.machine_warnings,
        )
        stopped_by = 0
        try:
            runner.execute()
        except KeyboardInterrupt as exc:
            live.stop()
            stopped_by = _signal_number(exc)
        except StackbenchError:
            # E.g. the disk filled up mid-run: report what was measured, then the error.
            live.stop()
            if runner.run_id:
                _report_despite(console, store, runner.run_id, out)
            raise
    return runner.run_id, stopped_by


def calibration_date(calibration: CalibrationRow | None) -> str | None:
    if calibration is None:
        return None
    return datetime.datetime.fromtimestamp(calibration.at, datetime.UTC).strftime("%Y-%m-%d")


def calibration_seconds(inventory: dict[str, StackEntry], history: Sequence[PastLevel]) -> float:
    """How long `stackbench calibrate` takes here: its suite's own estimate."""
    plan = build_plan(parse_suite(CALIBRATION_SUITE), inventory, None, None)
    return plan_timeline(plan, history).total_s


def _calibrate_first(console: Console, calibrate: Callable[[], int]) -> None:
    """The calibration before an article suite's run; one that fails leaves the verdicts on
    the assumed spread, and the run goes on."""
    console.print(Text("calibration first: stackbench calibrate", style="bold"))
    code = calibrate()
    if code != ExitCode.OK:
        console.print(
            Text.assemble(
                ("calibration failed", "yellow"),
                f" (exit {code}): the run goes on, its verdicts on the assumed spread",
            )
        )


def check_budget(timeline: Timeline, budget_s: float) -> None:
    """--budget: a plan estimated longer than the budget is refused before anything starts,
    naming the stacks that would fit."""
    needed = timeline.total_s - timeline.seconds_of("calibration")
    if needed <= budget_s:
        return
    fit, seconds = fitting_stacks(timeline, budget_s)
    would = (
        f"--stacks {','.join(fit)} fits (about {seconds / 60:.1f} min)"
        if fit
        else "not even one stack fits"
    )
    raise InputError(
        f"--budget {round(budget_s / 60, 1):g} min: the plan takes about {needed / 60:.1f} min "
        f"(calibration aside); {would}; or give --budget {math.ceil(needed / 60)}m"
    )


def busy_machine(suite: Suite) -> list[Check]:
    """doctor's warnings about a busy machine (other work on the suite's cores, load, steal,
    swap), from a 1-s sample before anything starts; none for a multi-host run (its hosts are
    checked by `hosts check`). The run keeps them, in one line each, with its environment."""
    if suite.placement.server_host is not None:
        return []
    roles = {"server": sorted(suite.placement.server), "loader": sorted(suite.placement.loader)}
    checks = quiet_machine_checks(roles, allowed_cpus())
    return [c for c in checks if c.verdict is not CheckVerdict.OK]


def print_machine_checks(console: Console, checks: Sequence[Check]) -> None:
    """Each warning wrapped, its commands on lines of their own (copied as they are)."""
    for c in checks:
        print_wrapped(
            console,
            f"{c.name}: {c.value}" + (f"; {c.hint}" if c.hint else ""),
            "machine: ",
            indent=2,
            style="yellow",
            first_style="yellow",
        )
        print_check_commands(console, c)


def print_check_commands(console: Console, check: Check) -> None:
    """A check's commands under its text, each on a line of its own, indented deeper than
    the text's own lines and never wrapped: copy and paste works."""
    for command in check.commands:
        console.print(Text(f"    {command}"), soft_wrap=True)


# --- run --until-decided ------------------------------------------------------------------------
MAX_LOOKS = 6  # the first analysis and at most five added rounds: alpha / 6 per look


def until_decided_note(budget_s: float) -> str:
    return (
        f"until decided: after the plan, the levels of undecided comparisons are repeated "
        f"(most decisions per second first, each on a fresh start) for at most "
        f"{round(budget_s / 60, 1):g} min and {MAX_LOOKS - 1} rounds; with up to {MAX_LOOKS} "
        f"looks at the data every verdict uses alpha / {MAX_LOOKS} (95% becomes "
        f"{decision_confidence(MAX_LOOKS):.1%} intervals), so the false-winner rate stays "
        "at 5% despite the repeated looks"
    )


def _until_decided(
    console: Console,
    plan: Plan,
    inventory: dict[str, StackEntry],
    store: Store,
    out: Path | None,
    run_id: int,
    how: Execution,
    budget_s: float,
) -> int:
    """Add rounds of the levels whose comparisons are undecided until none is, the budget is
    spent or the looks are used up; the signal that stopped it (0: none)."""
    started = time.monotonic()
    for look in range(2, how.looks + 1):
        data = store.load_run(run_id)
        found = undecided(analyse(data))
        if found.done:
            console.print(
                Text(
                    "until decided: every comparison that measurement can decide "
                    "is decided" + _hopeless(found)
                )
            )
            return 0
        remaining = budget_s - (time.monotonic() - started)
        cost = functools.partial(_level_seconds, plan, store.past_levels(this_machine()))
        chosen = next_round(found, cost, remaining)
        if not chosen:
            console.print(
                Text(
                    f"until decided: the budget ({round(budget_s / 60, 1):g} min) is spent; "
                    f"{len(found.decidable)} level(s) still in undecided "
                    "comparisons" + _hopeless(found)
                )
            )
            return 0
        extension = extension_plan(plan, data, chosen)
        for case in data.cases:
            if any(k.stack == case.stack and k.label == case.label for k in chosen):
                store.set_case_status(case.id, "pending", case.reason)
        seconds = sum(map(cost, chosen))
        console.print(
            Text(
                f"until decided: look {look} of {how.looks}: repeating "
                f"{len(chosen)} level(s) of undecided comparisons (about "
                f"{seconds:.0f} s of load)",
                style="bold",
            )
        )
        _, stopped_by = _execute(console, extension, inventory, store, out, how)
        if stopped_by:
            return stopped_by
    console.print(Text(f"until decided: the {how.looks} looks are used up"))
    return 0


def _hopeless(found: Undecided) -> str:
    return (
        f"; {found.hopeless} comparison(s) sit too close to the threshold for more "
        "measurement to decide them"
        if found.hopeless
        else ""
    )


def _level_seconds(plan: Plan, history: Sequence[PastLevel], key: LevelKey) -> float:
    """One added level's estimated wall time, from the rates measured so far."""
    load = plan.suite.load_for(key.label)
    rate = rate_for(history, key.stack, key.label, setup_key(load), key.level_value)
    return level_time(load, key.level_value, rate).seconds


def extension_plan(plan: Plan, data: RunData, chosen: Sequence[LevelKey]) -> Plan:
    """One more repetition of each chosen level, in one round on fresh starts."""
    cases = {(c.stack, c.label): c.id for c in data.cases}
    stacks = []
    for st in plan.stacks:
        picked = []
        for case in st.cases:
            levels = tuple(
                Level(
                    lv.index,
                    lv.value,
                    1
                    + max(
                        (
                            r.repetition
                            for r in data.levels
                            if r.case_id == cases.get((st.name, case.spec.label))
                            and r.level_index == lv.index
                        ),
                        default=-1,
                    ),
                )
                for lv in dict((lv.index, lv) for lv in case.levels).values()
                if LevelKey(st.name, case.spec.label, lv.value) in chosen
            )
            if levels:
                picked.append(replace(case, levels=levels))
        if picked:
            stacks.append(replace(st, cases=tuple(picked)))
    order = list(stacks)
    random.Random(f"{plan.suite.name}:{data.run.id}:{len(data.levels)}").shuffle(order)
    return Plan(plan.suite, tuple(stacks), (Round(None, tuple(order)),))


def _interrupted(console: Console, store: Store, run_id: int, out: Path | None, signum: int) -> int:
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
        _finish(console, store, run_id, out, quiet=quiet)
    return 128 + signum


def _report_despite(console: Console, store: Store, run_id: int, out: Path | None) -> None:
    """The report of a run that ends with an error; that error, not this one, is the exit."""
    try:
        _finish(console, store, run_id, out)
    except StackbenchError as exc:
        console.print(Text.assemble(("the report could not be written either", "red"), f": {exc}"))


def _finish(
    console: Console, store: Store, run_id: int, out: Path | None, quiet: bool = False
) -> int:
    """Write the report files, print the run, return the exit code (engine/outcome.py)."""
    data = store.load_run(run_id)
    directory = results_dir(out) / f"run-{run_id}"
    claims = run_claims(data, load_inventory())
    analysis = analyse(data)
    try:  # the files first: a closed terminal must not cost the report
        target = write_all(data, directory, claims=claims, analysis=analysis)
    except OSError as exc:
        raise _report_write_failure(directory, run_id, store, exc) from exc
    outcome = with_slo_gate(run_outcome(data), analysis)
    with contextlib.suppress(OSError) if quiet else contextlib.nullcontext():
        print_run(console, data, suite_columns(data.run.suite_name), analysis)  # ends at a glance
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


def _report_write_failure(
    directory: Path, run_id: int, store: Store, exc: OSError
) -> EnvironmentProblem:
    if exc.errno in DISK_FULL_ERRNOS:
        return EnvironmentProblem(
            f"writing the report to {directory}: the disk is full ({exc.strerror}); every "
            f"finished level is kept in {store.path}. Free some space, then 'stackbench "
            f"report {run_id}'"
        )
    return EnvironmentProblem(
        f"writing the report to {directory} failed: {exc}; fix the "
        f"directory, then 'stackbench report {run_id}'"
    )
