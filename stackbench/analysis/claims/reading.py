"""Reading the stored run for a claim: a figure of a stack, workload and level with its
evidence, or why it is missing (a failed case, an invalid level, no such level).
"""

import dataclasses
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from stackbench.analysis import stats
from stackbench.analysis.analysis import decision_confidence, disturbed_caveat
from stackbench.analysis.calibration import spread_of
from stackbench.analysis.claims.standin import NONE, StandIns
from stackbench.analysis.claims.wording import _levels_text
from stackbench.analysis.figures import BY_CLAIM_METRIC
from stackbench.analysis.levelsteady import (
    LevelSteadyAggregate,
    aggregate_steady,
    headline_throughput,
)
from stackbench.analysis.moderated import FEW_BORROWED_DF, Prior, fit_prior, moderate
from stackbench.analysis.paired import FigureKey, PairKind, pairs_priors
from stackbench.analysis.verdicts import (
    FLOORED_REPETITIONS,
    Evidence,
    RunSpread,
    Unit,
    at_least_the_floor,
    repetition_evidence,
    repetition_floor,
    whole_level_evidence,
)
from stackbench.config.claims import SCRIPT_METRICS, metric_unit
from stackbench.store.records import LevelFlag, has_flag, is_error_rate_flag
from stackbench.store.store import CaseRow, LevelRow, RunData, ScriptRow

# Metrics for which a level the server failed requests in is data, not a faulty measurement.
FAILURE_METRICS = frozenset({"errors", "error_rate"})


