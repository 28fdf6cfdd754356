"""An article's claims against our numbers: confirmed, refuted or untestable here, and why.

Pure functions over frozen records. `requirements_unmet` needs only the plan's facts (it is
what `--dry-run` prints); `evaluate` reads a stored run. Each claim gets one status:

- untestable: a requirement is unmet (cores, keep-alive, a stack, a parameter, a level), a case
  it reads failed or was unavailable, or a level it reads is invalid for a measurement reason.
  Missing data never refutes a claim.
- not enough evidence: the interval of our figure or ratio straddles the claim's bound (or a
  figure has no evidence at all: one repetition of a driver without a per-second series); the
  reason says what would decide it.
- refuted / confirmed: the whole interval lies outside / inside the claim's band.

Intervals come from the verdicts procedure (analysis.verdicts): each figure's evidence (the
steady window's seconds with one repetition, the repetitions with several), the run-to-run
spread added for every single repetition, logs added and subtracted for ratios and ratios of
ratios, Student t at 95%. The tolerance of each test kind is documented in
suites/claims/README.md.
"""

import dataclasses
import enum
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from stackbench.analysis import stats
from stackbench.analysis.calibration import spread_of
from stackbench.analysis.levelsteady import aggregate_steady
from stackbench.analysis.verdicts import (
    CONFIDENCE,
    Evidence,
    LogRatio,
    RunSpread,
    interval_of,
    log_ratio,
    repetition_evidence,
    repetitions_to_decide,
    single_run_evidence,
)
from stackbench.config.claims import (
    SCRIPT_METRICS,
    BreakpointTest,
    Claim,
    Condition,
    Figure,
    OrderTest,
    RatioChangeTest,
    RatioTest,
    ScatterTest,
    ShapeTest,
    Side,
    Test,
    ThresholdTest,
    metric_unit,
    order_groups,
    stacks_read,
)
from stackbench.config.plan import Plan, PlannedStack
from stackbench.config.status import StackEntry
from stackbench.store.records import LevelFlag
from stackbench.store.store import CaseRow, LevelRow, RunData, ScriptRow

SERVER_CORES_TEMPLATE = "{{server_core_count}}"
ERROR_RATE_FLAG = LevelFlag.INVALID.detail("error rate")
# Metrics for which a level the server failed requests in is data, not a faulty measurement.
FAILURE_METRICS = frozenset({"errors", "error_rate"})


class ClaimStatus(enum.Enum):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    UNDECIDED = "not enough evidence"
    UNTESTABLE = "untestable"


# --- facts about the plan --------------------------------------------------------------------
@dataclass(frozen=True)
class StackFacts:
    name: str                      # as the suite names it (a variant's name included)
    available: bool
    reason: str = ""               # why it is unavailable
    params: Mapping[str, str] = field(default_factory=dict)  # in force (defaults + suite)


@dataclass(frozen=True)
class Facts:
    """What the plan gives a claim: cores, stacks, workloads and levels, load settings."""

    server_cores: int
    stacks: tuple[StackFacts, ...]
    workload_levels: Mapping[str, tuple[float, ...]]  # workload label -> its levels
    keepalive: str = "on"
    driver: str = "native"
    warmup_s: float = 0.0
    jit_warmup: bool = False                    # JIT stacks warmed before each case ([warmup])
    requests: int | None = None                 # fixed request count per level
    requests_per_connection: int | None = None
    level_kind: str = "connections"             # connections | rate
    script_iterations: int = 0

    def stack(self, name: str) -> StackFacts | None:
        return next((s for s in self.stacks if s.name == name), None)

    def request_count(self, level: float) -> int | None:
        """Requests a level sends (None: the level runs for a duration)."""
        if self.requests_per_connection is not None:
            return int(self.requests_per_connection * level)
        return self.requests


def facts_from_plan(plan: Plan, inventory: Mapping[str, StackEntry],
                    params: Mapping[str, Mapping[str, str]] | None = None) -> Facts:
    """The facts of a plan, with every stack parameter in force: `params` as the stacks will
    resolve them at start (lab.stack.planned_params, by planned name); a stack missing there
    gets its manifest defaults and the suite's values, cores substituted."""
    suite = plan.suite
    cores = suite.server_cores
    resolved = params or {}

    def in_force(ps: PlannedStack) -> Mapping[str, str]:
        if ps.name in resolved:
            return resolved[ps.name]
        return _with_defaults(inventory[ps.stack].manifest.param_defaults(), ps.params, cores)

    stacks = tuple(StackFacts(ps.name, ps.available, ps.reason, in_force(ps))
                   for ps in plan.stacks)
    labels = dict.fromkeys(c.spec.label for ps in plan.stacks for c in ps.cases)
    load = suite.load
    return Facts(cores, stacks, {label: suite.levels_for(label) for label in labels},
                 load.keepalive.value, load.driver.value, load.warmup_s, load.jit_warmup,
                 load.requests, load.requests_per_connection, suite.level_kind,
                 suite.script_iterations)


def facts_from_run(data: RunData,
                   param_defaults: Mapping[str, Mapping[str, str]] | None = None) -> Facts:
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
            old.params if old else _with_defaults(defaults, case.params, cores))
        stacks[case.stack] = StackFacts(case.stack, available, reason, params)
    labels = dict.fromkeys(c.label for c in data.cases)
    levels = {label: tuple(float(v) for v in settings.workload_levels.get(label, settings.levels))
              for label in labels}
    return Facts(cores, tuple(stacks.values()), levels, settings.keepalive, settings.driver,
                 settings.warmup_s, settings.jit_warmup, settings.requests,
                 settings.requests_per_connection,
                 settings.level_kind, settings.script_iterations)


def _with_defaults(defaults: Mapping[str, str], params: Mapping[str, str],
                   cores: int) -> dict[str, str]:
    merged = {**defaults, **params}
    return {k: v.replace(SERVER_CORES_TEMPLATE, str(cores)) for k, v in merged.items()}


# --- requirements ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Readiness:
    claim: Claim
    reasons: tuple[str, ...]  # empty: testable here

    @property
    def testable(self) -> bool:
        return not self.reasons


def cores_note(article_cores: int | None, server_cores: int,
               readiness: Sequence[Readiness] = ()) -> str:
    """One sentence when this machine gives the server fewer cores than the suite's article
    had, or than some of its claims need; "" when nothing is short."""
    needing = [r.claim.requires.server_cores for r in readiness
               if r.claim.requires.server_cores > server_cores]
    short = article_cores is not None and server_cores < article_cores
    if not short and not needing:
        return ""
    given = f"{server_cores} core" + ("" if server_cores == 1 else "s")
    parts = []
    if short:
        parts.append(f"the stacks size their workers for {server_cores}")
    if needing:
        verb = "is" if len(needing) == 1 else "are"
        parts.append(f"{len(needing)} of the article's claims (needing up to {max(needing)} "
                     f"server cores) {verb} untestable here")
    head = (f"The article's server had {article_cores} cores; this machine gives the server "
            f"{given}" if short else f"This machine gives the server {given}")
    return f"{head}, so {' and '.join(parts)}."


