"""What a run checks before anything starts, in one record built from the plan: the parameters
each stack will start with, the machine's limits the plan would exceed, a busy machine's
warnings, which of an article's claims the plan can test, the suite's deviations from its
article, how long it will take and whether the machine calibrates first. The time estimate
needs the rates of levels counted in requests: the ones this machine never measured are probed
first (engine/probe.py) when asked (`--probe`) or when a budget will judge the plan; else the
record says what the estimate guesses. `run` builds it once and prints it; a dry run stops
there.

The claims' readiness is the analysis's business (the engine does not import it): the caller
passes the function that works it out, and the record keeps its answers as they are.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from stackbench.config.calibrate_first import CalibrationChoice, calibrate_first
from stackbench.config.claims import claims_path_for
from stackbench.config.deviations import Deviation
from stackbench.config.estimate import PastLevel, Timeline, plan_timeline
from stackbench.config.hosts import HostsFile
from stackbench.config.paths import CALIBRATION_SUITE, CLAIMS_DIR
from stackbench.config.placement import allowed_cpus
from stackbench.config.plan import Plan, build_plan
from stackbench.config.status import StackEntry
from stackbench.config.suite import Suite, parse_suite
from stackbench.engine.pastruns import PastRuns
from stackbench.engine.probe import Probed, ProbeNeed, probe_need, run_probes
from stackbench.engine.progress import Phase, ProgressEvent, ProgressSink, ignore_progress
from stackbench.engine.resume import Selection
from stackbench.lab.build import build_dir_for
from stackbench.lab.busy import quiet_machine_checks
from stackbench.lab.machine import Check, Verdict, plan_limits
from stackbench.lab.stack import PlannedParams, planned_params

Claim = TypeVar("Claim")  # one claim's readiness, as the caller's function gives it
# The plan, the stacks' parameters, its time estimate (what room it leaves for until-decided
# rounds) -> each claim's readiness; None: the suite tests no article.
ClaimsCheck = Callable[[Plan, Sequence[PlannedParams], Timeline], Sequence[Claim] | None]


@dataclass(frozen=True)
class Preflight(Generic[Claim]):
    plan: Plan
    params: tuple[PlannedParams, ...]  # each stack's parameters as it will start
    limits: tuple[Check, ...]  # the machine's limits the largest level would exceed
    busy: tuple[Check, ...]  # a busy machine: doctor's warnings, from a 1-s sample
    claims: tuple[Claim, ...]  # the article's claims, testable with this plan or not
    deviations: tuple[Deviation, ...] | None  # None: the suite reproduces no article
    hosts: HostsFile | None  # the other hosts of a multi-host run
    timeline: Timeline  # how long each step takes (config/estimate.py)
    not_built: tuple[str, ...]  # stacks whose first build comes on top of the estimate
    calibration: CalibrationChoice  # whether `calibrate` runs first, and why
    probes: Probed  # the rates the probes measured, or what the estimate guesses
    past: PastRuns  # what this machine measured before, the probes' rates added

    @property
    def suite(self) -> Suite:
        return self.plan.suite

    @property
    def machine_warnings(self) -> tuple[str, ...]:
        """The busy machine's warnings, one line each, as the run keeps them."""
        return tuple(
            f"{c.name}: {c.value}" + (f" ({c.advice})" if c.advice else "") for c in self.busy
        )


@dataclass(frozen=True)
class Asked:
    """What the run was asked that the checks depend on."""

    no_calibrate: bool = False  # --no-calibrate (or no way to calibrate)
    resumed: bool = False  # run --resume: the run continues a stored one (its rates its own)
    probe: bool = False  # --probe: the rates the plan would guess are measured first
    dry_run: bool = False  # run --dry-run: it probes only when asked
    budget_s: float | None = None  # --budget: the most the whole run may take
    selection: Selection = Selection()  # --stacks, --workloads: what the probes may start


