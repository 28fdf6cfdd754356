"""The plan's time (config/estimate.py), against estimates computed by hand."""

from pathlib import Path

import msgspec
import pytest

from stackbench.config.estimate import (
    GUESS_RPS,
    Overheads,
    PastLevel,
    Rate,
    fitting_stacks,
    iteration_s,
    level_time,
    plan_timeline,
    rate_for,
    setup_key,
    timeout_bound_s,
    warmup_pass_s,
)
from stackbench.config.loadspec import DriverKind, KeepAlive, LoadSettings, Mode
from stackbench.config.plan import Plan, Round, build_plan
from stackbench.config.suite import parse_suite

# Round figures, so that every total below is easy to add up by hand.
OH = Overheads(
    run_start_s=3.0,
    stack_start_s=2.0,
    case_start_s=0.5,
    per_level_s=0.25,
    report_s=10.0,
    report_per_case_s=1.0,
    script_iteration_s=0.01,
)

AB = LoadSettings(
    driver=DriverKind.AB,
    keepalive=KeepAlive.OFF,
    duration_s=None,
    requests=1000,
    warmup_s=0,
    timeout_s=30,
)
AB_SETUP = "ab/closed/keepalive-off"


def past(stack: str, value: float, rps: float, at: float = 0.0, label: str = "db-report"):
    return PastLevel(stack, label, AB_SETUP, value, rps, at)


def test_a_duration_level_is_its_warm_up_duration_overhead_and_pause():
    s = LoadSettings(duration_s=12, warmup_s=1, pause_s=1)
    t = level_time(s, 50, None, OH)
    assert (t.seconds, t.load_s, t.source) == (12 + 1 + 0.25 + 1, 12, "duration")


def test_a_request_count_lasts_as_long_as_its_measured_rate_says():
    t = level_time(AB, 20, Rate(250, "measured", "x"), OH)
    # 1000 requests / 250 req/s = 4 s; no warm-up; 0.25 s overhead; 1 s pause
    assert (t.seconds, t.load_s, t.source) == (5.25, 4.0, "measured")


def test_requests_per_connection_scale_with_the_connections():
    s = msgspec.structs.replace(AB, requests=None, requests_per_connection=7)
    t = level_time(s, 300, Rate(70, "nearby", "x"), OH)
    assert t.load_s == 2100 / 70 == 30.0 and t.source == "nearby"


def test_never_measured_is_a_labelled_guess():
    t = level_time(AB, 1, None, OH)
    assert t.load_s == 1000 / GUESS_RPS and t.source == "guess" and "guess" in t.detail


def test_timeouts_bound_a_closed_loop():
    s = msgspec.structs.replace(AB, requests=2100, timeout_s=2.0)
    # ceil(2100 / 300) = 7 requests per connection, each at most 2 s: 14 s, not 2100 / 10
    assert timeout_bound_s(s, 300, 2100) == 14.0
    t = level_time(s, 300, Rate(10, "measured", "10 req/s"), OH)
    assert (t.load_s, t.source) == (14.0, "timeout bound")
    guessed = level_time(s, 300, None, OH)  # 2100 / 50 = 42 s > 14 s: still a guess
    assert (guessed.load_s, guessed.source) == (14.0, "guess")


def test_the_engine_level_budget_bounds_it_too():
    s = LoadSettings(duration_s=None, requests=100_000, timeout_s=3, warmup_s=0)
    # ceil(100000 / 1) x 3 s = 300,000 s, but the engine kills a level after
    # 0 + 0 + 10 x 3 + 300 = 330 s
    assert timeout_bound_s(s, 1, 100_000) == 330.0


def test_an_open_loop_count_lasts_count_over_rate():
    s = LoadSettings(mode=Mode.OPEN, duration_s=None, requests=1000, warmup_s=0, pause_s=0)
    assert level_time(s, 200, None, OH).load_s == 5.0


def test_wrk_and_ab_warm_up_in_whole_seconds():
    assert warmup_pass_s(LoadSettings(driver=DriverKind.AB, warmup_s=0.5)) == 1.0
    assert warmup_pass_s(LoadSettings(driver=DriverKind.WRK, warmup_s=1.2)) == 2.0
    assert warmup_pass_s(LoadSettings(warmup_s=0.5)) == 0.5
    assert warmup_pass_s(LoadSettings(driver=DriverKind.AB, warmup_s=0)) == 0.0


