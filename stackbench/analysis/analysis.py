"""Everything the report views show, computed once from a stored run (pure, no I/O).

Cases are grouped by workload label (a workload with its parameters, e.g. sha256?n=1000).
A stack that failed verification or is unavailable is listed with its reason, never ranked;
an invalid level (too many errors) is shown but not ranked either.
"""

from dataclasses import dataclass, field, replace
from typing import Any

import msgspec

from stackbench.analysis import stats
from stackbench.analysis.levelsteady import LevelSteadyAggregate, aggregate_steady
from stackbench.analysis.stats import Breakpoint, Comparison, Estimate, LevelAggregate
from stackbench.config.suite import Slo
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
        return (self.case.status not in NOT_RANKED_CASE_STATUSES
                and not self.verification_failures)

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
    vs_next: Comparison | None  # this stack vs the next one down the ranking
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class LevelRanking:
    level_value: float
    entries: list[RankEntry]
    excluded: list[tuple[str, str]]  # (stack, why it is not ranked at this level)


@dataclass(frozen=True)
class WorkloadView:
    label: str
    workload: str
    cases: list[CaseView]            # cases with measured levels
    not_measured: list[CaseView]     # unavailable, failed or never reached
    level_values: list[float]
    rankings: list[LevelRanking]


@dataclass(frozen=True)
class Analysis:
    data: RunData
    slo: Slo | None
    level_kind: str                  # connections | rate
    repeat: int
    workloads: list[WorkloadView]
    stacks: list[str]                # every stack of the run, stable order (chart colours)
    failed_verifications: list[VerificationRow]
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def search(self) -> bool:
        """A max-rate search: levels are probes chosen per stack, not one common sweep."""
        return bool(self.settings.get("search"))

    @property
    def level_label(self) -> str:
        return "target rate (req/s)" if self.level_kind == "rate" else "connections"


def analyse(data: RunData, resamples: int = stats.DEFAULT_RESAMPLES,
            seed: int = stats.DEFAULT_SEED) -> Analysis:
    settings: dict[str, Any] = msgspec.to_builtins(data.run.settings)
    slo = stats.slo_from_settings(settings.get("slo"))
    failures = _verification_failures(data.verifications)
    labels = list(dict.fromkeys(c.label for c in data.cases))
    workloads = [_workload(data, label, slo, failures, resamples, seed) for label in labels]
    repeat = int(settings.get("repeat") or max((r.repetition + 1 for r in data.levels),
                                               default=1))
    mode = settings.get("level_kind") or ("rate" if settings.get("mode") == "open"
                                          else "connections")
    return Analysis(
        data=data, slo=slo, level_kind=mode, repeat=repeat, workloads=workloads,
        stacks=list(dict.fromkeys(c.stack for c in data.cases)),
        failed_verifications=[v for v in data.verifications if not v.ok], settings=settings)


def _verification_failures(rows: list[VerificationRow]) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for v in rows:
        if not v.ok:
            out.setdefault((v.stack, v.workload), []).extend(v.failures or ["failed"])
    return out


def _workload(data: RunData, label: str, slo: Slo | None,
              failures: dict[tuple[str, str], list[str]], resamples: int,
              seed: int) -> WorkloadView:
    views = []
    for case in (c for c in data.cases if c.label == label):
        rows = data.levels_of(case.id)
        plain = stats.aggregate_levels(rows, slo, resamples=resamples, seed=seed)
        steady = [aggregate_steady([r for r in rows if r.level_index == a.level_index])
                  for a in plain]
        aggs = [steady_figures(a, s, slo) for a, s in zip(plain, steady, strict=True)]
        fails = failures.get((case.stack, case.workload), []) or failures.get(
            (case.stack, case.label), [])
        views.append(CaseView(case, rows, aggs, stats.case_breakpoint(aggs), fails, steady))
    measured = [v for v in views if v.rows]
    values = sorted({a.level_value for v in measured for a in v.aggregates})
    rankings = [_rank(measured, value, resamples, seed) for value in values]
    workload = next(c.workload for c in data.cases if c.label == label)
    return WorkloadView(label, workload, measured, [v for v in views if not v.rows], values,
                        rankings)


def _rank(cases: list[CaseView], level_value: float, resamples: int, seed: int) -> LevelRanking:
    candidates, excluded = [], []
    for view in cases:
        agg = view.aggregate_at(level_value)
        if agg is None:
            continue
        if not view.rankable:
            excluded.append((view.stack, f"case {view.case.status}: verification failed"
                             if view.verification_failures else f"case {view.case.status}"))
        elif agg.status != "ok":
            excluded.append((view.stack, f"level {agg.status}"))
        elif stats.NO_COMPLETED in agg.flags:
            excluded.append((view.stack, stats.NO_COMPLETED))
        else:
            rps = [r.requests_per_s for r in view.rows_at(agg.level_index)]
            candidates.append((view.stack, agg.throughput, rps, agg.flags))
    candidates.sort(key=lambda c: c[1].value, reverse=True)
    entries = []
    for i, (stack, est, rps, flags) in enumerate(candidates):
        nxt = candidates[i + 1][2] if i + 1 < len(candidates) else None
        cmp = stats.compare_medians(rps, nxt, resamples=resamples, seed=seed) if nxt else None
        entries.append(RankEntry(stack, est, cmp, flags))
    return LevelRanking(level_value, entries, excluded)


def steady_figures(agg: LevelAggregate, steady: LevelSteadyAggregate,
                   slo: Slo | None) -> LevelAggregate:
    """The aggregate with its headline throughput and p50/p90/p99 taken from the steady
    windows, when every repetition has one; otherwise today's whole-level figures stand (the
    steady view says why). The SLO is judged again on the figures shown."""
    if not steady.steady:
        return agg
    latency = {**agg.latency_us, **steady.latency_us}
    outcome = agg.slo
    if slo is not None:
        outcome = stats.evaluate_slo({k: e.value for k, e in latency.items()},
                                     agg.error_rate.value, slo)
    return replace(agg, throughput=steady.throughput, latency_us=latency, slo=outcome)
