"""From points to a claim's status: each point's verdict tallied, ratios judged on their
intervals, and the claim concluded (missing data never refutes it).
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from stackbench.analysis.claims.bands import _Band, _Verdict
from stackbench.analysis.claims.facts import Facts
from stackbench.analysis.claims.reading import NO_VERDICT, _Point, _Run
from stackbench.analysis.claims.results import ClaimResult, ClaimStatus, Measured
from stackbench.analysis.claims.wording import (
    NO_EVIDENCE,
    _band_text,
    _ratio_text,
    expectation,
    repetitions_for,
)
from stackbench.analysis.paired import moderated_pairs, pair_kind, paired_log_ratio
from stackbench.analysis.verdicts import (
    CONFIDENCE,
    FASTER_LOADER,
    LogRatio,
    interval_of,
    log_ratio,
)
from stackbench.config.claims import Claim
from stackbench.config.plan import LevelKey
from stackbench.config.todecide import ToDecide


@dataclass
class _Tally:
    """Per-point verdicts of one claim, with the first reason of each kind; `confidence`:
    the run's (95%, or alpha spent over the looks of run --until-decided)."""

    confidence: float = CONFIDENCE
    holds: int = 0
    fails: list[str] = field(default_factory=list)
    noise: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    ours: list[Measured] = field(default_factory=list)
    # A failing point's ratio, band and points, to check it again family-wise (_family_wise)
    failing: dict[str, tuple[LogRatio, _Band, tuple[_Point, ...]]] = field(default_factory=dict)
    wants: list[ToDecide] = field(default_factory=list)  # what would decide each noise point
    # Points outside the band at 95% but not family-wise: any one of them shown outside
    # family-wise refutes the claim, whatever its other points show (their detail, want)
    refuting: list[tuple[str, ToDecide]] = field(default_factory=list)
    # Points that hold only as a bound (a level disturbed in every repetition): the
    # confirmation says so, since the reader sees no other figure of theirs
    bounded: list[str] = field(default_factory=list)

    def add(
        self,
        verdict: _Verdict,
        detail: str,
        ratio: tuple[LogRatio, _Band] | None = None,
        points: Sequence[_Point] = (),
    ) -> None:
        """A point's verdict; `points`: the figures it reads, so that what would decide an
        undecided one names their levels."""
        if verdict is _Verdict.HOLDS:
            self.holds += 1
        elif verdict is _Verdict.FAILS:
            self.fails.append(detail)
            if ratio is not None:
                self.failing[detail] = (*ratio, tuple(points))
        else:
            reps, why = (
                repetitions_for(*ratio, self.confidence) if ratio is not None else (None, detail)
            )
            self.undecided(detail, to_decide(points, reps, why))

    def undecided(self, detail: str, want: ToDecide) -> None:
        self.noise.append(detail)
        self.wants.append(want)

    @property
    def total(self) -> int:
        return self.holds + len(self.fails) + len(self.noise) + len(self.missing)


def to_decide(points: Sequence[_Point], repetitions: int | None, why: str) -> ToDecide:
    """The levels an undecided point reads and the repetitions each needs in all: at least
    one more than the fewest they have (the estimate assumes the figure stays; the look after
    the next repetition asks again). A stack's standalone timings are those its plan makes
    (`repeat` x `script_timings`): more repetitions of the suite's levels add none, so they
    will not decide a point that reads one."""
    if not points:
        return ToDecide((), None, why)
    if any(p.level is None for p in points):
        return ToDecide((), None, f"{why} (a standalone timing, which is not repeated)")
    levels = tuple(dict.fromkeys(LevelKey(p.stack, p.workload, p.level or 0.0) for p in points))
    have = min(len(p.values) for p in points)
    return ToDecide(levels, None if repetitions is None else max(repetitions, have + 1), why)


@dataclass(frozen=True)
class _Context:
    run: _Run
    facts: Facts
    resamples: int
    seed: int
    # A ratio of two figures whose repetitions pair is read from the pairs (analysis.paired);
    # False: as independent sides (to show what pairing changes)
    paired: bool = True


