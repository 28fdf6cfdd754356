"""The judgment of each test kind (order, ratio and ratio_change, threshold, shape, scatter,
breakpoint): the points it reads and how it tallies them.
"""

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

# scipy and ruptures are imported in the functions that use them: together 0.7 s of CPU at
# start-up, which every command that analyses nothing (stacks, doctor, --version) would pay.
from stackbench.analysis import stats
from stackbench.analysis.claims.bands import _Band, _ratio_band, _Verdict
from stackbench.analysis.claims.censored import Stall, judge_stalled, stall_of
from stackbench.analysis.claims.decisions import (
    LOADER_LIMIT,
    QUIET_RUN,
    _conclude,
    _Context,
    _judge_ratio,
    _measured,
    _set_aside,
    _Tally,
    to_decide,
)
from stackbench.analysis.claims.facts import Facts, _between, _levels_of
from stackbench.analysis.claims.reading import (
    FAILURE_METRICS,
    _as_figure,
    _get,
    _Missing,
    _Point,
    _Run,
    change_label,
    disturbed_reason,
    level_metric,
    level_problem,
    pair_label,
)
from stackbench.analysis.claims.results import ClaimResult, Measured
from stackbench.analysis.claims.wording import (
    NO_EVIDENCE,
    _band_text,
    _fmt,
    _ratio_text,
    _to_decide,
    _value_band_text,
    _value_text,
    expectation,
)
from stackbench.analysis.verdicts import CONFIDENCE, FASTER_LOADER, clopper_pearson, log_ratio
from stackbench.config.claims import (
    SCRIPT_METRICS,
    BreakpointTest,
    Claim,
    Condition,
    OrderTest,
    RatioChangeTest,
    RatioTest,
    ScatterTest,
    ShapeTest,
    Side,
    ThresholdTest,
    metric_unit,
    order_groups,
)
from stackbench.config.plan import LevelKey
from stackbench.config.todecide import ToDecide
from stackbench.store.store import CaseRow, LevelRow


def _evaluate_test(claim: Claim, ctx: _Context) -> ClaimResult:
    test = claim.test
    if isinstance(test, OrderTest):
        return _order(claim, test, ctx)
    if isinstance(test, RatioTest | RatioChangeTest):
        return _ratio(claim, test, ctx)
    if isinstance(test, ThresholdTest):
        return _threshold(claim, test, ctx)
    if isinstance(test, ShapeTest):
        return _shape(claim, test, ctx)
    if isinstance(test, ScatterTest):
        return _scatter(claim, test, ctx)
    return _breakpoint(claim, test, ctx)


def _order(claim: Claim, test: OrderTest, ctx: _Context) -> ClaimResult:
    tally = _Tally(ctx.run.confidence)
    band = _Band(test.min_ratio, math.inf)
    groups = order_groups(test)
    for workload in test.workloads or ():
        for level in _levels_of(test.levels, workload, ctx.facts):
            points: dict[str, _Point | Stall] = {}
            for stack in (s for g in groups for s in g):
                point = _get(ctx.run, stack, workload, level, test.metric)
                if isinstance(point, _Missing):
                    stall = stall_of(ctx.run, stack, workload, level, test.metric)
                    if stall is None:
                        tally.missing.append(point.reason)
                        continue
                    points[stack] = stall
                    tally.ours.append(stall.measured())
                    continue
                points[stack] = point
                tally.ours.append(_measured(point, ctx))
            for upper, lower in zip(groups, groups[1:], strict=False):
                for a in upper:
                    for b in lower:
                        if a in points and b in points:
                            _judge_pair(tally, band, points[a], points[b], ctx)
    return _conclude(claim, tally, f"every pair is in the stated order ({expectation(test)})")


def _judge_pair(
    tally: _Tally, band: _Band, a: _Point | Stall, b: _Point | Stall, ctx: _Context
) -> None:
    if isinstance(a, _Point) and isinstance(b, _Point):
        _judge_ratio(tally, band, [a], [b], pair_label(a, b), ctx, record=True)
    else:
        judge_stalled(tally, band, a, b, ctx)


_Position = tuple[Side, Condition | None]


def _positions(test: RatioTest | RatioChangeTest) -> list[_Position]:
    """Numerators first: (num, after), (den, before) / (den, after), (num, before)."""
    if isinstance(test, RatioTest):
        return [(test.numerator, None), (test.denominator, None)]
    return [
        (test.numerator, test.after),
        (test.denominator, test.before),
        (test.denominator, test.after),
        (test.numerator, test.before),
    ]


