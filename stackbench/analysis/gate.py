"""The SLO as a gate: which levels broke it, for `run`'s exit code (1 when any did)."""

from stackbench.analysis import fmt
from stackbench.analysis.analysis import Analysis
from stackbench.config.slo import SloStatus, slo_words


def slo_rule(a: Analysis) -> str:
    """'p99 ≤ 3000 ms and error rate ≤ 1.00%' ('' without an SLO)."""
    return "" if a.slo is None else slo_words(a.slo)


def slo_breaches(a: Analysis) -> list[str]:
    """One 'stack workload @level: why' per level whose headline broke a gating SLO."""
    if a.slo is None or not a.slo.gate:
        return []
    return [
        f"{c.stack} {w.label} @{fmt.level(g.level_value)}: {g.slo.reason}"
        for w in a.workloads
        for c in w.cases
        for g in c.aggregates
        if g.slo is not None and g.slo.status is SloStatus.FAIL
    ]
