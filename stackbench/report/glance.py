"""At a glance: per workload, each stack's throughput and p99 latency as a share of the best,
with a winner named only when the difference is significant. Pure functions of the analysis.

- Throughput: each stack's best valid level (highest median req/s over the levels that are
  valid, of a rankable case, with completed requests), its 95% CI and the level reached.
- p99 latency: at one common level, the highest level where every stack with a throughput
  figure has a valid measurement with a p99: latencies under different loads do not compare.
- "% of best": throughput / best throughput; for latency best p99 / this p99 (100% = best,
  lower = slower answers).
- Winner: the best stack against the runner-up over their repetitions, with
  analysis.significance: a Mann-Whitney test and the 95% bootstrap interval of the ratio of
  medians, which must lie beyond the noise threshold (2% for throughput, 5% for p99). All the
  comparisons of the summary (every workload, both figures) are one family: their p-values are
  Holm-adjusted together, so the summary as a whole names a false winner at most 5% of the
  time. Too few repetitions for any verdict is said, not hidden.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from stackbench.analysis import fmt, significance, stats
from stackbench.analysis.analysis import Analysis, CaseView, WorkloadView
from stackbench.analysis.significance import Difference
from stackbench.analysis.stats import Estimate, LevelAggregate, Verdict
from stackbench.store.store import LevelRow

LOADER_BOUND = "loader-bound"
RULE = ("A winner is named only when it is significant: Mann-Whitney p < 0.05 (Holm-adjusted "
        "over the summary) and the 95% CI of the ratio of medians beyond the noise threshold "
        "(2% req/s, 5% p99).")
LATENCY_KEY = "p99"


@dataclass(frozen=True)
class GlanceBar:
    stack: str
    estimate: Estimate
    level_value: float
    share_of_best: float          # 1.0 for the best stack
    samples: tuple[float, ...]    # one figure per repetition (what the comparison uses)
    flags: tuple[str, ...]
    # With one repetition: the per-second figures of its steady window (compared by batch
    # means, as the ranking in analysis does); empty when there is no steady window.
    window: tuple[float, ...] = ()


@dataclass(frozen=True)
class MetricGlance:
    metric: str                   # "throughput" | "p99"
    higher_is_better: bool
    where: str                    # which level the figures come from, for people
    bars: tuple[GlanceBar, ...]   # best first
    winner: str | None
    verdict: str                  # one sentence: who wins and by how much, or why nobody does
    comparison: Difference | None  # best vs runner-up (ratio > 1 means the best is better)


@dataclass(frozen=True)
class WorkloadGlance:
    label: str
    throughput: MetricGlance
    latency: MetricGlance
    not_ranked: tuple[tuple[str, str], ...]  # (stack, why it has no bar)


def _valid(c: CaseView, g: LevelAggregate) -> bool:
    return c.rankable and g.status == "ok" and stats.NO_COMPLETED not in g.flags


def _samples(c: CaseView, g: LevelAggregate, get: Callable[[LevelRow], float | None]
             ) -> tuple[float, ...]:
    return tuple(v for v in (get(r) for r in c.rows_at(g.level_index)) if v is not None)


def _window(c: CaseView, g: LevelAggregate, metric: str) -> tuple[float, ...]:
    """The steady window's per-second figures when the level has exactly one repetition."""
    steady = c.steady_at(g.level_index)
    if steady is None or len(steady.repetitions) != 1 or not steady.steady:
        return ()
    rep = steady.repetitions[0]
    if metric == "throughput":
        return rep.window_throughput
    return rep.window_latency_us.get(metric, ())


def _p99(row: LevelRow) -> float | None:
    return stats.measured_latency(row).get(LATENCY_KEY)


def _throughput_bars(w: WorkloadView) -> list[GlanceBar]:
    bars = []
    for c in w.cases:
        valid = [g for g in c.aggregates if _valid(c, g)]
        if not valid:
            continue
        top = max(valid, key=lambda g: g.throughput.value)
        bars.append(GlanceBar(c.stack, top.throughput, top.level_value, 0.0,
                              _samples(c, top, lambda r: r.requests_per_s), top.flags,
                              _window(c, top, "throughput")))
    bars.sort(key=lambda b: -b.estimate.value)  # stable: ties keep the run's stack order
    best = bars[0].estimate.value if bars else 0.0
    return [_with_share(b, b.estimate.value / best if best > 0 else 0.0) for b in bars]