def _resolve(
    position: _Position,
    test: RatioTest | RatioChangeTest,
    workload: str | None,
    level: float | None,
) -> tuple[str, str, float | str | None, str]:
    """(stack, workload, level or 'peak', metric) of one position at one iteration."""
    side, cond = position
    w = side.workload or (cond.workload if cond else None) or workload
    lv: float | str | None = (
        side.level
        if side.level is not None
        else (cond.level if cond and cond.level is not None else level)
    )
    assert w is not None  # the parser requires workloads unless every side names one
    return side.stack, w, lv, side.metric or test.metric


def _combos(
    test: RatioTest | RatioChangeTest, facts: Facts
) -> list[tuple[str | None, float | None]]:
    """The (workload, level) iterations: the test's lists, or every level the workloads the
    positions read have in common."""
    out: list[tuple[str | None, float | None]] = []
    for w in test.workloads or (None,):
        resolved = [_resolve(p, test, w, None) for p in _positions(test)]
        if all(r[2] is not None for r in resolved) or test.metric in SCRIPT_METRICS:
            out.append((w, None))
            continue
        if isinstance(test.levels, tuple):
            levels: Sequence[float] = test.levels
        else:
            read = {r[1] for r in resolved if r[2] is None}
            common = [set(facts.workload_levels.get(x, ())) for x in read]
            levels = sorted(set.intersection(*common)) if common else []
        out += [(w, lv) for lv in levels]
    return out


def _ratio(claim: Claim, test: RatioTest | RatioChangeTest, ctx: _Context) -> ClaimResult:
    tally = _Tally(ctx.run.confidence)
    band = _ratio_band(test.expect, test.threshold, test.article, test.tolerance, test.upper)
    for w, lv in _combos(test, ctx.facts):
        points: list[_Point] = []
        for position in _positions(test):
            stack, workload, level, metric = _resolve(position, test, w, lv)
            point = _position_point(ctx.run, stack, workload, level, metric)
            if isinstance(point, _Missing):
                tally.missing.append(point.reason)
                break
            points.append(point)
        else:
            half = len(points) // 2
            label = (
                pair_label(points[0], points[1])
                if isinstance(test, RatioTest)
                else change_label(points[0], points[3], points[2])
            )
            _judge_ratio(tally, band, points[:half], points[half:], label, ctx, record=True)
    return _conclude(
        claim,
        tally,
        f"ours is {_ours_ratio_text(tally)}, {_band_text(band, _Verdict.HOLDS)} as the claim needs",
    )


def _position_point(
    run: _Run, stack: str, workload: str, level: float | str | None, metric: str
) -> _Point | _Missing:
    if metric in SCRIPT_METRICS:
        return run.script(stack, workload, metric)
    if level == "peak":
        peak = run.peak(stack, workload, metric)
        if isinstance(peak, _Missing):
            return peak
        at, point = peak
        return dataclasses.replace(point, where=f"peak {point.where}")
    if level is None:
        return _Missing(f"{stack} {workload}: no level to read")
    return run.point(stack, workload, float(level), metric)


def _ours_ratio_text(tally: _Tally) -> str:
    values = [m.value for m in tally.ours if m.value is not None]
    if not values:
        return "–"
    lo, hi = min(values), max(values)
    return f"{lo:.2f}×" if math.isclose(lo, hi) else f"{lo:.2f}–{hi:.2f}×"


