"""Everything the report views show, computed once from a stored run (pure, no I/O).

Cases are grouped by workload label (a workload with its parameters, e.g. sha256?n=1000).
A stack that failed verification or is unavailable is listed with its reason, never ranked;
an invalid level (too many errors) is shown but not ranked either.

No winner on noise: stacks are ordered by their headline throughput, and every stack but the
best carries a verdict (analysis.verdicts) of the best against it at that level: faster,
equivalent, real but within the threshold, or not enough evidence with what would decide it.
The evidence is the level's (levelsteady: the steady window's seconds with one repetition, the
repetitions with several; a driver without a per-second series needs repetitions). Holm's
family is one workload: every best-against-other comparison of its rankings, since a reader
takes one workload's rankings as one answer ("which stack is fastest at sha256?").
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from stackbench.analysis import stats
from stackbench.analysis.calibration import spread_of
from stackbench.analysis.levelsteady import LevelSteadyAggregate, aggregate_steady
from stackbench.analysis.stats import Breakpoint, Estimate, LevelAggregate
from stackbench.analysis.verdicts import (
    ALPHA,
    CONFIDENCE,
    THROUGHPUT_THRESHOLD,
    RunSpread,
    Verdict,
    assumed_spread,
    compare,
    holm,
    read_floors,
    undecided,
)
from stackbench.config.loadspec import LevelKind
from stackbench.config.slo import evaluate_slo
from stackbench.config.suite import Slo
from stackbench.store.records import Flag, LevelFlag, RunSettings, has_flag
from stackbench.store.store import CaseRow, LevelRow, RunData, VerificationRow

NOT_RANKED_CASE_STATUSES = ("failed", "unavailable")


@dataclass(frozen=True)
class CaseView:
    case: CaseRow
    rows: list[LevelRow]
    aggregates: list[LevelAggregate]
    breakpoint: Breakpoint | None
    verification_failures: list[str]
    # Per level, the steady-state view of its repetitions (same order as `aggregates`). Where
    # every repetition has a steady window, `aggregates` already carry its figures.
    steady: list[LevelSteadyAggregate] = field(default_factory=list)

    @property
    def stack(self) -> str:
        return self.case.stack

    @property
    def rankable(self) -> bool:
        return self.case.status not in NOT_RANKED_CASE_STATUSES and not self.verification_failures

    def rows_at(self, level_index: int) -> list[LevelRow]:
        return [r for r in self.rows if r.level_index == level_index]

    def aggregate_at(self, level_value: float) -> LevelAggregate | None:
        return next((a for a in self.aggregates if a.level_value == level_value), None)

    def steady_at(self, level_index: int) -> LevelSteadyAggregate | None:
        return next((s for s in self.steady if s.level_index == level_index), None)


@dataclass(frozen=True)
class RankEntry:
    stack: str
    throughput: Estimate
    # The best stack of the level against this one (ratio best / this; Holm-adjusted within
    # the workload); None for the best itself.
    vs_best: Verdict | None
    flags: tuple[Flag, ...] = ()
    # The stack ranked just above against this one, when that is not the best (else None).
    vs_above: Verdict | None = None


@dataclass(frozen=True)
class LevelRanking:
    level_value: float
    entries: list[RankEntry]
    excluded: list[tuple[str, str]]  # (stack, why it is not ranked at this level)


@dataclass(frozen=True)
class WorkloadView:
    label: str
    workload: str
    cases: list[CaseView]  # cases with measured levels
    not_measured: list[CaseView]  # unavailable, failed or never reached
    level_values: list[float]
    rankings: list[LevelRanking]


@dataclass(frozen=True)
class Analysis:
    data: RunData
    slo: Slo | None
    level_kind: LevelKind
    repeat: int
    workloads: list[WorkloadView]
    stacks: list[str]  # every stack of the run, stable order (chart colours)
    failed_verifications: list[VerificationRow]
    settings: RunSettings
    spread: RunSpread = field(default_factory=assumed_spread)
    # The verdicts' confidence: 95%, or 1 - 0.05 / looks for a run --until-decided
    confidence: float = CONFIDENCE

    @property
    def search(self) -> bool:
        """A max-rate search: levels are probes chosen per stack, not one common sweep."""
        return self.settings.search is not None

    @property
    def level_label(self) -> str:
        return "target rate (req/s)" if self.level_kind == "rate" else "connections"

    def valid_levels(self) -> Iterator[tuple[WorkloadView, CaseView, LevelAggregate]]:
        """Valid levels of rankable cases only: an invalid level (disturbed, unsteady, over
        its error limit) or a failed case has no figure to compare or to track."""
        for w in self.workloads:
            for view in w.cases:
                if view.rankable:
                    yield from ((w, view, agg) for agg in view.aggregates if agg.status == "ok")


def analyse(
    data: RunData,
    resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
    spread: RunSpread | None = None,
) -> Analysis:
    """`spread`: the run-to-run spread the verdicts add for a single repetition; by default
    the calibration of the run's machine (stackbench calibrate), else the assumed default."""
    spread = spread or spread_of(data.calibration)
    settings = data.run.settings
    confidence = decision_confidence(settings.decision_looks)
    slo = stats.slo_from_settings(settings.slo)
    failures = _verification_failures(data.verifications)
    labels = list(dict.fromkeys(c.label for c in data.cases))
    workloads = [
        _workload(data, label, slo, failures, resamples, seed, spread, confidence)
        for label in labels
    ]
    return Analysis(
        data=data,
        slo=slo,
        level_kind=settings.level_kind,
        repeat=settings.repeat,
        workloads=workloads,
        stacks=list(dict.fromkeys(c.stack for c in data.cases)),
        failed_verifications=[v for v in data.verifications if not v.ok],
        settings=settings,
        spread=spread,
        confidence=confidence,
    )


