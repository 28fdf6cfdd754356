"""At a glance: per workload, each stack's throughput and p99 latency as a share of the best,
with a winner named only when the verdicts show it faster than every other stack (see below).
Pure functions of the analysis.

- Throughput: each stack's best valid level (highest median req/s over the levels that are
  valid, of a rankable case, with completed requests), its 95% CI and the level reached.
- p99 latency: at one common level, the highest level where every stack with a throughput
  figure has a valid measurement with a p99: latencies under different loads do not compare.
- "% of best": throughput / best throughput; for latency best p99 / this p99 (100% = best,
  lower = slower answers). Views of latency show `times_best` instead (this p99 / best p99:
  1.0× for the best, 2.0× for twice as slow), so that a longer bar never means "better".
- A figure that does not come from steady windows (no steady state found, or a driver without a
  per-second series) carries `whole_level`: why it is the whole level's figure.
- Verdicts (analysis.verdicts): every pair of stacks is compared (the verdict of the one shown
  higher against the other); the best is named the winner only when it is shown faster than
  every other. All the comparisons of the summary (every workload, both figures) are one Holm
  family. Not enough evidence is said with what would decide it, never as a tie.
- Tiers (analysis.tiers): the stacks the verdicts do not separate share a tier; the headline
  of each figure is its tier line (`go-nethttp ? node  »  php-fpm-nginx (6.6–7.1×)`), under
  it the table of the pairs the line rests on (`table_pairs`), and the verdicts in words
  (`verdict`) are the long explanation.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from stackbench.analysis import fmt
from stackbench.analysis.analysis import Analysis, CaseView, WorkloadView, compare_figures
from stackbench.analysis.stats import Estimate, LevelAggregate
from stackbench.analysis.tiers import LINE_WIDTH, Tiers, tier_line, tiers
from stackbench.analysis.verdicts import PERCENTILE_THRESHOLD, Outcome, Verdict, holm
from stackbench.analysis.wording import SHORT, SYMBOL, assumed, interval, ratio_and_bounds, sentence
from stackbench.store.records import Flag, LevelFlag, has_flag

LATENCY_KEY = "p99"
# A glance's scale reaches the highest whisker, but no further than this times the highest
# figure: one wide interval must not shrink every bar (a whisker beyond is cut at the end).
WHISKER_REACH = 1.5


@dataclass(frozen=True)
class GlanceBar:
    stack: str
    estimate: Estimate
    level_value: float
    share_of_best: float  # 1.0 for the best stack
    flags: tuple[Flag, ...]
    vs_best: Verdict | None = None  # the best against this stack (None: the best itself)
    vs_above: Verdict | None = None  # the stack above against this one, when not the best
    whole_level: str | None = None  # why the figure is not the steady windows' (None: it is)

    @property
    def times_best(self) -> float:
        """For lower-is-better figures: this figure / the best one (1.0 for the best)."""
        return 1.0 / self.share_of_best if self.share_of_best > 0 else math.inf


@dataclass(frozen=True)
class Pair:
    """The verdict of the stack shown higher (`first`) against one shown lower (`second`)."""

    first: str
    second: str
    verdict: Verdict


@dataclass(frozen=True)
class MetricGlance:
    metric: str  # "throughput" | "p99"
    higher_is_better: bool
    where: str  # which level the figures come from, for people
    bars: tuple[GlanceBar, ...]  # best first
    winner: str | None  # the best, when shown better than every other stack
    verdict: str  # the verdicts in words: who wins and by how much, or not
    line: str = ""  # the tier line (at most 80 characters); the verdict when no bars
    pairs: tuple[Pair, ...] = ()  # every pair of bars, in bar order
    tiers: Tiers | None = None  # None: no bars
    shown: tuple[Pair, ...] = ()  # the pairs the tier line rests on: neighbours, brackets


PAIR_HEADER = ("a vs b", "a/b", "95% interval", "verdict", "what would decide it")


def pair_cells(p: Pair) -> list[str]:
    """A row of the table of pairs: 'go-nethttp vs node', '1.07×', '0.91–1.26×',
    '? undecided', and for an undecided pair what would decide it."""
    v = p.verdict
    ratio, bounds = ratio_and_bounds(v)
    verdict = f"{SYMBOL[v.outcome]} {SHORT[v.outcome]}"
    return [f"{p.first} vs {p.second}", ratio, bounds, verdict, v.decide or ""]


def pair_rows(m: MetricGlance) -> tuple[list[str], list[list[str]]]:
    """The table of the pairs the tier line rests on (header, rows); without the column of
    what would decide when every pair is decided."""
    rows = [pair_cells(p) for p in m.shown]
    if all(not row[-1] for row in rows):
        return list(PAIR_HEADER[:-1]), [row[:-1] for row in rows]
    return list(PAIR_HEADER), rows


@dataclass(frozen=True)
class WorkloadGlance:
    label: str
    throughput: MetricGlance
    latency: MetricGlance
    not_ranked: tuple[tuple[str, str], ...]  # (stack, why it has no bar)


def _valid(c: CaseView, g: LevelAggregate) -> bool:
    return c.rankable and g.status == "ok" and not has_flag(g.flags, LevelFlag.NO_COMPLETED)


def whole_level(c: CaseView, g: LevelAggregate) -> str | None:
    """Why the level's figures are the whole level's, not its steady windows' (None: they are
    the steady windows')."""
    steady = c.steady_at(g.level_index)
    if steady is None or steady.steady:
        return None
    return "; ".join(s.removeprefix("whole level: ") for s in steady.whole_level_sources)


