"""One load level against a running stack: the load tool under the monitor and the crash
watch, then its record."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import msgspec

from stackbench.config.endpoints import Endpoint
from stackbench.config.loadspec import (
    LoadRequest,
    LoadResult,
    LoadSettings,
    Mode,
    level_budget_s,
)
from stackbench.config.manifest import Warmup
from stackbench.config.measured import CoreAccount, RoleUsage
from stackbench.config.plan import Level
from stackbench.drivers import get_driver, start_load, warm_up
from stackbench.engine.judge import LevelFailure, Measurement, Verdict
from stackbench.engine.watch import ExitCheck, Watcher, loader_failed, server_exited
from stackbench.errors import DriverError
from stackbench.lab import cgroups
from stackbench.lab.monitor import Monitor
from stackbench.store.records import JitWarmupRecord, LevelRecord

# The tool's own output is kept for the record, up to this many characters (its end).
RAW_OUTPUT_CHARS = 200_000
# Open loop: connections enough that the rate, not the pool, limits, within these bounds.
OPEN_LOOP_CONNECTIONS = (64, 2000)
OPEN_LOOP_RATE_PER_CONNECTION = 50


@dataclass(frozen=True)
class Target:
    """Where and with what the load goes: the stack's URL and its processes."""

    base_url: str
    server_roles: Mapping[str, int]  # the stack's processes: role -> root pid
    service_roles: Mapping[str, int]  # the data services: name -> root pid
    server_cores: int
    loader_cpus: frozenset[int]
    # The server's and the services' cores: with the loader's, where other work would disturb
    # the level (the monitor's OTHER_ROLE); empty: not accounted (another host)
    server_cpus: frozenset[int] = frozenset()


def open_loop_connections(rate: float) -> int:
    low, high = OPEN_LOOP_CONNECTIONS
    return int(min(max(low, rate / OPEN_LOOP_RATE_PER_CONNECTION), high))


def load_request(
    target: Target,
    path: str,
    settings: LoadSettings,
    level: Level,
    expect_sha256: str | None,
    endpoint: Endpoint | None = None,
) -> LoadRequest:
    """One level's load; a suite's own `endpoint` sends its method, headers and body and
    expects its status."""
    closed = settings.mode is Mode.CLOSED
    connections = int(level.value) if closed else open_loop_connections(level.value)
    return LoadRequest(
        target.base_url + path,
        settings,
        connections,
        None if closed else level.value,
        target.loader_cpus,
        200 if endpoint is None else endpoint.status,
        expect_sha256,
        "GET" if endpoint is None else endpoint.method,
        () if endpoint is None else endpoint.header_lines,
        None if endpoint is None else endpoint.body,
    )


def measure(target: Target, req: LoadRequest, exits: ExitCheck) -> Measurement:
    """Run the load tool with every stack, service and loader process monitored.

    `exits` is polled before the level and while it runs: a stack or service process that
    exited stops the load at once and fails the level (`server-exited`). A load tool that
    fails once started fails only this level (`loader-failed`); one that cannot be started
    at all (not installed, not built) raises DriverError: no level could run.
    """
    dead = exits()
    if dead:
        return _measurement(target, req, None, {}, server_exited(dead, before_level=True))
    load = load_here(
        req,
        {**target.server_roles, **target.service_roles},
        exits,
        cpus=target.server_cpus | target.loader_cpus if target.server_cpus else frozenset(),
    )
    failure: LevelFailure | None = None
    dead = exits()
    if dead:  # the loader's own failure, if any, was only the consequence
        failure = server_exited(dead)
    elif load.error:
        failure = loader_failed(load.error)
    return _measurement(target, req, load.result, load.usage, failure, load.account)


@dataclass(frozen=True)
class LoadHere:
    """What the load tool on this machine gave: its result (None when it failed), the usage
    of every monitored role (the loader's too) and its failure's message ("" when none)."""

    result: LoadResult | None
    usage: Mapping[str, RoleUsage]
    error: str
    account: CoreAccount | None = None  # the level's cores accounted (None: not asked for)


def load_here(
    req: LoadRequest,
    roles: Mapping[str, int],
    exits: ExitCheck,
    start_other_monitors: Callable[[], None] = lambda: None,
    cpus: frozenset[int] = frozenset(),
) -> LoadHere:
    """The one level-measuring loop of the load tool on this machine, for a local level and
    for a spread one whose loader runs here: the warm-up pass, then the measured pass with
    `roles` and the loader monitored, stopped at once when `exits` reports a dead process. A
    tool that fails once started is a message, not an error; one that cannot start at all
    raises DriverError. `start_other_monitors`: the monitors of other hosts, started with
    this one's, after the warm-up pass."""
    result: LoadResult | None = None
    loader_error = ""
    driver = get_driver(req.settings.driver)
    # wrk and ab warm up in a separate pass; it runs before the monitor starts so that its
    # requests and CPU are not counted in the level's usage.
    warm_up(driver, req)
    start_other_monitors()
    monitor = Monitor(roles, cpus=cpus).start()
    group = cgroups.new_group("loader")  # its CPU is counted to its exit, not to a last sample
    try:
        load = start_load(driver, req, warm_up_first=False, group=group)
        monitor.add_role("loader", load.pid)
        try:
            with Watcher(exits, on_exit=load.proc.kill):
                result = load.finish(timeout_s=level_budget_s(req.settings))
        except DriverError as exc:
            loader_error = str(exc)
        finally:
            load.kill()
    finally:
        usage = monitor.stop()
        if group is not None:
            group.close()
    return LoadHere(result, usage, loader_error, monitor.account)