def _conclude(
    claim: Claim, tally: _Tally, confirmed_why: str, at_least: int | None = None
) -> ClaimResult:
    """All points must hold (or `at_least` of them). Missing data makes a claim untestable,
    never refuted; it is confirmed with missing data only when that data cannot change it."""
    exp = expectation(claim.test)
    ours = tuple(tally.ours)

    def result(status: ClaimStatus, why: str) -> ClaimResult:
        return ClaimResult(claim, status, exp, ours, why)

    _family_wise(tally)
    needed = tally.total if at_least is None else min(at_least, tally.total)
    if tally.total == 0:
        return result(ClaimStatus.UNTESTABLE, "nothing in this run to compare")
    if tally.holds >= needed and (at_least is not None or not tally.missing):
        bound = tally.bounded
        said = f" ({len(bound)} point(s) read as a bound: {bound[0]})" if bound else ""
        return result(ClaimStatus.CONFIRMED, confirmed_why + said)
    if tally.missing:
        partial = f"; where measured: {tally.fails[0]}" if tally.fails else ""
        return result(ClaimStatus.UNTESTABLE, tally.missing[0] + partial)
    possible = tally.holds + len(tally.noise)
    if tally.fails and possible < needed:
        extra = f" ({len(tally.fails)} of {tally.total} points)" if tally.total > 1 else ""
        return result(ClaimStatus.REFUTED, tally.fails[0] + extra)
    # A point outside the band at 95% decides the claim by itself once it is shown outside
    # family-wise (refuted), or it must come back inside before anything confirms it: its
    # levels are what to repeat first, even where another point sits at the bound (which
    # would leave the claim unchased: config.todecide.claims_round).
    first, wants = (
        (tally.refuting[0][0], tuple(w for _, w in tally.refuting))
        if tally.refuting and at_least is None
        else (tally.noise[0], tuple(tally.wants))
    )
    return ClaimResult(
        claim, ClaimStatus.UNDECIDED, exp, ours, f"not enough evidence: {first}", wants
    )


def _family_wise(tally: _Tally) -> None:
    """A claim with m points is refuted by one of them only when that point's interval lies
    outside the band at 1 - alpha / m (Bonferroni over the claim's points): with 16 points,
    one 95% interval clearing a bound by chance is not rare. Confirming needs every point
    inside at 95% (an intersection-union test needs no adjustment); a point that fails only
    at 95% is not enough evidence."""
    m = tally.total
    if m <= 1 or not tally.failing:
        return
    level = 1.0 - (1.0 - tally.confidence) / m
    for detail, (ratio, band, points) in list(tally.failing.items()):
        low, high = interval_of(ratio, level)
        if band.judge(math.exp(ratio.d), low, high) is not _Verdict.FAILS:
            tally.fails.remove(detail)
            more = "more repetitions would decide it"
            said = (
                f"{detail}, but not at the {level:.2%} level that {m} points "
                f"of one claim need (family-wise): {more}"
            )
            want = to_decide(points, 0, more)
            tally.undecided(said, want)
            tally.refuting.append((said, want))
        del tally.failing[detail]


def _judge_ratio(
    tally: _Tally,
    band: _Band,
    nums: list[_Point],
    dens: list[_Point],
    what: str,
    ctx: _Context,
    record: bool = False,
) -> None:
    """A ratio of our figures (a ratio of ratios for ratio_change) against the claim's band,
    on the interval the verdicts procedure gives it."""
    nums, dens = _cancel(nums, dens)
    den = math.prod(p.value for p in dens)
    if den == 0:
        tally.missing.append(f"{what}: the denominator is zero")
        return
    sides = [p.evidence for p in (*nums, *dens)]
    if not sides:  # a figure against itself (a level that is the peak): exactly 1
        if record:
            tally.ours.append(Measured(what, 1.0, "×", 1.0, 1.0))
        verdict = band.judge(1.0, 1.0, 1.0)
        tally.add(verdict, f"{what} is 1.00× (the same level), {_band_text(band, verdict)}")
        return
    caveat = next((p.caveat for p in (*nums, *dens) if p.caveat), None)
    if any(e is None for e in sides):
        value = math.prod(p.value for p in nums) / den
        if caveat:
            # every side: the one without evidence needs a repetition more as well
            _set_aside(tally, f"{what} is {value:.2f}×", caveat, [*nums, *dens], every=True)
            return
        if record:
            tally.ours.append(Measured(what, value, "×"))
        tally.undecided(
            f"{what} is {value:.2f}×, but {NO_EVIDENCE}",
            to_decide([*nums, *dens], 0, "a repetition more gives it an interval"),
        )
        return
    ratio = (_paired(ctx.run, nums, dens) if ctx.paired else None) or log_ratio(
        [p.evidence for p in nums if p.evidence is not None],
        [p.evidence for p in dens if p.evidence is not None],
        ctx.run.spread,
    )
    value = math.exp(ratio.d)
    low, high = interval_of(ratio, tally.confidence)
    if record:
        tally.ours.append(Measured(what, value, "×", low, high))
    if caveat or any(p.loader_bound for p in (*nums, *dens)):
        _judge_bounded(tally, band, (ratio, low, high), caveat, nums, dens, what)
        return
    verdict = band.judge(value, low, high)
    detail = f"{what} is {_ratio_text(value, low, high)}, {_band_text(band, verdict)}"
    decide = repetitions_for(ratio, band, tally.confidence)[1] if verdict is _Verdict.NOISE else ""
    tally.add(verdict, detail + (f"; {decide}" if decide else ""), (ratio, band), [*nums, *dens])


