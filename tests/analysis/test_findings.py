"""Every flag a finding: each kind of flag, with its reason and numbers, never dropped."""

import msgspec

from stackbench.analysis.analysis import Analysis, analyse
from stackbench.analysis.findings import FAILURE_WHY, findings
from stackbench.engine.judge import LevelFailure
from stackbench.store.records import (
    CaseRecord,
    Environment,
    Flag,
    JitWarmupRecord,
    LevelFlag,
    LevelRow,
    has_flag,
)
from stackbench.store.store import RunData, Store
from tests.analysis.synthetic_series import flat, ramp_then_plateau
from tests.analysis.test_levelsteady import row
from tests.store.test_store import run_record

UNSTEADY = LevelFlag.UNSTEADY.detail("3 responses for 50 connections in 5 s; raise duration_s")
STARVED = LevelFlag.STARVED.detail(
    "a request was still unanswered after 4.2 s at the end (longest answered: "
    "0.80 s; 36 in flight at the end)"
)


def analysed(rows_of: dict[str, list[LevelRow]]) -> Analysis:
    store = Store(":memory:")
    run = store.start_run(run_record())
    for stack in rows_of:
        store.add_case(
            CaseRecord(
                run_id=run, stack=stack, workload="hello", label="hello", path="/hello", params={}
            )
        )
    data = store.load_run(run)
    levels = [
        msgspec.structs.replace(r, case_id=c.id) for c in data.cases for r in rows_of[c.stack]
    ]
    return analyse(RunData(data.run, data.cases, levels, []))


def texts(a: Analysis) -> list[str]:
    return [f.text for f in findings(a)]


def test_flags_with_reasons_become_findings_with_them() -> None:
    invalid = msgspec.structs.replace(row(None), flags=(UNSTEADY,), status="invalid")
    starved = msgspec.structs.replace(row(None), flags=(STARVED,))
    found = findings(analysed({"php": [invalid], "node": [starved]}))
    by_stack = {f.text.split(":")[0]: f for f in found if "at level(s)" in f.text}
    assert by_stack["php"].severity == "error"
    assert "raise duration_s" in by_stack["php"].text and "unsteady" in by_stack["php"].text
    assert "4.2 s" in by_stack["node"].text and "36 in flight" in by_stack["node"].text
    assert by_stack["node"].severity == "warn"


def test_a_load_tools_own_warning_is_reported_in_its_words() -> None:
    odd = msgspec.structs.replace(row(None), flags=(Flag(None, "raised RLIMIT_NOFILE to 4096"),))
    found = [t for t in texts(analysed({"php": [odd]})) if "RLIMIT" in t]
    assert found == ["php: raised RLIMIT_NOFILE to 4096 at level(s) 25"]


def test_a_level_whose_server_exited_says_so_as_the_judge_flags_it() -> None:
    """The judge writes `failed: server-exited: ...` (LevelFailure.flag); the finding names
    the server's exit, with the process and its status, as one error."""
    failure = LevelFailure("server-exited", "php-fpm exited with 139", "")
    crashed = msgspec.structs.replace(row(None), flags=(failure.flag,), status="failed")
    found = [f for f in findings(analysed({"php": [crashed]})) if "at level(s)" in f.text]
    assert len(found) == 1 and found[0].severity == "error"
    assert FAILURE_WHY["server-exited"] in found[0].text
    assert "php-fpm exited with 139" in found[0].text


def test_noisy_carries_its_cv() -> None:
    rows = [
        msgspec.structs.replace(row(None, repetition=i), requests_per_s=v)
        for i, v in enumerate((1000.0, 1300.0))
    ]
    joined = " ".join(texts(analysed({"go": rows})))
    # sd(1000, 1300) = 212.1, mean 1150: CV 18.4%
    assert "noisy at level(s) 25" in joined
    assert "throughput CV 18.4% over 2 repetitions" in joined


def test_warm_up_is_a_finding_with_its_length_and_cold_figure() -> None:
    rps = list(ramp_then_plateau(30, 10, 0.01, seed=5))
    warm = row(rps, requests_per_s=sum(rps) / 30)
    joined = " ".join(texts(analysed({"java": [warm]})))
    assert "java at 25 connections: warm-up of" in joined
    assert "vs whole level" in joined


def test_no_series_and_no_steady_state_say_where_figures_come_from() -> None:
    short = row([1000.0] * 4)
    joined = " ".join(
        texts(
            analysed(
                {"wrk": [row(None)], "short": [short], "flat": [row(list(flat(20, 0.01, seed=1)))]}
            )
        )
    )
    assert "wrk: level(s) 25 have no per-second series" in joined
    assert "too short to find a steady state" in joined and "whole-level figures" in joined
    assert "flat: steady from the start (flat) at level(s) 25" in joined