def _throughput_bars(w: WorkloadView) -> list[GlanceBar]:
    bars = []
    for c in w.cases:
        valid = [g for g in c.aggregates if _valid(c, g)]
        if not valid:
            continue
        top = max(valid, key=lambda g: g.throughput.value)
        bars.append(
            GlanceBar(
                c.stack,
                top.throughput,
                top.level_value,
                0.0,
                top.flags,
                whole_level=whole_level(c, top),
            )
        )
    bars.sort(key=lambda b: -b.estimate.value)  # stable: ties keep the run's stack order
    best = bars[0].estimate.value if bars else 0.0
    return [_with_share(b, b.estimate.value / best if best > 0 else 0.0) for b in bars]


def _with_share(bar: GlanceBar, share: float) -> GlanceBar:
    return replace(bar, share_of_best=share)


def common_level(w: WorkloadView, stacks: Sequence[str]) -> float | None:
    """The highest level where each of `stacks` has a valid measurement with a p99."""
    cases = [c for c in w.cases if c.stack in stacks]
    for value in sorted(w.level_values, reverse=True):
        aggs = [(c, c.aggregate_at(value)) for c in cases]
        if cases and all(
            g is not None and _valid(c, g) and LATENCY_KEY in g.latency_us for c, g in aggs
        ):
            return value
    return None


def _latency_bars(w: WorkloadView, stacks: Sequence[str], level: float) -> list[GlanceBar]:
    bars = []
    for c in w.cases:
        g = c.aggregate_at(level)
        if c.stack not in stacks or g is None:
            continue
        bars.append(
            GlanceBar(
                c.stack,
                g.latency_us[LATENCY_KEY],
                level,
                0.0,
                g.flags,
                whole_level=whole_level(c, g),
            )
        )
    bars.sort(key=lambda b: b.estimate.value)
    best = bars[0].estimate.value if bars else 0.0
    return [_with_share(b, best / b.estimate.value if b.estimate.value > 0 else 1.0) for b in bars]


def pair_verdicts(bars: Sequence[GlanceBar], higher_is_better: bool, a: Analysis) -> list[Verdict]:
    """Every pair (i, j), i < j, of the bars sorted best first, in that order: bar i against
    bar j. Latency verdicts are "lower is better" against the 5% threshold."""
    return [
        compare_figures(
            bars[i].estimate,
            bars[j].estimate,
            a.spread,
            higher_is_better=higher_is_better,
            threshold=None if higher_is_better else PERCENTILE_THRESHOLD,
            confidence=a.confidence,
        )
        for i, j in _pairs(len(bars))
    ]


