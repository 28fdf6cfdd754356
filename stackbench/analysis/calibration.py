"""The machine's run-to-run spread, from a calibration run (`stackbench calibrate`): pure.

A calibration repeats one short level on a freshly started server several times (the
repetitions of a suite with repeat >= 2 are fresh starts). The spread of their window figures
on the log scale, less what each window's own noise explains, is the run-to-run variance a
comparison of single repetitions must add (verdicts.RunSpread). A variance estimated from a
handful of starts is itself uncertain (with 6 starts its 95% interval spans 0.4x to 5x), so
verdicts use the one-sided 80% upper confidence bound (chi-square, k - 1 degrees of freedom),
and never less than MIN_SPREAD: a calibration made in a quiet moment must not make later
verdicts over-confident.

A whole level without a per-second series (one wrk or ab repetition) varies by the
calibrated spread plus a window's own noise when it lasts at least as long as the
calibration's levels. Those are stored without their length, so a calibration's levels may
last at most CALIBRATION_LEVEL_S (the shipped suite's run 12 s), and whole levels of at least
that length use it (verdicts.whole_level_sigma).
"""

import datetime
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# scipy and ruptures are imported in the functions that use them: together 0.7 s of CPU at
# start-up, which every command that analyses nothing (stacks, doctor, --version) would pay.
from stackbench.analysis.levelsteady import SOURCE_WINDOW, level_steady
from stackbench.analysis.verdicts import RunSpread, assumed_spread
from stackbench.errors import EnvironmentProblem, InputError
from stackbench.store.records import (
    CalibrationRecord,
    CalibrationRow,
    LevelFlag,
    has_flag,
    machine_key,
)
from stackbench.store.store import LevelRow, RunData

MIN_STARTS = 3
MIN_SPREAD = 0.01
UPPER_BOUND_LEVEL = 0.80
CALIBRATION_LEVEL_S = 15.0


@dataclass(frozen=True)
class SpreadEstimate:
    sigma: float  # the point estimate of the run-to-run SD (log scale)
    sigma_used: float  # its upper confidence bound, floored: what verdicts use
    starts: int


def estimate_spread(figures: Sequence[float], within: Sequence[float]) -> SpreadEstimate:
    """figures: each start's headline; within: each window's variance of its log mean."""
    from scipy import stats as scipy_stats

    if len(figures) < MIN_STARTS:
        raise ValueError(f"a calibration needs at least {MIN_STARTS} starts, got {len(figures)}")
    logs = np.log(np.asarray(figures, dtype=np.float64))
    k = len(logs)
    between = float(np.var(logs, ddof=1))
    noise = float(np.mean(within)) if len(within) else 0.0
    upper = between * (k - 1) / float(scipy_stats.chi2.ppf(1.0 - UPPER_BOUND_LEVEL, k - 1))
    sigma = math.sqrt(max(between - noise, 0.0))
    used = max(math.sqrt(max(upper - noise, 0.0)), MIN_SPREAD)
    return SpreadEstimate(sigma, used, k)


def drift_warning(figures: Sequence[float]) -> str | None:
    """The starts trend one way (Kendall's tau, p < 0.05): the machine changed during the
    calibration (another job, throttling), so its spread is the change, not the noise."""
    from scipy import stats as scipy_stats

    if len(figures) < MIN_STARTS + 1:
        return None
    tau, p = scipy_stats.kendalltau(range(len(figures)), figures)
    if not p < 0.05:
        return None
    way = "fell" if tau < 0 else "rose"
    return (
        f"the starts {way} steadily ({', '.join(f'{f:,.0f}' for f in figures)}): the "
        "machine changed during the calibration (another job, CPU throttling); run "
        "stackbench doctor, remove the cause and calibrate again"
    )