def test_repetitions_with_warm_ups_of_different_length_are_not_noisy() -> None:
    reps = [list(ramp_then_plateau(30, ramp, 0.01, seed=ramp)) for ramp in (4, 12)]
    rows = [row(rps, repetition=i, requests_per_s=sum(rps) / 30) for i, rps in enumerate(reps)]
    # Whole-level figures differ by ~15%: noisy by them, not by the steady windows.
    assert abs(rows[0].requests_per_s / rows[1].requests_per_s - 1) > 0.1
    a = analysed({"java": rows})
    agg = a.workloads[0].cases[0].aggregates[0]
    assert not has_flag(agg.flags, LevelFlag.NOISY) and agg.throughput_cv < 0.02


def test_a_jit_warm_up_pass_is_a_finding_with_cold_and_warm_figures() -> None:
    store = Store(":memory:")
    run = store.start_run(run_record())
    case = store.add_case(
        CaseRecord(
            run_id=run, stack="java", workload="hello", label="hello", path="/hello", params={}
        )
    )
    store.set_jit_warmup(
        case,
        JitWarmupRecord(
            seconds=15,
            why="C2 compiles hot methods",
            level_value=25,
            completed=600_000,
            errors=0,
            requests_per_s=40_000,
            first_second_rps=2_400,
            last_second_rps=61_000,
        ),
    )
    data = store.load_run(run)
    levels = [msgspec.structs.replace(row(list(flat(20, 0.001, seed=2))), case_id=case)]
    joined = " ".join(texts(analyse(RunData(data.run, data.cases, levels, []))))
    assert (
        "java: a JIT warm-up pass of 15 s at 25 connections ran before the first level "
        "and is not in any figure (C2 compiles hot methods). Cold: 2,400 req/s in its "
        "first second, 61,000 in its last, 40,000 req/s over the pass; warm, the level "
        "at the same load: "
    ) in joined


def test_a_busy_machine_at_the_start_is_a_run_wide_warning() -> None:
    """doctor's warnings, kept in the run's environment through the store, become findings."""
    store = Store(":memory:")
    warned = Environment(cores=2, machine_warnings=("load average 3.1 on 2 cores",))
    run = store.start_run(msgspec.structs.replace(run_record(), environment=warned))
    data = store.load_run(run)
    assert data.run.environment == warned
    (busy,) = [f for f in findings(analyse(data)) if "busy" in f.text]
    assert (busy.severity, busy.workload) == ("warn", None)
    assert busy.text == ("the machine was busy when the run started: load average 3.1 on 2 cores")


def _java_case_with(rps: list[float], flags: tuple[Flag, ...] = ()) -> Analysis:
    """A java case with a 15-s JIT warm-up pass, then one level of the given series."""
    store = Store(":memory:")
    run = store.start_run(run_record())
    case = store.add_case(
        CaseRecord(
            run_id=run, stack="java", workload="hello", label="hello", path="/hello", params={}
        )
    )
    store.set_jit_warmup(
        case,
        JitWarmupRecord(
            seconds=15,
            why="C2 compiles hot methods",
            level_value=25,
            completed=150_000,
            errors=0,
            requests_per_s=10_000,
            first_second_rps=2_400,
            last_second_rps=12_000,
        ),
    )
    data = store.load_run(run)
    level = row(rps, requests_per_s=sum(rps) / len(rps))
    levels = [msgspec.structs.replace(level, case_id=case, flags=flags)]
    return analyse(RunData(data.run, data.cases, levels, []))


def test_a_level_climbing_throughout_says_a_longer_warmup_is_needed() -> None:
    # the #32 java-servlet level: 25 s climbing from 10.7k to 46.3k req/s
    climb = [10_683 + (46_326 - 10_683) * i / 24 for i in range(25)]
    joined = " ".join(texts(_java_case_with(climb)))
    assert ("Warm-up: did not settle within the 25-s level (its last 9 s still changed") in joined
    assert "a warm-up longer than 25 s may be needed" in joined
    assert "after the 15-s JIT warm-up pass; run --settle lengthens it" in joined


def test_a_level_settling_too_noisily_says_how_long_it_rose() -> None:
    rps = [float(v) for v in ramp_then_plateau(30, 20, 0.03, seed=1, start=0.22)]
    joined = " ".join(texts(_java_case_with(rps)))
    assert "steadiness not shown" in joined
    assert "Warm-up: rose until about " in joined
    assert "s in all; run --settle lengthens it)" in joined


def test_a_steady_level_has_no_warmup_sentence() -> None:
    joined = " ".join(texts(_java_case_with([float(v) for v in flat(30, 0.01, seed=2)])))
    assert "Warm-up:" not in joined


def test_a_disturbed_levels_warmup_is_not_judged() -> None:
    climb = [10_683 + (46_326 - 10_683) * i / 24 for i in range(25)]
    disturbed = LevelFlag.DISTURBED.detail("other processes used 53% of core 0 (server)")
    joined = " ".join(texts(_java_case_with(climb, (disturbed,))))
    assert "Warm-up: not judged, the level was disturbed" in joined
    assert "did not settle" not in joined