def preflight(
    plan: Plan,
    inventory: Mapping[str, StackEntry],
    hosts: HostsFile | None,
    claims: ClaimsCheck[Claim],
    past: PastRuns,
    asked: Asked = Asked(),
    progress: ProgressSink = ignore_progress,
) -> Preflight[Claim]:
    """`past`: what this machine measured before (the time estimate's rates, whether it is
    calibrated: an uncalibrated machine calibrates first, config/calibrate_first.py).
    `progress`: the probes' events, when they run (`probe_rates`)."""
    probes = probe_rates(plan, inventory, hosts, past, asked, progress)
    past = replace(
        past,
        levels=past.levels + list(probes.rates or ()),
        scripts={**past.scripts, **probes.timings},
    )
    suite = plan.suite
    calibration = calibrate_first(
        claims_path_for(CLAIMS_DIR, suite.name) is not None,
        past.calibrated_on,
        asked.no_calibrate,
        asked.resumed,
        suite.placement.server_host is not None,
    )
    first_s = calibration_seconds(inventory, past.levels) if calibration.run_first else 0.0
    timeline = plan_timeline(
        plan, past.levels, script_iteration_s=past.scripts, calibration_s=first_s
    )
    params = planned_params(plan, inventory)
    readiness = claims(plan, params, timeline)
    return Preflight(
        plan,
        params,
        tuple(plan_limits(plan)),
        tuple(busy_machine(plan.suite, not asked.dry_run and timeline.load_s >= STEAL_READ_S)),
        tuple(readiness or ()),
        None if readiness is None else plan.suite.deviations,
        hosts,
        timeline,
        tuple(unbuilt(plan, inventory)),
        calibration,
        probes,
        past,
    )


def probe_wanted(asked: Asked, suite: Suite) -> bool:
    """--probe, or a real run whose plan a budget judges (--budget, load_budget_min): there a
    guessed rate could refuse a plan that fits or pass one that does not. Elsewhere the ETA
    corrects a guess as levels finish."""
    budgeted = asked.budget_s is not None or suite.load_budget_s is not None
    return asked.probe or (budgeted and not asked.dry_run)


def probe_rates(
    plan: Plan,
    inventory: Mapping[str, StackEntry],
    hosts: HostsFile | None,
    past: PastRuns,
    asked: Asked,
    progress: ProgressSink,
) -> Probed:
    """The rates the plan would guess, probed when wanted (`probe_wanted`): a `PROBE` event
    announces them on `progress`, then their runner's events follow. A resumed run's rates
    are its own: nothing is probed, nothing said."""
    if asked.resumed:
        return Probed(ProbeNeed(0, None))
    need = probe_need(plan, past.levels, past.scripts)
    if need.plan is None or not probe_wanted(asked, plan.suite):
        return Probed(need)
    progress(ProgressEvent(Phase.PROBE, need.announcement()))
    rates, timings = run_probes(need.plan, inventory, progress, asked.selection, hosts)
    return Probed(need, tuple(rates), timings)


def calibration_seconds(inventory: Mapping[str, StackEntry], history: Sequence[PastLevel]) -> float:
    """How long `stackbench calibrate` takes here: its suite's own estimate."""
    plan = build_plan(parse_suite(CALIBRATION_SUITE), dict(inventory), None, None)
    return plan_timeline(plan, history).total_s


def unbuilt(plan: Plan, inventory: Mapping[str, StackEntry]) -> list[str]:
    """The planned stacks whose build is not cached yet: their first build comes on top."""
    out = []
    for st in plan.stacks:
        entry = inventory.get(st.stack)
        manifest = entry.parsed if entry is not None else None
        if not st.available or manifest is None or manifest.build is None:
            continue
        if not (build_dir_for(manifest) / ".stackbench-built").exists() and st.stack not in out:
            out.append(st.stack)
    return out


# A real run with at least this much load reads the hypervisor's steal from its cores kept busy
# (lab/busy.BUSY_STEAL_S, 2 s): a shorter one, a test's among them, would spend a larger share
# of its time on it than the warning saves.
STEAL_READ_S = 120.0


def busy_machine(suite: Suite, read_steal: bool) -> list[Check]:
    """doctor's warnings about a busy machine (other work on the suite's cores, load, swap,
    and with `read_steal` the steal from those cores kept busy), from a 1-s sample before
    anything starts; none for a multi-host run (its hosts are checked by `hosts check`)."""
    if suite.placement.server_host is not None:
        return []
    roles = {"server": sorted(suite.placement.server), "loader": sorted(suite.placement.loader)}
    checks = quiet_machine_checks(roles, allowed_cpus(), read_steal=read_steal)
    return [c for c in checks if c.verdict is not Verdict.OK]
