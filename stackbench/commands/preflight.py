"""The pre-run checks as `run` prints them, before anything starts (a dry run stops after
them): the rate probes as they run (or what the estimate guesses without them), the plan, the
parameters each stack starts with, the machine's limits, the article's deviations and the
claims this plan can test, the hosts, --until-decided, a busy machine."""

import math
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from stackbench.analysis.analysis import decision_confidence
from stackbench.analysis.claims import Readiness
from stackbench.commands.claims import print_readiness, suite_cores_note
from stackbench.commands.live import stop_signals_as_interrupt
from stackbench.commands.plantime import print_time, rounds_ahead
from stackbench.commands.suitefile import shown
from stackbench.config.deviations import Deviation
from stackbench.config.estimate import Timeline, fitting_stacks
from stackbench.config.hosts import HostsFile
from stackbench.config.noise import THROUGHPUT_THRESHOLD
from stackbench.config.placement import format_cpus
from stackbench.config.plan import Plan, timings_due
from stackbench.config.suite import Suite
from stackbench.config.todecide import MAX_CLAIM_ROUNDS, MAX_LOOKS, remeasure_room
from stackbench.engine.agreement import compared_note
from stackbench.engine.preflight import Preflight
from stackbench.engine.progress import Phase, ProgressEvent, ProgressSink
from stackbench.engine.runner import QUIET_WAIT_S
from stackbench.errors import InputError
from stackbench.lab.machine import Check
from stackbench.lab.stack import PlannedParams
from stackbench.report.termtable import Cell, Col, print_notes, print_table, print_wrapped


def print_preflight(
    console: Console,
    checks: Preflight[Readiness],
    until_decided_s: float | None = None,
    budget_s: float | None = None,
) -> None:
    """The checks, in the order people read them; a plan longer than `budget_s` (run
    --budget) is refused once its plan is shown (InputError, with what would fit)."""
    suite, timeline = checks.suite, checks.timeline
    guess = checks.probes.guess_note
    if guess:
        print_wrapped(console, guess, "estimate: ", indent=2)
    # --until-decided on the suite's own budget: the rounds its claims are expected to need
    rounds = until_decided_s is not None and budget_s is None
    print_plan(console, checks, suite_cores_note(suite, checks.claims), rounds)
    compared = compared_note(checks.plan)
    if compared:
        print_wrapped(console, compared, indent=2)
    if checks.calibration.why:
        print_wrapped(console, checks.calibration.why, "calibration: ", indent=2)
    if budget_s is not None:
        check_budget(timeline, budget_s)
    elif suite.load_budget_s is not None:
        check_load_budget(suite, timeline, suite.load_budget_s)
    print_deviations(console, checks.deviations)
    print_readiness(console, checks.claims)
    if checks.hosts is not None:
        console.print(Text(hosts_line(suite, checks.hosts)))
    if until_decided_s is not None:
        left = until_decided_s
        if budget_s is not None:  # what the plan leaves of the budget
            left = max(0.0, budget_s - timeline.total_s + timeline.seconds_of("calibration"))
        note = (
            until_decided_note(left)
            if checks.deviations is None  # no article: the comparisons
            else claims_rounds_note(left, None if budget_s else suite.load_budget_s, timeline)
        )
        print_wrapped(console, note, indent=2)
    print_machine_checks(console, checks.busy)


def probe_lines(console: Console) -> ProgressSink:
    """The rate probes as `run` tells them (engine/preflight.py `probe_rates`): the line that
    announces them, then each probe's rate or standalone timing, or its stack's failure."""

    def tell(event: ProgressEvent) -> None:
        if event.phase is Phase.PROBE:
            stop_signals_as_interrupt()  # a stop mid-probe stops its stack, as mid-run
            console.print(event.text)
        elif event.phase is Phase.LEVEL and event.row is not None and event.level is not None:
            rate = event.row.requests_per_s
            console.print(
                f"  probe {event.stack} {event.case} @{event.level.value:g}: {rate:,.0f} req/s"
                if rate
                else f"  probe {event.stack} {event.case} @{event.level.value:g}: no rate "
                f"({event.row.status}); the estimate keeps its guess"
            )
        elif event.phase is Phase.SCRIPT and not event.text.startswith("timing "):
            # a standalone timing's result ("hello x 200: real 0.412 s, ..."), not its start
            console.print(f"  probe {event.stack} {event.text}")
        elif event.phase is Phase.FAILED:
            console.print(f"  probe {event.describe()}")

    return tell


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


