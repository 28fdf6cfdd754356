"""A case's history across stored runs: every run's figure with its interval, its verdict
against the run before, and the change points of the whole series (pure functions).

A case is the same (suite, stack, workload, level) in several runs. Each run's figure is
compared with the previous run's by the verdicts' own rule (analysis.verdicts via
`compare_figures`), so "slower than the run before" means what "slower" means everywhere.
Over the whole series, PELT (Killick et al. 2012, `ruptures`, as in the steady-state
detection) finds the runs where the level shifted: on log figures, with a penalty scaled by
the machine's run-to-run spread, so that a series of runs with no change raises a false alarm
in at most about 5% of series (checked by simulation in tests/analysis/test_history.py).
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# scipy and ruptures are imported in the functions that use them: together 0.7 s of CPU at
# start-up, which every command that analyses nothing (stacks, doctor, --version) would pay.
from stackbench.analysis.analysis import Analysis, compare_figures
from stackbench.analysis.stats import Estimate
from stackbench.analysis.verdicts import RunSpread, Verdict

# PELT's penalty per change point, in units of the run-to-run variance: c·σ²·ln(n), σ the larger
# of the machine's spread and the series' own (series_sigma). Simulated (400 series each):
# with c = 6, unchanged series of 5 to 40 runs at a 5% spread raise no false alarm, series
# spread by 15% but judged with an assumed 5% raise one in about 5% (c = 4: 10%); a step of
# 4σ (+20%) after run 10 of 20 is found within a run of its place in 96% of series, a step of
# 2σ (+10%) in about a third: smaller steps are left to the run-by-run verdicts.
# tests/analysis/test_history.py checks these rates.
PENALTY_FACTOR = 6.0
MIN_RUNS_FOR_CHANGES = 4  # two runs a side: fewer cannot tell a step from one odd run


@dataclass(frozen=True, order=True)
class HistoryKey:
    suite: str
    stack: str
    workload: str  # the workload label, e.g. sha256?n=1000
    level: float


@dataclass(frozen=True)
class HistoryPoint:
    run_id: int
    started_at: float
    label: str  # the run's label ("" when none)
    revision: str | None  # the stack folder's git revision (+ "-dirty"), None: not recorded
    throughput: Estimate
    against_previous: Verdict | None  # this run against the one before (None: the first)
    change: bool = False  # a change point: the series shifted from this run on


@dataclass(frozen=True)
class CaseHistory:
    key: HistoryKey
    points: tuple[HistoryPoint, ...]
    spread: RunSpread

    @property
    def changes(self) -> tuple[HistoryPoint, ...]:
        return tuple(p for p in self.points if p.change)


def series_sigma(logs: np.ndarray) -> float:
    """The series' own run-to-run spread, robust to a step: the MAD of successive differences
    (a step moves one difference; a busy machine moves them all), scaled to an SD."""
    diffs = np.abs(np.diff(logs))
    return float(1.4826 * np.median(diffs) / math.sqrt(2)) if len(diffs) else 0.0


def change_points(values: Sequence[float], sigma: float) -> list[int]:
    """Indices where a new segment starts in a series of positive figures (none in a series
    shorter than MIN_RUNS_FOR_CHANGES or without spread). The penalty scales with the larger
    of `sigma` (the machine's run-to-run spread) and the series' own spread, so runs on a
    noisier machine than calibrated raise no false alarm."""
    n = len(values)
    if n < MIN_RUNS_FOR_CHANGES or sigma <= 0 or any(v <= 0 for v in values):
        return []
    logs = np.log(np.asarray(values, dtype=float))
    signal = logs.reshape(-1, 1)
    sigma = max(sigma, series_sigma(logs))
    penalty = PENALTY_FACTOR * sigma * sigma * math.log(n)
    import ruptures

    ends = ruptures.Pelt(model="l2", min_size=2, jump=1).fit(signal).predict(pen=penalty)
    return [int(end) for end in ends[:-1]]  # the last "end" is the series' length


def histories(
    analyses: Sequence[Analysis],
    revisions: Sequence[dict[str, str]] | None = None,
    labels: Sequence[str] | None = None,
    stack: str | None = None,
    workload: str | None = None,
    suite: str | None = None,
) -> list[CaseHistory]:
    """Every case seen in `analyses` (oldest run first), filtered; revisions[i] and labels[i]
    belong to analyses[i]."""
    series: dict[HistoryKey, list[tuple[int, Estimate]]] = {}
    for i, a in enumerate(analyses):
        if suite is not None and a.data.run.suite_name != suite:
            continue
        for w, view, agg in a.valid_levels():
            if workload is not None and workload not in (w.label, w.workload):
                continue
            if (stack is not None and view.stack != stack) or agg.throughput.value <= 0:
                continue
            key = HistoryKey(a.data.run.suite_name, view.stack, w.label, agg.level_value)
            series.setdefault(key, []).append((i, agg.throughput))
    out = []
    for key in sorted(series):
        out.append(_history(key, series[key], analyses, revisions, labels))
    return out


def _history(
    key: HistoryKey,
    entries: list[tuple[int, Estimate]],
    analyses: Sequence[Analysis],
    revisions: Sequence[dict[str, str]] | None,
    labels: Sequence[str] | None,
) -> CaseHistory:
    spread = max((analyses[i].spread for i, _ in entries), key=lambda s: s.sigma)
    starts = set(change_points([e.value for _, e in entries], spread.sigma))
    points = []
    for n, (i, estimate) in enumerate(entries):
        run = analyses[i].data.run
        previous = entries[n - 1][1] if n else None
        verdict = None if previous is None else compare_figures(estimate, previous, spread)
        points.append(
            HistoryPoint(
                run.id,
                run.started_at,
                labels[i] if labels else "",
                (revisions[i] if revisions else {}).get(key.stack),
                estimate,
                verdict,
                n in starts,
            )
        )
    return CaseHistory(key, tuple(points), spread)
