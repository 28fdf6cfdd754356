"""The exit code of a finished run, from its stored cases and levels (engine/outcome.py)."""

from stackbench.engine.outcome import run_outcome
from stackbench.errors import ExitCode
from stackbench.store.records import (
    CaseRow,
    Environment,
    LevelRow,
    PlacementSettings,
    RunRow,
    RunSettings,
)
from stackbench.store.store import RunData

SETTINGS = RunSettings(
    mode="closed",
    level_kind="connections",
    keepalive="on",
    driver="native",
    duration_s=1.0,
    requests=None,
    requests_per_connection=None,
    warmup_s=0.0,
    timeout_s=2.0,
    pause_s=0.0,
    repeat=1,
    threads=0,
    pipeline=1,
    jit_warmup=True,
    levels=(2.0,),
    max_error_rate=0.01,
    variant="full",
    description="",
    slo=None,
    search=None,
    script_iterations=0,
    variants={},
    workload_levels={},
    workload_durations={},
    placement=PlacementSettings(server=(0,), loader=(1,), services=(0,)),
)


def case(cid: int, status: str, stack: str = "node") -> CaseRow:
    return CaseRow(
        id=cid,
        run_id=1,
        stack=stack,
        workload="hello",
        label="hello",
        path="/hello",
        params={},
        status=status,
    )  # type: ignore[arg-type]


def level(cid: int, status: str = "ok", error_class: str = "") -> LevelRow:
    return LevelRow(
        id=cid * 10,
        case_id=cid,
        level_index=0,
        level_value=2.0,
        repetition=0,
        driver="native",
        mode="closed",
        keepalive="on",
        started_at=0.0,
        duration_s=1.0,
        completed=10,
        ok=10,
        errors={},
        requests_per_s=10.0,
        latency_us={},
        usage={},
        status=status,  # type: ignore[arg-type]
        error_class=error_class,
        command="",
    )  # type: ignore[arg-type]


def run_data(cases: list[CaseRow], levels: list[LevelRow]) -> RunData:
    run = RunRow(
        id=1,
        suite_name="s",
        suite_path="/s.toml",
        suite_text="",
        settings=SETTINGS,
        environment=Environment(),
        started_at=0.0,
        status="complete",
    )
    return RunData(run, cases, levels, [])


def test_every_case_completed_is_0_even_with_invalid_levels_and_unavailable_stacks():
    data = run_data(
        [case(1, "ok"), case(2, "unavailable", "php-fpm-nginx")], [level(1), level(1, "invalid")]
    )
    outcome = run_outcome(data)
    assert outcome.exit_code == ExitCode.OK == 0 and outcome.problems == ()


def test_a_failed_case_is_4():
    outcome = run_outcome(run_data([case(1, "ok"), case(2, "failed", "go-nethttp")], [level(1)]))
    assert outcome.exit_code == ExitCode.STACK_FAILED == 4
    assert outcome.problems == ("1 case(s) failed (go-nethttp): see the reasons above",)


def test_a_server_that_exited_during_a_level_is_4_although_the_case_finished():
    outcome = run_outcome(
        run_data([case(1, "ok")], [level(1), level(1, "failed", "server-exited")])
    )
    assert outcome.exit_code == 4
    assert outcome.problems == (
        "1 level(s) failed: a stack or service process exited (server-exited)",
    )


def test_a_loader_failure_alone_is_3_and_a_stack_failure_wins_over_it():
    loader_only = run_data([case(1, "ok")], [level(1, "failed", "loader-failed")])
    assert run_outcome(loader_only).exit_code == ExitCode.ENVIRONMENT == 3
    both = run_data([case(1, "ok"), case(2, "failed")], [level(1, "failed", "loader-failed")])
    outcome = run_outcome(both)
    assert outcome.exit_code == 4 and len(outcome.problems) == 2


def test_a_case_that_never_ran_is_not_a_success():
    outcome = run_outcome(run_data([case(1, "ok"), case(2, "pending")], [level(1)]))
    assert outcome.exit_code == 4 and outcome.problems == ("1 case(s) never ran",)
