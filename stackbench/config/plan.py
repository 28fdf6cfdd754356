"""Expand a suite into plain data: the cases (stack x workload) and their load levels.

The plan is what `--dry-run` prints; the runner executes it and nothing else.
"""

import random
from dataclasses import dataclass, replace

from stackbench.config.external import ExternalStack
from stackbench.config.loadspec import Mode
from stackbench.config.manifest import control_free
from stackbench.config.names import check_name
from stackbench.config.placement import CoreCount, Placement, count_name
from stackbench.config.status import StackEntry, unavailable_reason
from stackbench.config.suite import Suite
from stackbench.config.workloads import WorkloadSpec
from stackbench.errors import InputError


@dataclass(frozen=True)
class Level:
    index: int
    value: float  # connections or requests/s
    repetition: int


@dataclass(frozen=True, order=True)
class LevelKey:
    """A level of the plan by what it measures, whatever its repetition: the stack (as the
    plan names it), the workload's label and the level's value."""

    stack: str
    label: str
    level_value: float


@dataclass(frozen=True)
class PlannedCase:
    stack: str
    spec: WorkloadSpec
    levels: tuple[Level, ...]


@dataclass(frozen=True)
class PlannedStack:
    name: str  # the stack, or a variant's name
    stack: str  # the stack folder
    available: bool
    reason: str
    params: dict[str, str]
    cases: tuple[PlannedCase, ...]
    # The JIT warm-up pass before each case's first level (stack.toml [warmup]), 0: none.
    jit_warmup_s: float = 0.0
    # A server the user runs ([external.NAME]): never started, stopped or restarted by us.
    external: ExternalStack | None = None
    # At one of the suite's core counts ([placement] server_cores): its own cores
    # (None: the suite's placement)
    placement: Placement | None = None


@dataclass(frozen=True)
class Round:
    """One pass over the stacks: `repetition` of every level (None: all of them, when the
    repetitions are not interleaved), the stacks in `order`, each on a fresh start."""

    repetition: int | None
    order: tuple[PlannedStack, ...]

    def levels(self, case: PlannedCase) -> PlannedCase:
        if self.repetition is None:
            return case
        return replace(
            case, levels=tuple(lv for lv in case.levels if lv.repetition == self.repetition)
        )


def timings_due(repetition: int | None, repeat: int, per_repetition: int = 1) -> int:
    """Standalone timings a case should have stored by the end of a round: `per_repetition`
    (the suite's script_timings) in each repetition, each a fresh process, taken after the
    round's levels in turns with the other stacks'; all of them in the single round of a run
    that does not interleave
    (`repetition` None). Rounds that `run --until-decided` adds beyond `repeat` time nothing
    more."""
    rounds = repeat if repetition is None else min(repetition + 1, repeat)
    return rounds * per_repetition


def timings_in(repetition: int | None, repeat: int, per_repetition: int = 1) -> int:
    """The standalone timings one round adds to each case: those due by its end less those
    due by the end of the round before (what the plan's time counts)."""
    before = (
        0
        if repetition is None or repetition <= 0
        else timings_due(repetition - 1, repeat, per_repetition)
    )
    return timings_due(repetition, repeat, per_repetition) - before


@dataclass(frozen=True)
class Plan:
    suite: Suite
    stacks: tuple[PlannedStack, ...]
    # An extension of a stored run (run --until-decided): its one round, the levels given
    fixed_rounds: tuple[Round, ...] | None = None

    def placement_of(self, planned: PlannedStack) -> Placement:
        """Where a planned stack's server, loader and services run."""
        return planned.placement or self.suite.placement

    @property
    def interleaved(self) -> bool:
        """With 2 or more repetitions (and a fixed sweep) the repetitions run round-robin
        across the stacks, each round in a shuffled order and on a fresh start of every stack,
        so that machine drift spreads over all stacks (Kalibera & Jones: the fresh start is
        the unit of repetition)."""
        return self.suite.load.repeat >= 2 and self.suite.search is None

    def rounds(self) -> tuple[Round, ...]:
        """The order the runner follows. The shuffle is seeded by the suite's name, so a dry
        run shows the order the run will take and a resumed run keeps it."""
        if self.fixed_rounds is not None:
            return self.fixed_rounds
        if not self.interleaved:
            return (Round(None, self.stacks),)
        rng = random.Random(f"{self.suite.name}:{self.suite.load.repeat}")
        out = []
        for repetition in range(self.suite.load.repeat):
            order = list(self.stacks)
            rng.shuffle(order)
            out.append(Round(repetition, tuple(order)))
        return tuple(out)

    def level_count(self) -> int:
        per_case_search = (
            self.suite.search.probes * self.suite.load.repeat if self.suite.search else 0
        )
        return sum(
            len(c.levels) + per_case_search for s in self.stacks if s.available for c in s.cases
        )


