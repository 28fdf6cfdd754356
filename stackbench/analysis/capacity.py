"""Capacity: the sustainable req/s per server core at the SLO, and what it means for a target
load and a price (docs/methods.md, "Capacity").

Only an open-loop run with an SLO has it: its levels are offered rates, each judged as the
engine's search judges a probe (config/slo.py): sustained when every repetition achieved the
rate and met the SLO. The bracket is `sustainable_bounds` over those probes: the highest
sustained rate and the lowest rate above it that was not. The capacity lies in that bracket;
nothing measured says where inside it, so the bracket is the interval, divided by the
server's cores. Without a failed rate above, the bracket is open: "at least", never an
invented upper end. Pure: numbers in, numbers out.
"""

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from stackbench.analysis.analysis import Analysis, CaseView
from stackbench.analysis.stats import leave_out_disturbed
from stackbench.config.slo import Probe, SloStatus, evaluate_slo, sustainable_bounds
from stackbench.config.suite import Slo
from stackbench.errors import InputError
from stackbench.store.records import LevelFlag, LevelRow, has_flag

SECONDS_PER_HOUR = 3600.0
MILLION = 1_000_000.0
SCALING_CAVEAT = (
    "assumes throughput grows linearly with cores, which it rarely does; run the suite at "
    "several server core counts ([placement] server_cores = [1, 2, 4]) to measure the scaling"
)


@dataclass(frozen=True)
class Span:
    """An interval that may be open at either end: None is "no evidence" there."""

    low: float | None
    high: float | None

    def scaled(self, factor: float) -> "Span":
        return Span(_times(self.low, factor), _times(self.high, factor))

    def inverted(self, numerator: float) -> "Span":
        """numerator / x over the interval: the ends swap; an open end becomes 0 or open."""
        return Span(
            None if self.high is None else numerator / self.high,
            None if self.low is None or self.low <= 0 else numerator / self.low,
        )