class _Missing:
    """A figure we cannot have, and why (a failed case, an invalid level, no such level...)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


@dataclass(frozen=True)
class _Point:
    values: tuple[float, ...]  # one per repetition
    stack: str
    workload: str
    where: str  # "@3,000", "peak @2,000" or "standalone"
    metric: str
    # What verdicts know of the figure, in the metric's unit (None: nothing to decide from)
    evidence: Evidence | None = None
    level: float | None = None  # the level read (None: a standalone timing)
    # Why no verdict may rest on the figure although it has evidence (a disturbed level)
    caveat: str | None = None
    # (repetition, figure) as its evidence has it (a level's steady window), to pair with
    # another point's same repetition (analysis.paired); empty: nothing to pair by
    pairs: tuple[tuple[int, float], ...] = ()
    # The loader, not the server, was saturated (in a repetition of the level, or of any
    # level a peak was chosen among): the figure is the loader's limit, a floor on the
    # server's throughput, and no repetition on this placement lifts it
    loader_bound: bool = False

    @property
    def value(self) -> float:
        return stats.median(self.values)

    @property
    def unit(self) -> str:
        return metric_unit(self.metric)

    @property
    def label(self) -> str:
        return f"{self.stack} {self.workload} {self.where}"


class _Side(Protocol):
    """What names a figure in a pair: a _Point, or a level read as a bound (claims.censored)."""

    @property
    def stack(self) -> str: ...
    @property
    def workload(self) -> str: ...
    @property
    def where(self) -> str: ...
    @property
    def metric(self) -> str: ...
    @property
    def label(self) -> str: ...


def pair_label(a: _Side, b: _Side) -> str:
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
    def __init__(self, data: RunData, pair_priors: bool = True) -> None:
        self.cases: dict[tuple[str, str], CaseRow] = {(c.stack, c.label): c for c in data.cases}
        self.failed_verification: dict[tuple[str, str], list[str]] = {}
        for v in data.verifications:
            if not v.ok:
                self.failed_verification.setdefault((v.stack, v.workload), []).extend(
                    v.failures or ["failed"]
                )
        self.rows: dict[int, list[LevelRow]] = {}
        for row in data.levels:
            self.rows.setdefault(row.case_id, []).append(row)
        self.scripts: dict[tuple[str, str], list[ScriptRow]] = {}
        for s in data.scripts:
            self.scripts.setdefault((s.stack, s.label), []).append(s)
        self.loader_bound: set[str] = set()  # labels of the levels read for the current claim
        # The current claim's levels with disturbed repetitions left out: "label: k of n"
        self.left_out: set[str] = set()
        # The current claim's least measurement per level: (requests, seconds)
        self.minimum: tuple[int, float] = (0, 0.0)
        # The current claim's stand-ins: the stack read for one its test names
        self.stand_ins: StandIns = NONE
        self.spread = spread_of(data.calibration)
        # The comparisons' confidence: 95%, or alpha spent over the looks of run --until-decided
        self.confidence = decision_confidence(data.run.settings.decision_looks)
        # The repetitions the plan ran at every level (0 to repeat - 1); run --until-decided's
        # rounds add later ones at the few levels its undecided claims read
        self.plan_repeat = data.run.settings.repeat
        # How long the loader let a request wait (a level without answers bounds latency by it)
        self.timeout_s = data.run.settings.timeout_s
        # Whether a pair borrows from the run's pairs of its kind (evaluate's `pair_priors`)
        self.pairs_moderated = pair_priors
        # Per metric, each level's figures as its pairs read them (level_figures), and the
        # priors of its pairs (pair_priors)
        self._figures: dict[str, dict[FigureKey, dict[int, float]]] = {}
        self._priors: dict[str, dict[PairKind, Prior | None]] = {}

    def level_figures(self, metric: str) -> dict[FigureKey, dict[int, float]]:
        """Each level's figures of `metric` keyed by repetition, as a claim reads them in pairs
        (standing, valid, undisturbed repetitions: keyed_figures); computed once a metric."""
        if metric not in self._figures:
            figures: dict[FigureKey, dict[int, float]] = {}
            for case in self.cases.values():
                rows = self.rows.get(case.id, [])
                for level in sorted({r.level_value for r in rows}):
                    at = [r for r in rows if r.level_value == level]
                    keyed = keyed_figures(at, metric, self.spread)
                    if keyed:
                        figures[(case.stack, case.label, level)] = dict(keyed)
            self._figures[metric] = figures
        return self._figures[metric]

    @functools.cached_property
    def throughput_prior(self) -> Prior | None:
        """What the run's levels say of one repetition's spread of req/s (analysis.moderated):
        fitted on every level measured two or more times, standing, valid and undisturbed."""
        variances = []
        for keyed in self.level_figures("requests_per_s").values():
            if len(keyed) >= 2:
                logs = np.log(np.asarray(list(keyed.values()), dtype=np.float64))
                variances.append((float(np.var(logs, ddof=1)), len(keyed) - 1.0))
        return fit_prior(variances)

    def pair_priors(self, metric: str) -> dict[PairKind, Prior | None]:
        """What the run's pairs of each kind say of one pair's spread of `metric`
        (analysis.paired): fitted on every two levels' figures that pair; none where the run
        reads no pair by its kind (evaluate's `pair_priors`)."""
        if not self.pairs_moderated:
            return {}
        if metric not in self._priors:
            self._priors[metric] = pairs_priors(self.level_figures(metric))
        return self._priors[metric]

    def case(self, stack: str, workload: str) -> CaseRow | _Missing:
        """The case the claim reads for a stack its test names (its stand-in's, if any)."""
        return self._case(self.stand_ins.stack(stack, workload), workload)

    def _case(self, stack: str, workload: str) -> CaseRow | _Missing:
        case = self.cases.get((stack, workload))
        if case is None:
            return _Missing(f"{stack} did not run {workload} in this run")
        if case.status == "unavailable":
            return _Missing(f"{stack} is unavailable: {case.reason or 'no reason given'}")
        if case.status == "failed":
            return _Missing(f"{stack} failed on {workload}: {case.reason or 'no reason given'}")
        failures = self.failed_verification.get(
            (stack, case.workload)
        ) or self.failed_verification.get((stack, workload))
        if failures:
            return _Missing(f"{stack} failed verification on {workload}: {failures[0]}")
        if not self.rows.get(case.id):
            return _Missing(
                f"{stack} has no measured level of {workload} (the run ended before it)"
            )
        return case

    def level_values(self, case: CaseRow) -> list[float]:
        return sorted({r.level_value for r in self.rows.get(case.id, [])})

    def rows_at(self, case: CaseRow, level: float) -> list[LevelRow]:
        return [r for r in self.rows.get(case.id, []) if math.isclose(r.level_value, level)]

    def level_rows(
        self, stack: str, workload: str, level: float, plan_only: bool = False
    ) -> tuple[str, CaseRow, list[LevelRow]] | _Missing:
        """The stack read (its stand-in's, if any), its case and the level's repetitions
        (`plan_only`: the plan's own, where the level has them), disturbed ones included."""
        stack = self.stand_ins.stack(stack, workload)
        case = self._case(stack, workload)
        if isinstance(case, _Missing):
            return case
        rows = self.rows_at(case, level)
        if plan_only:
            rows = [r for r in rows if r.repetition < self.plan_repeat] or rows
        return stack, case, rows

    def point(
        self, stack: str, workload: str, level: float, metric: str, plan_only: bool = False
    ) -> _Point | _Missing:
        """A level's figure over its repetitions; `plan_only`: over the plan's own (those
        every level has), where the level has them."""
        read = self.level_rows(stack, workload, level, plan_only)
        if isinstance(read, _Missing):
            return read
        stack, case, rows = read
        where = f"@{level:,.0f}"
        label = f"{stack} {workload} {where}"
        if not rows:
            measured = _levels_text(self.level_values(case))
            return _Missing(
                f"{stack} has no level {level:,.0f} of {workload} (measured: {measured})"
            )
        rows = self.leave_out_disturbed(label, rows)
        problem = level_problem(rows, failures_are_data=metric in FAILURE_METRICS) or too_little(
            rows, *self.minimum
        )
        if problem:
            return _Missing(f"{label}: {problem}")
        values = []
        for row in rows:
            value = level_metric(row, metric)
            if isinstance(value, str):
                return _Missing(f"{label}: {value}")
            values.append(value)
        loader_bound = any(has_flag(r.flags, LevelFlag.LOADER_BOUND) for r in rows)
        if loader_bound:
            self.loader_bound.add(label)
        steady = aggregate_steady(rows, self.spread) if metric in STEADY_READ else None
        evidence = level_evidence(rows, metric, values, self.spread, steady)
        if metric == "requests_per_s" and evidence is not None and steady is not None:
            whole_s = None if steady.has_series else min(r.duration_s for r in rows)
            floor = repetition_floor(self.spread, evidence.within, whole_s)
            evidence = moderated_evidence(evidence, self.throughput_prior, floor)
        return _Point(
            tuple(values),
            stack,
            workload,
            where,
            metric,
            evidence,
            level,
            disturbed_reason(label, rows),
            repetition_figures(rows, metric, values, steady),
            loader_bound,
        )

    def leave_out_disturbed(self, label: str, rows: list[LevelRow]) -> list[LevelRow]:
        """The repetitions no other process or steal disturbed, when there are some: a
        disturbed one (still disturbed after it was measured again) is left out, as the
        re-measure would have replaced it, and the claim's reason says so (`left_out`); the
        flag says nothing of its figure, so leaving it out chooses no result. All disturbed:
        all kept, and the point decides nothing (`disturbed_reason`)."""
        kept = stats.leave_out_disturbed(rows)
        if len(kept) < len(rows):
            self.left_out.add(f"{label}: {len(rows) - len(kept)} of {len(rows)}")
        return kept

    def failures(self, stack: str, workload: str, level: float) -> tuple[int, int]:
        """(failed, attempted) requests of a level, summed over its repetitions."""
        stack = self.stand_ins.stack(stack, workload)
        case = self._case(stack, workload)
        if isinstance(case, _Missing):
            return 0, 0
        rows = self.rows_at(case, level)
        failed = sum(r.errors_total for r in rows)
        return failed, failed + sum(r.completed for r in rows)

    def peak(self, stack: str, workload: str, metric: str) -> tuple[float, _Point] | _Missing:
        """The level where the trend of the metric's medians peaks (stats.fitted_peak), with
        that level's own figure and evidence: the highest of many single medians would be
        chosen for its noise and bias every "÷ peak" ratio low."""
        stack = self.stand_ins.stack(stack, workload)
        case = self._case(stack, workload)
        if isinstance(case, _Missing):
            return case
        points: dict[float, _Point] = {}
        for level in self.level_values(case):
            point = self.point(stack, workload, level, metric)
            if isinstance(point, _Missing):
                return _Missing(f"no peak of {stack} on {workload}: {point.reason}")
            points[level] = point
        at = stats.fitted_peak([(level, p.value) for level, p in points.items()])
        assert at is not None  # case() guarantees measured levels
        # A loader-bound level anywhere on the curve may hide a higher true peak: the peak
        # found is then a floor on the server's, as a loader-bound level's own figure is
        floor = any(p.loader_bound for p in points.values())
        return at, dataclasses.replace(points[at], loader_bound=floor)

    def script(self, stack: str, workload: str, metric: str) -> _Point | _Missing:
        stack = self.stand_ins.stack(stack, workload)
        rows = self.scripts.get((stack, workload), [])
        if not rows:
            return _Missing(f"{stack} has no standalone timing of {workload} in this run")
        values = []
        for row in rows:
            value = script_metric(row, metric)
            if isinstance(value, str):
                return _Missing(f"{stack} standalone {workload}: {value}")
            values.append(value)
        # A timing is one whole run of its iterations: the machine's spread of whole levels
        # as long as the shortest timing (wall seconds) is its uncertainty.
        seconds = min(r.wall_s or 0.0 for r in rows)
        evidence = (
            whole_level_evidence(values[0], seconds, self.spread)
            if len(values) == 1
            else repetition_evidence(values, [], self.spread, seconds)
        )
        # The k-th timing of every stack pairs with the k-th of the others: the runner takes
        # them in turns, one stack after another (engine/runner.py), so drift is shared.
        pairs = tuple(enumerate(values))
        return _Point(tuple(values), stack, workload, "standalone", metric, evidence, pairs=pairs)


STEADY_LATENCY = ("p50", "p90", "p99")


PER_REQUEST_TIMES = ("time_per_request", "time_per_request_all")
# The metrics whose evidence reads the levels' steady windows
STEADY_READ = ("requests_per_s", *STEADY_LATENCY, *PER_REQUEST_TIMES)


def level_evidence(
    rows: Sequence[LevelRow],
    metric: str,
    values: Sequence[float],
    spread: RunSpread,
    steady: LevelSteadyAggregate | None = None,
) -> Evidence | None:
    """The evidence of a claim's figure, in its unit: req/s and p50/p90/p99 from the steady
    windows as every verdict has them (levelsteady); ab's times per request, which are
    1 / throughput scaled, with the relative variance of the level's throughput; any other
    figure (mean latency, p80, CPU, transfer) from its repetitions, and from one repetition as
    one whole level: the machine's run-to-run spread of whole levels (in a closed loop mean
    latency is connections / throughput, and CPU and bytes follow the requests served)."""
    if metric in STEADY_READ:
        steady = steady or aggregate_steady(rows, spread)
        if metric == "requests_per_s":
            return steady.throughput.evidence
        if metric in STEADY_LATENCY:
            latency = steady.latency_us.get(metric)
            ms = None if latency is None else latency.evidence
            return None if ms is None else _as_figure(ms, ms.value / 1000.0)
        throughput = steady.throughput.evidence
        if len(values) == 1 and throughput is not None and values[0] > 0:
            return _as_figure(throughput, values[0])
    seconds = min(r.duration_s for r in rows)
    if len(values) == 1:
        return whole_level_evidence(values[0], seconds, spread)
    return repetition_evidence(values, [], spread, seconds)


def undisturbed(rows: Sequence[LevelRow]) -> list[LevelRow]:
    """The repetitions not flagged disturbed."""
    return [r for r in rows if not has_flag(r.flags, LevelFlag.DISTURBED)]


def keyed_figures(
    rows: Sequence[LevelRow], metric: str, spread: RunSpread
) -> tuple[tuple[int, float], ...]:
    """(repetition, figure) of each undisturbed repetition of one level, as a claim's pairs
    read it (repetition_figures); empty for a level that is invalid, lacks the figure in a
    repetition or has a repetition number twice, and for a metric that is not paired."""
    rows = undisturbed(rows)
    if not rows or level_problem(rows, failures_are_data=False):
        return ()
    values = [level_metric(r, metric) for r in rows]
    numbers = [v for v in values if not isinstance(v, str)]
    if len(numbers) != len(values):
        return ()
    steady = aggregate_steady(rows, spread) if metric in STEADY_READ else None
    return repetition_figures(rows, metric, numbers, steady)


def moderated_evidence(
    evidence: Evidence | None, prior: Prior | None, floor: float
) -> Evidence | None:
    """A level's req/s over its repetitions with their variance moderated by the run's other
    levels (analysis.moderated). A level left with 2 or 3 repetitions (the others disturbed)
    borrows FEW_BORROWED_DF degrees of freedom, and its interval stays at least the one
    `floor` (what one repetition is known to vary by) gives. One repetition, or a variance
    already floored, stays as it is."""
    if evidence is None or prior is None or evidence.unit is not Unit.REPETITIONS:
        return evidence
    n = evidence.n
    if evidence.df != n - 1:
        return evidence
    if n > FLOORED_REPETITIONS:
        sample, df = moderate(evidence.variance * n, evidence.df, prior)
    else:
        sample, df = moderate(
            evidence.variance * n, evidence.df, prior, borrowed_df=FEW_BORROWED_DF
        )
        sample, df = at_least_the_floor(sample, df, floor)
    return dataclasses.replace(evidence, variance=sample / n, df=df)


def repetition_figures(
    rows: Sequence[LevelRow],
    metric: str,
    values: Sequence[float],
    steady: LevelSteadyAggregate | None,
) -> tuple[tuple[int, float], ...]:
    """(repetition, figure) of each row, as the level's evidence reads it: req/s from its
    steady window (the whole level without one), ab's times per request from the same
    (1 / throughput scaled), any other figure as measured; a latency percentile is not
    paired (its evidence merges the windows' histograms). Empty when a repetition number
    repeats: nothing to pair by."""
    if metric in STEADY_LATENCY or len({r.repetition for r in rows}) != len(rows):
        return ()
    out: list[tuple[int, float]] = []
    for index, (row, value) in enumerate(zip(rows, values, strict=True)):
        figure = value
        if steady is not None:
            rate = headline_throughput(row, steady.repetitions[index])
            if rate <= 0 or row.requests_per_s <= 0:
                return ()
            figure = rate if metric == "requests_per_s" else value * row.requests_per_s / rate
        out.append((row.repetition, figure))
    return tuple(out)


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
            faults = [f for f in row.flags if f.kind in (LevelFlag.INVALID, LevelFlag.UNSTEADY)]
            measurement = [f for f in faults if not is_error_rate_flag(f)]
            if measurement or not faults:
                return "level invalid: " + (
                    measurement[0].text if measurement else "no reason given"
                )
            if not failures_are_data:
                return f"level invalid: {faults[0].detail}"
    return None


# The flag's own closing advice, replaced by the claim's (a fresh run, not a repetition)
_FLAG_ADVICE = "; repeat it on a quiet machine (stackbench doctor names what runs)"


# How a disturbed level's reason ends (claims.decisions drops it where a bound decides)
NO_VERDICT = "; no verdict rests on it"


def disturbed_reason(label: str, rows: Sequence[LevelRow]) -> str | None:
    """Why no verdict may rest on this level, by the comparisons' rule (a level whose
    repetitions' flags say disturbed decides nothing: analysis.disturbed_caveat), naming the
    disturbance; None when it may. A claim's point reads it on its repetitions after the
    disturbed ones are left out (`_Run.point`), so it names a level every repetition of which
    was disturbed: a repetition that is not mends it (run --until-decided adds one)."""
    if disturbed_caveat([f for r in rows for f in r.flags]) is None:
        return None
    hit = [f for r in rows for f in r.flags if f.kind is LevelFlag.DISTURBED]
    what = hit[0].detail.removesuffix(_FLAG_ADVICE) or "other processes used its cores"
    count = sum(has_flag(r.flags, LevelFlag.DISTURBED) for r in rows)
    return f"{label}: {count} of {len(rows)} repetitions disturbed ({what}){NO_VERDICT}"


def too_little(rows: Sequence[LevelRow], min_requests: int, min_seconds: float) -> str | None:
    """Why a level is too small for a claim: fewer attempted requests or seconds of load
    than the claim needs (None: enough)."""
    for row in rows:
        attempts = row.completed + row.errors_total
        if attempts < min_requests:
            return (
                f"only {attempts:,} requests measured; the claim needs at least "
                f"{min_requests:,} per level"
            )
        if row.duration_s < min_seconds:
            return (
                f"only {row.duration_s:.2f} s of load measured; the claim needs at least "
                f"{min_seconds:g} s per level"
            )
    return None


def level_metric(row: LevelRow, metric: str) -> float | str:
    """The metric of one repetition, or why it is not there."""
    if metric == "requests_per_s":
        return row.requests_per_s
    if metric == "error_rate":
        return stats.level_error_rate(row)
    if metric == "errors":
        return float(row.errors_total)
    figure = BY_CLAIM_METRIC.get(metric)
    if figure is not None:
        value = figure.of_level(row)
        return figure.missing(row) if value is None else value
    if row.completed <= 0:
        return "no request completed"
    key = {"mean_latency": "mean", "max_latency": "max"}.get(metric, metric)
    if key not in row.latency_us:
        return f"the {row.driver} driver did not measure {metric.replace('_', '.')}"
    return row.latency_us[key] / 1000.0


def script_metric(row: ScriptRow, metric: str) -> float | str:
    """Seconds per iteration of a standalone timing, or why it is not there."""
    usable = row.outcome == "ok" or row.outcome.startswith("not checked")
    if not usable:
        return f"the timing failed ({row.outcome})"
    figure = {
        "script_wall": row.wall_s,
        "script_user": row.user_s,
        "script_cpu": None if row.user_s is None or row.sys_s is None else row.user_s + row.sys_s,
    }[metric]
    if figure is None or row.iterations <= 0:
        return "no time recorded"
    return figure / row.iterations


def _get(
    run: _Run, stack: str, workload: str, level: float | None, metric: str
) -> _Point | _Missing:
    if metric in SCRIPT_METRICS or level is None:
        return run.script(stack, workload, metric)
    return run.point(stack, workload, level, metric)