def requirements_unmet(claims: Iterable[Claim], facts: Facts) -> tuple[Readiness, ...]:
    """For each claim, the reasons this plan cannot test it (empty when it can)."""
    return tuple(Readiness(c, tuple(dict.fromkeys(_unmet(c, facts)))) for c in claims)


def _unmet(claim: Claim, facts: Facts) -> Iterable[str]:
    req = claim.requires
    if facts.server_cores < req.server_cores:
        yield (f"needs {req.server_cores} server cores; this run gives the server "
               f"{facts.server_cores}")
    if req.keepalive is not None and facts.keepalive != req.keepalive:
        yield (f"needs keep-alive {req.keepalive} as in the article; this run has keep-alive "
               f"{facts.keepalive}")
    if req.drivers and facts.driver not in req.drivers:
        yield f"needs the {' or '.join(req.drivers)} driver; this run uses {facts.driver}"
    # Either warms a JIT: the levels' own warm-up, or the pass each JIT stack declares it
    # needs (stack.toml [warmup]: JVM 15 s, V8 3 s ...) run before each case's first level.
    if facts.warmup_s < req.min_warmup_s and not facts.jit_warmup:
        yield (f"needs JIT stacks measured warm: at least {req.min_warmup_s:g} s of warm-up "
               f"per level or the JIT warm-up pass; this run warms up {facts.warmup_s:g} s "
               "with [load] jit_warmup = false")
    for name in dict.fromkeys((*stacks_read(claim.test), *req.stacks)):
        yield from _stack_unmet(name, facts)
    for stack, params in req.params.items():
        yield from _params_unmet(stack, params, facts)
    yield from _test_unmet(claim.test, facts)


def _stack_unmet(name: str, facts: Facts) -> Iterable[str]:
    stack = facts.stack(name)
    if stack is None:
        yield f"needs the stack {name}, which this suite does not run"
    elif not stack.available:
        # The install hint is for `stackbench stacks`; the claim needs only the cause.
        cause = stack.reason.split("; install:")[0] or "no reason given"
        yield f"{name} is unavailable here: {cause}"


def _params_unmet(stack: str, params: Mapping[str, str], facts: Facts) -> Iterable[str]:
    found = facts.stack(stack)
    if found is None:
        return  # reported by the stack check when the test reads it
    for key, wanted in params.items():
        have = found.params.get(key)
        if have is None:
            yield f"needs {stack} with {key} = {wanted}; {stack} has no parameter {key} here"
        elif have != wanted:
            yield f"needs {stack} with {key} = {wanted}; this run sets {key} = {have}"


def _test_unmet(test: Test, facts: Facts) -> Iterable[str]:
    if test.metric in SCRIPT_METRICS:
        if facts.script_iterations <= 0:
            yield "needs the standalone timing (script_iterations); this suite has none"
        for w in _test_workloads(test):
            if w not in facts.workload_levels:
                yield f"needs the workload {w}, which this suite does not run"
        return
    if facts.level_kind != "connections":
        yield "the article's levels are concurrent connections; this suite runs request rates"
        return
    for workload, levels in _levels_needed(test, facts).items():
        have = facts.workload_levels.get(workload)
        if have is None:
            yield f"needs the workload {workload}, which this suite does not run"
            continue
        missing = sorted(lv for lv in levels if not _has_level(have, lv))
        if missing:
            yield (f"needs level {_levels_text(missing)} for {workload}; the suite runs "
                   f"{_levels_text(have)}")
        for lv in (lv for lv in (levels or have) if _has_level(have, lv)):
            count = facts.request_count(lv)
            if count is not None and count < lv:
                yield (f"level {lv:,.0f} of {workload} sends only {count:,} requests, so at "
                       f"most {count:,} of its {lv:,.0f} connections are ever open")
    known = all(w in facts.workload_levels for w in _test_workloads(test))
    if isinstance(test, RatioTest | RatioChangeTest) and known and not _combos(test, facts):
        yield "the workloads this ratio compares share no level in this suite"
    yield from _span_unmet(test, facts)


def _test_workloads(test: Test) -> tuple[str, ...]:
    names: list[str] = list(getattr(test, "workloads", None) or ())
    if isinstance(test, RatioTest | RatioChangeTest):
        names += [s.workload for s in (test.numerator, test.denominator) if s.workload]
    if isinstance(test, RatioChangeTest):
        names += [c.workload for c in (test.before, test.after) if c.workload]
    if isinstance(test, ScatterTest | BreakpointTest):
        names.append(test.workload)
    return tuple(dict.fromkeys(names))


def _levels_needed(test: Test, facts: Facts) -> dict[str, list[float]]:
    """workload -> the explicit levels the test reads there (empty list: any level will do)."""
    needed: dict[str, list[float]] = {}

    def need(workload: str, level: float | None) -> None:
        levels = needed.setdefault(workload, [])
        if level is not None and not _has_level(levels, level):
            levels.append(level)

    if isinstance(test, OrderTest | ThresholdTest):
        for w in test.workloads or ():
            for lv in test.levels if isinstance(test.levels, tuple) else (None,):
                need(w, lv)
    elif isinstance(test, RatioTest | RatioChangeTest):
        for position in _positions(test):
            for named in test.workloads or (None,):
                need(_resolve(position, test, named, None)[1], None)
            for combo_workload, combo_level in _combos(test, facts):
                _, workload, level, _ = _resolve(position, test, combo_workload, combo_level)
                need(workload, None if level is None or isinstance(level, str) else level)
    elif isinstance(test, ShapeTest):
        for w in test.workloads:
            need(w, test.from_level)
            need(w, test.to_level)
    elif isinstance(test, ScatterTest):
        for span in (test.numerator, test.denominator):
            need(test.workload, span.from_level)
            need(test.workload, span.to_level)
    else:
        need(test.workload, None)
    return needed


def _span_unmet(test: Test, facts: Facts) -> Iterable[str]:
    if isinstance(test, ShapeTest):
        for w in test.workloads:
            inside = _between(facts.workload_levels.get(w, ()), test.from_level, test.to_level)
            if len(inside) < 2:
                yield (f"needs at least two levels of {w} from {test.from_level:,.0f} to "
                       f"{test.to_level:,.0f}")
    if isinstance(test, ScatterTest):
        have = facts.workload_levels.get(test.workload, ())
        for span in (test.numerator, test.denominator):
            if len(_between(have, span.from_level, span.to_level)) < 3:
                yield (f"needs at least three levels of {test.workload} from "
                       f"{span.from_level:,.0f} to {span.to_level:,.0f}")


