"""The judge on hand-made measurements: status, flags and SLO verdicts, no process started."""

from dataclasses import replace

from stackbench.config.loadspec import DriverKind, LoadResult, Mode
from stackbench.config.measured import CoreAccount, CoreSetUse, CpuUser, OpenLoop, RoleUsage
from stackbench.config.slo import SloStatus
from stackbench.config.suite import Slo
from stackbench.engine.judge import (
    Measurement,
    disturbed_flag,
    judge_level,
    slo_failed,
    slo_outcome,
    starvation_flag,
    sustained,
)
from stackbench.store.records import Flag, LevelFlag, LevelRecord
from tests.measured import open_loop as schedule


def usage(cpu_percent: float) -> RoleUsage:
    return RoleUsage(
        cpu_user_s=1.0,
        cpu_sys_s=0.0,
        cpu_percent=cpu_percent,
        rss_max_bytes=1,
        rss_mean_bytes=1,
        threads_max=1,
        processes_max=1,
        ctx_voluntary=0,
        ctx_involuntary=0,
    )


def result(
    completed: int = 1000,
    errors: dict[str, int] | None = None,
    unanswered: tuple[int, float] | None = (0, 0.0),
    max_us: float = 3000.0,
    warnings: tuple[str, ...] = (),
) -> LoadResult:
    return LoadResult(
        DriverKind.NATIVE,
        ("stackbench-load",),
        5.0,
        completed,
        completed,
        errors or {},
        completed / 5.0,
        {"p50": 1000.0, "max": max_us},
        unanswered_at_end=unanswered,
        warnings=warnings,
    )


def measured(
    r: LoadResult,
    loader_cpu: float = 20.0,
    server_cpu: float = 95.0,
    mode: Mode = Mode.CLOSED,
    connections: int = 25,
    duration_s: float | None = 5.0,
) -> Measurement:
    return Measurement(
        result=r,
        usage={"server": usage(server_cpu), "loader": usage(loader_cpu)},
        mode=mode,
        connections=connections,
        duration_s=duration_s,
        server_roles=("server",),
        server_cores=1,
        loader_cores=1,
    )


def texts(flags: tuple[Flag, ...]) -> tuple[str, ...]:
    """Flags as the store keeps them."""
    return tuple(f.text for f in flags)


def test_a_clean_level_is_ok_without_flags():
    verdict = judge_level(measured(result()), 0.01)
    assert verdict.status == "ok" and texts(verdict.flags) == ()


def test_the_loader_warnings_come_first_and_do_not_invalidate():
    verdict = judge_level(measured(result(warnings=("raised RLIMIT_NOFILE",))), 0.01)
    assert verdict.status == "ok" and texts(verdict.flags) == ("raised RLIMIT_NOFILE",)


def test_a_saturated_loader_against_an_idle_server_is_loader_bound():
    # loader 95% of its one core (>= 90%), server 50% of its one core (< 90%)
    assert texts(judge_level(measured(result(), loader_cpu=95, server_cpu=50), 0.01).flags) == (
        "loader-bound",
    )
    # both saturated: the server is the limit, not the loader
    assert texts(judge_level(measured(result(), loader_cpu=95, server_cpu=95), 0.01).flags) == ()


def test_a_spread_level_is_loader_bound_when_one_loader_host_is():
    def spread(*loaders: float) -> Measurement:
        m = measured(result(), server_cpu=50)
        per_host = {f"loader@h{i}": usage(cpu) for i, cpu in enumerate(loaders, start=2)}
        return Measurement(
            result=m.result,
            usage={"server": usage(50), **per_host},
            mode=m.mode,
            connections=m.connections,
            duration_s=m.duration_s,
            server_roles=m.server_roles,
            server_cores=1,
            loader_cores=1,
        )

    assert texts(judge_level(spread(30, 95), 0.01).flags) == ("loader-bound",)
    assert texts(judge_level(spread(30, 60), 0.01).flags) == ()


def test_error_rate_above_the_limit_invalidates_with_the_figures():
    # 20 timeouts are attempts that never completed: 20 / (1000 + 20) = 1.96%
    verdict = judge_level(measured(result(errors={"timeout": 20})), 0.01)
    assert verdict.status == "invalid"
    assert texts(verdict.flags) == ("invalid: error rate 2.0% > 1.0%",)
    assert judge_level(measured(result(errors={"timeout": 20})), 0.02).status == "ok"


def test_fewer_answers_than_connections_in_a_timed_closed_level_is_unsteady():
    verdict = judge_level(measured(result(completed=10), connections=25), 0.01)
    assert verdict.status == "invalid"
    assert texts(verdict.flags) == (
        "unsteady: 10 responses for 25 connections in 5 s; raise duration_s",
    )
    # a request-count level, or the open loop, cannot be cut short that way
    assert judge_level(measured(result(completed=10), duration_s=None), 0.01).status == "ok"
    assert judge_level(measured(result(completed=10), mode=Mode.OPEN), 0.01).status == "ok"