def _threshold(claim: Claim, test: ThresholdTest, ctx: _Context) -> ClaimResult:
    tally = _Tally(ctx.run.confidence)
    band = _Band(
        -math.inf if test.min is None else test.min, math.inf if test.max is None else test.max
    )
    unit = metric_unit(test.metric)
    for stack in test.stacks:
        for workload in test.workloads:
            for level in _levels_of(test.levels, workload, ctx.facts):
                point = _get(ctx.run, stack, workload, level, test.metric)
                if isinstance(point, _Missing):
                    tally.missing.append(point.reason)
                    continue
                m = _measured(point, ctx)
                if test.metric == "error_rate" and level is not None:
                    m = _rate_measured(
                        point, ctx.run.failures(stack, workload, level), ctx.run.confidence
                    )
                tally.ours.append(m)
                assert m.value is not None
                text = f"{point.label} is {_value_text(m.value, unit, m.low, m.high)}"
                exact = test.metric in FAILURE_METRICS  # counted, not sampled: as counted
                if point.caveat:  # a disturbed level: shown, nothing decided on it
                    _set_aside(tally, text, point.caveat, [point])
                    continue
                if m.low is None and not exact:
                    tally.undecided(
                        f"{text}, but {NO_EVIDENCE}",
                        to_decide([point], 0, "a repetition more gives it an interval"),
                    )
                    continue
                verdict = band.judge(m.value, m.low, m.high)
                decide = ""
                figure = (
                    None
                    if point.evidence is None or test.metric in FAILURE_METRICS
                    else log_ratio([point.evidence], [], ctx.run.spread)
                )
                if verdict is _Verdict.NOISE and figure is not None:
                    decide = "; " + _to_decide(figure, band, ctx.run.confidence)
                tally.add(
                    verdict,
                    f"{text}, {_value_band_text(band, unit, verdict)}{decide}",
                    None if figure is None else (figure, band),
                    [point],
                )
    count = f"{test.at_least} of {tally.total} points" if test.at_least else "every point"
    return _conclude(
        claim,
        tally,
        f"{count} {_value_band_text(band, unit, _Verdict.HOLDS)}",
        at_least=test.at_least,
    )


def _rate_measured(point: _Point, counts: tuple[int, int], confidence: float) -> Measured:
    """A failure rate over the level's repetitions with its exact binomial interval: the
    failures are counted, so their uncertainty is the binomial's, not a run-to-run spread."""
    failed, attempts = counts
    if attempts <= 0:
        return Measured(point.label, point.value, point.unit)
    low, high = clopper_pearson(failed, attempts, confidence)
    return Measured(point.label, failed / attempts, point.unit, low, high)


def _shape(claim: Claim, test: ShapeTest, ctx: _Context) -> ClaimResult:
    """Judged on medians (no interval): the spread is largest / smallest over the span's
    levels, of the median itself (flat) or of the median per connection (proportional)."""
    tally = _Tally(ctx.run.confidence)
    limit = 1.0 + test.tolerance
    per_level = test.expect == "proportional"
    for stack in test.stacks:
        for workload in test.workloads:
            levels = _between(
                ctx.facts.workload_levels.get(workload, ()), test.from_level, test.to_level
            )
            figures: list[tuple[Measured, _Point]] = []
            for level in levels:
                point = ctx.run.point(stack, workload, level, test.metric)
                if isinstance(point, _Missing):
                    tally.missing.append(point.reason)
                    break
                if per_level:
                    point = dataclasses.replace(
                        point,
                        values=tuple(v / level for v in point.values),
                        pairs=tuple((k, v / level) for k, v in point.pairs),
                        evidence=None
                        if point.evidence is None
                        else _as_figure(point.evidence, point.evidence.value / level),
                    )
                shown = _measured(point, ctx)
                figures.append(
                    (
                        dataclasses.replace(
                            shown, label=point.label + (" per connection" if per_level else "")
                        ),
                        point,
                    )
                )
            else:
                what = f"{stack} {workload} {test.from_level:,.0f}–{test.to_level:,.0f}"
                if any(p.value <= 0 for _, p in figures):
                    tally.missing.append(f"{what}: a zero figure, no spread")
                    continue
                # The two extremes show the spread; every level is in the report's tables.
                ranked = sorted(figures, key=lambda f: f[1].value)
                tally.ours += [ranked[0][0], ranked[-1][0]]
                _judge_ratio(
                    tally,
                    _Band(0.0, limit),
                    [ranked[-1][1]],
                    [ranked[0][1]],
                    f"{what} spread (largest / smallest)",
                    ctx,
                    record=True,
                )
    return _conclude(claim, tally, f"{expectation(test)}: every spread is at most {limit:.2f}×")


def scatter(points: Sequence[tuple[float, float]], span: tuple[float, float]) -> float | None:
    """Root-mean-square of (median - trend) / trend over the levels in `span`, the trend being
    a LOWESS line through every level of the sweep. None with fewer than three levels in the
    span or a trend at or below zero."""
    trend = dict(stats.lowess(points))
    inside = [(x, y) for x, y in points if span[0] <= x <= span[1]]
    if len(inside) < 3 or any(trend[x] <= 0 for x, _ in inside):
        return None
    return math.sqrt(math.fsum(((y - trend[x]) / trend[x]) ** 2 for x, y in inside) / len(inside))