def test_setup_key_names_driver_loop_and_keep_alive():
    assert setup_key(AB) == AB_SETUP
    assert setup_key(LoadSettings()) == "native/closed/keepalive-on"


def test_the_rate_is_the_median_of_the_newest_at_the_same_level():
    history = [past("php", 20, rps, at) for at, rps in enumerate([1, 100, 200, 300, 400, 500])]
    rate = rate_for(history, "php", "db-report", AB_SETUP, 20)
    # the newest five: 100..500, median 300; the oldest (1) is left out
    assert rate is not None and (rate.requests_per_s, rate.source) == (300, "measured")


def test_else_the_nearest_level_on_the_log_scale():
    history = [past("php", 100, 1000.0), past("php", 1000, 500.0)]
    at_300 = rate_for(history, "php", "db-report", AB_SETUP, 300)
    at_400 = rate_for(history, "php", "db-report", AB_SETUP, 400)
    # |ln 3| = 1.10 < |ln 0.3| = 1.20; |ln 4| = 1.39 > |ln 0.4| = 0.92
    assert at_300 is not None and (at_300.requests_per_s, at_300.source) == (1000.0, "nearby")
    assert at_400 is not None and at_400.requests_per_s == 500.0
    assert "at 1000 instead of 400" in at_400.detail


def test_else_the_slowest_other_stack_and_never_another_setup_or_workload():
    history = [past("node", 20, 220.0), past("go", 20, 900.0), past("php", 20, 1e6, label="x")]
    rate = rate_for(history, "php", "db-report", AB_SETUP, 20)
    assert rate is not None and (rate.requests_per_s, rate.source) == (220.0, "other stack")
    assert rate_for(history, "php", "db-report", "native/closed/keepalive-off", 20) is None
    # a rough rate that makes a level overrun its timeouts is still a guess
    # (1000 / 220 = 4.5 s, but ceil(1000 / 20) x 0.05 s = 2.5 s)
    slow = level_time(msgspec.structs.replace(AB, timeout_s=0.05), 20, rate, OH)
    assert slow.source == "guess"


SUITE = """
name = "t"
stacks = ["refserver", "refjit"]
workloads = ["hello"]
script_iterations = 100

[load]
driver = "ab"
keepalive = "off"
connections = [1, 20]
requests = 1000
warmup_s = 0
pause_s = 1
timeout_s = 30
repeat = 2
"""


def test_a_plan_timeline_adds_up_by_hand(tmp_path: Path, fake_inventory) -> None:
    path = tmp_path / "s.toml"
    path.write_text(SUITE)
    plan = build_plan(parse_suite(path), fake_inventory, None, None)
    setup = "ab/closed/keepalive-off"
    history = [
        PastLevel("refserver", "hello", setup, 1, 500.0, 0),
        PastLevel("refserver", "hello", setup, 20, 1000.0, 0),
        PastLevel("refjit", "hello", setup, 1, 250.0, 0),
    ]
    timeline = plan_timeline(plan, history, OH, {("refserver", "hello"): 0.002})
    # levels: refserver c=1 1000/500 = 2 s, c=20 1 s; refjit c=1 4 s, c=20 from c=1's rate
    # (nearby) 4 s; each + 0.25 overhead + 1 pause; 2 repetitions (rounds) of each
    levels = 2 * ((2 + 1.25) + (1 + 1.25) + (4 + 1.25) + (4 + 1.25))
    assert levels == 32.0 and timeline.seconds_of("level") == pytest.approx(levels)
    # two rounds x two stacks start; each case start 0.5, with its standalone timing in each
    # round (one a repetition, as the runner makes them): refserver 100 x 0.002 = 0.2 s,
    # refjit never timed, at refserver's timing of the same workload: 0.2 s; refjit's JIT
    # warm-up pass (1 s, fake stack, + 0.25 s its loader's start) before its case each round
    starts = 4 * 2.0 + 4 * 0.5 + 2 * (0.2 + 0.2) + 2 * 1.25
    assert timeline.seconds_of("stack start", "case start") == pytest.approx(starts)
    assert timeline.seconds_of("report") == 10 + 2 * 1.0  # two cases' charts
    assert timeline.total_s == pytest.approx(3 + starts + levels + 12)
    assert timeline.load_s == pytest.approx(2 * (2 + 1 + 4 + 4))
    assert timeline.sources() == {"measured": 6, "nearby": 2}
    with_calibration = plan_timeline(plan, history, OH, calibration_s=120)
    assert with_calibration.seconds_of("calibration") == 120