def check_load_budget(suite: Suite, timeline: Timeline, load_budget_s: float) -> None:
    """The suite's load_budget_min: a plan whose load this machine's estimate puts beyond it is
    refused before anything starts (the suite was designed to decide within it), naming each
    stack's share and the flag that accepts the longer run."""
    needed = timeline.load_s
    if needed <= load_budget_s:
        return
    shares = ", ".join(f"{name} {s / 60:.1f}" for name, s in timeline.load_by_stack().items())
    raise InputError(
        f"{shown(suite.path)}: key 'load_budget_min': the suite is designed for at most "
        f"{round(load_budget_s / 60, 1):g} min of load, and this plan's estimate here is "
        f"{needed / 60:.1f} min of load (min per stack: {shares}); choose fewer stacks or "
        f"workloads (--stacks, --workloads), or accept the longer run with --budget "
        f"{math.ceil(timeline.total_s / 60)}m"
    )


def print_plan(
    console: Console, checks: Preflight[Readiness], cores_note: str = "", rounds: bool = False
) -> None:
    """The plan: load, cores (and `cores_note`: what the server lacks against the article),
    stacks and workloads, the parameters each stack will start with, how long it takes (with
    `rounds`, and what the until-decided rounds its claims are expected to need add), the
    limits."""
    plan = checks.plan
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
    if suite.script_iterations:
        print_wrapped(console, timings_line(suite), indent=2, first_style="")
    if plan.interleaved:
        print_wrapped(console, interleaving_note(plan), indent=2)
    if suite.placement.server_host is None:
        room = remeasure_room(checks.timeline, suite.load_budget_s)
        print_wrapped(console, disturbance_note(room), indent=2)
    p = suite.placement
    cpus = Text(
        f"cpus: server {format_cpus(p.server)}, loader {format_cpus(p.loader)}, "
        f"services {format_cpus(p.services)}"
    )
    if p.shared:
        cpus.append(" (server and loader share cores)", style="yellow")
    console.print(cpus)
    print_core_counts(console, suite)
    if cores_note:
        print_wrapped(console, cores_note, indent=0, style="yellow")
    print_stacks(console, plan)
    print_external(console, plan)
    print_params(console, 0 if suite.core_counts else suite.server_cores, checks.params)
    ahead = (
        rounds_ahead(checks.timeline, checks.claims, suite.load_budget_s)
        if rounds and checks.claims
        else None
    )
    print_time(console, checks.timeline, list(checks.not_built), suite.load_budget_s, ahead)
    for check in checks.limits:
        print_wrapped(
            console,
            f"{check.name}: {check.value}; {check.hint}",
            "limit ",
            indent=2,
            first_style="yellow",
        )
        print_check_commands(console, check)


def timings_line(suite: Suite) -> str:
    """The standalone timings the plan makes of each stack and workload, before its load."""
    each = suite.script_timings
    total = timings_due(None, suite.load.repeat, each)
    return (
        f"standalone timing: the code x {suite.script_iterations:,} without HTTP, "
        f"{each} in each repetition ({total} a stack and workload), each a fresh process"
    )


def print_core_counts(console: Console, suite: Suite) -> None:
    """[placement] server_cores: where each count runs; a count that leaves the loader no
    core of its own is a deviation the capacity report repeats."""
    if not suite.core_counts:
        return
    console.print(
        Text(
            "server core counts: "
            + ", ".join(str(c.cores) for c in suite.core_counts)
            + " (each stack planned at each, named STACK.Nc; the capacity shows the scaling)"
        )
    )
    for c in suite.core_counts:
        p = c.placement
        line = Text(
            f"  {c.cores} core{'' if c.cores == 1 else 's'}: server {format_cpus(p.server)}, "
            f"loader "
            f"{format_cpus(p.loader)}, services {format_cpus(p.services)}"
        )
        if p.shared:
            line.append(
                " (server and loader share cores: the loader's CPU is taken from the "
                "server at this count, so its rate and scaling are understated)",
                style="yellow",
            )
        console.print(line)


def print_stacks(console: Console, plan: Plan) -> None:
    """The stacks' table: status, workloads, levels; why one is unavailable, under it."""
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


