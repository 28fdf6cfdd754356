"""At a glance: per workload, each stack's throughput and p99 latency as a share of the best,
with a winner named only when the difference is significant. Pure functions of the analysis.

- Throughput: each stack's best valid level (highest median req/s over the levels that are
  valid, of a rankable case, with completed requests), its 95% CI and the level reached.
- p99 latency: at one common level, the highest level where every stack with a throughput
  figure has a valid measurement with a p99: latencies under different loads do not compare.
- "% of best": throughput / best throughput; for latency best p99 / this p99 (100% = best,
  lower = slower answers).
- Winner: the best stack against the runner-up with `stats.compare_medians` over their
  repetitions: named only when the 95% bootstrap CI of the ratio of medians excludes 1. One
  repetition gives no interval, so no winner is named then.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from stackbench.analysis import fmt, stats
from stackbench.analysis.analysis import Analysis, CaseView, WorkloadView
from stackbench.analysis.stats import Comparison, Estimate, LevelAggregate, Verdict
from stackbench.store.store import LevelRow

LOADER_BOUND = "loader-bound"
LATENCY_KEY = "p99"


@dataclass(frozen=True)
class GlanceBar:
    stack: str
    estimate: Estimate
    level_value: float
    share_of_best: float          # 1.0 for the best stack
    samples: tuple[float, ...]    # one figure per repetition (what the comparison uses)
    flags: tuple[str, ...]


@dataclass(frozen=True)
class MetricGlance:
    metric: str                   # "throughput" | "p99"
    higher_is_better: bool
    where: str                    # which level the figures come from, for people
    bars: tuple[GlanceBar, ...]   # best first
    winner: str | None
    verdict: str                  # one sentence: who wins and by how much, or why nobody does
    comparison: Comparison | None  # best vs runner-up (ratio > 1 means the best is better)


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
                              _samples(c, top, lambda r: r.requests_per_s), top.flags))
    bars.sort(key=lambda b: -b.estimate.value)  # stable: ties keep the run's stack order
    best = bars[0].estimate.value if bars else 0.0
    return [_with_share(b, b.estimate.value / best if best > 0 else 0.0) for b in bars]


def _with_share(bar: GlanceBar, share: float) -> GlanceBar:
    return GlanceBar(bar.stack, bar.estimate, bar.level_value, share, bar.samples, bar.flags)


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
                              _samples(c, g, _p99), g.flags))
    bars.sort(key=lambda b: b.estimate.value)
    best = bars[0].estimate.value if bars else 0.0
    return [_with_share(b, best / b.estimate.value if b.estimate.value > 0 else 1.0)
            for b in bars]


def _ci(cmp: Comparison) -> str:
    """'95% CI 1.95×–2.05×', or '' without an interval."""
    if cmp.low is None or cmp.high is None:
        return ""
    return f"95% CI {fmt.ratio(cmp.low)}–{fmt.ratio(cmp.high)}"


def decide(bars: Sequence[GlanceBar], higher_is_better: bool, what: str
           ) -> tuple[str | None, str, Comparison | None]:
    """(winner, sentence, comparison) for bars sorted best first. `what` names the figure
    in the sentence ('req/s', 'p99')."""
    if not bars:
        return None, "no valid level to compare", None
    if len(bars) == 1:
        return None, f"only {bars[0].stack} has a valid figure: nothing to compare", None
    best, second = bars[0], bars[1]
    # The ratio is always "how much better the best is": req/s best / runner-up, latency
    # runner-up / best; so a ratio above 1 whose interval excludes 1 names the best.
    numerator, denominator = (best, second) if higher_is_better else (second, best)
    cmp = stats.compare_medians(list(numerator.samples), list(denominator.samples))
    caveat = "".join(f"; {b.stack} was loader-bound: its figure is a lower bound"
                     for b in (best, second) if LOADER_BOUND in b.flags)
    ratio, ci = fmt.ratio(cmp.ratio), _ci(cmp)
    if cmp.verdict is Verdict.FASTER:
        if higher_is_better:  # 'go wins: 1.98× node's req/s (95% CI 1.95×–2.05×)'
            text = f"{best.stack} wins: {ratio} {second.stack}'s {what} ({ci})"
        else:  # 'go wins: node's p99 is 2.02× go's (95% CI 1.81×–2.04×)'
            text = f"{best.stack} wins: {second.stack}'s {what} is {ratio} {best.stack}'s ({ci})"
        return best.stack, text + caveat, cmp
    if cmp.verdict is Verdict.NO_SIGNIFICANT_DIFFERENCE:
        return None, (f"no winner: {best.stack} and {second.stack} are within noise "
                      f"({ratio}, {ci})" + caveat), cmp
    if cmp.ratio is None:
        return None, f"no winner named: {denominator.stack}'s median {what} is 0", cmp
    if cmp.verdict is Verdict.INSUFFICIENT_DATA:
        reps = min(len(best.samples), len(second.samples))
        reps_text = "1 repetition gives" if reps == 1 else f"{reps} repetitions give"
        return None, (f"no winner named: {best.stack} leads by {ratio} but {reps_text} no "
                      "interval to judge significance (raise repeat)") + caveat, cmp
    return None, (f"no winner named: inconclusive comparison of {best.stack} and "
                  f"{second.stack} ({ratio}, {ci})") + caveat, cmp


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


def workload_glance(a: Analysis, w: WorkloadView) -> WorkloadGlance:
    thr = _throughput_bars(w)
    stacks = [b.stack for b in thr]
    winner, verdict, cmp = decide(thr, True, "req/s")
    throughput = MetricGlance("throughput", True, "best valid level of each stack", tuple(thr),
                              winner, verdict, cmp)
    level = common_level(w, stacks)
    if level is None:
        latency = MetricGlance(LATENCY_KEY, False, "no common level", (), None,
                               "no level where every stack has a valid p99: see the tables"
                               if stacks else "no valid level to compare", None)
    else:
        lat = _latency_bars(w, stacks, level)
        winner, verdict, cmp = decide(lat, False, LATENCY_KEY)
        latency = MetricGlance(LATENCY_KEY, False, f"at {_level_name(a, level)}", tuple(lat),
                               winner, verdict, cmp)
    return WorkloadGlance(w.label, throughput, latency, tuple(_not_ranked(w, stacks)))


def glance(a: Analysis) -> list[WorkloadGlance]:
    return [workload_glance(a, w) for w in a.workloads]
