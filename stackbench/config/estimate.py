"""How long a plan takes on this machine: pure.

A level counted in seconds lasts its duration. A standalone timing lasts its iterations at the
seconds one took here before (`iteration_s`: this stack's, else the slowest other stack's
timing of the workload, else a guess the plan names with the minutes it makes). A level
counted in requests (ab -n, the native loader's -n, requests_per_connection) lasts as long as
the stack takes to answer them, which only a measured rate tells: the rate this machine
measured earlier for the same stack, workload, load setup and level (the store), else the
nearest level of that case, else the slowest other stack's at the nearest level, else a
conservative guess; the plan labels each level's source, and the last two as guesses. A
closed loop of C connections cannot take longer than ceil(N / C) request timeouts, nor longer
than the engine lets a level run (`level_budget_s`), so no estimate exceeds those bounds.

Around the levels a run also spends time the load does not: its start (the machine check,
the data services' first start), every fresh start of a stack (its services' seed data
restored, start-up, the previous stack stopped), each case's verification, standalone timing
and JIT warm-up pass, the loader's start and the judge's commit of every level, and at the
end the analysis and the report files. `OVERHEADS` holds those costs as they were measured.

The live ETA rebuilds the timeline with the levels measured so far added to the history (as
its newest entries), so each remaining level is re-estimated from the rate its stack just gave.
"""

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from stackbench.config.loadspec import LoadSettings, Mode, level_budget_s
from stackbench.config.plan import Plan, PlannedCase, PlannedStack, timings_in

# A level counted in requests that this machine never measured for its stack, workload and
# setup: planned at this rate, and labelled a guess. Low on purpose (a plan that ends early
# disappoints less than one that overruns): measured rates on the 2-core development machine
# run from 15 req/s (sha256 n=1000 on PHP) to tens of thousands (hello with keep-alive).
GUESS_RPS = 50.0
RECENT = 5  # the newest measurements of a level that its rate is the median of

RateSource = Literal["duration", "measured", "nearby", "other stack", "guess", "timeout bound"]
StepKind = Literal["run start", "calibration", "stack start", "case start", "level", "report"]


@dataclass(frozen=True)
class Overheads:
    """What a run spends beside the load itself, in seconds (see the module's docstring)."""

    run_start_s: float  # the machine check and the data services' first start
    stack_start_s: float  # per fresh start of a stack: services reset, start-up, the stop after
    case_start_s: float  # per case and start: verification and the load body's hash
    per_level_s: float  # per level beyond its warm-up and load: loader start, judge, commit
    report_s: float  # the analysis and the report files
    report_per_case_s: float  # ... and their charts, per stack x workload
    script_iteration_s: float  # one standalone iteration when none was measured: a guess


# Measured on the 2-core development machine from the timestamped output of two real runs
# (2026-11-25, builds cached, the machine shared with other jobs: load average 5 to 12):
# `stackbench run suites/quick.toml` (18 native levels of 12 s, 3 stacks, no services) and
# `suites/db-html-report-short.toml` (6 ab levels of 1,000 requests, MariaDB). Each figure is
# the mean of the run's events, rounded up:
# - run start, the plan printed to the first stack's start: 2.7 s (quick), 6.1 s (with
#   MariaDB's first start);
# - stack start, the previous level's pause to this stack's first verification: 0.7 to 1.5 s,
#   and 0.6 s more to restore the services' seed data;
# - case start, verification and the load body's hash: 0.05 to 0.55 s, 2.6 s once (node
#   sha256), 0.4 s on average over quick's 9 cases;
# - per level, its wall time less warm-up, load and pause: 0.24 s (native), 0.1 s (ab);
# - the report, the last level to the report's path printed: 11.5 s for 2 cases, 53 s for 9
#   (the charts are drawn per case): 2 s plus 5.5 s per case.
OVERHEADS = Overheads(
    run_start_s=4.0,
    stack_start_s=2.0,
    case_start_s=0.4,
    per_level_s=0.25,
    report_s=2.0,
    report_per_case_s=5.5,
    script_iteration_s=0.01,
)