def decision_confidence(looks: int) -> float:
    """Each look at the data of a run --until-decided spends alpha / looks (Bonferroni over
    the most looks the run may take), so that its false-winner rate stays at alpha."""
    return 1.0 - ALPHA / max(looks, 1)


def _verification_failures(rows: list[VerificationRow]) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for v in rows:
        if not v.ok:
            out.setdefault((v.stack, v.workload), []).extend(v.failures or ["failed"])
    return out


def _workload(
    data: RunData,
    label: str,
    slo: Slo | None,
    failures: dict[tuple[str, str], list[str]],
    resamples: int,
    seed: int,
    spread: RunSpread,
    confidence: float,
) -> WorkloadView:
    views = []
    for case in (c for c in data.cases if c.label == label):
        rows = data.levels_of(case.id)
        # the report's verdicts read a level as the claims do: its disturbed repetitions left
        # out where it has others (the tables still list every repetition)
        kept = stats.leave_out_disturbed(rows)
        plain = stats.aggregate_levels(kept, slo, resamples=resamples, seed=seed)
        steady = [
            aggregate_steady([r for r in kept if r.level_index == a.level_index], spread)
            for a in plain
        ]
        aggs = [
            _with_left_out(steady_figures(a, s, slo), rows, kept)
            for a, s in zip(plain, steady, strict=True)
        ]
        fails = failures.get((case.stack, case.workload), []) or failures.get(
            (case.stack, case.label), []
        )
        views.append(CaseView(case, rows, aggs, stats.case_breakpoint(aggs), fails, steady))
    measured = [v for v in views if v.rows]
    values = sorted({a.level_value for v in measured for a in v.aggregates})
    rankings = _judged([_rank(measured, value, spread, confidence) for value in values])
    workload = next(c.workload for c in data.cases if c.label == label)
    return WorkloadView(
        label, workload, measured, [v for v in views if not v.rows], values, rankings
    )


def _with_left_out(
    agg: LevelAggregate, rows: Sequence[LevelRow], kept: Sequence[LevelRow]
) -> LevelAggregate:
    """The aggregate flagged with the disturbed repetitions its level's figures left out."""
    flag = stats.left_out_flag(
        [r for r in rows if r.level_index == agg.level_index],
        [r for r in kept if r.level_index == agg.level_index],
    )
    return agg if flag is None else replace(agg, flags=(*agg.flags, flag))


def _rank(
    cases: list[CaseView], level_value: float, spread: RunSpread, confidence: float
) -> LevelRanking:
    ranked: list[tuple[str, LevelAggregate]] = []
    excluded = []
    for view in cases:
        agg = view.aggregate_at(level_value)
        if agg is None:
            continue
        if not view.rankable:
            excluded.append(
                (
                    view.stack,
                    f"case {view.case.status}: verification failed"
                    if view.verification_failures
                    else f"case {view.case.status}",
                )
            )
        elif agg.status != "ok":
            excluded.append((view.stack, f"level {agg.status}"))
        elif has_flag(agg.flags, LevelFlag.NO_COMPLETED):
            excluded.append((view.stack, LevelFlag.NO_COMPLETED.value))
        else:
            ranked.append((view.stack, agg))
    ranked.sort(key=lambda c: c[1].throughput.value, reverse=True)
    rungs = ladder([agg.throughput for _, agg in ranked], spread, confidence=confidence)
    entries = [
        RankEntry(stack, agg.throughput, best, agg.flags, above)
        for (stack, agg), (best, above) in zip(ranked, rungs, strict=True)
    ]
    return LevelRanking(level_value, entries, excluded)


