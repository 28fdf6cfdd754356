"""The run-to-run spread this machine really showed for a suite, from the store's earlier runs
of it: the spread the design check (analysis/claims/design.py) gives a stack, workload and
level the store covers, before the calibrated or assumed one. Pure.

Every run, and every round of a run with repeat >= 2, starts each stack afresh, so the figures
of one level across those starts vary by the run-to-run spread: the spread the verdicts add
for a single repetition, and by which several repetitions of the level will vary. A level's
figures are its starts' throughputs (the whole level's, as stored: the steady window's vary
less, so this errs wide).

A sweep's spread changes along its levels (Apache's figures jitter past about 4,500
connections, not below), so the spread at a level pools only the stored levels of its
connection range: those within a factor of RANGE_FACTOR of it. Pooled as one-way analysis of
variance does: the squared deviations of each level's log figures from that level's mean,
summed over the range's levels, over their summed degrees of freedom (each level's starts less
one). A spread from a few starts is itself uncertain, so the design uses its one-sided 80%
upper confidence bound (chi-square), as a calibration does, and never less than MIN_SPREAD.
A range with fewer than MIN_DF degrees of freedom (one earlier run) gives none.

Two levels measured in the same fresh starts (two stacks of one round, two levels of one
start) share those starts' drift, which a paired reading cancels (analysis/paired.py): the
spread their pairs really showed is that of the per-start log ratio, its starts pooled as one
group as a level's are, with the same upper bound: `PastSpreads.paired`.
"""

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from stackbench.analysis import stats
from stackbench.analysis.calibration import MIN_SPREAD, UPPER_BOUND_LEVEL
from stackbench.config.estimate import PastLevel

RANGE_FACTOR = 1.25  # a level's connection range: the stored levels within this factor of it
MIN_DF = 2  # the fewest degrees of freedom a spread is taken from (3 starts of one level)

# (stack, workload label) -> level -> start (run, repetition) -> figure
Figures = Mapping[tuple[str, str], Mapping[float, Mapping[tuple[int, int], float]]]


@dataclass(frozen=True)
class LevelSpread:
    """The spread between fresh starts at a level's connection range."""

    stack: str
    workload: str
    low: float  # the range's stored levels that gave figures of several starts
    high: float
    sigma: float  # the pooled SD of the log figures between starts (point estimate)
    sigma_used: float  # its 80% upper confidence bound, floored: what the design uses
    df: int
    runs: tuple[int, ...]  # the stored runs whose starts it pools

    @property
    def where(self) -> str:
        span = (
            f"@{self.low:,.0f}" if self.low == self.high else f"@{self.low:,.0f}–{self.high:,.0f}"
        )
        return f"{self.stack} {self.workload} {span}"

    @property
    def text(self) -> str:
        basis = _basis(self.runs, self.sigma, self.df)
        return f"{self.sigma_used:.1%} between fresh starts of {self.where} ({basis})"


def _basis(runs: tuple[int, ...], sigma: float, df: int) -> str:
    """What a stored spread rests on: its runs, its point estimate and degrees of freedom."""
    listed = ", ".join(str(r) for r in runs)
    return (
        f"run{'s' if len(runs) > 1 else ''} {listed}: {sigma:.1%} over {df} degrees of "
        "freedom, 80% upper bound"
    )


# A level of a suite's earlier runs: (stack, workload label, connections)
Where = tuple[str, str, float]


@dataclass(frozen=True)
class PairSpread:
    """The spread of the log ratio between two levels' figures over the fresh starts that
    measured both: what their paired ratio's repetitions vary by."""

    a: Where
    b: Where
    sigma: float  # the pooled SD of the per-start log ratios (point estimate)
    sigma_used: float  # its 80% upper confidence bound, floored: what the design uses
    df: int
    runs: tuple[int, ...]

    @property
    def text(self) -> str:
        basis = _basis(self.runs, self.sigma, self.df)
        pair = f"{_where(self.a)} / {_where(self.b)}"
        return f"{self.sigma_used:.1%} between the pairs {pair} of one start ({basis})"