@dataclass(frozen=True)
class PastLevel:
    """A level measured on this machine: earlier (the store) or earlier in this run."""

    stack: str  # the stack or variant name, as planned
    label: str  # the workload with its parameters
    setup: str  # setup_key(): what else decides the rate
    value: float  # connections (closed loop) or requests/s (open loop)
    requests_per_s: float
    at: float  # when it started (epoch seconds): the newest count first
    # Which fresh start of its stack measured it (the store's: the run, its suite, the
    # repetition; each is a fresh start): the design check's spread between starts reads it
    suite: str = ""
    run_id: int = 0
    repetition: int = 0


def setup_key(settings: LoadSettings) -> str:
    """What besides the stack, workload and level decides a rate: the driver, the loop and
    keep-alive (a new connection per request costs more than the request)."""
    return f"{settings.driver.value}/{settings.mode.value}/keepalive-{settings.keepalive.value}"


@dataclass(frozen=True)
class Rate:
    requests_per_s: float
    source: RateSource
    detail: str


def rate_for(
    history: Sequence[PastLevel], stack: str, label: str, setup: str, value: float
) -> Rate | None:
    """The rate to plan a level with: the median of the newest measurements at this very
    level, else of those at the nearest level measured (on the log scale), else the same
    from another stack (a rough guess: stacks differ many times over), else None."""
    same = [p for p in history if (p.stack, p.label, p.setup) == (stack, label, setup)]
    if not same:
        others = [p for p in history if (p.label, p.setup) == (label, setup)]
        if not others:
            return None
        near = min(others, key=lambda p: (abs(math.log(p.value / value)), -p.value)).value
        # The slowest stack measured there: a plan that ends early beats one that overruns.
        rps = min(p.requests_per_s for p in others if p.value == near)
        return Rate(rps, "other stack", f"{rps:,.0f} req/s, the slowest other stack at {near:g}")
    nearest = min(same, key=lambda p: (abs(math.log(p.value / value)), -p.value)).value
    at = sorted((p for p in same if p.value == nearest), key=lambda p: p.at)[-RECENT:]
    rps = statistics.median(p.requests_per_s for p in at)
    where = f"{len(at)} level(s) measured here"
    if nearest == value:
        return Rate(rps, "measured", f"{rps:,.0f} req/s, {where}")
    return Rate(rps, "nearby", f"{rps:,.0f} req/s, {where} at {nearest:g} instead of {value:g}")


@dataclass(frozen=True)
class LevelTime:
    seconds: float  # the level's wall time: warm-up, load, overhead and pause
    load_s: float  # its measured pass alone
    source: RateSource
    detail: str  # where a request-counted level's rate came from; "" for a duration


def request_count(settings: LoadSettings, value: float) -> int | None:
    """The requests a level sends; None when its duration ends it (as LoadRequest counts)."""
    if settings.requests_per_connection is not None:
        return settings.requests_per_connection * max(1, int(value))
    return settings.requests


def timeout_bound_s(settings: LoadSettings, connections: float, requests: int) -> float:
    """The longest a closed-loop level can last: each connection sends its share of the
    requests one after another, each given up after the timeout; and the engine stops a
    level that overruns its budget."""
    rounds = math.ceil(requests / max(1, int(connections)))
    return min(rounds * settings.timeout_s, level_budget_s(settings))


def warmup_pass_s(settings: LoadSettings) -> float:
    """wrk and ab warm up in a pass of whole seconds; the native loader for warmup_s."""
    if settings.warmup_s <= 0:
        return 0.0
    if settings.driver.value == "native":
        return settings.warmup_s
    return float(max(1, math.ceil(settings.warmup_s)))


def level_time(
    settings: LoadSettings,
    value: float,
    rate: Rate | None,
    overheads: Overheads = OVERHEADS,
) -> LevelTime:
    """One level's wall time, from its duration or from its requests at `rate` (None: never
    measured here, planned at GUESS_RPS and labelled a guess), within the timeout bound."""
    fixed = warmup_pass_s(settings) + overheads.per_level_s + settings.pause_s
    count = request_count(settings, value)
    if count is None:
        load = settings.duration_s or 0.0
        return LevelTime(load + fixed, load, "duration", "")
    if settings.mode is Mode.OPEN:  # the rate is the level itself
        load = count / value
        return LevelTime(load + fixed, load, "measured", f"{count:,} requests at {value:g}/s")
    used = rate or Rate(GUESS_RPS, "guess", f"a guess of {GUESS_RPS:g} req/s (never measured)")
    load = count / used.requests_per_s
    bound = timeout_bound_s(settings, value, count)
    if load > bound:
        detail = f"{used.detail}; at most {bound:.0f} s: its requests' timeouts bound it"
        # A guess stays a guess; a measured rate this slow means requests time out.
        source: RateSource = "guess" if used.source in ("guess", "other stack") else "timeout bound"
        return LevelTime(bound + fixed, bound, source, detail)
    return LevelTime(load + fixed, load, used.source, used.detail)


