"""A few seconds' probe of the rates a plan needs and this machine never measured.

A level counted in requests lasts as long as the stack takes to serve them, so the plan's time
estimate needs the stack's rate at that level (config/estimate.py `rate_for`). This machine's
earlier runs give it; when they do not, the estimate falls back on a guess that can be wrong
tenfold either way. When the pre-run checks want them (engine/preflight.py `probe_wanted`:
`--probe`, or a real run whose plan a budget judges), each such case is loaded for `PROBE_S`
seconds at its lowest and highest unmeasured level, into a throw-away store, and the plan is
estimated from what the probes measured. Nothing the probes measure reaches
the run's results: they are timed, not counted, levels, with no JIT warm-up pass, so they are
no evidence for a verdict, only for how long the run will take.
"""

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import msgspec

from stackbench.config.estimate import PastLevel, rate_for, request_count, setup_key
from stackbench.config.hosts import HostsFile
from stackbench.config.loadspec import LoadSettings, Mode
from stackbench.config.plan import Level, Plan, PlannedCase, PlannedStack
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


@dataclass(frozen=True)
class ProbeNeed:
    """The request-counted levels a plan estimates from a guess, and the probes that fix it."""

    guessed: int  # planned levels whose rate is a guess (or another stack's)
    plan: Plan | None  # the probes to run (None: nothing to probe)

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
        settings = self.plan.suite.load
        per = (settings.duration_s or 0.0) + settings.warmup_s + settings.pause_s + PROBE_EXTRA_S
        return self.probes * per + PROBE_STACK_S * len(self.plan.stacks)

    def announcement(self) -> str:
        """The line people read before the probes start."""
        return (
            f"probing {self.probes} rate(s) this machine never measured, for the plan's estimate "
            f"(about {self.seconds:.0f} s; not part of the results)"
        )


@dataclass(frozen=True)
class Probed:
    """What the probes did for a plan's estimate: the rates they measured, or (not run) what
    the estimate guesses instead and what probing would cost."""

    need: ProbeNeed
    rates: tuple[PastLevel, ...] | None = None  # None: the probes did not run

    @property
    def guess_note(self) -> str | None:
        """Not probed though the plan guesses: how many levels, and what `--probe` costs."""
        need = self.need
        if need.plan is None or self.rates is not None:
            return None
        return (
            f"{need.guessed} level(s) counted in requests have no rate measured here, so their "
            f"time below is a guess (the ETA corrects it as levels finish); `--probe` first "
            f"measures them: {need.probes} probe(s) of {PROBE_S:g} s, about {need.seconds:.0f} s "
            f"in all"
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


def probe_need(plan: Plan, history: Sequence[PastLevel]) -> ProbeNeed:
    """Which cases to probe, at which levels: every available case of a closed-loop plan
    with a counted level this machine has no rate for (nor one of the same stack nearby:
    `rate_for` returns None or another stack's), at the lowest and highest such level."""
    suite = plan.suite
    if suite.load.mode is not Mode.CLOSED or suite.search is not None:
        return ProbeNeed(0, None)  # an open-loop level's rate is the level itself
    guessed = 0
    stacks = []
    for stack in plan.stacks:
        if not stack.available:
            continue
        cases = []
        for case in stack.cases:
            values = _guessed_values(suite.load_for(case.spec.label), stack, case, history)
            guessed += len(values)
            if values:
                ends = sorted({min(values), max(values)})
                levels = tuple(Level(i, v, 0) for i, v in enumerate(ends))
                cases.append(PlannedCase(case.stack, case.spec, levels))
        if cases:
            stacks.append(replace(stack, cases=tuple(cases)))
    if not stacks:
        return ProbeNeed(guessed, None)
    probe_suite = replace(
        suite,
        load=probe_settings(suite.load),
        workload_durations={},
        script_iterations=0,
        slo=None,  # a probe past the SLO is still a rate: no sweep stops early
        search=None,
    )
    return ProbeNeed(guessed, Plan(probe_suite, tuple(stacks)))


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
) -> list[PastLevel]:
    """Run the probes into a throw-away store and folder; the rates they measured. A probe
    that failed (a stack that did not start) measures nothing: the run then meets the same
    failure and reports it, and its estimate keeps the guess."""
    with tempfile.TemporaryDirectory(prefix="stackbench-probe-") as tmp:
        folder = Path(tmp)
        folder.chmod(0o755)  # the stacks' unprivileged user writes its logs below
        store = Store(folder / "probe.sqlite")
        try:
            setup = RunSetup(inventory, store, folder, progress, selection, hosts)
            Runner(probes, setup).execute()
            return store.past_levels(this_machine())
        finally:
            store.close()