def _with_share(bar: GlanceBar, share: float) -> GlanceBar:
    return GlanceBar(bar.stack, bar.estimate, bar.level_value, share, bar.samples, bar.flags,
                     bar.window)


def common_level(w: WorkloadView, stacks: Sequence[str]) -> float | None:
    """The highest level where each of `stacks` has a valid measurement with a p99."""
    cases = [c for c in w.cases if c.stack in stacks]
    for value in sorted(w.level_values, reverse=True):
        aggs = [(c, c.aggregate_at(value)) for c in cases]
        if cases and all(g is not None and _valid(c, g) and LATENCY_KEY in g.latency_us
                         for c, g in aggs):
            return value
    return None


def _latency_bars(w: WorkloadView, stacks: Sequence[str], level: float) -> list[GlanceBar]:
    bars = []
    for c in w.cases:
        g = c.aggregate_at(level)
        if c.stack not in stacks or g is None:
            continue
        bars.append(GlanceBar(c.stack, g.latency_us[LATENCY_KEY], level, 0.0,
                              _samples(c, g, _p99), g.flags, _window(c, g, LATENCY_KEY)))
    bars.sort(key=lambda b: b.estimate.value)
    best = bars[0].estimate.value if bars else 0.0
    return [_with_share(b, best / b.estimate.value if b.estimate.value > 0 else 1.0)
            for b in bars]


def compare(bars: Sequence[GlanceBar], higher_is_better: bool) -> Difference | None:
    """Best against runner-up (bars sorted best first), None with fewer than two bars. The
    ratio is always "how much better the best is": req/s best / runner-up, latency runner-up /
    best; so a ratio above 1 beyond the threshold, with a small p-value, names the best."""
    if len(bars) < 2:
        return None
    best, second = bars[0], bars[1]
    numerator, denominator = (best, second) if higher_is_better else (second, best)
    threshold = (significance.THROUGHPUT_THRESHOLD if higher_is_better
                 else significance.PERCENTILE_THRESHOLD)
    if (min(len(numerator.samples), len(denominator.samples)) < 2
            and numerator.window and denominator.window):
        # One repetition each: the seconds of the steady windows, by batch means. For
        # latency the ratio stays "runner-up / best", so a higher ratio still favours the best.
        return significance.compare_series(numerator.window, denominator.window,
                                           threshold=threshold)
    return significance.compare_samples(numerator.samples, denominator.samples,
                                        threshold=threshold)


def _evidence(d: Difference) -> str:
    """' (95% CI 1.95×–2.05×, p=0.0079, n=5+5)', or '' when nothing was tested."""
    parts = []
    if d.low is not None and d.high is not None:
        parts.append(f"95% CI {fmt.ratio(d.low)}–{fmt.ratio(d.high)}")
    if d.p_value is not None:
        parts.append(f"p={significance.format_p(d.p_value)}")
    return f" ({', '.join([*parts, f'n={d.n_a}+{d.n_b}'])})" if parts else ""