# --- evaluation ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Measured:
    """One of our figures: a median (or a ratio of medians), with its interval when there is
    one; value None when there is nothing to show (e.g. no breakpoint in the sweep)."""

    label: str
    value: float | None
    unit: str
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    status: ClaimStatus
    expectation: str               # what the test checks, e.g. "≥ 1.00× at every level"
    ours: tuple[Measured, ...]
    why: str

    @property
    def article(self) -> tuple[Figure, ...]:
        return self.claim.figures


def evaluate(claims: Iterable[Claim], data: RunData, facts: Facts,
             resamples: int = stats.DEFAULT_RESAMPLES,
             seed: int = stats.DEFAULT_SEED) -> tuple[ClaimResult, ...]:
    run = _Run(data)
    out = []
    for ready in requirements_unmet(claims, facts):
        claim = ready.claim
        if not ready.testable:
            out.append(ClaimResult(claim, ClaimStatus.UNTESTABLE, expectation(claim.test), (),
                                   _join_reasons(ready.reasons)))
            continue
        run.loader_bound.clear()
        result = _evaluate_test(claim, _Context(run, facts, resamples, seed))
        out.append(_with_caveat(result, sorted(run.loader_bound)))
    return tuple(out)


def _with_caveat(result: ClaimResult, loader_bound: list[str]) -> ClaimResult:
    """A level the loader could not drive harder measured the loader, not the server: the
    claim keeps its status, and its reason says which figures may be the loader's."""
    if not loader_bound or result.status is ClaimStatus.UNTESTABLE:
        return result
    shown = ", ".join(loader_bound[:3]) + (" …" if len(loader_bound) > 3 else "")
    why = f"{result.why} (loader-bound, so possibly the loader's limit: {shown})"
    return dataclasses.replace(result, why=why)


def _join_reasons(reasons: Sequence[str]) -> str:
    first = reasons[0]
    more = len(reasons) - 1
    return first + (f" (and {more} more: {'; '.join(reasons[1:])})" if more else "")