# What a disturbance can only have done to a figure: other processes and the hypervisor take
# capacity, so a level's throughput is at most what it would have been (and a closed loop's
# time per request, its inverse, at least), never more: benchmarks/disturbed_effect.py found
# every flagged set of stored levels below its unflagged siblings (0.79-0.92x). A saturated
# loader does the same: the server answered all it was sent and had time to spare, so it
# could have answered at least as many. Other metrics (percentiles, CPU, failures) have no
# direction shown, and such a level decides nothing on them.
LOWERED_BY_DISTURBANCE = frozenset({"requests_per_s", "transfer"})
RAISED_BY_DISTURBANCE = frozenset({"time_per_request", "time_per_request_all"})

# Why a loader-bound figure that its bound cannot decide leaves the claim untestable here
LOADER_LIMIT = (
    "the loader, not the server, was saturated there, so the figure is the loader's limit "
    "(a floor on the server's throughput) and no repetition on this machine lifts it"
)


def _bounded_side(nums: Sequence[_Point], dens: Sequence[_Point]) -> str | None:
    """'at least' when every bounded point of num / den (disturbed in every repetition, or
    loader-bound) can only have pulled the ratio down (a bounded numerator's throughput),
    'at most' when up; None when they pull both ways or a metric has no known direction."""
    pulls = set()
    for points, sign in ((nums, 1), (dens, -1)):
        for p in points:
            if not (p.caveat or p.loader_bound):
                continue
            if p.metric in LOWERED_BY_DISTURBANCE:
                pulls.add(sign)
            elif p.metric in RAISED_BY_DISTURBANCE:
                pulls.add(-sign)
            else:
                return None
    if len(pulls) != 1:
        return None
    return "at least" if pulls == {1} else "at most"


def _judge_bounded(
    tally: _Tally,
    band: _Band,
    read: tuple[LogRatio, float, float],
    caveat: str | None,
    nums: Sequence[_Point],
    dens: Sequence[_Point],
    what: str,
) -> None:
    """A ratio resting on a level disturbed in every repetition or bound by the loader. Either
    can only have lowered that level's throughput, so the true ratio lies on one side of the
    measured one: at least its interval's low end (a bounded numerator) or at most its high
    end (a bounded denominator). That one-sided interval decides what it can (a ratio above
    a band even so, or one that clears a lower bound even so). What it cannot is set aside
    for a repetition that is not disturbed, as before; a loader-bound level alone leaves the
    claim untestable here, since every repetition on this placement is the loader's too."""
    ratio, low, high = read
    value = math.exp(ratio.d)
    shown = f"{what} is {_ratio_text(value, low, high)}"
    side = _bounded_side(nums, dens)
    at_least = side == "at least"
    verdict = (
        _Verdict.NOISE
        if side is None
        else band.judge(value, *((low, math.inf) if at_least else (0.0, high)))
    )
    bound_by_loader = [p.label for p in (*nums, *dens) if p.loader_bound]
    if verdict is _Verdict.NOISE:
        if caveat:
            _set_aside(tally, shown, caveat, [*nums, *dens])
        else:
            where = ", ".join(bound_by_loader)
            tally.missing.append(f"{shown}, but at {where} {LOADER_LIMIT}; {FASTER_LOADER}")
        return
    why = [caveat.removesuffix(NO_VERDICT)] if caveat else []
    if bound_by_loader:
        why.append(f"{', '.join(bound_by_loader)}: loader-bound")
    bound = low if at_least else high
    detail = (
        f"{shown}; {'; '.join(why)}, which can only have "
        f"slowed it, so the ratio is {side} {bound:.2f}×, {_band_text(band, verdict)}"
    )
    if verdict is _Verdict.HOLDS:
        tally.bounded.append(detail)
    tally.add(verdict, detail, (ratio, band), [*nums, *dens])


