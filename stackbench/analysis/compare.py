"""Comparing two runs, A (the baseline) and B (the candidate): pure functions, no I/O.

Cases are matched by (stack or variant, workload label, level value). For each matched case
and metric (steady-state throughput, and chosen latency percentiles) the figure of B is compared
with A's through significance: the repetitions' headline figures when both runs have at least
2 (compare_samples), else the steady windows' per-second values of the single repetition
(compare_series); without either there is no verdict ("insufficient data"). Ratios are B / A:
for throughput > 1 is faster, for latency > 1 is slower. All the tests of one comparison (all
its cases and metrics) form one Holm-Bonferroni family (judge_together).

A gate (`--fail-if-slower 5%`, `--fail-if p99 +10%`) is broken by a SIGNIFICANT regression
whose ratio lies beyond the threshold (throughput below 1 - 5%, p99 above 1 + 10%): noise
never fails a build, and neither does a real but smaller change than the user tolerates.
"""

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from stackbench.analysis.analysis import Analysis, CaseView
from stackbench.analysis.levelsteady import LevelSteadyAggregate, headline_throughput
from stackbench.analysis.significance import (
    PERCENTILE_THRESHOLD,
    THROUGHPUT_THRESHOLD,
    Difference,
    compare_samples,
    compare_series,
    judge_together,
)
from stackbench.analysis.stats import Verdict
from stackbench.errors import InputError
from stackbench.store.store import LevelRow

THROUGHPUT = "throughput"
DEFAULT_PERCENTILES = ("p50", "p99")


@dataclass(frozen=True, order=True)
class CaseKey:
    stack: str
    label: str
    level_value: float


@dataclass(frozen=True)
class MetricChange:
    metric: str                 # throughput | p50 | p90 | p99
    a_value: float              # A's headline figure (req/s or µs)
    b_value: float
    difference: Difference      # B vs A, Holm-adjusted within the comparison

    @property
    def verdict(self) -> Verdict:
        return self.difference.verdict


@dataclass(frozen=True)
class CaseChange:
    key: CaseKey
    metrics: tuple[MetricChange, ...]


@dataclass(frozen=True)
class SettingChange:
    section: str                # environment | settings | suite | params of <stack>
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

    @property
    def comparable(self) -> bool:
        return bool(self.cases)


@dataclass(frozen=True)
class Gate:
    """Fail when `metric` significantly regresses by more than `threshold` (a fraction)."""

    metric: str
    threshold: float

    def broken_by(self, m: MetricChange) -> bool:
        d = m.difference
        if m.metric != self.metric or d.verdict is not Verdict.SLOWER or d.ratio is None:
            return False
        if self.metric == THROUGHPUT:
            return d.ratio < 1.0 - self.threshold
        return d.ratio > 1.0 + self.threshold

    def describe(self) -> str:
        if self.metric == THROUGHPUT:
            return f"throughput more than {self.threshold:.0%} slower"
        return f"{self.metric} more than {self.threshold:.0%} higher"


# --- matching and comparing ------------------------------------------------------------------
def compare_runs(a: Analysis, b: Analysis,
                 percentiles: Sequence[str] = DEFAULT_PERCENTILES) -> RunComparison:
    levels_a, levels_b = dict(_levels(a)), dict(_levels(b))
    common = sorted(set(levels_a) & set(levels_b))
    raw: list[tuple[CaseKey, str, float, float, Difference]] = []
    for key in common:
        (view_a, index_a), (view_b, index_b) = levels_a[key], levels_b[key]
        for metric in (THROUGHPUT, *percentiles):
            sides = (_figures(view_a, index_a, metric), _figures(view_b, index_b, metric))
            if sides[0] is None or sides[1] is None:
                continue
            raw.append((key, metric, sides[0].value, sides[1].value,
                        _difference(sides[1], sides[0], metric)))
    judged = judge_together([r[4] for r in raw])
    by_case: dict[CaseKey, list[MetricChange]] = {}
    for (key, metric, va, vb, _), d in zip(raw, judged, strict=True):
        by_case.setdefault(key, []).append(MetricChange(metric, va, vb, d))
    return RunComparison(
        a.data.run.id, b.data.run.id,
        tuple(CaseChange(k, tuple(by_case[k])) for k in common if k in by_case),
        tuple(sorted(set(levels_a) - set(levels_b))),
        tuple(sorted(set(levels_b) - set(levels_a))),
        tuple(setting_changes(a, b)))


def broken_gates(comparison: RunComparison, gates: Sequence[Gate]
                 ) -> list[tuple[Gate, CaseKey, MetricChange]]:
    return [(g, c.key, m) for g in gates for c in comparison.cases for m in c.metrics
            if g.broken_by(m)]