@dataclass(frozen=True)
class Step:
    """One thing the run does, in the order it does it, with its estimated seconds."""

    kind: StepKind
    seconds: float
    stack: str = ""
    label: str = ""
    index: int | None = None  # a level's index (None: a probe of a rate search)
    value: float | None = None
    repetition: int = 0
    repeat: int = 1
    time: LevelTime | None = None  # a level's estimate


@dataclass(frozen=True)
class Timeline:
    steps: tuple[Step, ...]
    overheads: Overheads = OVERHEADS
    # standalone timings planned at the guessed overheads.script_iteration_s (never timed
    # here), and the seconds they make of the plan: their time may be far off, and the plan
    # says so and how much
    guessed_timings: int = 0
    guessed_timing_s: float = 0.0
    # ... planned at another stack's timing of the same workload here (a rough guess)
    borrowed_timings: int = 0
    borrowed_timing_s: float = 0.0

    @property
    def total_s(self) -> float:
        return sum(s.seconds for s in self.steps)

    def levels(self) -> tuple[Step, ...]:
        return tuple(s for s in self.steps if s.kind == "level")

    def seconds_of(self, *kinds: StepKind) -> float:
        return sum(s.seconds for s in self.steps if s.kind in kinds)

    @property
    def load_s(self) -> float:
        """The levels' measured passes alone."""
        return sum(s.time.load_s for s in self.levels() if s.time is not None)

    def load_by_stack(self) -> dict[str, float]:
        """The levels' measured passes of each stack, in the plan's order."""
        out: dict[str, float] = {}
        for s in self.levels():
            if s.time is not None and s.stack is not None:
                out[s.stack] = out.get(s.stack, 0.0) + s.time.load_s
        return out

    def sources(self) -> dict[RateSource, int]:
        """How many levels each kind of estimate planned, in a fixed order."""
        counts: dict[RateSource, int] = {}
        for s in self.levels():
            if s.time is not None:
                counts[s.time.source] = counts.get(s.time.source, 0) + 1
        order: tuple[RateSource, ...] = (
            "duration",
            "measured",
            "nearby",
            "timeout bound",
            "other stack",
            "guess",
        )
        return {k: counts[k] for k in order if k in counts}


TimingSource = Literal["timed", "other stack", "guess"]


def iteration_s(
    timed: Mapping[tuple[str, str], float], stack: str, label: str, guess: float
) -> tuple[float, TimingSource]:
    """One standalone iteration's seconds, as the levels' rates are found (`rate_for`): as
    timed here for this stack and workload, else the slowest other stack's timing of the
    workload here (a rough guess: stacks differ several times over; the slowest, so that
    the run ends before the plan says rather than after), else `guess`."""
    own = timed.get((stack, label))
    if own is not None:
        return own, "timed"
    others = [s for (_, other), s in timed.items() if other == label]
    if others:
        return max(others), "other stack"
    return guess, "guess"