def disturbance_note(room_s: float | None) -> str:
    """What a level other processes disturbed becomes (the judge, engine/judge.py); `room_s`:
    the load the suite's budget leaves beyond the plan, which caps the re-measures."""
    cap = (
        ""
        if room_s is None
        else f", while the {room_s / 60:.1f} min of load the suite's budget leaves beyond the "
        "plan pays for it (the until-decided rounds spend the same room)"
    )
    return (
        "a level on whose cores other processes or steal took more than the "
        f"{THROUGHPUT_THRESHOLD:.0%} noise band is measured again once, after up to "
        f"{QUIET_WAIT_S:g} s (at most the level's length) waiting for the machine to be quiet"
        f"{cap}; a level still disturbed decides nothing"
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
    external = ", ".join(st.name for st in plan.stacks if st.external is not None)
    if external:
        text += f"; not the external stacks ({external}), which stackbench never restarts"
    return text + (f"; the JIT warm-up repeats on every start ({warmups})" if warmups else "")


def print_external(console: Console, plan: Plan) -> None:
    """The servers the user runs: where, what is sampled, and what cannot be measured."""
    for st in plan.stacks:
        ext = st.external
        if ext is None:
            continue
        sampled = (
            f"CPU and memory sampled from pids {', '.join(map(str, ext.pids))} and their children"
            if ext.pids
            else f"CPU and memory sampled from unit {ext.unit}'s main process and its children"
            if ext.unit
            else "CPU and memory not sampled"
        )
        print_wrapped(
            console,
            f"external stack {ext.name}: {ext.url}, run by you: stackbench does not start, "
            f"stop or restart it; {sampled}; its verdicts rest on that one start",
            indent=2,
            style="yellow",
        )
        for line in ext.not_measured():
            print_wrapped(console, line, first="  - ", indent=4)


def print_params(console: Console, server_cores: int, params: Sequence[PlannedParams]) -> None:
    """Each stack's parameters as it will start: defaults, the suite's values, and what it
    derives from the server's cores (marked), e.g. php-fpm's workers=1 on one core.
    `server_cores` 0: each stack at its own core count (STACK.Nc)."""
    if not params:
        return
    cores = (
        "its core count's server cores"
        if server_cores == 0
        else f"{server_cores} server core" + ("" if server_cores == 1 else "s")
    )
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


def print_deviations(console: Console, found: Sequence[Deviation] | None) -> None:
    """An article suite's departures from its article, one line each ("none" when there are
    none); nothing (None) for a suite that reproduces no article."""
    if found is None:
        return
    if not found:
        console.print(Text("deviations from the article: none"))
        return
    console.print(Text(f"deviations from the article ({len(found)}):"))
    for d in found:
        print_wrapped(console, d.sentence(), first="  - ", indent=4)


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


def until_decided_note(budget_s: float) -> str:
    return (
        f"until decided: after the plan, the levels of undecided comparisons are repeated "
        f"(most decisions per second first, each on a fresh start) for at most "
        f"{round(budget_s / 60, 1):g} min and {MAX_LOOKS - 1} rounds; with up to {MAX_LOOKS} "
        f"looks at the data every verdict uses alpha / {MAX_LOOKS} (95% becomes "
        f"{decision_confidence(MAX_LOOKS):.1%} intervals), so the false-winner rate stays "
        "at 5% despite the repeated looks"
    )


def claims_rounds_note(left_s: float, load_budget_s: float | None, timeline: Timeline) -> str:
    """--until-decided on an article suite: what the rounds for its claims may spend (what
    --budget leaves, else the suite's load budget less the plan's estimated load)."""
    spend = (
        f"{left_s / 60:.1f} min"
        if load_budget_s is None
        else f"{max(0.0, load_budget_s - timeline.load_s) / 60:.1f} min of load (the suite's "
        f"{round(load_budget_s / 60, 1):g} min less the plan's {timeline.load_s / 60:.1f}; "
        "--budget gives them the time it leaves instead)"
    )
    return (
        f"until decided: will spend up to {spend} on claims: after the plan, at most "
        f"{MAX_CLAIM_ROUNDS} rounds repeat (fresh starts) the levels of the testable claims "
        "still 'not enough evidence' whose points repetitions can decide, each level its "
        "share of the repetitions they ask for, until every claim is decided, the next round "
        "does not fit, or more measurement cannot decide what is left; with up to "
        f"{MAX_LOOKS} looks every claim's interval is at {decision_confidence(MAX_LOOKS):.1%} "
        "(alpha / looks), so no look adds false answers"
    )


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