def _levels(a: Analysis) -> Iterator[tuple[CaseKey, tuple[CaseView, int]]]:
    """Valid, rankable levels only: an invalid level or a failed case has no figure to
    compare (it is reported as missing on that side)."""
    for w in a.workloads:
        for view in w.cases:
            if not view.rankable:
                continue
            for agg in view.aggregates:
                if agg.status == "ok":
                    yield CaseKey(view.stack, w.label, agg.level_value), (view, agg.level_index)


@dataclass(frozen=True)
class _Figures:
    value: float                   # the headline figure shown
    repetitions: list[float]       # each repetition's headline figure
    window: list[float]            # per-second values of the single repetition's window


def _figures(view: CaseView, level_index: int, metric: str) -> _Figures | None:
    agg = next(g for g in view.aggregates if g.level_index == level_index)
    rows = view.rows_at(level_index)
    steady = view.steady_at(level_index)
    if metric == THROUGHPUT:
        return _throughput_figures(agg.throughput.value, rows, steady)
    shown = agg.latency_us.get(metric)
    if shown is None:
        return None
    reps = [v for i, r in enumerate(rows)
            if (v := _rep_latency(r.latency_us, steady, i, metric)) is not None]
    window: list[float] = []
    if steady is not None and len(rows) == 1:
        # The per-second percentiles of the window: compared through their batch means even
        # when the per-second histograms (for the merged figure) are missing.
        window = [v for v in steady.repetitions[0].window_latency_us.get(metric, ())
                  if not math.isnan(v)]
    return _Figures(shown.value, reps or [shown.value], window)


def _throughput_figures(shown: float, rows: Sequence[LevelRow],
                        steady: LevelSteadyAggregate | None) -> _Figures:
    if steady is None:
        return _Figures(shown, [r.requests_per_s for r in rows], [])
    reps = [headline_throughput(r, s) for r, s in zip(rows, steady.repetitions, strict=True)]
    window = list(steady.repetitions[0].window_throughput) if len(rows) == 1 else []
    return _Figures(shown, reps, window)


def _rep_latency(whole: Mapping[str, float], steady: LevelSteadyAggregate | None, rep: int,
                 metric: str) -> float | None:
    """A repetition's percentile: its steady window's merged one, else the whole level's."""
    if steady is not None and metric in steady.repetitions[rep].latency_us:
        return steady.repetitions[rep].latency_us[metric].value
    return whole.get(metric)


def _difference(b: _Figures, a: _Figures, metric: str) -> Difference:
    """B vs A. Throughput: higher is better; latency: lower is better."""
    higher = metric == THROUGHPUT
    threshold = THROUGHPUT_THRESHOLD if higher else PERCENTILE_THRESHOLD
    if len(a.repetitions) >= 2 and len(b.repetitions) >= 2:
        return compare_samples(b.repetitions, a.repetitions, threshold=threshold,
                               higher_is_better=higher)
    if a.window and b.window:
        return compare_series(b.window, a.window, threshold=threshold, higher_is_better=higher)
    return compare_samples(b.repetitions, a.repetitions, threshold=threshold,
                           higher_is_better=higher)


# --- what changed between the runs -----------------------------------------------------------
def setting_changes(a: Analysis, b: Analysis) -> list[SettingChange]:
    """Machine, kernel, tool versions, settings, suite and stack parameters that differ."""
    out = _diff("environment", a.data.run.environment, b.data.run.environment)
    out += _diff("settings", msgspec.to_builtins(a.data.run.settings),
                 msgspec.to_builtins(b.data.run.settings))
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


def _diff(section: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> list[SettingChange]:
    flat_a, flat_b = dict(_flatten(a)), dict(_flatten(b))
    return [SettingChange(section, key, flat_a.get(key, "(absent)"),
                          flat_b.get(key, "(absent)"))
            for key in sorted(set(flat_a) | set(flat_b)) if flat_a.get(key) != flat_b.get(key)]


def _flatten(value: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, Mapping):
            yield from _flatten(item, name + ".")
        else:
            yield name, str(item)


# --- gates -----------------------------------------------------------------------------------
_PERCENT = re.compile(r"^\+?(\d+(?:\.\d+)?)\s*%$")
_LATENCY_GATE = re.compile(r"^(p\d+(?:_\d+)?)\s+\+(\d+(?:\.\d+)?)\s*%$")


def parse_slower_gate(text: str) -> Gate:
    """'5%' -> fail when throughput is significantly more than 5% lower."""
    match = _PERCENT.match(text.strip())
    if not match:
        raise InputError(f"--fail-if-slower {text!r}: expected a percentage such as 5%")
    return Gate(THROUGHPUT, float(match.group(1)) / 100.0)


def parse_latency_gate(text: str) -> Gate:
    """'p99 +10%' -> fail when p99 is significantly more than 10% higher."""
    match = _LATENCY_GATE.match(text.strip())
    if not match:
        raise InputError(f"--fail-if {text!r}: expected a percentile and a rise, such as "
                         "'p99 +10%' (p50, p90 or p99)")
    return Gate(match.group(1), float(match.group(2)) / 100.0)
