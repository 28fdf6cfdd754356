"""Whether a claim can be tested by a plan: every requirement it has (cores, keep-alive, a
stack, a parameter, the levels it reads), met or said unmet. What `--dry-run` prints.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from stackbench.analysis.claims.facts import Facts, _between, _has_level
from stackbench.analysis.claims.kinds import _combos, _positions, _resolve
from stackbench.analysis.claims.standin import NONE, StandIns, stand_ins
from stackbench.analysis.claims.wording import _levels_text
from stackbench.config.claims import (
    SCRIPT_METRICS,
    Claim,
    OrderTest,
    RatioChangeTest,
    RatioTest,
    Requirements,
    ScatterTest,
    ShapeTest,
    Test,
    ThresholdTest,
    stacks_read,
    workloads_read,
)
from stackbench.config.plan import LevelKey


@dataclass(frozen=True)
class Readiness:
    claim: Claim
    reasons: tuple[str, ...]  # empty: testable here
    # Decidable by design (design.py): None when not checked; `undecidable` says why not
    decidable: bool | None = None
    undecidable: str = ""
    rounds: int = 0  # decidable only with this many until-decided rounds after the plan
    rounds_load_s: float = 0.0  # ... adding this much load, within the suite's budget
    # ... and these repetitions to each level beyond the plan's
    rounds_levels: tuple[tuple[LevelKey, int], ...] = ()
    spread: str = ""  # the run-to-run spread its design used, for people
    spread_from_past: bool = False  # ... the store's earlier runs of the suite (pastspread)
    # What stands in for what when the claim is read with stand-ins ("" when it is not)
    stand_in: str = ""

    @property
    def testable(self) -> bool:
        return not self.reasons


def cores_note(
    article_cores: int | None, server_cores: int, readiness: Sequence[Readiness] = ()
) -> str:
    """One sentence when this machine gives the server fewer cores than the suite's article
    had, or than some of its claims need; "" when nothing is short."""
    needing = [
        r.claim.requires.server_cores
        for r in readiness
        if r.claim.requires.server_cores > server_cores and not r.stand_in
    ]
    short = article_cores is not None and server_cores < article_cores
    if not short and not needing:
        return ""
    given = f"{server_cores} core" + ("" if server_cores == 1 else "s")
    parts = []
    if short:
        parts.append(f"the stacks size their workers for {server_cores}")
    if needing:
        verb = "is" if len(needing) == 1 else "are"
        parts.append(
            f"{len(needing)} of the article's claims (needing up to {max(needing)} "
            f"server cores) {verb} untestable here"
        )
    head = (
        f"The article's server had {article_cores} cores; this machine gives the server {given}"
        if short
        else f"This machine gives the server {given}"
    )
    return f"{head}, so {' and '.join(parts)}."


def requirements_unmet(claims: Iterable[Claim], facts: Facts) -> tuple[Readiness, ...]:
    """For each claim, the reasons this plan cannot test it (empty when it can); a claim
    with stand-ins on this server is read with them (`stand_in` says so)."""
    out = []
    for claim in claims:
        standing = stand_ins(claim, facts.server_cores)
        reasons = tuple(dict.fromkeys(_unmet(claim, facts, standing or NONE)))
        out.append(Readiness(claim, reasons, stand_in=standing.words if standing else ""))
    return tuple(out)


def _unmet(claim: Claim, facts: Facts, standing: StandIns) -> Iterable[str]:
    req = claim.requires
    # One process per core stands in: it needs no more cores than the server has
    if facts.server_cores < req.server_cores and not standing.words:
        yield (
            f"needs {req.server_cores} server cores; this run gives the server {facts.server_cores}"
        )
    if req.keepalive is not None and facts.keepalive != req.keepalive:
        yield (
            f"needs keep-alive {req.keepalive} as in the article; this run has keep-alive "
            f"{facts.keepalive}"
        )
    if req.drivers and facts.driver not in req.drivers:
        yield f"needs the {' or '.join(req.drivers)} driver; this run uses {facts.driver}"
    # Either warms a JIT: the levels' own warm-up, or the pass each JIT stack declares it
    # needs (stack.toml [warmup]: JVM 15 s, V8 3 s ...) run before each case's first level.
    if facts.warmup_s < req.min_warmup_s and not facts.jit_warmup:
        yield (
            f"needs JIT stacks measured warm: at least {req.min_warmup_s:g} s of warm-up "
            f"per level or the JIT warm-up pass; this run warms up {facts.warmup_s:g} s "
            "with [load] jit_warmup = false"
        )
    pairs = _pairs_read(claim.test, facts)
    named = (*stacks_read(claim.test), *req.stacks)
    read = [standing.stack(n) for n in named] + [standing.stack(n, w) for n, w in pairs]
    for name in dict.fromkeys(read):
        yield from _stack_unmet(name, facts)
    for name, workload in pairs:
        yield from _workload_unmet(standing.stack(name, workload), workload, facts)
    for stack, params in req.params.items():
        yield from _params_unmet(standing.stack(stack), params, facts)
    yield from _test_unmet(claim.test, facts, req)


def _pairs_read(test: Test, facts: Facts) -> list[tuple[str, str]]:
    """The (stack, workload) pairs a test reads, as its test names them."""
    if isinstance(test, RatioTest | RatioChangeTest):
        pairs = [
            _resolve(position, test, named, None)[:2]
            for position in _positions(test)
            for named in test.workloads or (None,)
        ]
        return list(dict.fromkeys((str(s), str(w)) for s, w in pairs))
    workloads = workloads_read(test) or tuple(facts.workload_levels)
    return [(s, w) for s in stacks_read(test) for w in workloads]


def _workload_unmet(name: str, workload: str, facts: Facts) -> Iterable[str]:
    """A stack of the plan that does not run a workload the claim reads of it."""
    stack = facts.stack(name)
    if stack is not None and workload in facts.workload_levels and not stack.runs(workload):
        yield (
            f"needs {name} on {workload}, which this suite does not run it on "
            f"([stack_workloads]: {', '.join(stack.workloads or ())})"
        )


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


def _too_little(requires: Requirements, workload: str, level: float, facts: Facts) -> Iterable[str]:
    """A level too small for the claim: fewer requests or seconds than it needs (a level
    that runs for a duration is checked on its requests when the run has them)."""
    count = facts.request_count(level)
    if count is not None and count < requires.min_requests:
        yield (
            f"needs at least {requires.min_requests:,} requests per level; level "
            f"{level:,.0f} of {workload} sends {count:,}"
        )
    seconds = facts.level_seconds(workload)
    if seconds is not None and seconds < requires.min_seconds:
        yield (
            f"needs at least {requires.min_seconds:g} s of load per level; {workload} "
            f"runs {seconds:g} s"
        )


def _test_unmet(test: Test, facts: Facts, requires: Requirements) -> Iterable[str]:
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
            yield (
                f"needs level {_levels_text(missing)} for {workload}; the suite runs "
                f"{_levels_text(have)}"
            )
        for lv in (lv for lv in (levels or have) if _has_level(have, lv)):
            count = facts.request_count(lv)
            if count is not None and count < lv:
                yield (
                    f"level {lv:,.0f} of {workload} sends only {count:,} requests, so at "
                    f"most {count:,} of its {lv:,.0f} connections are ever open"
                )
            yield from _too_little(requires, workload, lv, facts)
    known = all(w in facts.workload_levels for w in _test_workloads(test))
    if isinstance(test, RatioTest | RatioChangeTest) and known and not _combos(test, facts):
        yield "the workloads this ratio compares share no level in this suite"
    yield from _span_unmet(test, facts)


def _test_workloads(test: Test) -> tuple[str, ...]:
    return workloads_read(test)


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
                yield (
                    f"needs at least two levels of {w} from {test.from_level:,.0f} to "
                    f"{test.to_level:,.0f}"
                )
    if isinstance(test, ScatterTest):
        have = facts.workload_levels.get(test.workload, ())
        for span in (test.numerator, test.denominator):
            if len(_between(have, span.from_level, span.to_level)) < 3:
                yield (
                    f"needs at least three levels of {test.workload} from "
                    f"{span.from_level:,.0f} to {span.to_level:,.0f}"
                )