def test_a_loader_out_of_descriptors_or_ports_is_named_not_a_short_level():
    # concurrency-sweep's php-apache level at 8,500 connections (run 2), but for its timeouts:
    # 3,307 responses and 4,000 loader errors end fewer requests than there are connections
    errors = {"too_many_files": 3000, "address_exhausted": 1000}
    level = measured(result(completed=3307, errors=errors), connections=8500, duration_s=20.0)
    verdict = judge_level(level, 1.0)
    assert verdict.status == "invalid"
    assert texts(verdict.flags) == (
        "unsteady: 3307 responses for 8500 connections in 20 s: the loader could not hold "
        "its connections (too_many_files 3000, address_exhausted 1000); raise the loader's "
        "descriptor limit (ulimit -Hn; stackbench raises it itself where it may: root with "
        "CAP_SYS_RESOURCE), widen net.ipv4.ip_local_port_range, or give the loader a host of "
        "its own ([placement] loader_hosts)",
    )
    # with its 26,615 timeouts every connection ended requests: the loader's failures alone
    # make it invalid, named as such
    errors = {"timeout": 26615, "too_many_files": 304692, "address_exhausted": 4335}
    level = measured(result(completed=3307, errors=errors), connections=8500, duration_s=20.0)
    verdict = judge_level(level, 1.0)
    assert verdict.status == "invalid"
    (flag,) = texts(verdict.flags)
    assert flag.startswith(
        "invalid: the loader could not hold the 8500 connections (too_many_files 304692, "
        "address_exhausted 4335); raise the loader's descriptor limit"
    )


def test_a_server_that_times_out_every_request_is_steady_not_start_up():
    # php-apache at 10,000 connections, 10-s level, 3-s timeout: no answer, three timeouts
    # a connection; the timeouts ended every connection's requests
    level = measured(
        result(completed=0, errors={"timeout": 30000}), connections=10000, duration_s=10.0
    )
    assert judge_level(level, 1.0).status == "ok"
    # one timeout short of one a connection: some connection's request was still in flight
    short = measured(
        result(completed=0, errors={"timeout": 9999}), connections=10000, duration_s=10.0
    )
    assert texts(judge_level(short, 1.0).flags) == (
        "unsteady: 0 responses for 10000 connections in 10 s; raise duration_s",
    )


def test_starvation_is_flagged_only_beyond_the_longest_answered_request():
    flag = starvation_flag(result(unanswered=(292, 5.9e6), max_us=3000.0))
    assert flag is not None
    assert flag.kind is LevelFlag.STARVED
    assert flag.text.startswith("starved: a request was still unanswered after 5.9 s")
    assert "292 in flight" in flag.detail
    assert starvation_flag(result(unanswered=(25, 4000.0))) is None  # normal end of a level
    assert starvation_flag(result(unanswered=(25, 2.5e6), max_us=3.0e6)) is None  # slow only
    assert starvation_flag(result(unanswered=(0, 9e6))) is None
    assert starvation_flag(result(unanswered=None)) is None  # wrk and ab do not say
    # starved is a warning: the level stays ok
    verdict = judge_level(measured(result(unanswered=(3, 5e6))), 0.01)
    assert verdict.status == "ok" and verdict.flags[0].kind is LevelFlag.STARVED


def level(
    p99_us: float | None,
    completed: int = 1000,
    errors: int = 0,
    open_loop: OpenLoop | None = None,
) -> LevelRecord:
    latency = {"p50": 100.0} if p99_us is None else {"p50": 100.0, "p99": p99_us}
    return LevelRecord(
        case_id=1,
        level_index=0,
        level_value=10.0,
        repetition=0,
        driver="native",
        mode="closed",
        keepalive="on",
        started_at=0.0,
        duration_s=5.0,
        completed=completed,
        ok=completed,
        errors={"status": errors} if errors else {},
        requests_per_s=200.0,
        latency_us=latency,
        open_loop=open_loop,
        usage={},
        status="ok",
        command="",
    )


SLO = Slo(percentile=99, latency_ms=5.0, max_error_rate=0.01, stop_after_failures=2)


def test_the_slo_is_judged_on_the_median_repetition():
    # p99 of 4, 6 and 5.5 ms: median 5.5 ms > 5 ms
    outcome = slo_outcome([level(4000), level(6000), level(5500)], SLO)
    assert outcome.status is SloStatus.FAIL and "5.5 ms > 5 ms" in outcome.reason
    assert slo_outcome([level(4000), level(6000), level(4500)], SLO).status is SloStatus.PASS
    assert slo_failed([level(6000)], SLO) and not slo_failed([level(4000)], SLO)


def test_the_slo_is_unknown_when_a_repetition_lacks_the_percentile():
    outcome = slo_outcome([level(4000), level(None)], SLO)
    assert outcome.status is SloStatus.UNKNOWN and not slo_failed([level(None)], SLO)


def test_the_slo_fails_on_errors_before_latency():
    # 20 status errors among 1000 completed responses: 2% > 1%
    outcome = slo_outcome([level(1000, errors=20)], SLO)
    assert outcome.status is SloStatus.FAIL and "error rate 2.00% > 1.00%" in outcome.reason


