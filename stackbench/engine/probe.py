"""A few seconds' probe of the rates and standalone timings a plan needs and this machine
never measured.

A level counted in requests lasts as long as the stack takes to serve them, so the plan's time
estimate needs the stack's rate at that level (config/estimate.py `rate_for`). This machine's
earlier runs give it; when they do not, the estimate falls back on a guess that can be wrong
tenfold either way. When the pre-run checks want them (engine/preflight.py `probe_wanted`:
`--probe`, or a real run whose plan a budget judges), each such case is loaded for `PROBE_S`
seconds at its lowest and highest unmeasured level, into a throw-away store, and the plan is
estimated from what the probes measured. Nothing the probes measure reaches
the run's results: they are timed, not counted, levels, with no JIT warm-up pass, so they are
no evidence for a verdict, only for how long the run will take.

A standalone timing lasts its iterations at the workload's cost, which a plan never timed here
guesses (config/estimate.py `iteration_s`: db-html-report's 120 timings were planned at 20 min
on a fresh store, and took about 3 min on 2026-11-27). Each such case is timed once, at
`PROBE_ITERATIONS` iterations (fewer when the suite asks fewer), in the same throw-away store:
the process's start is spread over fewer iterations than the suite's, so the estimate errs
long, the side on which the run ends before the plan says.
"""

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import msgspec

from stackbench.config.estimate import OVERHEADS, PastLevel, rate_for, request_count, setup_key
from stackbench.config.hosts import HostsFile
from stackbench.config.loadspec import LoadSettings, Mode
from stackbench.config.plan import Level, Plan, PlannedCase, PlannedStack, timings_due
from stackbench.config.status import StackEntry
from stackbench.engine.pastruns import this_machine
from stackbench.engine.progress import ProgressSink
from stackbench.engine.resume import Selection
from stackbench.engine.runner import Runner, RunSetup
from stackbench.store.store import Store

PROBE_S = 3.0  # each probe's measured pass: long enough for a rate within tens of percent
PROBE_WARMUP_S = 1.0  # the most warm-up a probe takes (a cold start serves slower at first)
PROBE_PAUSE_S = 0.5
PROBE_EXTRA_S = 0.5  # per probe: the loader's start and the level's bookkeeping
PROBE_STACK_S = 3.0  # per stack: its start and stop (estimate.py's stack start and more)
# A standalone timing's probe: enough iterations that a process start of tens of ms adds a
# fraction of a ms to each, few enough that a workload of 10 ms an iteration takes 2 s
PROBE_ITERATIONS = 200


@dataclass(frozen=True)
class ProbeNeed:
    """The request-counted levels and the standalone timings a plan estimates from a guess,
    and the probes that fix it."""

    guessed: int  # planned levels whose rate is a guess (or another stack's)
    plan: Plan | None  # the probes to run (None: nothing to probe)
    # planned standalone timings whose iterations are a guess (or another stack's), and the
    # cases the probes time once for them
    guessed_timings: int = 0
    timed_cases: int = 0

    @property
    def probes(self) -> int:
        if self.plan is None:
            return 0
        return sum(len(c.levels) for s in self.plan.stacks for c in s.cases)

    @property
    def seconds(self) -> float:
        """About how long the probes take, stacks' starts included."""
        if self.plan is None:
            return 0.0
        suite = self.plan.suite
        settings = suite.load
        per = (settings.duration_s or 0.0) + settings.warmup_s + settings.pause_s + PROBE_EXTRA_S
        timing = suite.script_iterations * OVERHEADS.script_iteration_s  # the plan's guess
        return self.probes * per + self.timed_cases * timing + PROBE_STACK_S * len(self.plan.stacks)

    def _what(self) -> str:
        parts = []
        if self.probes:
            parts.append(f"{self.probes} rate(s)")
        if self.timed_cases:
            parts.append(f"{self.timed_cases} standalone timing(s)")
        return " and ".join(parts)

    def announcement(self) -> str:
        """The line people read before the probes start."""
        return (
            f"probing {self._what()} this machine never measured, for the plan's estimate "
            f"(about {self.seconds:.0f} s; not part of the results)"
        )


@dataclass(frozen=True)
class Probed:
    """What the probes did for a plan's estimate: the rates they measured, or (not run) what
    the estimate guesses instead and what probing would cost."""

    need: ProbeNeed
    rates: tuple[PastLevel, ...] | None = None  # None: the probes did not run
    # (stack, label) -> seconds per standalone iteration, as the probes timed it
    timings: Mapping[tuple[str, str], float] = field(default_factory=dict)

    @property
    def guess_note(self) -> str | None:
        """Not probed though the plan guesses: how many levels and timings, and what `--probe`
        costs."""
        need = self.need
        if need.plan is None or self.rates is not None:
            return None
        guessed = []
        if need.guessed:
            guessed.append(f"{need.guessed} level(s) counted in requests have no rate measured")
        if need.guessed_timings:
            guessed.append(f"{need.guessed_timings} standalone timing(s) were never timed")
        probes = []
        if need.probes:
            probes.append(f"{need.probes} probe(s) of {PROBE_S:g} s")
        if need.timed_cases:
            probes.append(f"{need.timed_cases} timing(s) of {need.plan.suite.script_iterations}")
        finish = "they finish" if need.guessed_timings else "levels finish"
        return (
            f"{' and '.join(guessed)} here, so their time below is a guess (the ETA corrects "
            f"it as {finish}); `--probe` first measures them: {', '.join(probes)}, about "
            f"{need.seconds:.0f} s in all"
        )