def _paired(run: _Run, nums: Sequence[_Point], dens: Sequence[_Point]) -> LogRatio | None:
    """One figure over another, both measured in the same repetitions (two levels of one
    fresh start, two stacks of one round, standalone timings taken in turns): the ratio of
    each repetition's pair, so the drift they share cancels (analysis.paired). None: they
    do not pair (a ratio of ratios, a level against a timing, fewer than MIN_PAIRS)."""
    if len(nums) != 1 or len(dens) != 1:
        return None
    a, b = nums[0], dens[0]
    if not a.pairs or not b.pairs or (a.level is None) != (b.level is None):
        return None
    ratio = paired_log_ratio(dict(a.pairs), dict(b.pairs))
    if ratio is None or a.metric != b.metric:
        return ratio
    kind = pair_kind((a.stack, a.workload, a.level), (b.stack, b.workload, b.level))
    prior = run.pair_priors(a.metric).get(kind) if kind is not None else None
    if prior is not None:  # the run's pairs of this kind: how much drift such pairs share
        return moderated_pairs(ratio, prior, scale=1.0)
    levels = run.throughput_prior if a.metric == "requests_per_s" else None
    return ratio if levels is None else moderated_pairs(ratio, levels)


def _set_aside(
    tally: _Tally, shown: str, caveat: str, points: Sequence[_Point], every: bool = False
) -> None:
    """A point resting on a level disturbed in every repetition: its figure is shown and
    nothing is decided on it. One more repetition of that level mends it if it is not
    disturbed, since a disturbed repetition is then left out (`_Run.leave_out_disturbed`):
    run --until-decided adds it (io-vs-cpu 2026-11-27: the hypervisor stole 6.8% of a core
    in go-nethttp's only repetition at 300 connections, and two claims rested on it).
    `every`: all the points' levels, not only the disturbed ones'."""
    disturbed = list(points) if every else [p for p in points if p.caveat] or list(points)
    mend = f"{caveat}: {REPLACED}"
    tally.undecided(f"{shown}, but {mend}", to_decide(disturbed, 0, mend))


# What mends a point on a level disturbed in every repetition, and what cannot
REPLACED = "a repetition that is not disturbed would replace it (run --until-decided adds one)"
QUIET_RUN = "only a run on a quiet machine mends it"


def _cancel(nums: list[_Point], dens: list[_Point]) -> tuple[list[_Point], list[_Point]]:
    """The same figure above and below the line divides out: a level against the peak it
    is, read once, is exactly 1 (two readings of one measurement are not independent)."""
    nums, dens = list(nums), list(dens)
    for p in list(nums):
        same = next((q for q in dens if _same_point(p, q)), None)
        if same is not None:
            nums.remove(p)
            dens.remove(same)
    return nums, dens


def _same_point(a: _Point, b: _Point) -> bool:
    return (a.stack, a.workload, a.metric, a.values) == (
        b.stack,
        b.workload,
        b.metric,
        b.values,
    ) and (a.where.removeprefix("peak ") == b.where.removeprefix("peak "))


def _measured(point: _Point, ctx: _Context) -> Measured:
    """Our figure with the interval of its evidence (the run-to-run spread included for a
    single repetition); without evidence, the median alone."""
    if point.evidence is None:
        return Measured(point.label, point.value, point.unit)
    low, high = interval_of(log_ratio([point.evidence], [], ctx.run.spread), ctx.run.confidence)
    return Measured(point.label, point.evidence.value, point.unit, low, high)