Rung = tuple[Verdict | None, Verdict | None]


def ladder(
    figures: list[Estimate],
    spread: RunSpread,
    *,
    higher_is_better: bool = True,
    threshold: float | None = None,
    confidence: float = CONFIDENCE,
) -> list[Rung]:
    """For figures sorted best first: each one's (best against it, the one above against
    it); None for the best, and for the one above when that is the best."""
    out: list[Rung] = [(None, None)] if figures else []
    for i in range(1, len(figures)):

        def against(other: Estimate, i: int = i) -> Verdict:
            return compare_figures(
                other,
                figures[i],
                spread,
                higher_is_better=higher_is_better,
                threshold=threshold,
                confidence=confidence,
            )

        out.append((against(figures[0]), against(figures[i - 1]) if i >= 2 else None))
    return out


def holm_rungs(ladders: list[list[Rung]]) -> list[list[Rung]]:
    """Every verdict of these ladders Holm-adjusted together (the comparisons shown at once)."""
    flat = [v for rungs in ladders for rung in rungs for v in rung if v is not None]
    judged = iter(holm(flat))
    return [
        [
            (None if best is None else next(judged), None if above is None else next(judged))
            for best, above in rungs
        ]
        for rungs in ladders
    ]


def compare_figures(
    a: Estimate,
    b: Estimate,
    spread: RunSpread,
    *,
    higher_is_better: bool = True,
    threshold: float | None = None,
    confidence: float = CONFIDENCE,
) -> Verdict:
    """a against b from the evidence their estimates carry (one family of one: see holm)."""
    band = THROUGHPUT_THRESHOLD if threshold is None else threshold
    caveat = a.caveat or b.caveat
    if caveat:
        return undecided(
            caveat,
            threshold=band,
            higher_is_better=higher_is_better,
            ratio=a.value / b.value if b.value else None,
        )
    verdict = compare(
        a.evidence,
        b.evidence,
        higher_is_better=higher_is_better,
        spread=spread,
        confidence=confidence,
        threshold=band,
    )
    if verdict.ratio is None and b.value > 0:
        verdict = replace(verdict, ratio=a.value / b.value)
    return read_floors(verdict, a.floor, b.floor)


def _judged(rankings: list[LevelRanking]) -> list[LevelRanking]:
    """The rankings of one workload with their verdicts Holm-adjusted together (one family)."""
    ladders = holm_rungs([[(e.vs_best, e.vs_above) for e in r.entries] for r in rankings])
    return [
        replace(
            r,
            entries=[
                replace(e, vs_best=best, vs_above=above)
                for e, (best, above) in zip(r.entries, rungs, strict=True)
            ],
        )
        for r, rungs in zip(rankings, ladders, strict=True)
    ]


def steady_figures(
    agg: LevelAggregate, steady: LevelSteadyAggregate, slo: Slo | None
) -> LevelAggregate:
    """The aggregate with the figures its verdicts use, each with its evidence: throughput (the
    steady windows', or the whole level's over repetitions) and p50/p90/p99 where levelsteady
    has them. The SLO is judged again on the figures shown."""
    latency = {**agg.latency_us, **steady.latency_us}
    outcome = agg.slo
    if slo is not None and steady.latency_us:
        outcome = evaluate_slo({k: e.value for k, e in latency.items()}, agg.error_rate.value, slo)
    throughput_cv, flags = agg.throughput_cv, list(agg.flags)
    if steady.steady:
        # Repetitions vary (or not) by their steady figures: a warm-up of different length in
        # each repetition is not noise of the steady state.
        figures = [r.throughput.value for r in steady.repetitions if r.throughput is not None]
        throughput_cv = stats.cv(figures)
        flags = [f for f in flags if f.kind is not LevelFlag.NOISY]
        flags += [LevelFlag.NOISY.alone] if stats.is_noisy(figures) else []
    caveat = disturbed_caveat(flags)
    floor = has_flag(flags, LevelFlag.LOADER_BOUND)
    if caveat or floor:
        latency = {k: replace(e, caveat=caveat, floor=floor) for k, e in latency.items()}
    return replace(
        agg,
        throughput=replace(steady.throughput, caveat=caveat, floor=floor),
        latency_us=latency,
        slo=outcome,
        throughput_cv=throughput_cv,
        flags=tuple(flags),
    )


def disturbed_caveat(flags: Sequence[Flag]) -> str | None:
    """A level other processes disturbed decides nothing: its figure is the machine's too."""
    if not has_flag(flags, LevelFlag.DISTURBED):
        return None
    return (
        "a level it rests on was disturbed by other processes on its cores; repeat it on "
        "a quiet machine (stackbench doctor names what runs)"
    )