def probe_settings(settings: LoadSettings) -> LoadSettings:
    """A counted level's settings as a short timed probe: same driver, loop and keep-alive
    (what setup_key says decides a rate), one pass, no JIT warm-up pass."""
    return msgspec.structs.replace(
        settings,
        requests=None,
        requests_per_connection=None,
        duration_s=PROBE_S,
        warmup_s=min(settings.warmup_s, PROBE_WARMUP_S),
        pause_s=PROBE_PAUSE_S,
        repeat=1,
        jit_warmup=False,
    )


def probe_need(
    plan: Plan,
    history: Sequence[PastLevel],
    scripts: Mapping[tuple[str, str], float] | None = None,
) -> ProbeNeed:
    """Which cases to probe, at which levels: every available case of a closed-loop plan
    with a counted level this machine has no rate for (nor one of the same stack nearby:
    `rate_for` returns None or another stack's), at the lowest and highest such level; and
    every case whose standalone timing was never timed here for its stack (`scripts`:
    (stack, label) -> seconds per iteration measured here), timed once."""
    suite = plan.suite
    # an open-loop level's rate is the level itself
    counted = suite.load.mode is Mode.CLOSED and suite.search is None
    timed = scripts or {}
    # a timing runs only where the server is this machine's and its script stackbench's
    # (engine/runner.py `_script_access`): elsewhere a probe would time nothing
    local = suite.placement.server_host is None
    per_timing = timings_due(None, suite.load.repeat, suite.script_timings)
    guessed = guessed_timings = timed_cases = 0
    stacks = []
    for stack in plan.stacks:
        if not stack.available:
            continue
        cases = []
        for case in stack.cases:
            values = (
                _guessed_values(suite.load_for(case.spec.label), stack, case, history)
                if counted
                else []
            )
            guessed += len(values)
            timing = (
                bool(suite.script_iterations)
                and local
                and stack.external is None
                # not timed for this stack (another stack's timing is a rough guess)
                and (stack.name, case.spec.label) not in timed
            )
            if timing:
                guessed_timings += per_timing
                timed_cases += 1
            if values or timing:
                ends = sorted({min(values), max(values)}) if values else []
                levels = tuple(Level(i, v, 0) for i, v in enumerate(ends))
                cases.append(PlannedCase(case.stack, case.spec, levels))
        if cases:
            stacks.append(replace(stack, cases=tuple(cases)))
    if not stacks:
        return ProbeNeed(guessed, None, guessed_timings)
    probe_suite = replace(
        suite,
        load=probe_settings(suite.load),
        workload_durations={},
        script_iterations=min(suite.script_iterations, PROBE_ITERATIONS) if timed_cases else 0,
        script_timings=1,
        slo=None,  # a probe past the SLO is still a rate: no sweep stops early
        search=None,
    )
    return ProbeNeed(
        guessed,
        Plan(probe_suite, tuple(stacks)),
        guessed_timings,
        timed_cases,
    )


def _guessed_values(
    settings: LoadSettings, stack: PlannedStack, case: PlannedCase, history: Sequence[PastLevel]
) -> list[float]:
    setup = setup_key(settings)
    out = []
    for lv in case.levels:
        if request_count(settings, lv.value) is None:
            continue  # a timed level: its duration is known
        rate = rate_for(history, stack.name, case.spec.label, setup, lv.value)
        if rate is None or rate.source == "other stack":
            out.append(lv.value)
    return out


def run_probes(
    probes: Plan,
    inventory: Mapping[str, StackEntry],
    progress: ProgressSink,
    selection: Selection,
    hosts: HostsFile | None = None,
) -> tuple[list[PastLevel], dict[tuple[str, str], float]]:
    """Run the probes into a throw-away store and folder; the rates they measured and the
    seconds per standalone iteration they timed. A probe that failed (a stack that did not
    start) measures nothing: the run then meets the same failure and reports it, and its
    estimate keeps the guess."""
    with tempfile.TemporaryDirectory(prefix="stackbench-probe-") as tmp:
        folder = Path(tmp)
        folder.chmod(0o755)  # the stacks' unprivileged user writes its logs below
        store = Store(folder / "probe.sqlite")
        try:
            setup = RunSetup(inventory, store, folder, progress, selection, hosts)
            Runner(probes, setup).execute()
            machine = this_machine()
            return store.past_levels(machine), store.script_iteration_s(machine)
        finally:
            store.close()