def _where(at: Where) -> str:
    return f"{at[0]} {at[1]} @{at[2]:,.0f}"


@dataclass(frozen=True)
class PastSpreads:
    """The earlier starts' figures of one suite and setup, by stack, workload and level."""

    suite: str
    figures: Figures

    def at(self, stack: str, workload: str, level: float) -> LevelSpread | None:
        """The spread at `level`'s connection range, or None where the store has too few
        starts of it."""
        levels = self.figures.get((stack, workload), {})
        inside = [
            (value, tuple(starts.values()))
            for value, starts in levels.items()
            if level / RANGE_FACTOR <= value <= level * RANGE_FACTOR and len(starts) >= 2
        ]
        df = sum(len(figures) - 1 for _, figures in inside)
        if df < MIN_DF:
            return None
        squares = math.fsum(_squares(figures) for _, figures in inside)
        runs = sorted({run for value, _ in inside for run, _ in levels[value]})
        return LevelSpread(
            stack,
            workload,
            min(v for v, _ in inside),
            max(v for v, _ in inside),
            math.sqrt(squares / df),
            upper_sigma(squares, df),
            df,
            tuple(runs),
        )

    def paired(self, a: Where, b: Where) -> PairSpread | None:
        """The spread of ln(a / b) over the fresh starts that measured both levels (a
        start: a run's repetition), all the starts one group as `at` pools them (a ratio
        that moved between runs errs wide); None with fewer than MIN_DF degrees of
        freedom."""
        first = self.figures.get((a[0], a[1]), {}).get(a[2], {})
        second = self.figures.get((b[0], b[1]), {}).get(b[2], {})
        common = sorted(first.keys() & second.keys())
        df = len(common) - 1
        if df < MIN_DF:
            return None
        squares = _about_mean([math.log(first[k] / second[k]) for k in common])
        runs = tuple(sorted({run for run, _ in common}))
        return PairSpread(a, b, math.sqrt(squares / df), upper_sigma(squares, df), df, runs)

    def peak(self, stack: str, workload: str) -> float | None:
        """The level where the stored starts' trend peaks (the medians of each level's
        starts, stats.fitted_peak): where a claim's "peak" was read before."""
        levels = self.figures.get((stack, workload), {})
        points = [(v, stats.median(list(s.values()))) for v, s in levels.items() if s]
        return stats.fitted_peak(points)


def _squares(figures: tuple[float, ...]) -> float:
    return _about_mean([math.log(f) for f in figures])


def _about_mean(values: list[float]) -> float:
    """The sum of squared deviations from the values' mean."""
    mean = math.fsum(values) / len(values)
    return math.fsum((x - mean) ** 2 for x in values)


def upper_sigma(squares: float, df: int) -> float:
    """The one-sided upper confidence bound (UPPER_BOUND_LEVEL) of an SD whose sum of squares
    has `df` degrees of freedom: sqrt(squares / chi2.ppf(1 - level, df)), at least
    MIN_SPREAD."""
    from scipy import stats as scipy_stats

    bound = squares / float(scipy_stats.chi2.ppf(1.0 - UPPER_BOUND_LEVEL, df))
    return max(math.sqrt(bound), MIN_SPREAD)


def past_spreads(levels: Iterable[PastLevel], suite: str, setup: str) -> PastSpreads:
    """The figures of `suite`'s earlier runs in `setup` (config.estimate.setup_key), one per
    fresh start of each level (a start measured twice keeps its latest)."""
    figures: dict[tuple[str, str], dict[float, dict[tuple[int, int], float]]] = {}
    for past in sorted(levels, key=lambda p: p.at):
        if past.suite != suite or past.setup != setup or past.requests_per_s <= 0:
            continue
        by_level = figures.setdefault((past.stack, past.label), {})
        by_level.setdefault(past.value, {})[(past.run_id, past.repetition)] = past.requests_per_s
    return PastSpreads(suite, figures)
