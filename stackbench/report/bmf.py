"""Bencher Metric Format (bencher.dev/docs/reference/bencher-metric-format): the run's levels as
the JSON continuous-benchmarking dashboards read, so a CI job can track a stack run after run.

One benchmark per stack, workload and level (`node/hello@50c`); its measures are throughput
(req/s) and the p50 and p99 latencies (ms), each with `lower_value`/`upper_value` from the
level's 95% interval where it has one (a figure without an interval carries its value only:
an interval is never invented). Levels that decide nothing (failed, flagged invalid, or
without a figure) are left out, as `compare` leaves them out.
"""

import json

from stackbench.analysis.analysis import Analysis, disturbed_caveat
from stackbench.analysis.stats import Estimate, LevelAggregate

THROUGHPUT = "throughput"  # Bencher's built-in measure slugs for these two
LATENCY = "latency"
LATENCIES = {"p50": "latency-p50", "p99": "latency-p99"}  # our key -> measure slug


def benchmark_name(stack: str, workload: str, level: float, level_kind: str) -> str:
    unit = "c" if level_kind == "connections" else "rps"
    return f"{stack}/{workload}@{level:g}{unit}"


def _metric(estimate: Estimate, scale: float = 1.0) -> dict[str, float]:
    metric = {"value": estimate.value * scale}
    if estimate.low is not None and estimate.high is not None:
        metric["lower_value"] = estimate.low * scale
        metric["upper_value"] = estimate.high * scale
    return metric


def _measures(agg: LevelAggregate) -> dict[str, dict[str, float]]:
    measures = {THROUGHPUT: _metric(agg.throughput)}
    for key, slug in LATENCIES.items():
        if key in agg.latency_us:
            measures[slug] = _metric(agg.latency_us[key], scale=1e-3)  # µs -> ms
    return measures


def bmf_document(a: Analysis) -> dict[str, object]:
    """The valid levels only: a dashboard shows a figure without its flags, so a level
    flagged invalid (disturbed, unsteady, over its error limit) or failed is left out."""
    return {
        benchmark_name(view.stack, w.label, agg.level_value, a.level_kind): _measures(agg)
        for w, view, agg in a.valid_levels()
        # a disturbed level keeps status ok (the comparisons show it, undecided): left out here
        if agg.throughput.value > 0 and disturbed_caveat(agg.flags) is None
    }


def results_bmf(a: Analysis) -> str:
    return json.dumps(bmf_document(a), indent=1, allow_nan=False, sort_keys=True)