def _measurement(
    target: Target,
    req: LoadRequest,
    result: LoadResult | None,
    usage: Mapping[str, RoleUsage],
    failure: LevelFailure | None,
    account: CoreAccount | None = None,
) -> Measurement:
    s = req.settings
    return Measurement(
        account=account,
        result=result,
        usage=usage,
        mode=s.mode,
        connections=req.connections,
        duration_s=s.duration_s,
        server_roles=tuple(target.server_roles),
        server_cores=target.server_cores,
        loader_cores=len(req.loader_cpus),
        failure=failure,
    )


def level_record(
    case_id: int,
    level: Level,
    started_at: float,
    settings: LoadSettings,
    m: Measurement,
    verdict: Verdict,
) -> LevelRecord:
    failure = m.failure or LevelFailure("", "", "")
    r = m.result
    if r is None:  # nothing measured: zeros and empty figures, never invented ones
        return LevelRecord(
            case_id=case_id,
            level_index=level.index,
            level_value=level.value,
            repetition=level.repetition,
            driver=settings.driver.value,
            mode=settings.mode.value,
            keepalive=settings.keepalive.value,
            started_at=started_at,
            duration_s=0.0,
            completed=0,
            ok=0,
            errors={},
            requests_per_s=0.0,
            latency_us={},
            usage=dict(m.usage),
            cores=m.account,
            flags=verdict.flags,
            status=verdict.status,
            error_class=failure.error_class,
            error=failure.error,
            log_tail=failure.log_tail,
            command="",
            hosts=dict(m.hosts),
        )
    return LevelRecord(
        case_id=case_id,
        level_index=level.index,
        level_value=level.value,
        repetition=level.repetition,
        driver=r.driver.value,
        mode=settings.mode.value,
        keepalive=settings.keepalive.value,
        started_at=started_at,
        duration_s=r.duration_s,
        completed=r.completed,
        ok=r.ok,
        errors=dict(r.errors),
        requests_per_s=r.requests_per_s,
        latency_us=dict(r.latency_us),
        connect_us=r.connect_us,
        histogram=r.histogram,
        timeseries=r.timeseries,
        open_loop=r.open_loop,
        loader_cpu_s=r.loader_cpu_s,
        bytes_read=r.bytes_read,
        loader_engine=r.loader_engine,
        usage=dict(m.usage),
        cores=m.account,
        flags=verdict.flags,
        status=verdict.status,
        error_class=failure.error_class,
        error=failure.error,
        log_tail=failure.log_tail,
        command=" ".join(r.command),
        raw_output=r.raw_output[-RAW_OUTPUT_CHARS:],
        hosts=dict(m.hosts),
        start_skew_s=m.start_skew_s,
        loader_parts=m.loader_parts,
    )


def jit_warmup_request(
    target: Target,
    path: str,
    settings: LoadSettings,
    level: Level,
    warmup: Warmup,
    expect_sha256: str | None,
    endpoint: Endpoint | None = None,
) -> LoadRequest:
    """The JIT warm-up pass: the first level's load for the warm-up's seconds, by duration
    (never a request count), with no warm-up of its own."""
    pass_settings = msgspec.structs.replace(
        settings,
        duration_s=warmup.seconds,
        warmup_s=0.0,
        requests=None,
        requests_per_connection=None,
    )
    return load_request(target, path, pass_settings, level, expect_sha256, endpoint)


def jit_warmup_record(warmup: Warmup, level_value: float, m: Measurement) -> JitWarmupRecord:
    """What the warm-up pass measured, cold: its mean rate and its first and last full
    seconds (None without a per-second series: wrk and ab give none)."""
    r = m.result
    failure = m.failure.error if m.failure is not None else ""
    if r is None:
        return JitWarmupRecord(
            seconds=warmup.seconds,
            why=warmup.why,
            level_value=level_value,
            completed=0,
            errors=0,
            requests_per_s=0.0,
            first_second_rps=None,
            last_second_rps=None,
            failure=failure,
        )
    full = [s for s in r.timeseries or () if s.full]
    return JitWarmupRecord(
        seconds=warmup.seconds,
        why=warmup.why,
        level_value=level_value,
        completed=r.completed,
        errors=r.errors_total,
        requests_per_s=r.requests_per_s,
        first_second_rps=full[0].rate if full else None,
        last_second_rps=full[-1].rate if full else None,
        failure=failure,
    )
