"""Comparing two runs, A (the baseline) and B (the candidate): pure functions, no I/O.

Cases are matched by (stack or variant, workload label, level value). For each matched case
and metric (steady-state throughput, and chosen latency percentiles) B's figure is compared
with A's by analysis.verdicts, from the evidence each level's figures carry (the steady window's
seconds with one repetition, the repetitions with several; the run-to-run spread added for a
single repetition). Ratios are B / A: for throughput > 1 is faster, for latency > 1 is slower.
All the verdicts shown form one Holm family.

A gate (`--fail-if-slower 5%`, `--fail-if 'p99 +10%'`) is a one-sided test per gated case
(verdicts.gate): regressed when B is shown worse than A by more than the limit (Holm over the
gated metric's cases only), cleared when shown not to be, else undecided.
"""

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

import msgspec

from stackbench.analysis.analysis import Analysis, CaseView, compare_figures
from stackbench.analysis.stats import Estimate
from stackbench.analysis.verdicts import (
    PERCENTILE_THRESHOLD,
    THROUGHPUT_THRESHOLD,
    GateOutcome,
    GateResult,
    RunSpread,
    Verdict,
    gate,
    holm,
    undecided,
)
from stackbench.errors import InputError
from stackbench.store.records import LevelFlag

THROUGHPUT = "throughput"
DEFAULT_PERCENTILES = ("p50", "p99")


@dataclass(frozen=True, order=True)
class CaseKey:
    stack: str
    label: str
    level_value: float


@dataclass(frozen=True)
class MetricChange:
    metric: str  # throughput | p50 | p90 | p99
    a_value: float  # A's headline figure (req/s or µs)
    b_value: float
    verdict: Verdict  # B against A, Holm-adjusted within the comparison


@dataclass(frozen=True)
class CaseChange:
    key: CaseKey
    metrics: tuple[MetricChange, ...]
    # measured in both runs, but invalid (unsteady, error rate ...) in one: every verdict
    # undecided, with the reason; a gate never clears it
    unfit: bool = False


@dataclass(frozen=True)
class SettingChange:
    section: str  # environment | settings | suite | params of <stack>
    key: str
    a: str
    b: str


@dataclass(frozen=True)
class RunComparison:
    a_run: int
    b_run: int
    cases: tuple[CaseChange, ...]
    only_in_a: tuple[CaseKey, ...]
    only_in_b: tuple[CaseKey, ...]
    changes: tuple[SettingChange, ...]
    spread: RunSpread  # the run-to-run spread the verdicts used
    same_run: bool = False  # A and B are one run: nothing was compared but noise
    # the compared levels whose disturbed repetitions their figures left out: (run id, the
    # level, the left-out flag's detail)
    left_out: tuple[tuple[int, CaseKey, str], ...] = ()

    @property
    def comparable(self) -> bool:
        """Some case has a valid figure in both runs."""
        return any(not c.unfit for c in self.cases)


@dataclass(frozen=True)
class Gate:
    """Fail when `metric` is shown worse by more than `threshold` (a fraction)."""

    metric: str
    threshold: float

    def describe(self) -> str:
        if self.metric == THROUGHPUT:
            return f"throughput more than {self.threshold:.0%} slower"
        return f"{self.metric} more than {self.threshold:.0%} higher"


@dataclass(frozen=True)
class GatedCase:
    gate: Gate
    key: CaseKey
    change: MetricChange
    result: GateResult

    @property
    def outcome(self) -> GateOutcome:
        return self.result.outcome