def _pairs(n: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def decide(bars: Sequence[GlanceBar], what: str) -> tuple[str | None, str]:
    """(winner, the verdicts in words) from the bars, best first, with their verdicts.
    `what` names the figure ('req/s', 'p99')."""
    if not bars:
        return None, "no valid level to compare"
    if len(bars) == 1:
        return None, f"only {bars[0].stack} has a valid figure: nothing to compare"
    best = bars[0]
    caveat = "".join(
        f"; {b.stack} was loader-bound: its figure is a lower bound"
        for b in bars
        if has_flag(b.flags, LevelFlag.LOADER_BOUND)
    )
    verdicts = [b.vs_best for b in bars[1:]]
    note = next((assumed(v) for v in verdicts if v is not None and assumed(v)), "")
    if all(v is not None and v.outcome is Outcome.FASTER for v in verdicts):
        shown = "; ".join(
            f"{what} {interval(v)} {b.stack}'s"
            for b, v in zip(bars[1:], verdicts, strict=True)
            if v is not None
        )
        return (
            best.stack,
            f"{best.stack} is the best, shown faster than every other: {shown}{caveat}{note}",
        )
    said = []
    for i, b in enumerate(bars[1:], start=1):
        if b.vs_best is not None:
            said.append(sentence(b.vs_best, best.stack, b.stack, what, say_assumed=False))
        if b.vs_above is not None:
            said.append(sentence(b.vs_above, bars[i - 1].stack, b.stack, what, say_assumed=False))
    return None, "no winner named: " + "; ".join(said) + caveat + note


def level_name(a: Analysis, value: float) -> str:
    """A level of this run with its unit: '50 connections', '5,000 req/s offered'."""
    return fmt.level_name(a.level_kind, value)


def _not_ranked(w: WorkloadView, with_bars: Sequence[str]) -> list[tuple[str, str]]:
    out = []
    for c in w.cases:
        if c.stack in with_bars:
            continue
        if not c.rankable:
            why = "failed verification" if c.verification_failures else f"case {c.case.status}"
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
    latency_where: str | None  # None: no common level
    not_ranked: list[tuple[str, str]]


def _bars(a: Analysis, w: WorkloadView) -> _Bars:
    thr = _throughput_bars(w)
    stacks = [b.stack for b in thr]
    level = common_level(w, stacks)
    lat = [] if level is None else _latency_bars(w, stacks, level)
    where = None if level is None else f"at {level_name(a, level)}"
    return _Bars(w.label, thr, lat, where, _not_ranked(w, stacks))


def _metric(
    bars: list[GlanceBar], higher_is_better: bool, where: str, what: str, judged: list[Verdict]
) -> MetricGlance:
    verdict = dict(zip(_pairs(len(bars)), judged, strict=True))
    bars = [
        replace(
            b, vs_best=verdict.get((0, i)), vs_above=verdict.get((i - 1, i)) if i >= 2 else None
        )
        for i, b in enumerate(bars)
    ]
    winner, words = decide(bars, what)
    metric = LATENCY_KEY if not higher_is_better else "throughput"
    if len(bars) < 2:
        return MetricGlance(metric, higher_is_better, where, tuple(bars), winner, words, words)
    ranked = tiers(
        len(bars),
        [
            _better(i, j, v)
            for (i, j), v in verdict.items()
            if v.outcome in (Outcome.FASTER, Outcome.SLOWER)
        ],
    )
    line = metric_line(ranked, bars, verdict, higher_is_better)
    pairs = tuple(Pair(bars[i].stack, bars[j].stack, v) for (i, j), v in verdict.items())
    shown = [(i, i + 1) for i in range(len(bars) - 1)]
    shown += [p for s in ranked.stretches for p in ranked.inner_apart(s)]
    return MetricGlance(
        metric,
        higher_is_better,
        where,
        tuple(bars),
        winner,
        words,
        line,
        pairs,
        ranked,
        tuple(Pair(bars[i].stack, bars[j].stack, verdict[(i, j)]) for i, j in shown),
    )


def metric_line(
    ranked: Tiers,
    bars: Sequence[GlanceBar],
    verdict: dict[tuple[int, int], Verdict],
    higher_is_better: bool,
    width: int = LINE_WIDTH,
) -> str:
    """The tier line of bars sorted best first, with every pair's verdict (i < j)."""
    values = [b.estimate.value for b in bars]

    def advantage(i: int, j: int) -> float:
        better, worse = (values[i], values[j]) if higher_is_better else (values[j], values[i])
        return better / worse if worse > 0 else math.inf

    return tier_line(
        ranked,
        [b.stack for b in bars],
        lambda i, j: SYMBOL[verdict[(i, j)].outcome],
        advantage,
        width,
    )


def line_within(m: MetricGlance, width: int) -> str:
    """The figure's tier line in at most `width` characters (glance.png's charts, whose words
    are counted, ask for less than 80)."""
    if m.tiers is None:
        return m.line
    index = {b.stack: i for i, b in enumerate(m.bars)}
    verdict = {(index[p.first], index[p.second]): p.verdict for p in m.pairs}
    return metric_line(m.tiers, m.bars, verdict, m.higher_is_better, width)


def _better(i: int, j: int, v: Verdict) -> tuple[int, int]:
    """The decided pair as (better, worse)."""
    return (i, j) if v.outcome is Outcome.FASTER else (j, i)


def glance(a: Analysis) -> list[WorkloadGlance]:
    """Every workload's summary; the verdicts of all of them judged as one family."""
    found = [_bars(a, w) for w in a.workloads]
    families = [pair_verdicts(b.throughput, True, a) for b in found] + [
        pair_verdicts(b.latency, False, a) for b in found
    ]
    flat = iter(holm([v for family in families for v in family]))
    judged = [[next(flat) for _ in family] for family in families]
    out = []
    for i, b in enumerate(found):
        thr = _metric(b.throughput, True, "best valid level of each stack", "req/s", judged[i])
        if b.latency_where is None:
            why = (
                "no level where every stack has a valid p99: see the tables"
                if b.throughput
                else "no valid level to compare"
            )
            lat = MetricGlance(LATENCY_KEY, False, "no common level", (), None, why, why)
        else:
            lat = _metric(b.latency, False, b.latency_where, LATENCY_KEY, judged[len(found) + i])
        out.append(WorkloadGlance(b.label, thr, lat, tuple(b.not_ranked)))
    return out
