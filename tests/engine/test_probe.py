"""Which rates a plan probes before it is estimated (engine/probe.py), by hand."""

from pathlib import Path

import pytest

from stackbench.config.estimate import OVERHEADS, PastLevel
from stackbench.config.loadspec import LoadSettings
from stackbench.config.plan import build_plan
from stackbench.config.suite import parse_suite
from stackbench.engine.probe import (
    PROBE_EXTRA_S,
    PROBE_ITERATIONS,
    PROBE_PAUSE_S,
    PROBE_S,
    PROBE_STACK_S,
    probe_need,
    probe_settings,
)

SETUP = "ab/closed/keepalive-off"

SUITE = """
name = "t"
stacks = ["refserver", "refjit"]
workloads = ["hello", "data"]
script_iterations = 10

[load]
driver = "ab"
keepalive = "off"
connections = [1, 20, 200]
requests = 1000
warmup_s = 2
pause_s = 1
timeout_s = 30
repeat = 3
"""


def plan_of(tmp_path: Path, fake_inventory, text: str = SUITE):
    path = tmp_path / "s.toml"
    path.write_text(text)
    return build_plan(parse_suite(path), fake_inventory, None, None)


def probed_levels(need) -> dict[tuple[str, str], list[float]]:
    assert need.plan is not None
    return {
        (s.name, c.spec.label): [lv.value for lv in c.levels]
        for s in need.plan.stacks
        for c in s.cases
    }


def test_with_nothing_measured_every_case_is_probed_at_its_lowest_and_highest_level(
    tmp_path: Path, fake_inventory
) -> None:
    plan = plan_of(tmp_path, fake_inventory)
    need = probe_need(plan, [])
    assert need.guessed == 2 * 2 * 3 * 3  # 2 stacks x 2 workloads x 3 levels x 3 repetitions
    assert probed_levels(need) == {
        ("refserver", "hello"): [1, 200],
        ("refserver", "data?n=128"): [1, 200],
        ("refjit", "hello"): [1, 200],
        ("refjit", "data?n=128"): [1, 200],
    }
    assert need.probes == 8
    # and each case's standalone timing, never timed here: 3 planned a case (one a repetition)
    assert (need.timed_cases, need.guessed_timings) == (4, 12)
    # each probe: 3 s measured + 1 s warm-up (the suite's 2 s, at most 1) + 0.5 s pause +
    # 0.5 s its loader's start; each timing 10 iterations at the plan's guess; each of the 2
    # stacks' start and stop 3 s
    timing = 10 * OVERHEADS.script_iteration_s
    assert need.seconds == pytest.approx(
        8 * (PROBE_S + 1 + PROBE_PAUSE_S + PROBE_EXTRA_S) + 4 * timing + 6
    )
    assert PROBE_STACK_S == 3


def test_the_probe_keeps_what_decides_a_rate_and_measures_once_for_a_few_seconds(
    tmp_path: Path, fake_inventory
) -> None:
    plan = plan_of(tmp_path, fake_inventory)
    need = probe_need(plan, [])
    assert need.plan is not None
    load = need.plan.suite.load
    before = plan.suite.load
    assert (load.driver, load.mode, load.keepalive) == (
        before.driver,
        before.mode,
        before.keepalive,
    )
    assert (load.requests, load.duration_s, load.repeat, load.jit_warmup) == (
        None,
        PROBE_S,
        1,
        False,
    )
    # a timing of the suite's 10 iterations (fewer than PROBE_ITERATIONS), once a case
    assert (need.plan.suite.script_iterations, need.plan.suite.script_timings) == (10, 1)
    assert need.plan.suite.slo is None
    assert not need.plan.interleaved  # one round: each stack started once


def test_a_rate_measured_here_for_the_stack_needs_no_probe_and_another_stacks_does(
    tmp_path: Path, fake_inventory
) -> None:
    plan = plan_of(tmp_path, fake_inventory)
    history = [
        # refserver hello measured at 20: its levels 1 and 200 are 'nearby', not guessed
        PastLevel("refserver", "hello", SETUP, 20, 800.0, 0),
        # refserver data only under another setup: still a guess
        PastLevel("refserver", "data?n=128", "native/closed/keepalive-on", 20, 9000.0, 0),
        # refjit data only measured by another stack's rate would be a rough guess:
        PastLevel("other", "data?n=128", SETUP, 20, 100.0, 0),
    ]
    # every standalone timing timed here: only the levels are at stake
    timed = {(s, w): 0.001 for s in ("refserver", "refjit") for w in ("hello", "data?n=128")}
    need = probe_need(plan, history, timed)
    assert probed_levels(need) == {
        ("refserver", "data?n=128"): [1, 200],
        ("refjit", "hello"): [1, 200],
        ("refjit", "data?n=128"): [1, 200],
    }


def test_timed_and_open_loop_levels_are_never_probed(tmp_path: Path, fake_inventory) -> None:
    untimed = SUITE.replace("script_iterations = 10\n", "")
    timed = untimed.replace("requests = 1000", "duration_s = 5")
    assert probe_need(plan_of(tmp_path, fake_inventory, timed), []).plan is None
    open_loop = (
        untimed.replace('driver = "ab"', 'driver = "native"\nmode = "open"')
        .replace("connections = [1, 20, 200]", "rates = [100, 200]")
        .replace("requests = 1000", "duration_s = 5")
        .replace('keepalive = "off"', 'keepalive = "on"')
    )
    need = probe_need(plan_of(tmp_path, fake_inventory, open_loop), [])
    assert need.plan is None and need.guessed == 0 and need.seconds == 0


def test_probe_settings_leave_the_suites_own_settings_alone() -> None:
    settings = LoadSettings(duration_s=None, requests=500, warmup_s=0.2, repeat=4)
    probe = probe_settings(settings)
    assert (probe.warmup_s, probe.requests, probe.repeat) == (0.2, None, 1)
    assert (settings.requests, settings.repeat) == (500, 4)


def test_a_standalone_timing_never_timed_here_is_timed_once_without_its_levels(
    tmp_path: Path, fake_inventory
) -> None:
    # timed levels: nothing to probe but the timings, at PROBE_ITERATIONS of the suite's 5,000
    text = SUITE.replace("requests = 1000", "duration_s = 5").replace(
        "script_iterations = 10", "script_iterations = 5000"
    )
    need = probe_need(plan_of(tmp_path, fake_inventory, text), [])
    assert probed_levels(need) == {
        ("refserver", "hello"): [],
        ("refserver", "data?n=128"): [],
        ("refjit", "hello"): [],
        ("refjit", "data?n=128"): [],
    }
    assert need.plan is not None and need.plan.suite.script_iterations == PROBE_ITERATIONS
    assert (need.probes, need.timed_cases, need.guessed) == (0, 4, 0)
    # timed here for refserver: only refjit's timings are probed (another stack's timing of
    # the workload is a rough guess, as another stack's rate is)
    timed = {("refserver", "hello"): 0.002, ("refserver", "data?n=128"): 0.003}
    need = probe_need(plan_of(tmp_path, fake_inventory, text), [], timed)
    assert probed_levels(need) == {("refjit", "hello"): [], ("refjit", "data?n=128"): []}
    timed |= {("refjit", "hello"): 0.002, ("refjit", "data?n=128"): 0.003}
    assert probe_need(plan_of(tmp_path, fake_inventory, text), [], timed).plan is None
