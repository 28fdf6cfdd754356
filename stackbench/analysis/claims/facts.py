"""What the plan or the stored run gives a claim: cores, stacks with their parameters,
workloads and their levels, the load settings.
"""

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from stackbench.config.plan import Plan, PlannedStack
from stackbench.config.status import StackEntry
from stackbench.store.store import RunData

SERVER_CORES_TEMPLATE = "{{server_core_count}}"


@dataclass(frozen=True)
class StackFacts:
    name: str  # as the suite names it (a variant's name included)
    available: bool
    reason: str = ""  # why it is unavailable
    params: Mapping[str, str] = field(default_factory=dict)  # in force (defaults + suite)
    # The workload labels it runs, when fewer than the suite's (None: every one)
    workloads: tuple[str, ...] | None = None

    def runs(self, workload: str) -> bool:
        return self.workloads is None or workload in self.workloads


@dataclass(frozen=True)
class Facts:
    """What the plan gives a claim: cores, stacks, workloads and levels, load settings."""

    server_cores: int
    stacks: tuple[StackFacts, ...]
    workload_levels: Mapping[str, tuple[float, ...]]  # workload label -> its levels
    keepalive: str = "on"
    driver: str = "native"
    warmup_s: float = 0.0
    jit_warmup: bool = False  # JIT stacks warmed before each case ([warmup])
    requests: int | None = None  # fixed request count per level
    requests_per_connection: int | None = None
    level_kind: str = "connections"  # connections | rate
    script_iterations: int = 0
    duration_s: float | None = None  # seconds per level (None: counted requests)
    workload_durations: Mapping[str, float] = field(default_factory=dict)
    repeat: int = 1  # repetitions of every level (and standalone timing)
    script_timings: int = 1  # standalone timings in each repetition

    def level_seconds(self, workload: str) -> float | None:
        """Seconds of load a level of `workload` runs (None: it sends counted requests)."""
        return self.workload_durations.get(workload, self.duration_s)

    def stack(self, name: str) -> StackFacts | None:
        return next((s for s in self.stacks if s.name == name), None)

    def request_count(self, level: float) -> int | None:
        """Requests a level sends (None: the level runs for a duration)."""
        if self.requests_per_connection is not None:
            return int(self.requests_per_connection * level)
        return self.requests


def facts_from_plan(
    plan: Plan,
    inventory: Mapping[str, StackEntry],
    params: Mapping[str, Mapping[str, str]] | None = None,
) -> Facts:
    """The facts of a plan, with every stack parameter in force: `params` as the stacks will
    resolve them at start (lab.stack.planned_params, by planned name); a stack missing there
    gets its manifest defaults and the suite's values, cores substituted."""
    suite = plan.suite
    cores = suite.server_cores
    resolved = params or {}

    def in_force(ps: PlannedStack) -> Mapping[str, str]:
        if ps.name in resolved:
            return resolved[ps.name]
        if ps.external is not None:  # a server the user runs: no parameters of ours
            return {}
        return _with_defaults(inventory[ps.stack].manifest.param_defaults(), ps.params, cores)

    labels = dict.fromkeys(c.spec.label for ps in plan.stacks for c in ps.cases)
    stacks = tuple(
        StackFacts(ps.name, ps.available, ps.reason, in_force(ps), _runs(ps, tuple(labels)))
        for ps in plan.stacks
    )
    load = suite.load
    return Facts(
        cores,
        stacks,
        {label: suite.levels_for(label) for label in labels},
        load.keepalive.value,
        load.driver.value,
        load.warmup_s,
        load.jit_warmup,
        load.requests,
        load.requests_per_connection,
        suite.level_kind,
        suite.script_iterations,
        load.duration_s,
        dict(suite.workload_durations),
        load.repeat,
        suite.script_timings,
    )


def facts_from_run(
    data: RunData, param_defaults: Mapping[str, Mapping[str, str]] | None = None
) -> Facts:
    """The facts of a stored run (for reports of old runs). `param_defaults` maps a stack
    folder to its manifest's defaults; without it only the suite's parameters are known."""
    settings = data.run.settings
    cores = len(settings.placement.server) or 1
    stacks: dict[str, StackFacts] = {}
    for case in data.cases:
        variant = settings.variants.get(case.stack)
        folder = variant.stack if variant else case.stack
        defaults = (param_defaults or {}).get(folder, {})
        old = stacks.get(case.stack)
        available = case.status != "unavailable" and (old is None or old.available)
        reason = case.reason if case.status == "unavailable" else (old.reason if old else "")
        # The parameters the stack resolved at start when the run stored them (store schema
        # 4 on; any case of the stack that started), else the manifest's defaults with the
        # suite's values.
        params = case.effective_params or (
            old.params if old else _with_defaults(defaults, case.params, cores)
        )
        stacks[case.stack] = StackFacts(case.stack, available, reason, params)
    labels = dict.fromkeys(c.label for c in data.cases)
    for name, stack in stacks.items():
        ran = tuple(dict.fromkeys(c.label for c in data.cases if c.stack == name))
        if len(ran) < len(labels):
            stacks[name] = replace(stack, workloads=ran)
    levels = {
        label: tuple(float(v) for v in settings.workload_levels.get(label, settings.levels))
        for label in labels
    }
    return Facts(
        cores,
        tuple(stacks.values()),
        levels,
        settings.keepalive,
        settings.driver,
        settings.warmup_s,
        settings.jit_warmup,
        settings.requests,
        settings.requests_per_connection,
        settings.level_kind,
        settings.script_iterations,
        settings.duration_s,
        dict(settings.workload_durations),
        settings.repeat,
        settings.script_timings,
    )


def _runs(ps: PlannedStack, labels: tuple[str, ...]) -> tuple[str, ...] | None:
    """The workloads a planned stack runs when fewer than the plan's ([stack_workloads])."""
    mine = tuple(c.spec.label for c in ps.cases)
    return None if set(mine) >= set(labels) else mine


def _with_defaults(
    defaults: Mapping[str, str], params: Mapping[str, str], cores: int
) -> dict[str, str]:
    merged = {**defaults, **params}
    return {k: v.replace(SERVER_CORES_TEMPLATE, str(cores)) for k, v in merged.items()}


def _levels_of(
    levels: tuple[float, ...] | str | None, workload: str, facts: Facts
) -> Sequence[float | None]:
    if isinstance(levels, tuple):
        return levels
    have = facts.workload_levels.get(workload, ())
    return list(have) if have else [None]


def _has_level(levels: Iterable[float], level: float) -> bool:
    return any(math.isclose(v, level) for v in levels)


def _between(levels: Iterable[float], low: float, high: float) -> list[float]:
    return sorted(v for v in levels if low <= v <= high)