def test_the_standalone_timings_are_counted_as_the_runner_makes_them(
    tmp_path: Path, fake_inventory
) -> None:
    """script_timings a repetition, in each of the `repeat` rounds; a round that run
    --until-decided adds past them times nothing more."""
    per = {("refserver", "hello"): 0.002, ("refjit", "hello"): 0.004}

    def plan_of(text: str) -> Plan:
        path = tmp_path / "s.toml"
        path.write_text(text)
        return build_plan(parse_suite(path), fake_inventory, None, None)

    def starts(plan: Plan) -> float:
        return plan_timeline(plan, (), OH, per).seconds_of("case start")

    three = plan_of(SUITE.replace("iterations = 100", "iterations = 100\nscript_timings = 3"))
    untimed = plan_of(SUITE.replace("script_iterations = 100", ""))
    # 2 rounds x 3 timings x 100 iterations x (0.002 + 0.004) s a round's two cases
    assert starts(three) - starts(untimed) == pytest.approx(2 * 3 * 100 * 0.006)
    assert plan_timeline(three, (), OH, per).guessed_timings == 0
    # refjit never timed here: its 6 timings at refserver's timing of the same workload
    borrowed = plan_timeline(three, (), OH, {("refserver", "hello"): 0.002})
    assert (borrowed.borrowed_timings, borrowed.guessed_timings) == (6, 0)
    assert borrowed.borrowed_timing_s == pytest.approx(6 * 100 * 0.002)
    assert borrowed.seconds_of("case start") - starts(untimed) == pytest.approx(
        2 * 3 * 100 * (0.002 + 0.002)
    )
    # nothing timed here: all 12 at the guessed 0.01 s an iteration, and said so
    guessed = plan_timeline(three, (), OH, {})
    assert (guessed.guessed_timings, guessed.borrowed_timings) == (12, 0)
    assert guessed.guessed_timing_s == pytest.approx(12 * 100 * 0.01)
    assert guessed.seconds_of("case start") - starts(untimed) == pytest.approx(
        2 * 3 * 100 * (0.01 + 0.01)
    )
    extension = Plan(three.suite, three.stacks, (Round(2, three.stacks),))
    bare = Plan(untimed.suite, untimed.stacks, (Round(2, untimed.stacks),))
    assert starts(extension) == pytest.approx(starts(bare))


def test_a_standalone_iteration_is_timed_here_else_another_stacks_else_a_guess() -> None:
    timed = {("php", "db-report"): 0.0012, ("node", "db-report"): 0.0007, ("node", "x"): 0.5}
    assert iteration_s(timed, "php", "db-report", 0.01) == (0.0012, "timed")
    assert iteration_s(timed, "go", "db-report", 0.01) == (0.0012, "other stack")  # slowest
    assert iteration_s(timed, "go", "sha", 0.01) == (0.01, "guess")


def test_what_fits_a_budget(tmp_path: Path, fake_inventory) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        SUITE.replace("repeat = 2", "repeat = 1").replace("script_iterations = 100", "")
    )
    plan = build_plan(parse_suite(path), fake_inventory, None, None)
    history = [PastLevel(s, "hello", AB_SETUP, 1, 1000.0, 0) for s in ("refserver", "refjit")]
    timeline = plan_timeline(plan, history, OH)
    # fixed: 3 start + 10 report; refserver: 2 start + 0.5 case + 2 x (1 + 1.25) levels
    # + 1 its case's charts = 8 s; refjit: the same + its JIT warm-up pass 1.25 s = 9.25 s
    assert timeline.total_s == pytest.approx(13 + 8 + 9.25)
    assert fitting_stacks(timeline, 30.25) == (["refserver", "refjit"], pytest.approx(30.25))
    # first fit in the plan's order: refserver taken, refjit no longer fits beside it
    assert fitting_stacks(timeline, 30) == (["refserver"], pytest.approx(21.0))
    assert fitting_stacks(timeline, 12) == ([], 0.0)
