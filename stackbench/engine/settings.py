"""The settings a run records: the suite's load, limits, SLO and placement as a `RunSettings`."""

from stackbench.config.placement import count_name
from stackbench.config.suite import Suite
from stackbench.store.records import (
    CoreCountSettings,
    DeviationSettings,
    PlacementSettings,
    RunSettings,
    SearchSettings,
    SloSettings,
    VariantSettings,
)


def run_settings(suite: Suite, decision_looks: int = 1) -> RunSettings:
    s = suite.load
    slo, search, placement = suite.slo, suite.search, suite.placement
    return RunSettings(
        mode=s.mode.value,
        level_kind=suite.level_kind,
        keepalive=s.keepalive.value,
        driver=s.driver.value,
        duration_s=s.duration_s,
        requests=s.requests,
        requests_per_connection=s.requests_per_connection,
        warmup_s=s.warmup_s,
        timeout_s=s.timeout_s,
        pause_s=s.pause_s,
        repeat=s.repeat,
        threads=s.threads,
        pipeline=s.pipeline,
        jit_warmup=s.jit_warmup,
        levels=tuple(suite.levels),
        max_error_rate=suite.max_error_rate,
        variant=suite.variant,
        description=suite.description,
        slo=None
        if slo is None
        else SloSettings(
            percentile=slo.percentile,
            latency_ms=slo.latency_ms,
            max_error_rate=slo.max_error_rate,
            stop_after_failures=slo.stop_after_failures,
            gate=slo.gate,
        ),
        search=None
        if search is None
        else SearchSettings(
            lo=search.lo, hi=search.hi, probes=search.probes, tolerance=search.tolerance
        ),
        script_iterations=suite.script_iterations,
        script_timings=suite.script_timings,
        variants={
            name: VariantSettings(stack=v.stack, params=dict(v.params))
            for name, v in suite.variants.items()
        },
        workload_levels={label: tuple(v) for label, v in suite.workload_levels.items()},
        workload_durations=dict(suite.workload_durations),
        placement=PlacementSettings(
            server=tuple(sorted(placement.server)),
            loader=tuple(sorted(placement.loader)),
            services=tuple(sorted(placement.services)),
            server_host=placement.server_host,
            loader_hosts=placement.loader_hosts,
            services_host=placement.separate_services_host,
            memcached_on_network=placement.memcached_on_network,
        ),
        decision_looks=decision_looks,
        core_counts=core_count_settings(suite),
        deviations=tuple(
            DeviationSettings(setting=d.setting, article=d.article, ours=d.ours, why=d.why)
            for d in suite.deviations
        ),
    )


def core_count_settings(suite: Suite) -> dict[str, CoreCountSettings]:
    """Each stack at each of the suite's core counts, by the name it is planned under."""
    return {
        count_name(stack, count.cores): CoreCountSettings(
            stack=stack,
            server=tuple(sorted(count.placement.server)),
            loader=tuple(sorted(count.placement.loader)),
            services=tuple(sorted(count.placement.services)),
        )
        for count in suite.core_counts
        for stack in suite.stacks
    }