def _filter(items: tuple[str, ...], wanted: list[str] | None, what: str, where: str) -> list[str]:
    if not wanted:
        return list(items)
    unknown = [w for w in wanted if w not in items]
    if unknown:
        raise InputError(
            f"{where}: '{unknown[0]}' is not among the suite's {what} ({', '.join(items)})"
        )
    return [i for i in items if i in wanted]


def build_plan(
    suite: Suite,
    inventory: dict[str, StackEntry],
    only_stacks: list[str] | None,
    only_workloads: list[str] | None,
) -> Plan:
    variant_params = _check_variants(suite, inventory)
    _check_request_counts(suite)
    missing = [
        s
        for s in suite.stacks
        if s not in inventory and s not in suite.variants and s not in suite.external
    ]
    if missing:
        raise InputError(
            f"{suite.path}: key 'stacks': unknown stack '{missing[0]}' "
            f"(stacks: {', '.join(inventory)}; or define [variants.{missing[0]}])"
        )
    suite_params = {}
    for stack, params in suite.params.items():
        if stack in suite.external:
            raise InputError(
                f"{suite.path}: [params.{stack}]: an external stack has no parameters "
                "stackbench sets (it does not start it); remove the table"
            )
        if stack not in inventory:
            raise InputError(
                f"{suite.path}: [params.{stack}]: unknown stack (stacks: {', '.join(inventory)})"
            )
        suite_params[stack] = _check_params(
            inventory[stack], params, f"{suite.path}: [params.{stack}]"
        )
    stacks = _filter(suite.stacks, only_stacks, "stacks", "--stacks")
    labels = tuple(s.label for s in suite.workloads)
    names = tuple(dict.fromkeys(s.name for s in suite.workloads))
    wanted = only_workloads
    if wanted:
        unknown = [w for w in wanted if w not in labels and w not in names]
        if unknown:
            raise InputError(
                f"--workloads: '{unknown[0]}' is not in the suite ({', '.join(labels)})"
            )
    specs = [s for s in suite.workloads if not wanted or s.label in wanted or s.name in wanted]
    planned = []
    for name in stacks:
        if name in suite.external:
            planned.append(_external_stack(suite, suite.external[name], specs))
            continue
        variant = suite.variants.get(name)
        stack = variant.stack if variant else name
        params = {**suite_params.get(stack, {}), **variant_params.get(name, {})}
        entry = inventory[stack]
        served = _served(suite, entry, stack, specs)
        only = suite.stack_workloads.get(name)
        if only is not None:  # [stack_workloads]
            served = [spec for spec in served if spec.label in only]
            if not served and wanted:  # --workloads chose none of its workloads
                continue
        for count in suite.core_counts or (None,):
            at = name if count is None else _count_name(suite, name, count)
            cases = tuple(PlannedCase(at, spec, _levels(suite, spec.label)) for spec in served)
            short = _cores_short(suite, name, count)
            planned.append(
                PlannedStack(
                    at,
                    stack,
                    entry.status.available and not short,
                    unavailable_reason(entry) or short,
                    params,
                    cases,
                    _jit_warmup_s(entry, params),
                    placement=None if count is None else count.placement,
                )
            )
    _check_served(suite, specs, planned)
    return Plan(suite, tuple(planned))