# --- reading the run -------------------------------------------------------------------------
class _Missing:
    """A figure we cannot have, and why (a failed case, an invalid level, no such level...)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


@dataclass(frozen=True)
class _Point:
    values: tuple[float, ...]  # one per repetition
    stack: str
    workload: str
    where: str                 # "@3,000", "peak @2,000" or "standalone"
    metric: str
    # What verdicts know of the figure, in the metric's unit (None: nothing to decide from)
    evidence: Evidence | None = None

    @property
    def value(self) -> float:
        return stats.median(self.values)

    @property
    def unit(self) -> str:
        return metric_unit(self.metric)

    @property
    def label(self) -> str:
        return f"{self.stack} {self.workload} {self.where}"


def pair_label(a: _Point, b: _Point) -> str:
    """'a / b' naming only what differs: 'node / php on hello @25', 'php hello: @200 / @20'."""
    same_stack, same_workload = a.stack == b.stack, a.workload == b.workload
    same_where, same_metric = a.where == b.where, a.metric == b.metric
    if not same_metric and same_stack and same_workload and same_where:
        return f"{a.stack} {a.workload} {a.where}: {a.metric} / {b.metric}"
    if same_workload and same_where:
        return f"{a.stack} / {b.stack} on {a.workload} {a.where}"
    if same_stack and same_workload:
        return f"{a.stack} {a.workload}: {a.where} / {b.where}"
    if same_stack and same_where:
        return f"{a.stack} {a.where}: {a.workload} / {b.workload}"
    return f"{a.label} / {b.label}"


def change_label(after: _Point, before: _Point, against: _Point) -> str:
    """'(node / go) sha256?n=1 → sha256?n=1000 @300': one stack's standing against another
    from `before` to `after`."""
    if after.workload == before.workload:
        move = f"{after.workload} {before.where} → {after.where}"
    elif after.where == before.where:
        move = f"{before.workload} → {after.workload} {after.where}"
    else:
        move = f"{before.workload} {before.where} → {after.workload} {after.where}"
    return f"({after.stack} / {against.stack}) {move}"


class _Run:
    def __init__(self, data: RunData) -> None:
        self.cases: dict[tuple[str, str], CaseRow] = {(c.stack, c.label): c for c in data.cases}
        self.failed_verification: dict[tuple[str, str], list[str]] = {}
        for v in data.verifications:
            if not v.ok:
                self.failed_verification.setdefault((v.stack, v.workload), []).extend(
                    v.failures or ["failed"])
        self.rows: dict[int, list[LevelRow]] = {}
        for row in data.levels:
            self.rows.setdefault(row.case_id, []).append(row)
        self.scripts: dict[tuple[str, str], list[ScriptRow]] = {}
        for s in data.scripts:
            self.scripts.setdefault((s.stack, s.label), []).append(s)
        self.loader_bound: set[str] = set()  # labels of the levels read for the current claim
        self.spread = spread_of(data.calibration)

    def case(self, stack: str, workload: str) -> CaseRow | _Missing:
        case = self.cases.get((stack, workload))
        if case is None:
            return _Missing(f"{stack} did not run {workload} in this run")
        if case.status == "unavailable":
            return _Missing(f"{stack} is unavailable: {case.reason or 'no reason given'}")
        if case.status == "failed":
            return _Missing(f"{stack} failed on {workload}: {case.reason or 'no reason given'}")
        failures = (self.failed_verification.get((stack, case.workload))
                    or self.failed_verification.get((stack, workload)))
        if failures:
            return _Missing(f"{stack} failed verification on {workload}: {failures[0]}")
        if not self.rows.get(case.id):
            return _Missing(f"{stack} has no measured level of {workload} (the run ended "
                            "before it)")
        return case

    def level_values(self, case: CaseRow) -> list[float]:
        return sorted({r.level_value for r in self.rows.get(case.id, [])})

    def rows_at(self, case: CaseRow, level: float) -> list[LevelRow]:
        return [r for r in self.rows.get(case.id, []) if math.isclose(r.level_value, level)]

    def point(self, stack: str, workload: str, level: float, metric: str) -> _Point | _Missing:
        case = self.case(stack, workload)
        if isinstance(case, _Missing):
            return case
        rows = self.rows_at(case, level)
        where = f"@{level:,.0f}"
        label = f"{stack} {workload} {where}"
        if not rows:
            measured = _levels_text(self.level_values(case))
            return _Missing(f"{stack} has no level {level:,.0f} of {workload} (measured: "
                            f"{measured})")
        problem = level_problem(rows, failures_are_data=metric in FAILURE_METRICS)
        if problem:
            return _Missing(f"{label}: {problem}")
        values = []
        for row in rows:
            value = level_metric(row, metric)
            if isinstance(value, str):
                return _Missing(f"{label}: {value}")
            values.append(value)
        if any(LevelFlag.LOADER_BOUND in r.flags for r in rows):
            self.loader_bound.add(label)
        return _Point(tuple(values), stack, workload, where, metric,
                      level_evidence(rows, metric, values, self.spread))

    def peak(self, stack: str, workload: str, metric: str) -> tuple[float, _Point] | _Missing:
        """The level with the highest median of the metric, over every level of the case."""
        case = self.case(stack, workload)
        if isinstance(case, _Missing):
            return case
        best: tuple[float, _Point] | None = None
        for level in self.level_values(case):
            point = self.point(stack, workload, level, metric)
            if isinstance(point, _Missing):
                return _Missing(f"no peak of {stack} on {workload}: {point.reason}")
            if best is None or point.value > best[1].value:
                best = (level, point)
        assert best is not None  # case() guarantees measured levels
        return best

    def script(self, stack: str, workload: str, metric: str) -> _Point | _Missing:
        rows = self.scripts.get((stack, workload), [])
        if not rows:
            return _Missing(f"{stack} has no standalone timing of {workload} in this run")
        values = []
        for row in rows:
            value = script_metric(row, metric)
            if isinstance(value, str):
                return _Missing(f"{stack} standalone {workload}: {value}")
            values.append(value)
        evidence = (single_run_evidence(values[0]) if len(values) == 1
                    else repetition_evidence(values, [], self.spread))
        return _Point(tuple(values), stack, workload, "standalone", metric, evidence)


STEADY_LATENCY = ("p50", "p90", "p99")
PER_REQUEST_TIMES = ("time_per_request", "time_per_request_all")


def level_evidence(rows: Sequence[LevelRow], metric: str, values: Sequence[float],
                   spread: RunSpread) -> Evidence | None:
    """The evidence of a claim's figure, in its unit: req/s and p50/p90/p99 from the steady
    windows as every verdict has them (levelsteady); ab's times per request, which are
    1 / throughput scaled, with the relative variance of the level's throughput; any other
    figure from its repetitions only (two or more)."""
    if metric == "requests_per_s" or metric in STEADY_LATENCY or metric in PER_REQUEST_TIMES:
        steady = aggregate_steady(rows, spread)
        if metric == "requests_per_s":
            return steady.throughput.evidence
        if metric in STEADY_LATENCY:
            latency = steady.latency_us.get(metric)
            ms = None if latency is None else latency.evidence
            return None if ms is None else _as_figure(ms, ms.value / 1000.0)
        throughput = steady.throughput.evidence
        if len(values) == 1 and throughput is not None and values[0] > 0:
            return _as_figure(throughput, values[0])
    return repetition_evidence(values, [], spread)


def _as_figure(e: Evidence, value: float) -> Evidence:
    """The same evidence for another figure with the same relative uncertainty (a percentile
    in ms instead of µs; a time per request, 1 / throughput scaled)."""
    return dataclasses.replace(e, value=value, log_mean=math.log(value))


def level_problem(rows: Sequence[LevelRow], failures_are_data: bool) -> str | None:
    """Why these repetitions of a level cannot be read, or None. A level marked invalid only
    because the server failed requests is data for error claims; any other invalid or failed
    level is a faulty measurement."""
    for row in rows:
        if row.status == "failed":
            return "the level failed" + (f" ({row.flags[0]})" if row.flags else "")
    for row in rows:
        if row.status == "invalid":
            faults = [f for f in row.flags
                      if LevelFlag.of(f) in (LevelFlag.INVALID, LevelFlag.UNSTEADY)]
            measurement = [f for f in faults if not f.startswith(ERROR_RATE_FLAG)]
            if measurement or not faults:
                return "level invalid: " + (measurement[0] if measurement else "no reason given")
            if not failures_are_data:
                return f"level invalid: {faults[0].removeprefix('invalid: ')}"
    return None


def level_metric(row: LevelRow, metric: str) -> float | str:
    """The metric of one repetition, or why it is not there."""
    if metric == "requests_per_s":
        return row.requests_per_s
    if metric == "error_rate":
        return stats.level_error_rate(row)
    if metric == "errors":
        return float(row.errors_total)
    if metric in ("server_cpu", "service_cpu"):
        cpu = (stats.server_cpu_percent(row) if metric == "server_cpu"
               else stats.service_cpu_percent(row))
        return "no CPU sample of the " + metric.split("_")[0] if cpu is None else cpu
    if metric == "transfer":
        mib = stats.level_transfer_mib_per_s(row)
        return f"the {row.driver} driver gave no byte count" if mib is None else mib
    if row.completed <= 0:
        return "no request completed"
    if metric == "time_per_request":
        value = stats.level_time_per_request_ms(row)
        return "no time per request in the open loop" if value is None else value
    if metric == "time_per_request_all":
        every = stats.level_time_per_request_all_ms(row)
        return "no request completed" if every is None else every
    key = {"mean_latency": "mean", "max_latency": "max"}.get(metric, metric)
    if key not in row.latency_us:
        return f"the {row.driver} driver did not measure {metric.replace('_', '.')}"
    return row.latency_us[key] / 1000.0


def script_metric(row: ScriptRow, metric: str) -> float | str:
    """Seconds per iteration of a standalone timing, or why it is not there."""
    usable = row.outcome == "ok" or row.outcome.startswith("not checked")
    if not usable:
        return f"the timing failed ({row.outcome})"
    figure = {"script_wall": row.wall_s,
              "script_user": row.user_s,
              "script_cpu": None if row.user_s is None or row.sys_s is None
              else row.user_s + row.sys_s}[metric]
    if figure is None or row.iterations <= 0:
        return "no time recorded"
    return figure / row.iterations


# --- decisions -------------------------------------------------------------------------------
class _Verdict(enum.Enum):
    HOLDS = "holds"
    FAILS = "fails"
    NOISE = "within noise"


@dataclass(frozen=True)
class _Band:
    low: float
    high: float

    def judge(self, value: float, low: float | None, high: float | None) -> _Verdict:
        """Holds when the whole interval lies in the band, fails when it lies outside."""
        lo, hi = (value, value) if low is None or high is None else (low, high)
        if self.low <= lo and hi <= self.high:
            return _Verdict.HOLDS
        if hi < self.low or lo > self.high:
            return _Verdict.FAILS
        return _Verdict.NOISE


def _ratio_band(expect: str, threshold: float, article: float | None,
                tolerance: float) -> _Band:
    if expect == "greater":
        return _Band(threshold, math.inf)
    if expect == "less":
        return _Band(0.0, threshold)
    assert article is not None  # the parser requires it for "near"
    return _Band(article / (1.0 + tolerance), article * (1.0 + tolerance))


def quotient(numerators: Sequence[Sequence[float]], denominators: Sequence[Sequence[float]],
             resamples: int = stats.DEFAULT_RESAMPLES, seed: int = stats.DEFAULT_SEED,
             confidence: float = stats.DEFAULT_CONFIDENCE
             ) -> tuple[float, float | None, float | None] | None:
    """prod(median(n)) / prod(median(d)) with a percentile-bootstrap interval (each sample
    resampled independently); no interval unless every sample has two or more values. None
    when a denominator median is zero."""
    den = math.prod(stats.median(d) for d in denominators)
    if den == 0:
        return None
    value = math.prod(stats.median(n) for n in numerators) / den
    samples = [*numerators, *denominators]
    if any(len(s) < 2 for s in samples):
        return value, None, None
    rng = random.Random(seed)
    k = len(numerators)
    stats_out = []
    for _ in range(resamples):
        meds = [stats.median(rng.choices(list(s), k=len(s))) for s in samples]
        d = math.prod(meds[k:])
        if d != 0:
            stats_out.append(math.prod(meds[:k]) / d)
    if not stats_out:
        return value, None, None
    stats_out.sort()
    alpha = (1.0 - confidence) / 2.0
    return value, stats.quantile(stats_out, alpha), stats.quantile(stats_out, 1.0 - alpha)


@dataclass
class _Tally:
    """Per-point verdicts of one claim, with the first reason of each kind."""

    holds: int = 0
    fails: list[str] = field(default_factory=list)
    noise: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    ours: list[Measured] = field(default_factory=list)

    def add(self, verdict: _Verdict, detail: str) -> None:
        if verdict is _Verdict.HOLDS:
            self.holds += 1
        elif verdict is _Verdict.FAILS:
            self.fails.append(detail)
        else:
            self.noise.append(detail)

    @property
    def total(self) -> int:
        return self.holds + len(self.fails) + len(self.noise) + len(self.missing)


@dataclass(frozen=True)
class _Context:
    run: _Run
    facts: Facts
    resamples: int
    seed: int


def _conclude(claim: Claim, tally: _Tally, confirmed_why: str,
              at_least: int | None = None) -> ClaimResult:
    """All points must hold (or `at_least` of them). Missing data makes a claim untestable,
    never refuted; it is confirmed with missing data only when that data cannot change it."""
    exp = expectation(claim.test)
    ours = tuple(tally.ours)

    def result(status: ClaimStatus, why: str) -> ClaimResult:
        return ClaimResult(claim, status, exp, ours, why)

    needed = tally.total if at_least is None else min(at_least, tally.total)
    if tally.total == 0:
        return result(ClaimStatus.UNTESTABLE, "nothing in this run to compare")
    if tally.holds >= needed and (at_least is not None or not tally.missing):
        return result(ClaimStatus.CONFIRMED, confirmed_why)
    if tally.missing:
        partial = f"; where measured: {tally.fails[0]}" if tally.fails else ""
        return result(ClaimStatus.UNTESTABLE, tally.missing[0] + partial)
    possible = tally.holds + len(tally.noise)
    if tally.fails and possible < needed:
        extra = f" ({len(tally.fails)} of {tally.total} points)" if tally.total > 1 else ""
        return result(ClaimStatus.REFUTED, tally.fails[0] + extra)
    return result(ClaimStatus.UNDECIDED, f"not enough evidence: {tally.noise[0]}")


def _evaluate_test(claim: Claim, ctx: _Context) -> ClaimResult:
    test = claim.test
    if isinstance(test, OrderTest):
        return _order(claim, test, ctx)
    if isinstance(test, RatioTest | RatioChangeTest):
        return _ratio(claim, test, ctx)
    if isinstance(test, ThresholdTest):
        return _threshold(claim, test, ctx)
    if isinstance(test, ShapeTest):
        return _shape(claim, test, ctx)
    if isinstance(test, ScatterTest):
        return _scatter(claim, test, ctx)
    return _breakpoint(claim, test, ctx)


# --- order -----------------------------------------------------------------------------------
def _order(claim: Claim, test: OrderTest, ctx: _Context) -> ClaimResult:
    tally = _Tally()
    band = _Band(test.min_ratio, math.inf)
    for workload in test.workloads or ():
        for level in _levels_of(test.levels, workload, ctx.facts):
            points: dict[str, _Point] = {}
            for stack in (s for g in order_groups(test) for s in g):
                point = _get(ctx.run, stack, workload, level, test.metric)
                if isinstance(point, _Missing):
                    tally.missing.append(point.reason)
                    continue
                points[stack] = point
                tally.ours.append(_measured(point, ctx))
            groups = order_groups(test)
            for upper, lower in zip(groups, groups[1:], strict=False):
                for a in upper:
                    for b in lower:
                        if a in points and b in points:
                            _judge_ratio(tally, band, [points[a]], [points[b]],
                                         pair_label(points[a], points[b]), ctx, record=True)
    return _conclude(claim, tally, f"every pair is in the stated order ({expectation(test)})")


def _judge_ratio(tally: _Tally, band: _Band, nums: list[_Point], dens: list[_Point],
                 what: str, ctx: _Context, record: bool = False) -> None:
    """A ratio of our figures (a ratio of ratios for ratio_change) against the claim's band,
    on the interval the verdicts procedure gives it."""
    den = math.prod(p.value for p in dens)
    if den == 0:
        tally.missing.append(f"{what}: the denominator is zero")
        return
    sides = [p.evidence for p in (*nums, *dens)]
    if any(e is None for e in sides):
        value = math.prod(p.value for p in nums) / den
        if record:
            tally.ours.append(Measured(what, value, "×"))
        tally.noise.append(f"{what} is {value:.2f}×, but {NO_EVIDENCE}")
        return
    ratio = log_ratio([p.evidence for p in nums if p.evidence is not None],
                      [p.evidence for p in dens if p.evidence is not None], ctx.run.spread)
    value = math.exp(ratio.d)
    low, high = interval_of(ratio)
    if record:
        tally.ours.append(Measured(what, value, "×", low, high))
    verdict = band.judge(value, low, high)
    detail = f"{what} is {_ratio_text(value, low, high)}, {_band_text(band, verdict)}"
    tally.add(verdict, detail + (f"; {_to_decide(ratio, band)}" if verdict is _Verdict.NOISE
                                 else ""))


NO_EVIDENCE = ("one repetition of a level without a per-second series has no interval "
               "(repeat = 2 or more would give one)")


def _to_decide(ratio: LogRatio, band: _Band) -> str:
    """What would decide a ratio (or a figure) that straddles a bound of the claim's band:
    the repetitions a side whose interval would clear it, if the figure stayed the same."""
    edges = [math.log(e) for e in (band.low, band.high) if 0 < e < math.inf]
    if not edges:
        return "more repetitions would decide it"
    needed = min(abs(ratio.d - e) for e in edges)
    if needed < 0.005:
        return "it sits at the claim's bound: no practical amount of measurement decides it"
    reps = repetitions_to_decide(needed, ratio.per_run, CONFIDENCE)
    if reps is None:
        return "more than 50 repetitions a side would be needed to decide it"
    return f"{reps} repetitions a side (repeat = {reps}) would decide it"


def _band_text(band: _Band, verdict: _Verdict) -> str:
    target = (f"≥ {band.low:.2f}×" if math.isinf(band.high)
              else f"≤ {band.high:.2f}×" if band.low == 0
              else f"{band.low:.2f}–{band.high:.2f}×")
    if verdict is _Verdict.HOLDS:
        return f"within {target}"
    if verdict is _Verdict.FAILS:
        return f"outside {target}"
    return f"straddling {target}"


# --- ratio and ratio_change ------------------------------------------------------------------
_Position = tuple[Side, Condition | None]


def _positions(test: RatioTest | RatioChangeTest) -> list[_Position]:
    """Numerators first: (num, after), (den, before) / (den, after), (num, before)."""
    if isinstance(test, RatioTest):
        return [(test.numerator, None), (test.denominator, None)]
    return [(test.numerator, test.after), (test.denominator, test.before),
            (test.denominator, test.after), (test.numerator, test.before)]


def _resolve(position: _Position, test: RatioTest | RatioChangeTest, workload: str | None,
             level: float | None) -> tuple[str, str, float | str | None, str]:
    """(stack, workload, level or 'peak', metric) of one position at one iteration."""
    side, cond = position
    w = side.workload or (cond.workload if cond else None) or workload
    lv: float | str | None = side.level if side.level is not None else (
        cond.level if cond and cond.level is not None else level)
    assert w is not None  # the parser requires workloads unless every side names one
    return side.stack, w, lv, side.metric or test.metric


def _combos(test: RatioTest | RatioChangeTest, facts: Facts
            ) -> list[tuple[str | None, float | None]]:
    """The (workload, level) iterations: the test's lists, or every level the workloads the
    positions read have in common."""
    out: list[tuple[str | None, float | None]] = []
    for w in test.workloads or (None,):
        resolved = [_resolve(p, test, w, None) for p in _positions(test)]
        if all(r[2] is not None for r in resolved) or test.metric in SCRIPT_METRICS:
            out.append((w, None))
            continue
        if isinstance(test.levels, tuple):
            levels: Sequence[float] = test.levels
        else:
            read = {r[1] for r in resolved if r[2] is None}
            common = [set(facts.workload_levels.get(x, ())) for x in read]
            levels = sorted(set.intersection(*common)) if common else []
        out += [(w, lv) for lv in levels]
    return out


def _ratio(claim: Claim, test: RatioTest | RatioChangeTest, ctx: _Context) -> ClaimResult:
    tally = _Tally()
    band = _ratio_band(test.expect, test.threshold, test.article, test.tolerance)
    for w, lv in _combos(test, ctx.facts):
        points: list[_Point] = []
        for position in _positions(test):
            stack, workload, level, metric = _resolve(position, test, w, lv)
            point = _position_point(ctx.run, stack, workload, level, metric)
            if isinstance(point, _Missing):
                tally.missing.append(point.reason)
                break
            points.append(point)
        else:
            half = len(points) // 2
            label = (pair_label(points[0], points[1]) if isinstance(test, RatioTest)
                     else change_label(points[0], points[3], points[2]))
            _judge_ratio(tally, band, points[:half], points[half:], label, ctx, record=True)
    return _conclude(claim, tally, f"ours is {_ours_ratio_text(tally)}, "
                                   f"{_band_text(band, _Verdict.HOLDS)} as the claim needs")


def _position_point(run: _Run, stack: str, workload: str, level: float | str | None,
                    metric: str) -> _Point | _Missing:
    if metric in SCRIPT_METRICS:
        return run.script(stack, workload, metric)
    if level == "peak":
        peak = run.peak(stack, workload, metric)
        if isinstance(peak, _Missing):
            return peak
        at, point = peak
        return dataclasses.replace(point, where=f"peak {point.where}")
    if level is None:
        return _Missing(f"{stack} {workload}: no level to read")
    return run.point(stack, workload, float(level), metric)


def _ours_ratio_text(tally: _Tally) -> str:
    values = [m.value for m in tally.ours if m.value is not None]
    if not values:
        return "–"
    lo, hi = min(values), max(values)
    return f"{lo:.2f}×" if math.isclose(lo, hi) else f"{lo:.2f}–{hi:.2f}×"


# --- threshold -------------------------------------------------------------------------------
def _threshold(claim: Claim, test: ThresholdTest, ctx: _Context) -> ClaimResult:
    tally = _Tally()
    band = _Band(-math.inf if test.min is None else test.min,
                 math.inf if test.max is None else test.max)
    unit = metric_unit(test.metric)
    for stack in test.stacks:
        for workload in test.workloads:
            for level in _levels_of(test.levels, workload, ctx.facts):
                point = _get(ctx.run, stack, workload, level, test.metric)
                if isinstance(point, _Missing):
                    tally.missing.append(point.reason)
                    continue
                m = _measured(point, ctx)
                tally.ours.append(m)
                assert m.value is not None
                text = f"{point.label} is {_value_text(m.value, unit, m.low, m.high)}"
                exact = test.metric in FAILURE_METRICS  # counted, not sampled: as counted
                if m.low is None and not exact:
                    tally.noise.append(f"{text}, but {NO_EVIDENCE}")
                    continue
                verdict = band.judge(m.value, m.low, m.high)
                decide = ""
                if verdict is _Verdict.NOISE and point.evidence is not None:
                    decide = "; " + _to_decide(log_ratio([point.evidence], [], ctx.run.spread),
                                               band)
                tally.add(verdict, f"{text}, {_value_band_text(band, unit, verdict)}{decide}")
    count = (f"{test.at_least} of {tally.total} points" if test.at_least
             else "every point")
    return _conclude(claim, tally, f"{count} {_value_band_text(band, unit, _Verdict.HOLDS)}",
                     at_least=test.at_least)


def _value_band_text(band: _Band, unit: str, verdict: _Verdict) -> str:
    if math.isinf(band.low):
        target = f"≤ {_fmt(band.high, unit)}"
    elif math.isinf(band.high):
        target = f"≥ {_fmt(band.low, unit)}"
    else:
        target = f"{_fmt(band.low, unit)}–{_fmt(band.high, unit)}"
    word = {_Verdict.HOLDS: "within", _Verdict.FAILS: "outside",
            _Verdict.NOISE: "straddling"}[verdict]
    return f"{word} {target}"


# --- shape -----------------------------------------------------------------------------------
def _shape(claim: Claim, test: ShapeTest, ctx: _Context) -> ClaimResult:
    """Judged on medians (no interval): the spread is largest / smallest over the span's
    levels, of the median itself (flat) or of the median per connection (proportional)."""
    tally = _Tally()
    limit = 1.0 + test.tolerance
    per_level = test.expect == "proportional"
    for stack in test.stacks:
        for workload in test.workloads:
            levels = _between(ctx.facts.workload_levels.get(workload, ()), test.from_level,
                              test.to_level)
            figures: list[tuple[Measured, _Point]] = []
            for level in levels:
                point = ctx.run.point(stack, workload, level, test.metric)
                if isinstance(point, _Missing):
                    tally.missing.append(point.reason)
                    break
                if per_level:
                    point = dataclasses.replace(
                        point, values=tuple(v / level for v in point.values),
                        evidence=None if point.evidence is None else
                        _as_figure(point.evidence, point.evidence.value / level))
                shown = _measured(point, ctx)
                figures.append((dataclasses.replace(
                    shown, label=point.label + (" per connection" if per_level else "")), point))
            else:
                what = f"{stack} {workload} {test.from_level:,.0f}–{test.to_level:,.0f}"
                if any(p.value <= 0 for _, p in figures):
                    tally.missing.append(f"{what}: a zero figure, no spread")
                    continue
                # The two extremes show the spread; every level is in the report's tables.
                ranked = sorted(figures, key=lambda f: f[1].value)
                tally.ours += [ranked[0][0], ranked[-1][0]]
                _judge_ratio(tally, _Band(0.0, limit), [ranked[-1][1]], [ranked[0][1]],
                             f"{what} spread (largest / smallest)", ctx, record=True)
    return _conclude(claim, tally, f"{expectation(test)}: every spread is at most {limit:.2f}×")


# --- scatter ---------------------------------------------------------------------------------
def scatter(points: Sequence[tuple[float, float]], span: tuple[float, float]) -> float | None:
    """Root-mean-square of (median - trend) / trend over the levels in `span`, the trend being
    a LOWESS line through every level of the sweep. None with fewer than three levels in the
    span or a trend at or below zero."""
    trend = dict(stats.lowess(points))
    inside = [(x, y) for x, y in points if span[0] <= x <= span[1]]
    if len(inside) < 3 or any(trend[x] <= 0 for x, _ in inside):
        return None
    return math.sqrt(math.fsum(((y - trend[x]) / trend[x]) ** 2 for x, y in inside)
                     / len(inside))


def _scatter(claim: Claim, test: ScatterTest, ctx: _Context) -> ClaimResult:
    tally = _Tally()
    values: list[float] = []
    for span in (test.numerator, test.denominator):
        what = f"{span.stack} {test.workload} {span.from_level:,.0f}–{span.to_level:,.0f}"
        curve = _curve(ctx.run, span.stack, test.workload, test.metric)
        if isinstance(curve, _Missing):
            tally.missing.append(curve.reason)
            continue
        s = scatter(curve, (span.from_level, span.to_level))
        if s is None:
            tally.missing.append(f"{what}: fewer than three levels or no trend to compare with")
            continue
        tally.ours.append(Measured(f"{what} jitter", 100.0 * s, "%"))
        values.append(s)
    if len(values) == 2:
        band = _Band(test.threshold, math.inf)
        if values[1] == 0:
            tally.missing.append("the second span has no jitter at all: no ratio")
        else:
            ratio = values[0] / values[1]
            tally.ours.append(Measured("jitter ratio", ratio, "×"))
            verdict = band.judge(ratio, None, None)
            tally.add(verdict, f"the jitter ratio is {ratio:.2f}×, "
                               f"{_band_text(band, verdict)}")
    return _conclude(claim, tally, f"the jitter ratio is {_ours_ratio_text(tally)}, "
                                   f"at least {test.threshold:.2f}×")


def _curve(run: _Run, stack: str, workload: str,
           metric: str) -> list[tuple[float, float]] | _Missing:
    case = run.case(stack, workload)
    if isinstance(case, _Missing):
        return case
    curve = []
    for level in run.level_values(case):
        point = run.point(stack, workload, level, metric)
        if isinstance(point, _Missing):
            return point
        curve.append((level, point.value))
    return curve


# --- breakpoint ------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Break:
    first: float | None          # first failing level, None: none in the sweep
    reached: float               # the highest level judged
    why: str                     # what failed at `first`
    last_passing: float | None = None  # the level before `first` that held (None: none did)


def _breakpoint(claim: Claim, test: BreakpointTest, ctx: _Context) -> ClaimResult:
    tally = _Tally()
    mine = _first_break(ctx.run, test.stack, test.workload, test)
    other = _first_break(ctx.run, test.other, test.workload, test) if test.other else None
    for found in (mine, other):
        if isinstance(found, _Missing):
            tally.missing.append(found.reason)
    if isinstance(mine, _Missing) or isinstance(other, _Missing):
        return _conclude(claim, tally, "")
    for name, found in ((test.stack, mine), (test.other, other)):
        if name is not None and found is not None:
            # The sweep's resolution is the breakpoint's interval: between the last level
            # that held and the first that failed.
            tally.ours.append(Measured(f"{name} first failing level", found.first,
                                       "connections", found.last_passing, found.first))
    verdict, detail = _judge_break(test, mine, other)
    if verdict is None:
        tally.missing.append(detail)
    else:
        tally.add(verdict, detail)
    return _conclude(claim, tally, detail)


def _first_break(run: _Run, stack: str, workload: str,
                 test: BreakpointTest) -> _Break | _Missing:
    case = run.case(stack, workload)
    if isinstance(case, _Missing):
        return case
    reached = 0.0
    for level in run.level_values(case):
        rows = run.rows_at(case, level)
        problem = level_problem(rows, failures_are_data=True)
        if problem:
            return _Missing(f"{stack} {workload} @{level:,.0f}: {problem}; the breakpoint "
                            "cannot be placed")
        failed = _level_breaks(rows, test)
        if failed:
            return _Break(level, level, failed, reached or None)
        reached = level
    return _Break(None, reached, "")


def _level_breaks(rows: Sequence[LevelRow], test: BreakpointTest) -> str:
    """Why this level breaks the objective ('' when it holds), judged on medians."""
    errors = stats.median([stats.level_error_rate(r) for r in rows])
    if test.max_error_rate is not None and errors > test.max_error_rate:
        return f"error rate {errors:.1%} > {test.max_error_rate:.1%}"
    values = [level_metric(r, test.metric) for r in rows]
    numbers = [v for v in values if not isinstance(v, str)]
    if not numbers:
        return f"nothing answered ({values[0]})"
    value = stats.median(numbers)
    if value > test.above:
        unit = metric_unit(test.metric)
        return f"{test.metric} {_fmt(value, unit)} > {_fmt(test.above, unit)}"
    return ""


def _judge_break(test: BreakpointTest, mine: _Break,
                 other: _Break | None) -> tuple[_Verdict | None, str]:
    name = test.stack
    at = f"first fails at {mine.first:,.0f} ({mine.why})" if mine.first is not None else ""
    if test.expect == "within":
        assert test.range is not None
        lo, hi = test.range
        want = f"between {lo:,.0f} and {hi:,.0f}"
        if mine.first is None:
            if mine.reached >= hi:
                return _Verdict.FAILS, f"{name} never fails up to {mine.reached:,.0f}, not {want}"
            return None, (f"{name} does not fail up to {mine.reached:,.0f}, where the sweep "
                          f"ends; the claim places it {want}")
        verdict = _Verdict.HOLDS if lo <= mine.first <= hi else _Verdict.FAILS
        return verdict, f"{name} {at}, {'' if verdict is _Verdict.HOLDS else 'not '}{want}"
    if test.expect == "none":
        assert test.up_to is not None
        if mine.first is not None and mine.first <= test.up_to:
            return _Verdict.FAILS, f"{name} {at}, below {test.up_to:,.0f}"
        if mine.reached >= test.up_to:
            return _Verdict.HOLDS, f"{name} holds at every level up to {test.up_to:,.0f}"
        return None, (f"{name} holds up to {mine.reached:,.0f}, where the sweep ends; the claim "
                      f"is about {test.up_to:,.0f}")
    assert other is not None
    if mine.first is None and other.first is None:
        return None, (f"neither {name} nor {test.other} fails within the sweep (up to "
                      f"{max(mine.reached, other.reached):,.0f})")
    if mine.first is not None and (other.first is None or mine.first < other.first):
        later = (f"{test.other} at {other.first:,.0f}" if other.first is not None
                 else f"{test.other} not up to {other.reached:,.0f}")
        return _Verdict.HOLDS, f"{name} {at}, {later}"
    assert other.first is not None
    return _Verdict.FAILS, (f"{test.other} first fails at {other.first:,.0f}, "
                            + (f"{name} at {mine.first:,.0f}" if mine.first is not None
                               else f"{name} not before {mine.reached:,.0f}"))


# --- shared helpers --------------------------------------------------------------------------
def _get(run: _Run, stack: str, workload: str, level: float | None,
         metric: str) -> _Point | _Missing:
    if metric in SCRIPT_METRICS or level is None:
        return run.script(stack, workload, metric)
    return run.point(stack, workload, level, metric)


def _levels_of(levels: tuple[float, ...] | str | None, workload: str,
               facts: Facts) -> Sequence[float | None]:
    if isinstance(levels, tuple):
        return levels
    have = facts.workload_levels.get(workload, ())
    return list(have) if have else [None]


def _measured(point: _Point, ctx: _Context) -> Measured:
    """Our figure with the interval of its evidence (the run-to-run spread included for a
    single repetition); without evidence, the median alone."""
    if point.evidence is None:
        return Measured(point.label, point.value, point.unit)
    low, high = interval_of(log_ratio([point.evidence], [], ctx.run.spread))
    return Measured(point.label, point.evidence.value, point.unit, low, high)


def _has_level(levels: Iterable[float], level: float) -> bool:
    return any(math.isclose(v, level) for v in levels)


def _between(levels: Iterable[float], low: float, high: float) -> list[float]:
    return sorted(v for v in levels if low <= v <= high)


def _levels_text(levels: Sequence[float]) -> str:
    if not levels:
        return "none"
    shown = [f"{v:,.0f}" for v in levels]
    return ", ".join(shown) if len(shown) <= 6 else f"{shown[0]} … {shown[-1]} ({len(shown)})"


def _fmt(value: float, unit: str) -> str:
    if unit == "fraction":
        return f"{100.0 * value:.2g}%" if value < 0.1 else f"{100.0 * value:.1f}%"
    if unit == "% of a core":
        return f"{value:.0f}% of a core"
    if unit == "failed requests":
        return f"{value:,.0f} failed requests"
    if unit == "ms":
        return f"{value:,.3g} ms" if value < 100 else f"{value:,.0f} ms"
    if unit == "s":
        return f"{value:.3g} s"
    return f"{value:,.0f} {unit}" if abs(value) >= 100 else f"{value:.3g} {unit}"


def _value_text(value: float, unit: str, low: float | None, high: float | None) -> str:
    base = _fmt(value, unit)
    if low is None or high is None or low == high:
        return base
    return f"{base} ({_fmt(low, unit)}–{_fmt(high, unit)})"


def _ratio_text(value: float, low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return f"{value:.2f}×"
    return f"{value:.2f}× ({low:.2f}–{high:.2f})"


def expectation(test: Test) -> str:
    """What the test checks, in a few words (the claim table's 'article' column when the
    article prints no figure)."""
    if isinstance(test, OrderTest):
        groups = [g[0] if len(g) == 1 else "{" + ", ".join(g) + "}" for g in order_groups(test)]
        return f"{test.metric}: " + " > ".join(groups)
    if isinstance(test, RatioTest | RatioChangeTest):
        band = _ratio_band(test.expect, test.threshold, test.article, test.tolerance)
        if test.expect == "near":
            return (f"≈ {test.article:.2f}× ({band.low:.2f}–{band.high:.2f}×)"
                    if test.article is not None else "")
        return _band_text(band, _Verdict.HOLDS).removeprefix("within ")
    if isinstance(test, ThresholdTest):
        band = _Band(-math.inf if test.min is None else test.min,
                     math.inf if test.max is None else test.max)
        text = _value_band_text(band, metric_unit(test.metric), _Verdict.HOLDS)
        text = f"{test.metric} " + text.removeprefix("within ")
        return text + (f" for at least {test.at_least}" if test.at_least else "")
    if isinstance(test, ShapeTest):
        what = "flat" if test.expect == "flat" else "proportional to the level"
        return (f"{test.metric} {what} within {test.tolerance:.0%} from "
                f"{test.from_level:,.0f} to {test.to_level:,.0f}")
    if isinstance(test, ScatterTest):
        return f"{test.metric} jitter ratio ≥ {test.threshold:.2f}×"
    if test.expect == "within":
        assert test.range is not None
        return f"{test.stack} first fails at {test.range[0]:,.0f}–{test.range[1]:,.0f}"
    if test.expect == "none":
        assert test.up_to is not None
        return f"{test.stack} never fails up to {test.up_to:,.0f}"
    return f"{test.stack} fails before {test.other}"