def decide(bars: Sequence[GlanceBar], higher_is_better: bool, what: str,
           d: Difference | None) -> tuple[str | None, str]:
    """(winner, one sentence) from the bars (best first) and their judged comparison.
    `what` names the figure ('req/s', 'p99')."""
    if not bars:
        return None, "no valid level to compare"
    if len(bars) == 1 or d is None:
        return None, f"only {bars[0].stack} has a valid figure: nothing to compare"
    best, second = bars[0], bars[1]
    caveat = "".join(f"; {b.stack} was loader-bound: its figure is a lower bound"
                     for b in (best, second) if LOADER_BOUND in b.flags)
    if d.ratio is None:
        zero = second if higher_is_better else best
        return None, f"no winner named: {zero.stack}'s median {what} is 0" + caveat
    ratio = fmt.ratio(d.ratio)
    if d.verdict is Verdict.FASTER:
        if higher_is_better:  # 'go wins: 1.98× node's req/s (95% CI ..., p=0.02, n=5+5)'
            text = f"{best.stack} wins: {ratio} {second.stack}'s {what}"
        else:  # 'go wins: node's p99 is 2.02× go's (...)'
            text = f"{best.stack} wins: {second.stack}'s {what} is {ratio} {best.stack}'s"
        return best.stack, text + _evidence(d) + caveat
    if d.note:  # too few repetitions (or batches) for any verdict: say so
        return None, (f"no winner named: {best.stack} leads by {ratio}, but {d.note}"
                      + _evidence(d) + caveat)
    if d.verdict is Verdict.NO_SIGNIFICANT_DIFFERENCE:
        why = (f"not significant (p={significance.format_p(d.p_value)})"
               if d.p_value is not None and d.p_value > d.alpha
               else f"inside the ±{d.threshold:.0%} noise threshold")
        return None, (f"no winner: {best.stack} leads {second.stack} by {ratio}, {why}"
                      + _evidence(d) + caveat)
    return None, (f"no winner named: inconclusive comparison of {best.stack} and "
                  f"{second.stack} ({ratio}){_evidence(d)}" + caveat)


def _level_name(a: Analysis, value: float) -> str:
    if a.level_kind == "rate":
        return f"{fmt.rate(value)} req/s offered"
    return f"{fmt.level(value)} connection{'' if value == 1 else 's'}"


def _not_ranked(w: WorkloadView, with_bars: Sequence[str]) -> list[tuple[str, str]]:
    out = []
    for c in w.cases:
        if c.stack in with_bars:
            continue
        if not c.rankable:
            why = ("failed verification" if c.verification_failures
                   else f"case {c.case.status}")
        else:
            why = "no valid level"
        out.append((c.stack, why))
    for c in w.not_measured:
        reason = c.case.reason or "; ".join(c.verification_failures) or "no levels measured"
        out.append((c.stack, f"{c.case.status}: {reason}"))
    return out


@dataclass(frozen=True)
class _Bars:
    label: str
    throughput: list[GlanceBar]
    latency: list[GlanceBar]
    latency_where: str | None   # None: no common level
    not_ranked: list[tuple[str, str]]


def _bars(a: Analysis, w: WorkloadView) -> _Bars:
    thr = _throughput_bars(w)
    stacks = [b.stack for b in thr]
    level = common_level(w, stacks)
    lat = [] if level is None else _latency_bars(w, stacks, level)
    where = None if level is None else f"at {_level_name(a, level)}"
    return _Bars(w.label, thr, lat, where, _not_ranked(w, stacks))


def _metric(bars: list[GlanceBar], higher_is_better: bool, where: str, what: str,
            d: Difference | None) -> MetricGlance:
    winner, verdict = decide(bars, higher_is_better, what, d)
    return MetricGlance("throughput" if higher_is_better else LATENCY_KEY, higher_is_better,
                        where, tuple(bars), winner, verdict, d)


def glance(a: Analysis) -> list[WorkloadGlance]:
    """Every workload's summary; the comparisons of all of them judged as one family."""
    found = [_bars(a, w) for w in a.workloads]
    raw = [(compare(b.throughput, True), compare(b.latency, False)) for b in found]
    tested = [d for pair in raw for d in pair if d is not None]
    judged = iter(significance.judge_together(tested))
    out = []
    for b, (thr_d, lat_d) in zip(found, raw, strict=True):
        thr = _metric(b.throughput, True, "best valid level of each stack", "req/s",
                      next(judged) if thr_d is not None else None)
        lat_judged = next(judged) if lat_d is not None else None
        if b.latency_where is None:
            lat = MetricGlance(LATENCY_KEY, False, "no common level", (), None,
                               "no level where every stack has a valid p99: see the tables"
                               if b.throughput else "no valid level to compare", None)
        else:
            lat = _metric(b.latency, False, b.latency_where, LATENCY_KEY, lat_judged)
        out.append(WorkloadGlance(b.label, thr, lat, tuple(b.not_ranked)))
    return out