def _count_name(suite: Suite, name: str, count: CoreCount) -> str:
    """A stack's name at a core count ("node.2c"), a valid name unlike any other stack's."""
    at = check_name(
        count_name(name, count.cores), f"{suite.path}: [placement] server_cores: {name!r}"
    )
    if at in suite.stacks or at in suite.variants:
        raise InputError(
            f"{suite.path}: [placement] server_cores: {name!r} at {count.cores} cores would be "
            f"named {at!r}, the name of another stack of the suite; rename that one"
        )
    return at


def _served(
    suite: Suite, entry: StackEntry, stack: str, specs: list[WorkloadSpec]
) -> list[WorkloadSpec]:
    """The workloads a stack is planned with: every catalog workload of the suite (a stack
    that lacks one is refused), and those of the suite's own its manifest lists."""
    if entry.parsed is None:  # a broken manifest: planned as unavailable
        return [s for s in specs if s.name not in suite.endpoints]
    implemented = set(entry.parsed.workloads)
    for spec in specs:
        if spec.name not in implemented and spec.name not in suite.endpoints:
            raise InputError(
                f"{suite.path}: stack '{stack}' does not implement "
                f"workload '{spec.name}' (see {entry.parsed.path})"
            )
    return [s for s in specs if s.name in implemented]


def _check_served(suite: Suite, specs: list[WorkloadSpec], planned: list[PlannedStack]) -> None:
    """Each of the suite's own workloads is served by a stack of the plan, and each stack of
    the plan serves a workload."""
    served = {c.spec.name for st in planned for c in st.cases}
    for spec in specs:
        if spec.name in suite.endpoints and spec.name not in served:
            raise InputError(
                f"{suite.path}: [endpoints.{spec.name}]: no stack of the suite serves it; "
                f'add "{spec.name}" to the `workloads` of the stack.toml of each stack '
                "that answers it"
            )
    idle = [st.name for st in planned if not st.cases]
    if idle:
        raise InputError(
            f"{suite.path}: key 'stacks': '{idle[0]}' serves none of the suite's workloads "
            "(its stack.toml `workloads` lists none of them); remove it or add one"
        )


def _external_stack(
    suite: Suite, external: ExternalStack, specs: list[WorkloadSpec]
) -> PlannedStack:
    """A server the user runs: available as far as the plan knows (whether it answers is
    checked on the machine before any load), serving every catalog workload of the suite
    and those of the suite's own its table lists."""
    for spec in specs:
        if spec.name not in external.workloads and spec.name not in suite.endpoints:
            raise InputError(
                f"{suite.path}: [external.{external.name}] key 'workloads': the suite's "
                f"workload '{spec.name}' is not among them ({', '.join(external.workloads)}); "
                "add it if the server serves it, or leave the stack out with --stacks"
            )
    served = [s for s in specs if s.name in external.workloads]
    cases = tuple(PlannedCase(external.name, spec, _levels(suite, spec.label)) for spec in served)
    return PlannedStack(external.name, external.name, True, "", {}, cases, external=external)


def _cores_short(suite: Suite, name: str, count: CoreCount | None = None) -> str:
    """Why the suite leaves a stack out on this placement, or at this core count
    ([min_server_cores], [max_server_cores]), or ''."""
    need = suite.min_server_cores.get(name, 0)
    most = suite.max_server_cores.get(name)
    cores = suite.server_cores if count is None else count.cores
    if cores < need:
        return f"left out below {need} server cores ([min_server_cores]); the server has {cores}"
    if most is not None and cores > most:
        core = "core" if most == 1 else "cores"
        return f"left out above {most} server {core} ([max_server_cores]); the server has {cores}"
    return ""


# run --settle: the most JIT warm-up a case may get in all, the declared pass and the one added
# after an unsteady first level together: SETTLE_FACTOR times the stack's declared warm-up, at
# most SETTLE_MAX_S (never less than the declared). A JIT that needs more than four times what
# its stack declares on this machine is a finding to report, not a warm-up to keep extending;
# 120 s keeps one case's added time to about two minutes.
SETTLE_FACTOR = 4.0
SETTLE_MAX_S = 120.0