def _times(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor


@dataclass(frozen=True)
class Capacity:
    """One case's sustainable rate at the SLO, from its probes."""

    stack: str
    label: str  # the workload with its parameters
    server_cores: int
    sustained_rps: float | None  # highest offered rate every repetition held (None: none held)
    failed_rps: float | None  # lowest offered rate above it that was not held (None: none)
    probes: int  # distinct offered rates
    repetitions: int  # per probe (the fewest, when they differ)
    # Repetitions that held at `failed_rps`: some but not all says the edge is noisy there.
    held_at_failed: int
    services_share_cores: bool  # the data services ran on the server's cores
    # What weakens the bracket's ends: a busy machine, a loader that could not offer the rate
    caveats: tuple[str, ...] = ()

    @property
    def rps(self) -> Span:
        """The bracket: the capacity is at least the sustained rate and below the failed one.
        When the lowest probe failed, only its upper end is known."""
        if self.sustained_rps is None:
            return Span(None, self.failed_rps)
        return Span(self.sustained_rps, self.failed_rps)

    @property
    def per_core(self) -> Span:
        return self.rps.scaled(1.0 / self.server_cores)


@dataclass(frozen=True)
class CapacityAsk:
    """What a reader plans for: a target load (req/s) and a price per core-hour."""

    target_rps: float | None = None
    price_per_core_hour: float | None = None

    def __post_init__(self) -> None:
        for name, value in (
            ("--target-rps", self.target_rps),
            ("--price-per-core-hour", self.price_per_core_hour),
        ):
            if value is not None and not value > 0:
                raise InputError(f"{name} must be a positive number, got {value:g}")

    @property
    def asked(self) -> bool:
        return self.target_rps is not None or self.price_per_core_hour is not None


def probe_held(row: LevelRow, slo: Slo) -> bool:
    """One repetition of an open-loop level held: the rate was achieved and the SLO met (the
    engine's judge.sustained, on the stored row)."""
    achieved = row.open_loop is None or row.open_loop.sustained
    return achieved and evaluate_slo(row.latency_us, row.error_rate, slo).status is SloStatus.PASS


def bracket_of(held: Sequence[tuple[float, bool]]) -> tuple[Probe, ...]:
    """(offered rate, this repetition held) -> one probe per rate, held when every
    repetition at it held (the search's rule), in rate order."""
    by_rate: dict[float, bool] = {}
    for rate, ok in held:
        by_rate[rate] = by_rate.get(rate, True) and ok
    return tuple(Probe(rate, ok) for rate, ok in sorted(by_rate.items()))


def capacity_of(
    stack: str,
    label: str,
    held: Sequence[tuple[float, bool]],
    server_cores: int,
    services_share_cores: bool = False,
    disturbed: Collection[float] = (),
    loader_bound: Collection[float] = (),
) -> Capacity | None:
    """A case's capacity from its repetitions' outcomes (offered rate, held); None without
    any outcome. `disturbed`, `loader_bound`: the rates where a repetition was flagged so."""
    if server_cores < 1:
        raise ValueError(f"server_cores must be >= 1, got {server_cores}")
    probes = bracket_of(held)
    if not probes:
        return None
    sustained, failed = sustainable_bounds(probes)
    counts = [sum(1 for r, _ in held if r == p.rate) for p in probes]
    at_failed = sum(1 for r, ok in held if r == failed and ok)
    return Capacity(
        stack=stack,
        label=label,
        server_cores=server_cores,
        sustained_rps=sustained,
        failed_rps=failed,
        probes=len(probes),
        repetitions=min(counts),
        held_at_failed=at_failed,
        services_share_cores=services_share_cores,
        caveats=_caveats(sustained, failed, disturbed, loader_bound),
    )


def _caveats(
    sustained: float | None,
    failed: float | None,
    disturbed: Collection[float],
    loader_bound: Collection[float],
) -> tuple[str, ...]:
    """Only the bracket's ends matter: the other rates do not place it."""
    out = []
    if failed is not None and failed in loader_bound:
        out.append(
            f"the loader could not offer {failed:,.0f} req/s: the upper end may be the "
            "loader's limit, not the server's"
        )
    ends = [r for r in (sustained, failed) if r is not None and r in disturbed]
    if ends:
        rates = " and ".join(f"{r:,.0f}" for r in ends)
        out.append(f"disturbed at {rates} req/s (other processes used the level's cores)")
    return tuple(out)


def case_capacity(a: Analysis, c: CaseView, label: str) -> Capacity | None:
    """None where the run has no capacity: closed loop (no offered rate), no SLO, or a case
    that is not ranked (failed, its output wrong). A case at one of the suite's core counts
    ("node.2c") is its stack's, on that count's cores."""
    if a.slo is None or a.level_kind != "rate" or not c.rankable:
        return None
    slo = a.slo
    counted = a.settings.core_counts.get(c.stack)
    placement = counted or a.settings.placement
    rows = leave_out_disturbed(c.rows)  # a level disturbed in every repetition stays disturbed
    return capacity_of(
        counted.stack if counted else c.stack,
        label,
        [(r.level_value, probe_held(r, slo)) for r in rows],
        max(1, len(placement.server)),
        bool(set(placement.services) & set(placement.server)),
        {r.level_value for r in rows if has_flag(r.flags, LevelFlag.DISTURBED)},
        {r.level_value for r in rows if has_flag(r.flags, LevelFlag.LOADER_BOUND)},
    )


def capacities(a: Analysis) -> list[Capacity]:
    """Every case's capacity, by workload then stack (the run's order)."""
    out = []
    for w in a.workloads:
        for c in w.cases:
            cap = case_capacity(a, c, w.label)
            if cap is not None:
                out.append(cap)
    return out


# --- scaling over the suite's core counts ([placement] server_cores = [1, 2]) ----------------
def ratio_span(top: Span, bottom: Span) -> Span:
    """top / bottom over two brackets: the lowest ratio pairs top's low end with bottom's high
    end, the highest the other way round. An end that rests on an open end is open (None):
    "at least" below gives no upper bound on the ratio, and so on."""
    low = None if top.low is None or bottom.high is None else top.low / bottom.high
    high = (
        None if top.high is None or bottom.low is None or bottom.low <= 0 else top.high / bottom.low
    )
    return Span(low, high)


@dataclass(frozen=True)
class Scaling:
    """One stack and workload measured at several server core counts: req/s at the SLO at
    each, against the smallest count (the articles' 1 core)."""

    stack: str
    label: str
    points: tuple[Capacity, ...]  # one per core count, fewest cores first

    @property
    def base(self) -> Capacity:
        return self.points[0]

    @property
    def largest(self) -> Capacity:
        return self.points[-1]

    def ratio(self, cap: Capacity) -> Span:
        """req/s at `cap`'s cores over req/s at the base count, with its interval."""
        return ratio_span(cap.rps, self.base.rps)

    def efficiency(self, cap: Capacity) -> Span:
        """The ratio over the ratio of cores: 1 is linear scaling, 0.5 half of it."""
        return self.ratio(cap).scaled(self.base.server_cores / cap.server_cores)


def scalings(caps: Sequence[Capacity]) -> list[Scaling]:
    """The (workload, stack) pairs measured at more than one core count, in the run's order."""
    groups: dict[tuple[str, str], list[Capacity]] = {}
    for cap in caps:
        groups.setdefault((cap.label, cap.stack), []).append(cap)
    return [
        Scaling(stack, label, tuple(sorted(group, key=lambda c: c.server_cores)))
        for (label, stack), group in groups.items()
        if len({c.server_cores for c in group}) > 1
    ]


def planning_capacity(caps: Sequence[Capacity], cap: Capacity) -> Capacity:
    """The capacity a target is planned from: that of the most server cores measured for
    `cap`'s stack and workload (its per-core rate includes the scaling measured up to there)."""
    same = [c for c in caps if (c.label, c.stack) == (cap.label, cap.stack)]
    return max(same, key=lambda c: c.server_cores, default=cap)


# --- what it means for a plan ------------------------------------------------------------------
def cores_needed(cap: Capacity, target_rps: float) -> Span:
    """Cores for `target_rps` if throughput grew linearly with cores (SCALING_CAVEAT): the
    target over the per-core bracket, its ends swapped. Fewer sustained req/s a core means
    more cores, so "at least x req/s a core" gives "at most target / x cores"."""
    return cap.per_core.inverted(target_rps)


def cost_per_million(cap: Capacity, price_per_core_hour: float) -> Span:
    """Price of a million requests at the sustainable rate: a core serves
    3600 × (req/s a core) requests an hour for `price_per_core_hour`."""
    return cap.per_core.inverted(price_per_core_hour * MILLION / SECONDS_PER_HOUR)


# --- words ------------------------------------------------------------------------------------
def span_words(span: Span, cell: str = "{:,.0f}") -> str:
    """A bracket of rates: '1,200–1,500', 'at least 1,200' (open above), 'below 1,500'
    (nothing held)."""
    low = None if span.low is None else cell.format(span.low)
    high = None if span.high is None else cell.format(span.high)
    if low is not None and high is not None:
        return low if low == high else f"{low}–{high}"
    if low is not None:
        return f"at least {low}"
    if high is not None:
        return f"below {high}"
    return "not measured"


def inverted_words(span: Span, cell: str) -> str:
    """A span inverted from a bracket (cores, cost): an open low end reads "at most" the high
    one (the rate was "at least"), an open high end "more than" the low one."""
    if span.low is None and span.high is not None:
        return f"at most {cell.format(span.high)}"
    if span.high is None and span.low is not None:
        return f"more than {cell.format(span.low)}"
    return span_words(span, cell)


def per_core_words(cap: Capacity) -> str:
    """'1,200–1,500 req/s per core' with what the bracket rests on."""
    words = f"{span_words(cap.per_core)} req/s per core"
    if cap.failed_rps is not None and cap.repetitions > 1:
        words += f" ({cap.held_at_failed} of {cap.repetitions} repetitions held at the upper end)"
    return words


def cores_words(count: int) -> str:
    return "1 server core" if count == 1 else f"{count} server cores"


def scaling_note(server_cores: int, counts: int = 1) -> str:
    """What the cores for a target rest on: one core count (linear scaling assumed), or the
    largest of `counts` measured ones (scaling measured up to it, assumed beyond)."""
    cores = cores_words(server_cores)
    if counts > 1:
        return (
            f"from the req/s per core measured on {cores}, the most of the {counts} core "
            f"counts measured: the scaling up to {cores} is measured, beyond it assumed linear"
        )
    return f"measured on {cores} only: {SCALING_CAVEAT}"