def jitter_ratio_interval(
    ratio: float, n_num: int, n_den: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """The interval of a ratio of two jitters (root-mean-square deviations from a trend over
    n_num and n_den levels): the squared ratio is a ratio of mean squares, F-distributed with
    n - 2 degrees of freedom a side (the trend takes about two), so the true ratio lies in
    ratio / sqrt(F quantiles) with the given confidence."""
    from scipy import stats as scipy_stats

    d1, d2 = max(1, n_num - 2), max(1, n_den - 2)
    tail = (1.0 - confidence) / 2.0
    upper_f = float(scipy_stats.f.ppf(1.0 - tail, d1, d2))
    lower_f = float(scipy_stats.f.ppf(tail, d1, d2))
    return ratio / math.sqrt(upper_f), ratio / math.sqrt(lower_f)


def _scatter(claim: Claim, test: ScatterTest, ctx: _Context) -> ClaimResult:
    tally = _Tally(ctx.run.confidence)
    values: list[float] = []
    counts: list[int] = []
    for span in (test.numerator, test.denominator):
        what = f"{span.stack} {test.workload} {span.from_level:,.0f}–{span.to_level:,.0f}"
        # Each level over the plan's own repetitions, which every level has: the ones run
        # --until-decided adds at a few levels are fresh server starts, whose start-to-start
        # spread the levels of one sweep do not carry (php-apache at 10,000 connections:
        # about 6% between 12 starts, against 4.5% between the levels of its sweep past
        # 4,500), so their median would move those levels alone and make a span's jitter
        # depend on which levels the rounds chose.
        read = _curve(ctx.run, span.stack, test.workload, test.metric, plan_only=True)
        if isinstance(read, _Missing):
            tally.missing.append(read.reason)
            continue
        curve = [(x, p.value) for x, p in read]
        s = scatter(curve, (span.from_level, span.to_level))
        caveat = next(
            (p.caveat for x, p in read if p.caveat and span.from_level <= x <= span.to_level),
            None,
        )
        if s is None:
            tally.missing.append(f"{what}: fewer than three levels or no trend to compare with")
            continue
        tally.ours.append(Measured(f"{what} jitter", 100.0 * s, "%"))
        bound = [
            p.label for x, p in read if p.loader_bound and span.from_level <= x <= span.to_level
        ]
        if bound:  # the loader's limit set the span's figures: its scatter is the loader's
            tally.missing.append(
                f"{what} jitter is {100.0 * s:.3g}%, but at {', '.join(bound[:3])}"
                f"{' …' if len(bound) > 3 else ''} {LOADER_LIMIT}; {FASTER_LOADER}"
            )
            continue
        if caveat:  # a disturbed level's median moves the trend's residuals: nothing decided
            # (the spans read the plan's own repetitions: an added one would not replace it)
            mend = f"{caveat}: {QUIET_RUN}"
            tally.undecided(
                f"{what} jitter is {100.0 * s:.3g}%, but {mend}", to_decide([], None, mend)
            )
            continue
        values.append(s)
        counts.append(sum(span.from_level <= x <= span.to_level for x, _ in curve))
    if len(values) == 2:
        band = _Band(test.threshold, math.inf)
        if values[1] == 0:
            tally.missing.append("the second span has no jitter at all: no ratio")
        else:
            ratio = values[0] / values[1]
            low, high = jitter_ratio_interval(ratio, counts[0], counts[1], ctx.run.confidence)
            tally.ours.append(Measured("jitter ratio", ratio, "×", low, high))
            verdict = band.judge(ratio, low, high)
            detail = f"the jitter ratio is {_ratio_text(ratio, low, high)}, "
            detail += _band_text(band, verdict)
            if verdict is _Verdict.NOISE:
                detail += (
                    "; more levels in each span (a finer sweep) would narrow it: the "
                    "interval rests on the number of levels, not on repetitions"
                )
            tally.add(verdict, detail)
    ratios = [m for m in tally.ours if m.unit == "×"]
    shown = (
        _ratio_text(ratios[0].value, ratios[0].low, ratios[0].high)
        if ratios and ratios[0].value is not None
        else "–"
    )
    return _conclude(claim, tally, f"the jitter ratio is {shown}, at least {test.threshold:.2f}×")


def _curve(
    run: _Run, stack: str, workload: str, metric: str, plan_only: bool = False
) -> list[tuple[float, _Point]] | _Missing:
    """Every level of a case with its figure, in order (`plan_only`: _Run.point's)."""
    case = run.case(stack, workload)
    if isinstance(case, _Missing):
        return case
    curve = []
    for level in run.level_values(case):
        point = run.point(stack, workload, level, metric, plan_only)
        if isinstance(point, _Missing):
            stall = stall_of(run, stack, workload, level, metric, plan_only)
            if stall is not None:  # only a bound: no curve through it, no trend around it
                return _Missing(f"{stall.words}; a curve through the levels has no figure there")
            return point
        curve.append((level, point))
    return curve


@dataclass(frozen=True)
class _Break:
    crossing: stats.Crossing  # where the crossing holds: in (low, high]
    why: str  # what fails at the held crossing's first level ('' when none held)
    repeated: bool = False  # that level's repetitions all failed (else: so did the next level)
    # A level the placement rests on was disturbed: why no verdict rests on it, and where
    caveat: str | None = None
    disturbed: tuple[LevelKey, ...] = ()

    def at(self, name: str) -> str:
        """'apache first fails at 8,500 (p99 ...) and at the next level, above 8,000'."""
        c = self.crossing
        if c.held:
            below = f", above {c.low:,.0f}" if c.low > 0 else ", from the first level"
            how = "in every repetition" if self.repeated else "and at the next level"
            text = f"{name} first fails at {c.high:,.0f} ({self.why}) {how}{below}"
        elif c.unconfirmed is not None:
            text = (
                f"{name} fails only at {c.unconfirmed:,.0f}, the sweep's last level, "
                "not in every repetition or not repeated: a crossing not yet held (repetitions "
                "of that level would decide it)"
            )
        else:
            text = f"{name} holds up to {c.reached:,.0f}"
        blips = [b for b in c.blips if b != c.unconfirmed]
        if blips:
            shown = ", ".join(f"{b:,.0f}" for b in blips[:3])
            text += f" (crossed alone, not held, at {shown})"
        return text


def _breakpoint(claim: Claim, test: BreakpointTest, ctx: _Context) -> ClaimResult:
    tally = _Tally(ctx.run.confidence)
    mine = _first_break(ctx.run, test.stack, test.workload, test)
    other = _first_break(ctx.run, test.other, test.workload, test) if test.other else None
    for found in (mine, other):
        if isinstance(found, _Missing):
            tally.missing.append(found.reason)
    if isinstance(mine, _Missing) or isinstance(other, _Missing):
        return _conclude(claim, tally, "")
    for name, found in ((test.stack, mine), (test.other, other)):
        if name is not None and found is not None:
            # The breakpoint's interval: above the last level that held, at or below the
            # first level of the crossing that holds (none held: no figure, "none").
            c = found.crossing
            first = c.high if c.held else None
            low = (c.low or None) if c.held else None
            tally.ours.append(
                Measured(f"{name} first failing level", first, "connections", low, first)
            )
    verdict, detail = _judge_break(test, mine, other)
    caveat = next((b.caveat for b in (mine, other) if b is not None and b.caveat), None)
    if verdict is None:
        tally.missing.append(detail)
    elif caveat:  # placed on a disturbed level: shown, nothing decided on it, not chased
        where = tuple(k for b in (mine, other) if b is not None for k in b.disturbed)
        mend = f"{caveat}: {QUIET_RUN}"
        tally.undecided(f"{detail}, but {mend}", ToDecide(where, None, mend))
    else:
        tally.add(verdict, detail)
    return _conclude(claim, tally, detail)


def _first_break(run: _Run, stack: str, workload: str, test: BreakpointTest) -> _Break | _Missing:
    case = run.case(stack, workload)
    if isinstance(case, _Missing):
        return case
    judged: list[tuple[float, list[bool]]] = []
    reasons: dict[float, str] = {}
    read: dict[float, list[LevelRow]] = {}
    for level in run.level_values(case):
        label = f"{stack} {workload} @{level:,.0f}"
        rows = read[level] = run.leave_out_disturbed(label, run.rows_at(case, level))
        problem = level_problem(rows, failures_are_data=True)
        if problem:
            return _Missing(f"{label}: {problem}; the breakpoint cannot be placed")
        judged.append((level, [bool(_level_breaks([row], test)) for row in rows]))
        reasons[level] = _level_breaks(rows, test)
    crossing = stats.held_crossing(judged)
    if not crossing.held:
        return _disturbed_break(case, _Break(crossing, ""), read)
    repeated = len(read[crossing.high]) >= 2
    levels = sorted(lv for lv, _ in judged)
    at = levels.index(crossing.high)
    # from the last level that held (blips between) to the first that failed, and the next
    # one when it confirmed the crossing
    start = levels.index(crossing.low) if crossing.low in levels else 0
    rests_on = levels[start : at + (1 if repeated else 2)]
    found = _Break(crossing, reasons[crossing.high], repeated)
    return _disturbed_break(case, found, {lv: read[lv] for lv in rests_on})


def _disturbed_break(case: CaseRow, found: _Break, rests_on: dict[float, list[LevelRow]]) -> _Break:
    """The break with the disturbed levels its placement rests on (a crossing: the levels
    around it; none: every level, each of which held), by the comparisons' rule: a level is
    disturbed when every repetition it is read from is (the others were left out)."""
    where = f"{case.stack} {case.label}"
    hits = [
        (lv, why)
        for lv, rows in rests_on.items()
        if (why := disturbed_reason(f"{where} @{lv:,.0f}", rows))
    ]
    if not hits:
        return found
    keys = tuple(LevelKey(case.stack, case.label, lv) for lv, _ in hits)
    return dataclasses.replace(found, caveat=hits[0][1], disturbed=keys)


def _level_breaks(rows: Sequence[LevelRow], test: BreakpointTest) -> str:
    """Why this level breaks the objective ('' when it holds), judged on medians."""
    errors = stats.median([stats.level_error_rate(r) for r in rows])
    if test.max_error_rate is not None and errors > test.max_error_rate:
        return f"error rate {errors:.1%} > {test.max_error_rate:.1%}"
    values = [level_metric(r, test.metric) for r in rows]
    numbers = [v for v in values if not isinstance(v, str)]
    if not numbers:
        return f"nothing answered ({values[0]})"
    value = stats.median(numbers)
    if value > test.above:
        unit = metric_unit(test.metric)
        return f"{test.metric} {_fmt(value, unit)} > {_fmt(test.above, unit)}"
    return ""


def _judge_break(
    test: BreakpointTest, mine: _Break, other: _Break | None
) -> tuple[_Verdict | None, str]:
    """Judged on the breakpoint's interval (low, high]: a claim holds or fails only when the
    whole interval says so; an interval across the claim's bound, or a crossing not yet held,
    is not enough evidence (NOISE); a sweep that ends short of the claim is no data (None)."""
    name, c = test.stack, mine.crossing
    at = mine.at(name)
    if test.expect == "within":
        assert test.range is not None
        lo, hi = test.range
        want = f"between {lo:,.0f} and {hi:,.0f}"
        if c.low >= lo and c.high <= hi:
            return _Verdict.HOLDS, f"{at}, {want}"
        if c.high < lo or c.low >= hi:
            return _Verdict.FAILS, f"{at}, not {want}"
        if not c.held and c.unconfirmed is None:
            return None, f"{at}, where the sweep ends; the claim places it {want}"
        return _Verdict.NOISE, f"{at}: that reaches across {want}; levels inside it would decide"
    if test.expect == "none":
        assert test.up_to is not None
        if c.high <= test.up_to:
            return _Verdict.FAILS, f"{at}, below {test.up_to:,.0f}"
        if c.low >= test.up_to:
            return _Verdict.HOLDS, f"{at}: at every level up to {test.up_to:,.0f}"
        if c.unconfirmed is not None:
            return _Verdict.NOISE, f"{at}; the claim is about {test.up_to:,.0f}"
        return None, f"{at}, where the sweep ends; the claim is about {test.up_to:,.0f}"
    assert other is not None and test.other is not None
    o = other.crossing
    if not c.held and not o.held:
        return None, (
            f"neither {name} nor {test.other} fails and stays failed within the sweep "
            f"(up to {max(c.reached, o.reached):,.0f})"
        )
    if c.high <= o.low:
        return _Verdict.HOLDS, f"{at}; {other.at(test.other)}"
    if o.high <= c.low:
        return _Verdict.FAILS, f"{other.at(test.other)}; {at}"
    return _Verdict.NOISE, f"{at}; {other.at(test.other)}: the two intervals overlap"
