"""The SLO rule and the search for the highest rate that meets it: pure functions over a
suite's `[slo]`, shared by the engine (which judges each level and steers the search as it
runs) and the analysis (which judges the stored runs), below both.
"""

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stackbench.config.suite import Slo


class SloStatus(enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    UNKNOWN = "unknown"  # the driver did not measure the percentile the SLO needs


@dataclass(frozen=True)
class SloOutcome:
    status: SloStatus
    reason: str


def percentile_key(percentile: float) -> str:
    """99 -> 'p99', 99.9 -> 'p99_9', 100 -> 'max' (the keys of LevelRow.latency_us)."""
    if percentile >= 100:
        return "max"
    return "p" + f"{percentile:g}".replace(".", "_")


def latency_words(slo: Slo) -> str:
    """'p99 ≤ 3000 ms': the SLO's latency bound, as the charts label it."""
    return f"{percentile_key(slo.percentile).replace('_', '.')} ≤ {slo.latency_ms:g} ms"


def slo_words(slo: Slo) -> str:
    """'p99 ≤ 3000 ms and error rate ≤ 1.00%': the SLO in every output's words (the
    findings, the tables, the page, the gate's exit message)."""
    return f"{latency_words(slo)} and error rate ≤ {slo.max_error_rate:.2%}"


def evaluate_slo(latency_us: Mapping[str, float], error_rate: float, slo: Slo) -> SloOutcome:
    key = percentile_key(slo.percentile)
    if error_rate > slo.max_error_rate:
        return SloOutcome(SloStatus.FAIL, f"error rate {error_rate:.2%} > {slo.max_error_rate:.2%}")
    if key not in latency_us:
        return SloOutcome(SloStatus.UNKNOWN, f"{key} latency not measured by this driver")
    latency_ms = latency_us[key] / 1000.0
    name = key.replace("_", ".")  # p99_9 -> p99.9 for people
    if latency_ms > slo.latency_ms:
        return SloOutcome(SloStatus.FAIL, f"{name} {latency_ms:.4g} ms > {slo.latency_ms:g} ms")
    return SloOutcome(SloStatus.PASS, f"{name} {latency_ms:.4g} ms <= {slo.latency_ms:g} ms")


# --- maximum sustainable throughput search ---------------------------------------------------
@dataclass(frozen=True)
class Probe:
    rate: float
    sustained: bool  # the orchestrator's judgement: rate achieved and SLO/error limit held


def sustainable_bounds(history: Sequence[Probe]) -> tuple[float | None, float | None]:
    """(highest sustained rate, lowest failed rate above it). Failures below the best sustained
    rate are treated as noise: a later success at a higher rate proves the capacity is there."""
    lower = max((p.rate for p in history if p.sustained), default=None)
    above = [p.rate for p in history if not p.sustained and (lower is None or p.rate > lower)]
    return lower, min(above, default=None)


def next_rate(
    history: Sequence[Probe],
    lo: float,
    hi: float,
    budget: int,
    tolerance: float = 0.05,
    growth: float = 2.0,
) -> float | None:
    """The next rate to probe in a search for the maximum sustainable rate in [lo, hi], or None
    when done: budget spent, bracket narrower than `tolerance` (relative to the sustained
    rate), lo itself fails, or hi is sustained. Starts at lo and grows geometrically (never
    overloading the server far past its capacity), then bisects the bracket."""
    if not 0 < lo <= hi:
        raise ValueError(f"need 0 < lo <= hi, got lo={lo}, hi={hi}")
    if len(history) >= budget:
        return None
    lower, upper = sustainable_bounds(history)
    if lower is None:
        probed_lo = any(p.rate <= lo for p in history)
        return None if probed_lo else lo
    if upper is None:
        return None if lower >= hi else min(hi, lower * growth)
    if (upper - lower) <= tolerance * lower:
        return None
    return (lower + upper) / 2.0
