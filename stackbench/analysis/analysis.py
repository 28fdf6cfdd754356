"""Everything the report views show, computed once from a stored run (pure, no I/O).

Cases are grouped by workload label (a workload with its parameters, e.g. sha256?n=1000).
A stack that failed verification or is unavailable is listed with its reason, never ranked;
an invalid level (too many errors) is shown but not ranked either.

No winner on noise: stacks are ordered by their headline throughput, but each step of a
ranking carries a significance.Difference, and only FASTER means "X is faster than the next".
With at least 2 repetitions a side the repetitions' headline figures are compared
(compare_samples: Mann-Whitney + bootstrap ratio of medians); with one repetition a side the
steady windows' per-second throughput is (compare_series: batch means); without either, no
claim. The Holm-Bonferroni family is one workload: every adjacent-pair comparison of every
level of that workload's rankings is adjusted together (judge_together), since a reader takes
one workload's rankings as one answer ("which stack is fastest at sha256?").
"""

from dataclasses import dataclass, field, replace
from typing import Any

import msgspec

from stackbench.analysis import stats
from stackbench.analysis.levelsteady import (
    LevelSteadyAggregate,
    aggregate_steady,
    headline_throughput,
)
from stackbench.analysis.significance import (
    Difference,
    compare_samples,
    compare_series,
    judge_together,
)
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
    # The test behind vs_next (Holm-adjusted within the workload); its verdict is vs_next's.
    difference: Difference | None = None


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
    rankings = _judged([_rank(measured, value) for value in values])
    workload = next(c.workload for c in data.cases if c.label == label)
    return WorkloadView(label, workload, measured, [v for v in views if not v.rows], values,
                        rankings)


@dataclass(frozen=True)
class _Candidate:
    stack: str
    throughput: Estimate
    repetitions: list[float]        # headline req/s of each repetition
    window: tuple[float, ...]       # per-second req/s of the steady window (one repetition)
    flags: tuple[str, ...]


def _rank(cases: list[CaseView], level_value: float) -> LevelRanking:
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
            candidates.append(_candidate(view, agg))
    candidates.sort(key=lambda c: c.throughput.value, reverse=True)
    entries = []
    for i, c in enumerate(candidates):
        nxt = candidates[i + 1] if i + 1 < len(candidates) else None
        diff = None if nxt is None else compare_throughput(c, nxt)
        entries.append(RankEntry(c.stack, c.throughput, _comparison(diff), c.flags, diff))
    return LevelRanking(level_value, entries, excluded)


def _candidate(view: CaseView, agg: LevelAggregate) -> _Candidate:
    steady = view.steady_at(agg.level_index)
    rows = view.rows_at(agg.level_index)
    if steady is None:
        return _Candidate(view.stack, agg.throughput, [r.requests_per_s for r in rows], (),
                          agg.flags)
    reps = [headline_throughput(r, s) for r, s in zip(rows, steady.repetitions, strict=True)]
    window = steady.repetitions[0].window_throughput if len(rows) == 1 else ()
    return _Candidate(view.stack, agg.throughput, reps, window, agg.flags)


def compare_throughput(a: _Candidate, b: _Candidate) -> Difference:
    """a vs b: repetitions when both have 2 or more, else the steady windows' seconds."""
    if len(a.repetitions) >= 2 and len(b.repetitions) >= 2:
        return compare_samples(a.repetitions, b.repetitions)
    if a.window and b.window:
        return compare_series(a.window, b.window)
    return compare_samples(a.repetitions, b.repetitions)  # insufficient data, with its note


def _comparison(d: Difference | None) -> Comparison | None:
    return None if d is None else Comparison(d.ratio, d.low, d.high, d.verdict)


def _judged(rankings: list[LevelRanking]) -> list[LevelRanking]:
    """The rankings of one workload with their tests Holm-adjusted together (one family)."""
    tested = [e.difference for r in rankings for e in r.entries if e.difference is not None]
    judged = iter(judge_together(tested))
    out = []
    for r in rankings:
        entries = []
        for e in r.entries:
            if e.difference is None:
                entries.append(e)
            else:
                d = next(judged)
                entries.append(replace(e, vs_next=_comparison(d), difference=d))
        out.append(replace(r, entries=entries))
    return out


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
    # Repetitions vary (or not) by their steady figures: a warm-up of different length in
    # each repetition is not noise of the steady state.
    figures = [r.throughput.value for r in steady.repetitions if r.throughput is not None]
    throughput_cv = stats.cv(figures)
    flags = [f for f in agg.flags if f != "noisy"]
    if stats.is_noisy(figures):
        flags.append("noisy")
    return replace(agg, throughput=steady.throughput, latency_us=latency, slo=outcome,
                   throughput_cv=throughput_cv, flags=tuple(flags))