# --- matching and comparing ------------------------------------------------------------------
def compare_runs(
    a: Analysis, b: Analysis, percentiles: Sequence[str] = DEFAULT_PERCENTILES
) -> RunComparison:
    spread = max(a.spread, b.spread, key=lambda s: s.sigma)
    levels_a, levels_b = dict(_levels(a)), dict(_levels(b))
    common = sorted(set(levels_a) & set(levels_b))
    unfit_a, unfit_b = dict(_unfit_levels(a)), dict(_unfit_levels(b))
    # measured on both sides, unfit on one at least: undecided, with the reason
    unfit = sorted(
        (set(levels_a) | set(unfit_a))
        & (set(levels_b) | set(unfit_b))
        & (set(unfit_a) | set(unfit_b))
    )
    raw: list[tuple[CaseKey, MetricChange]] = []
    for key in unfit:
        reasons = [
            f"run {run.data.run.id}'s level is {why}"
            for run, why in ((a, unfit_a.get(key)), (b, unfit_b.get(key)))
            if why
        ]
        reason = "; ".join(reasons) + ": repeat it (no verdict rests on an unfit level)"
        for metric in (THROUGHPUT, *percentiles):
            higher = metric == THROUGHPUT
            verdict = undecided(
                reason,
                threshold=THROUGHPUT_THRESHOLD if higher else PERCENTILE_THRESHOLD,
                higher_is_better=higher,
            )
            figures = [_figure_at(run, key, metric) for run in (a, b)]
            raw.append((key, MetricChange(metric, figures[0], figures[1], verdict)))
    for key in common:
        (view_a, index_a), (view_b, index_b) = levels_a[key], levels_b[key]
        for metric in (THROUGHPUT, *percentiles):
            est_a, est_b = _estimate(view_a, index_a, metric), _estimate(view_b, index_b, metric)
            if est_a is None or est_b is None:
                continue
            higher = metric == THROUGHPUT
            verdict = compare_figures(
                est_b,
                est_a,
                spread,
                higher_is_better=higher,
                threshold=None if higher else PERCENTILE_THRESHOLD,
            )
            raw.append((key, MetricChange(metric, est_a.value, est_b.value, verdict)))
    judged = holm([m.verdict for _, m in raw])
    by_case: dict[CaseKey, list[MetricChange]] = {}
    for (key, m), v in zip(raw, judged, strict=True):
        by_case.setdefault(key, []).append(replace(m, verdict=v))
    same = a.data.run.id == b.data.run.id and a.data.run.started_at == b.data.run.started_at
    left_out = tuple(
        (run.data.run.id, key, flag.detail)
        for key in common
        for run, (view, index) in ((a, levels_a[key]), (b, levels_b[key]))
        for agg in view.aggregates
        if agg.level_index == index
        for flag in agg.flags
        if flag.kind is LevelFlag.LEFT_OUT
    )
    return RunComparison(
        a.data.run.id,
        b.data.run.id,
        tuple(CaseChange(k, tuple(by_case[k])) for k in common if k in by_case)
        + tuple(CaseChange(k, tuple(by_case[k]), unfit=True) for k in unfit if k in by_case),
        tuple(sorted(set(levels_a) - set(levels_b) - set(unfit))),
        tuple(sorted(set(levels_b) - set(levels_a) - set(unfit))),
        tuple(setting_changes(a, b)),
        spread,
        same,
        left_out,
    )


def gated_cases(comparison: RunComparison, gates: Sequence[Gate]) -> list[GatedCase]:
    """Every case of each gate's metric, tested against its limit; each gate's cases are one
    Holm family (the family is the gated metric only)."""
    out = []
    for g in gates:
        cases = [(c.key, m) for c in comparison.cases for m in c.metrics if m.metric == g.metric]
        results = gate([m.verdict for _, m in cases], g.threshold)
        out += [GatedCase(g, key, m, r) for (key, m), r in zip(cases, results, strict=True)]
    return out


def _levels(a: Analysis) -> Iterator[tuple[CaseKey, tuple[CaseView, int]]]:
    """Valid, rankable levels only: an invalid level or a failed case has no figure to
    compare (it is reported as missing on that side)."""
    for w, view, agg in a.valid_levels():
        yield CaseKey(view.stack, w.label, agg.level_value), (view, agg.level_index)


# The flags that make a level unfit for any verdict (its status invalid or failed).
UNFIT_FLAGS = (LevelFlag.UNSTEADY, LevelFlag.INVALID, LevelFlag.FAILED)


def _unfit_levels(a: Analysis) -> Iterator[tuple[CaseKey, str]]:
    """The levels a run measured that are not valid (unsteady, an error rate beyond the
    limit, a server that died), with why."""
    for w in a.workloads:
        for view in w.cases:
            if not view.rankable:
                continue
            for agg in view.aggregates:
                if agg.status != "ok":
                    why = [f.text for f in agg.flags if f.kind in UNFIT_FLAGS]
                    yield (
                        CaseKey(view.stack, w.label, agg.level_value),
                        f"{agg.status} ({'; '.join(why) or 'no reason recorded'})",
                    )