def test_an_open_loop_probe_holds_when_achieved_and_within_the_slo():
    assert sustained(level(4000, open_loop=schedule(sustained=True)), SLO)
    assert not sustained(level(4000, open_loop=schedule(sustained=False)), SLO)
    assert not sustained(level(6000, open_loop=schedule(sustained=True)), SLO)
    assert sustained(level(4000), SLO)  # wrk/ab in open loop: no schedule to judge


def test_a_level_whose_server_exited_is_failed_whatever_its_figures():
    from stackbench.engine.judge import LevelFailure

    failure = LevelFailure(
        "server-exited",
        "node process 'server' killed by signal 9 (SIGKILL) (during the level)",
        "FATAL",
    )
    clean = measured(result(warnings=("raised RLIMIT_NOFILE",)))
    verdict = judge_level(Measurement(**{**clean.__dict__, "failure": failure}), 0.01)
    assert verdict.status == "failed"
    assert texts(verdict.flags) == (
        "failed: server-exited: node process 'server' killed by signal 9 "
        "(SIGKILL) (during the level)",
        "raised RLIMIT_NOFILE",
    )
    nothing = Measurement(
        **{
            **clean.__dict__,
            "result": None,
            "usage": {},
            "failure": LevelFailure("loader-failed", "exited 1", ""),
        }
    )
    assert judge_level(nothing, 0.01).status == "failed"


def cores(
    roles: tuple[str, ...],
    other_s: float,
    steal_s: float = 0.0,
    unseen_s: float = 0.0,
    no_task_s: float = 0.0,
) -> CoreSetUse:
    return CoreSetUse(
        cores=(0,) if roles == ("server",) else (1,),
        roles=roles,
        busy_s=10.0,
        interrupts_s=0.0,
        roles_s=10.0 - other_s,
        stackbench_s=0.0,
        kernel_threads_s=0.0,
        named_other_s=other_s - max(0.0, unseen_s),
        unseen_s=unseen_s,
        other_s=other_s,
        steal_s=steal_s,
        roles_per_s=(),
        other_per_s=(),
        steal_per_s=(),
        no_task_s=no_task_s,
    )


def accounted(*sets: CoreSetUse, top: tuple[CpuUser, ...] = ()) -> CoreAccount:
    return CoreAccount(
        method="cgroup v2 (cpu.stat)",
        sampled="",
        irq_time_apart=False,
        elapsed_s=10.0,
        sets=sets,
        top=top,
    )


def test_a_disturbance_beyond_the_noise_band_flags_the_level():
    """13% of the server's core over a 10-s level (1.3 s) could move a CPU-bound figure by
    13%, beyond the 2% band; it is named, with what no one saw."""
    burner = CpuUser(pid=77, name="burn", kernel_thread=False, cpu_s=1.0)
    m = replace(
        measured(result()),
        account=accounted(cores(("server",), 1.3, unseen_s=0.3), top=(burner,)),
    )
    (flag,) = judge_level(m, 0.01).flags
    assert flag.kind is LevelFlag.DISTURBED
    assert flag.detail == (
        "other processes used 13.0% of core 0 (server), more than the 2% noise band "
        "allows (burn (pid 77) 10%, processes too short-lived to name 3%, of a core); "
        "repeat it on a quiet machine (stackbench doctor names what runs)"
    )


def test_a_disturbance_within_the_band_does_not():
    # 2% of the server's core and 1.9% of the loader's: each within the band
    m = replace(
        measured(result()),
        account=accounted(cores(("server",), 0.2), cores(("loader",), 0.19)),
    )
    assert judge_level(m, 0.01).flags == ()
    assert disturbed_flag(None) is None


def test_steal_counts_with_the_other_processes_and_is_said():
    """1.5% other and 1% stolen on the loader's core: 2.5% together, beyond the band."""
    m = replace(
        measured(result()),
        account=accounted(cores(("server",), 0.0), cores(("loader",), 0.15, steal_s=0.1)),
    )
    flag = disturbed_flag(m.account)
    assert flag is not None and flag.detail.startswith(
        "other processes used 1.5% of core 1 (loader) and the hypervisor stole 1.0%, "
        "more than the 2% noise band allows;"
    )


def test_the_kernels_work_in_no_task_is_not_a_disturbance_but_is_said():
    """The quiet loader at 7,000 clients: 2.6% of its core in no task, in seconds that
    forked nothing unseen; no flag. Beside a real disturbance it is said, apart."""
    quiet = cores(("loader",), 0.0, no_task_s=0.26)
    assert disturbed_flag(accounted(cores(("server",), 0.0), quiet)) is None
    busy = cores(("server",), 1.3, unseen_s=0.3, no_task_s=0.1)
    flag = disturbed_flag(accounted(busy, quiet))
    assert flag is not None and (
        "(processes too short-lived to name 3%, kernel work in no task 4%, the level's own, "
        "not counted, of a core)" in flag.detail
    )


def test_cores_no_role_uses_are_not_judged():
    m = replace(measured(result()), account=accounted(cores((), 5.0)))
    assert disturbed_flag(m.account) is None