def spread_of(calibration: CalibrationRow | None) -> RunSpread:
    """The spread verdicts use for a run: its machine's latest calibration, else assumed."""
    if calibration is None:
        return assumed_spread()
    when = datetime.datetime.fromtimestamp(calibration.at, datetime.UTC).strftime("%Y-%m-%d")
    return RunSpread(
        calibration.sigma_used,
        False,
        f"run-to-run spread {calibration.sigma_used:.1%} (calibrated {when}: "
        f"{len(calibration.figures)} fresh starts of {calibration.stack} "
        f"{calibration.workload} @{calibration.level_value:g}, measured "
        f"{calibration.sigma:.1%}, 80% upper bound used)",
        calibration.within_variance,
        CALIBRATION_LEVEL_S,
    )


def undisturbed_starts(data: RunData) -> list[LevelRow]:
    """The calibration's valid starts that nothing disturbed. Unlike a suite's level, which
    keeps its disturbed repetitions when it has no other (and decides nothing), a calibration
    keeps none: the spread of starts the hypervisor or another process shared is that
    disturbance's spread, and every later verdict on this machine would rest on it. Too few
    left is this machine's state now, not a fault of the suite."""
    valid = [r for r in data.levels if r.status == "ok"]
    clean = [r for r in valid if not has_flag(r.flags, LevelFlag.DISTURBED)]
    if valid and len(clean) < MIN_STARTS:
        raise EnvironmentProblem(
            f"run {data.run.id}: calibration not stored: {len(valid) - len(clean)} of its "
            f"{len(valid)} starts were disturbed even after their re-measure (the report's "
            f"flags say by what: the hypervisor's steal, other processes), which leaves "
            f"{len(clean)} of the {MIN_STARTS} a spread needs; a spread measured now would "
            "be the disturbance's. Calibrate again when the machine is quiet (stackbench "
            "doctor names what else runs)"
        )
    return clean


def calibration_of(data: RunData) -> CalibrationRecord:
    """The calibration a finished calibration run gives: its one level's repetitions, each a
    fresh start, through their steady windows (a repetition without one is left out, and one
    still disturbed after its re-measure: undisturbed_starts)."""
    levels = undisturbed_starts(data)
    cases = {c.id: c for c in data.cases}
    if not levels or len({(r.case_id, r.level_index) for r in levels}) != 1:
        raise InputError(
            f"run {data.run.id}: a calibration needs exactly one valid level "
            "of one stack and workload, repeated"
        )
    long = [r for r in levels if r.duration_s > CALIBRATION_LEVEL_S]
    if long:
        raise InputError(
            f"run {data.run.id}: a calibration's levels may last at most "
            f"{CALIBRATION_LEVEL_S:g} s (this one ran {long[0].duration_s:g} s): whole levels "
            "at least as long as a calibration's use its spread"
        )
    steadies = [
        s
        for s in map(level_steady, levels)
        if s.source == SOURCE_WINDOW
        and s.throughput is not None
        and s.throughput.evidence is not None
    ]
    if len(steadies) < MIN_STARTS:
        raise InputError(
            f"run {data.run.id}: {len(steadies)} of {len(levels)} repetitions "
            f"have a steady window, a calibration needs {MIN_STARTS}: use longer "
            "levels (duration_s) or more repetitions (repeat)"
        )
    figures = [s.throughput.value for s in steadies if s.throughput is not None]
    within = [
        s.throughput.evidence.variance
        for s in steadies
        if s.throughput is not None and s.throughput.evidence is not None
    ]
    estimate = estimate_spread(figures, within)
    case = cases[levels[0].case_id]
    return CalibrationRecord(
        machine=machine_key(data.run.environment),
        at=data.run.finished_at or data.run.started_at,
        run_id=data.run.id,
        stack=case.stack,
        workload=case.label,
        level_value=levels[0].level_value,
        figures=tuple(figures),
        within_variance=float(np.mean(within)),
        sigma=estimate.sigma,
        sigma_used=estimate.sigma_used,
    )