def _figure_at(a: Analysis, key: CaseKey, metric: str) -> float:
    """A run's figure of a case (0.0 where it has none), to show beside an undecided
    verdict."""
    for w in a.workloads:
        for view in w.cases:
            agg = view.aggregate_at(key.level_value)
            if view.stack == key.stack and w.label == key.label and agg is not None:
                est = agg.throughput if metric == THROUGHPUT else agg.latency_us.get(metric)
                return est.value if est is not None else 0.0
    return 0.0


def _estimate(view: CaseView, level_index: int, metric: str) -> Estimate | None:
    agg = next(g for g in view.aggregates if g.level_index == level_index)
    return agg.throughput if metric == THROUGHPUT else agg.latency_us.get(metric)


# --- what changed between the runs -----------------------------------------------------------
def setting_changes(a: Analysis, b: Analysis) -> list[SettingChange]:
    """Machine, kernel, tool versions, settings, suite and stack parameters that differ."""
    out = _diff(
        "environment",
        msgspec.to_builtins(a.data.run.environment),
        msgspec.to_builtins(b.data.run.environment),
    )
    out += _diff(
        "settings",
        msgspec.to_builtins(a.data.run.settings),
        msgspec.to_builtins(b.data.run.settings),
    )
    run_a, run_b = a.data.run, b.data.run
    if run_a.suite_name != run_b.suite_name:
        out.append(SettingChange("suite", "name", run_a.suite_name, run_b.suite_name))
    elif run_a.suite_text != run_b.suite_text:
        out.append(SettingChange("suite", "text", "(as in A)", "(edited)"))
    params_a = {c.stack: c.params for c in a.data.cases}
    for case in b.data.cases:
        if case.stack in params_a:
            out += _diff(f"params of {case.stack}", params_a.pop(case.stack), case.params)
    return out


# Records as plain values (msgspec.to_builtins): every field is compared as text, whatever it is.
def _diff(section: str, a: Mapping[str, object], b: Mapping[str, object]) -> list[SettingChange]:
    flat_a, flat_b = dict(_flatten(a)), dict(_flatten(b))
    return [
        SettingChange(section, key, flat_a.get(key, "(absent)"), flat_b.get(key, "(absent)"))
        for key in sorted(set(flat_a) | set(flat_b))
        if flat_a.get(key) != flat_b.get(key)
    ]


def _flatten(value: Mapping[str, object], prefix: str = "") -> Iterator[tuple[str, str]]:
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, Mapping):
            yield from _flatten(item, name + ".")
        elif isinstance(item, list | tuple) and item and all(isinstance(i, Mapping) for i in item):
            # records in a list (a suite's deviations): each field of each, by position
            for index, record in enumerate(item):
                yield from _flatten(record, f"{name}[{index}].")
        else:
            yield name, str(item)


# --- gates -----------------------------------------------------------------------------------
_PERCENT = re.compile(r"^\+?(\d+(?:\.\d+)?)\s*%$")
_LATENCY_GATE = re.compile(r"^(p\d+(?:_\d+)?)\s+\+(\d+(?:\.\d+)?)\s*%$")


def parse_slower_gate(text: str) -> Gate:
    """'5%' -> fail when throughput is shown more than 5% lower."""
    match = _PERCENT.match(text.strip())
    if not match:
        raise InputError(f"--fail-if-slower {text!r}: expected a percentage such as 5%")
    return Gate(THROUGHPUT, float(match.group(1)) / 100.0)


def parse_latency_gate(text: str) -> Gate:
    """'p99 +10%' -> fail when p99 is shown more than 10% higher."""
    match = _LATENCY_GATE.match(text.strip())
    if not match:
        raise InputError(
            f"--fail-if {text!r}: expected a percentile and a rise, such as "
            "'p99 +10%' (p50, p90 or p99)"
        )
    return Gate(match.group(1), float(match.group(2)) / 100.0)