def settle_bound_s(declared_s: float) -> float:
    """The most JIT warm-up run --settle gives a case whose stack declares `declared_s`."""
    return max(declared_s, min(SETTLE_FACTOR * declared_s, SETTLE_MAX_S))


def settle_note(plan: Plan) -> str:
    """What run --settle will do with this plan, in one sentence."""
    jit = [st for st in plan.stacks if st.available and st.jit_warmup_s]
    if not jit:
        return "--settle: no stack of the plan has a JIT warm-up to lengthen; it changes nothing."
    bounds = ", ".join(
        f"{st.name} {st.jit_warmup_s:g} s, at most {settle_bound_s(st.jit_warmup_s):g} s: up "
        f"to {settle_bound_s(st.jit_warmup_s) - st.jit_warmup_s:g} s and one level more per "
        "case, not in the time above"
        for st in jit
    )
    return (
        "--settle: when a case's first level is not shown steady, one more JIT warm-up pass "
        "as long as its per-second series says it needed runs, and that level is measured "
        f"again once; the warm-up in all stays within {SETTLE_FACTOR:g}x the declared and "
        f"{SETTLE_MAX_S:g} s ({bounds})."
    )


def _jit_warmup_s(entry: StackEntry, params: dict[str, str]) -> float:
    """The stack's JIT warm-up with these parameters (the [warmup] `unless` keys are plain
    values, never derived from the cores, so the plan can resolve them)."""
    manifest = entry.parsed
    if manifest is None or manifest.warmup is None:
        return 0.0
    resolved = {**manifest.param_defaults(), **params}
    return manifest.warmup.seconds if manifest.warmup.applies(resolved) else 0.0


def _check_variants(suite: Suite, inventory: dict[str, StackEntry]) -> dict[str, dict[str, str]]:
    """Each variant's parameters in canonical form, whether the run uses the variant or not."""
    params = {}
    for variant in suite.variants.values():
        where = f"{suite.path}: [variants.{variant.name}]"
        if variant.stack not in inventory:
            raise InputError(
                f"{where} key 'stack': unknown stack '{variant.stack}' "
                f"(stacks: {', '.join(inventory)})"
            )
        if variant.name in inventory:
            raise InputError(
                f"{where}: '{variant.name}' is already the name of a stack; give "
                "the variant another name"
            )
        params[variant.name] = _check_params(
            inventory[variant.stack],
            variant.params,
            f"{suite.path}: [variants.{variant.name}.params]",
        )
    return params


def _check_request_counts(suite: Suite) -> None:
    """A closed-loop level of N connections with fewer than N requests never has all N open at
    once: the loader hands out the last request before every connection has had one, so the
    level measures a lower concurrency than it is labelled with."""
    requests = suite.load.requests
    if suite.load.mode is not Mode.CLOSED or requests is None:
        return  # open loop, a duration, or requests_per_connection (always >= 1 per connection)
    for spec in suite.workloads:
        for connections in suite.levels_for(spec.label):
            if requests < connections:
                raise InputError(
                    f"{suite.path}: workload '{spec.label}', level {connections:g} connections: "
                    f"[load] requests = {requests} is below the connection count, so at most "
                    f"{requests} connections are ever open at once; raise requests to at least "
                    f"{connections:g} or give requests_per_connection instead"
                )


def _levels(suite: Suite, label: str) -> tuple[Level, ...]:
    return tuple(
        Level(i, v, rep)
        for i, v in enumerate(suite.levels_for(label))
        for rep in range(suite.load.repeat)
    )


def _check_params(entry: StackEntry, params: dict[str, str], where: str) -> dict[str, str]:
    """The values in canonical form, each checked against the type its manifest declares.
    A stack whose manifest is broken cannot check them: it is planned as unavailable."""
    if entry.parsed is None:
        for key, value in params.items():  # the types are unknown, but never a control character
            if not control_free(value):
                raise InputError(f"{where} key {key!r}: control characters are not allowed")
        return dict(params)
    return entry.parsed.check_params(params, where)