def plan_timeline(
    plan: Plan,
    history: Sequence[PastLevel] = (),
    overheads: Overheads = OVERHEADS,
    script_iteration_s: dict[tuple[str, str], float] | None = None,
    calibration_s: float = 0.0,
) -> Timeline:
    """Every step of the plan in the runner's order: rounds, stacks, cases, levels.
    `script_iteration_s`: (stack, label) -> one standalone iteration measured here;
    `calibration_s`: a calibration run first (its own timeline's total)."""
    steps: list[Step] = [Step("run start", overheads.run_start_s)]
    if calibration_s:
        steps.append(Step("calibration", calibration_s))
    suite = plan.suite
    scripts = script_iteration_s or {}
    guessed: dict[TimingSource, tuple[int, float]] = {}  # (timings, seconds) by source
    compared = {n for n, e in suite.endpoints.items() if e.same_across_stacks}
    for stack in plan.stacks:  # asked once before any load (engine/agreement.py)
        if stack.available and any(c.spec.name in compared for c in stack.cases):
            steps.append(Step("stack start", overheads.stack_start_s, stack.name))
    for round_ in plan.rounds():
        # the standalone timings each case makes in this round, as the runner makes them
        timings = (
            timings_in(round_.repetition, suite.load.repeat, suite.script_timings)
            if suite.script_iterations
            else 0
        )
        for stack in round_.order:
            if not stack.available:
                continue
            steps.append(Step("stack start", overheads.stack_start_s, stack.name))
            for case in map(round_.levels, stack.cases):
                per, source = iteration_s(
                    scripts, stack.name, case.spec.label, overheads.script_iteration_s
                )
                script = timings * suite.script_iterations * per
                count, seconds = guessed.get(source, (0, 0.0))
                guessed[source] = (count + timings, seconds + script)
                jit = (
                    stack.jit_warmup_s + overheads.per_level_s
                    if stack.jit_warmup_s and suite.load_for(case.spec.label).jit_warmup
                    else 0.0
                )
                steps.append(
                    Step(
                        "case start",
                        overheads.case_start_s + script + jit,
                        stack.name,
                        case.spec.label,
                    )
                )
                steps += _level_steps(plan, stack, case, history, overheads)
    cases = sum(len(st.cases) for st in plan.stacks if st.available)
    steps.append(Step("report", overheads.report_s + overheads.report_per_case_s * cases))
    guess, borrowed = guessed.get("guess", (0, 0.0)), guessed.get("other stack", (0, 0.0))
    return Timeline(
        tuple(steps),
        overheads,
        guessed_timings=guess[0],
        guessed_timing_s=guess[1],
        borrowed_timings=borrowed[0],
        borrowed_timing_s=borrowed[1],
    )


def _level_steps(
    plan: Plan,
    stack: PlannedStack,
    case: PlannedCase,
    history: Sequence[PastLevel],
    overheads: Overheads,
) -> list[Step]:
    suite = plan.suite
    settings = suite.load_for(case.spec.label)
    setup = setup_key(settings)
    label = case.spec.label
    if suite.search is not None:  # a probe's rate is chosen during the run: its duration only
        probe = level_time(settings, suite.search.lo, None, overheads)
        return [
            _level_step(stack.name, label, None, None, rep % settings.repeat, settings, probe)
            for rep in range(suite.search.probes * settings.repeat)
        ]
    out = []
    for lv in case.levels:
        rate = rate_for(history, stack.name, label, setup, lv.value)
        t = level_time(settings, lv.value, rate, overheads)
        out.append(_level_step(stack.name, label, lv.index, lv.value, lv.repetition, settings, t))
    return out


def _level_step(
    stack: str,
    label: str,
    index: int | None,
    value: float | None,
    repetition: int,
    settings: LoadSettings,
    t: LevelTime,
) -> Step:
    return Step("level", t.seconds, stack, label, index, value, repetition, settings.repeat, t)


def fitting_stacks(timeline: Timeline, budget_s: float) -> tuple[list[str], float]:
    """The plan's stacks, in its order, that fit in `budget_s` together (each taken when it
    still fits), and their estimated time: a run's start and report, then each stack's starts,
    levels and share of the report."""
    o = timeline.overheads
    used = o.run_start_s + o.report_s
    per_stack: dict[str, float] = {}
    cases: set[tuple[str, str]] = set()
    for step in timeline.steps:
        if step.stack:
            extra = 0.0
            if step.kind == "case start" and (step.stack, step.label) not in cases:
                cases.add((step.stack, step.label))
                extra = o.report_per_case_s
            per_stack[step.stack] = per_stack.get(step.stack, 0.0) + step.seconds + extra
    chosen = []
    for stack, seconds in per_stack.items():
        if used + seconds <= budget_s:
            chosen.append(stack)
            used += seconds
    return chosen, used if chosen else 0.0
