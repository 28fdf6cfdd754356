"""A level at which a stack answered nothing, read as what it is: a censored figure.

When every request of every repetition of a level waited out the loader's timeout, the level
has no latency figure, but it bounds one: each request waited longer than the timeout, so its
mean, any percentile and a closed loop's time per request (connections x seconds / answers,
unbounded with no answer) all lie above it. A comparison with a stack that did answer at that
level can then still be decided, by the bound and that stack's interval, where reading the
level as missing would leave every claim "at every level" untestable because of the one level
where the server stalled (php-apache at 6,250 connections, concurrency-sweep 2026-11-27).
A level that failed by refused or reset connections bounds nothing: they fail at once.
"""

import dataclasses
import math
from dataclasses import dataclass

from stackbench.analysis import stats
from stackbench.analysis.claims.bands import _Band, _Verdict
from stackbench.analysis.claims.decisions import _Context, _Tally, to_decide
from stackbench.analysis.claims.reading import (
    _Missing,
    _Point,
    _Run,
    level_problem,
    pair_label,
    too_little,
)
from stackbench.analysis.claims.results import Measured
from stackbench.analysis.claims.wording import _band_text, _ratio_text
from stackbench.analysis.verdicts import interval_of, log_ratio
from stackbench.config.claims import metric_unit
from stackbench.store.records import LevelFlag, has_flag

# The figures a level without answers bounds from below by the timeout, in milliseconds.
BOUNDED_BY_TIMEOUT = frozenset(
    {"mean_latency", "p50", "p90", "p99", "max_latency", "time_per_request"}
)


@dataclass(frozen=True)
class Stall:
    """A level where no request was answered and every one waited out the timeout."""

    stack: str
    workload: str
    where: str  # "@6,250"
    metric: str  # the one it bounds
    timed_out: int  # requests that waited the whole timeout, over the level's repetitions
    bound: float  # the metric lies above this, in its unit: the timeout in ms

    @property
    def label(self) -> str:
        return f"{self.stack} {self.workload} {self.where}"

    def measured(self) -> Measured:
        """Shown as its bound alone: the figure is above it, by how much nobody saw."""
        return Measured(f"{self.label} (no answer: above)", self.bound, metric_unit(self.metric))

    @property
    def words(self) -> str:
        return (
            f"{self.label} answered no request (all {self.timed_out:,} waited out the "
            f"{self.bound:,.0f} ms timeout)"
        )


def stall_of(
    run: _Run,
    stack: str,
    workload: str,
    level: float | None,
    metric: str,
    plan_only: bool = False,
) -> Stall | None:
    """The level as a stall when the metric is one a timeout bounds and every standing
    repetition of it (the plan's own with `plan_only`, as `_Run.point` reads them) answered
    nothing while all its failures were timeouts; None otherwise."""
    if metric not in BOUNDED_BY_TIMEOUT or level is None:  # None: a standalone timing
        return None
    read = run.level_rows(stack, workload, level, plan_only)
    if isinstance(read, _Missing):
        return None
    stack, _case, rows = read
    rows = stats.leave_out_disturbed(rows)
    # A level invalid only by its failures is data here; any other fault, a disturbance or
    # too few attempts for the claim leave the level as missing as _Run.point said
    if (
        not rows
        or level_problem(rows, failures_are_data=True)
        or too_little(rows, *run.minimum)
        or any(has_flag(r.flags, LevelFlag.DISTURBED) for r in rows)
    ):
        return None
    timed_out = sum(r.errors.get("timeout", 0) for r in rows)
    if any(r.completed > 0 or r.errors_total != r.errors.get("timeout", 0) for r in rows):
        return None
    if timed_out == 0:
        return None
    return Stall(stack, workload, f"@{level:,.0f}", metric, timed_out, run.timeout_s * 1000.0)


def judge_stalled(
    tally: _Tally,
    band: _Band,
    num: _Point | Stall,
    den: _Point | Stall,
    ctx: _Context,
) -> None:
    """num / den against the band where one side stalled: its figure lies above the bound,
    so the ratio is only bounded on one side (from below for a stalled numerator, from above
    for a stalled denominator), by the bound and the other side's interval. The verdict the
    open side allows is the only one given (a stalled numerator can show that a ratio holds
    a lower bound, never that it fails one); the other reads as not enough evidence."""
    what = pair_label(num, den)
    if isinstance(num, Stall) and isinstance(den, Stall):
        tally.missing.append(f"{what}: both answered nothing ({num.words}; {den.words})")
        return
    stalled, other = (num, den) if isinstance(num, Stall) else (den, num)
    assert isinstance(stalled, Stall) and isinstance(other, _Point)
    if other.evidence is None:
        tally.undecided(
            f"{what}: {stalled.words}, and {other.label} has no interval to compare with",
            to_decide([other], 0, "a repetition more gives it an interval"),
        )
        return
    allowed = _Verdict.HOLDS if stalled is num else _Verdict.FAILS
    side = "at least" if stalled is num else "at most"
    # ln(other / bound): the ratio's bound moves with the answering side's figure alone
    alone = log_ratio([other.evidence], [], ctx.run.spread)
    shift = math.log(stalled.bound)
    ratio = dataclasses.replace(alone, d=(shift - alone.d) if stalled is num else (alone.d - shift))
    low, high = interval_of(ratio, tally.confidence)
    tally.ours.append(Measured(f"{what} ({side})", math.exp(ratio.d), "×", low, high))
    verdict = band.judge(math.exp(ratio.d), low, high)
    detail = (
        f"{what}: {stalled.words}, so the ratio is {side} "
        f"{_ratio_text(math.exp(ratio.d), low, high)}"
    )
    # Straddling: more repetitions of the side that answered may decide it
    if verdict in (allowed, _Verdict.NOISE):
        tally.add(verdict, f"{detail}, {_band_text(band, verdict)}", (ratio, band), [other])
    else:  # the bound points the other way: only the stalled level's own figure would decide
        tally.undecided(
            f"{detail}: that bound cannot decide the claim, the stalled side's figure is only "
            "known to exceed the timeout",
            to_decide([], None, "a run in which the stalled level answers"),
        )
