"""The runner's progress events and the ETA tracker that reads them: where the run is, what
the plan says is left, levels that will not run dropped as soon as a later one reports."""

import pytest

from stackbench.config.estimate import Overheads, plan_timeline
from stackbench.config.plan import Level, build_plan
from stackbench.config.suite import parse_suite
from stackbench.engine.progress import EtaTracker, Phase, ProgressEvent, Slot, plan_slots


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def slots() -> list[Slot]:
    return [
        Slot("go", "hello", 0, 25, 0, 1, 7.0),
        Slot("go", "hello", 1, 100, 0, 1, 7.0),
        Slot("node", "hello", 0, 25, 0, 1, 7.0),
        Slot("node", "hello", 1, 100, 0, 1, 7.0),
    ]


def step(phase: Phase, text: str, stack: str | None = None) -> ProgressEvent:
    return ProgressEvent(phase, text, stack)


def done(stack: str, index: int, repetition: int = 0) -> ProgressEvent:
    return ProgressEvent(Phase.LEVEL, "", stack, "hello", Level(index, 25.0, repetition))


def test_eta_follows_the_plan_and_skips_what_will_not_run() -> None:
    clock = Clock()
    eta = EtaTracker(slots(), clock)
    assert eta.remaining_s() == 28.0
    eta.seen(step(Phase.START, "building", "go"))
    clock.now += 3
    assert eta.remaining_s() == 25.0  # 3 s into the first level
    clock.now += 10
    assert eta.remaining_s() == 21.0  # a level overrunning its plan counts as done, not less
    eta.seen(done("go", 0))
    assert eta.remaining_s() == 21.0 and eta.position == 1 and eta.phase == ""
    assert eta.elapsed_s() == 13.0
    eta.seen(step(Phase.FAILED, "FAILED: it crashed", "go"))
    assert eta.phase == "go: FAILED: it crashed"
    eta.seen(step(Phase.START, "starting", "node"))  # go's last level will not run
    assert eta.position == 2 and eta.remaining_s() == 14.0
    eta.seen(done("node", 1))  # a level found further on: the rest is dropped
    assert eta.remaining_s() == 0.0 and eta.current() is None


def test_the_stack_is_read_from_the_event_not_from_its_text() -> None:
    """The text of a run-wide event may look like 'name: ...' (hosts, services): only the
    event's stack field moves the tracker to another stack."""
    eta = EtaTracker(slots(), Clock())
    eta.seen(step(Phase.HOSTS, "node: h1, h2: connecting (ssh)"))
    assert eta.position == 0 and eta.phase == "node: h1, h2: connecting (ssh)"
    eta.seen(step(Phase.SERVICES, "services: redis (seed data restored)", "go"))
    assert eta.position == 0  # go's own services: still go's first level
    eta.seen(step(Phase.VERIFY, "verifying hello", "node"))
    assert eta.position == 2


def test_a_level_of_the_right_stack_but_another_repetition_does_not_count() -> None:
    eta = EtaTracker([Slot("go", "hello", 0, 25, r, 3, 5.0) for r in range(3)], Clock())
    eta.seen(done("go", 0, repetition=1))
    assert eta.position == 2  # repetition 0 will not come: the tracker follows the runner
    eta.seen(done("go", 0, repetition=7))  # no such slot: nothing moves
    assert eta.position == 2


def test_a_restart_takes_another_plan_and_keeps_the_elapsed_time() -> None:
    """--until-decided: each look's runner begins with its own (smaller) plan."""
    clock = Clock()
    eta = EtaTracker(slots(), clock)
    eta.seen(done("go", 0))
    clock.now += 5
    eta.seen(ProgressEvent(Phase.BEGIN))
    assert eta.position == 1  # a BEGIN alone moves nothing: the view restarts the tracker
    eta.restart(slots()[2:], tail_s=4.0)
    assert eta.position == 0 and eta.current() == slots()[2]
    assert eta.remaining_s() == 7 + 7 + 4 and eta.elapsed_s() == 5.0


def _suite(tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text(
        'name = "s"\nstacks = ["refserver", "missing"]\n'
        'workloads = ["hello", "sha256?n=2"]\n[load]\nconnections = [2, 4]\n'
        "duration_s = 3\nwarmup_s = 1\npause_s = 0.5\nrepeat = 2\n"
    )
    return suite


def test_plan_slots_cover_the_available_stacks(fake_inventory, tmp_path) -> None:
    plan = build_plan(parse_suite(_suite(tmp_path)), fake_inventory, None, None)
    timeline = plan_timeline(plan, overheads=Overheads(3, 2, 0.5, 0.25, 10, 1, 0.01))
    found = plan_slots(timeline)
    assert len(found) == plan.level_count() == 2 * 2 * 2
    assert {s.stack for s in found} == {"refserver"}
    assert all(s.seconds == 3 + 1 + 0.5 + 0.25 for s in found)
    # repetitions interleaved: round 1 runs repetition 0 of every level, round 2 repetition 1
    assert [(s.index, s.repetition) for s in found[:4]] == [(0, 0), (1, 0), (0, 0), (1, 0)]
    assert [(s.index, s.repetition) for s in found[4:]] == [(0, 1), (1, 1), (0, 1), (1, 1)]
    # each round's first level of a stack waits for its start and its first case's start,
    # the run's start before the very first: every step but the report is in a slot
    assert [s.lead_s for s in found[:4]] == [3 + 2 + 0.5, 0, 0.5, 0]
    assert sum(s.lead_s + s.seconds for s in found) == pytest.approx(
        timeline.total_s - timeline.seconds_of("report")
    )


def test_eta_counts_starts_and_report_and_takes_new_estimates() -> None:
    clock = Clock()
    planned = [
        Slot("go", "hello", 0, 25, 0, 1, 7.0, lead_s=5.0),
        Slot("go", "hello", 1, 100, 0, 1, 7.0),
        Slot("node", "hello", 0, 25, 0, 1, 7.0, lead_s=3.0),
    ]
    eta = EtaTracker(planned, clock, tail_s=10.0)
    assert eta.remaining_s() == 5 + 7 + 7 + 3 + 7 + 10
    eta.seen(step(Phase.START, "starting", "go"))
    clock.now += 4  # the start counts down from the previous level's end, events or not
    eta.seen(step(Phase.VERIFY, "verifying hello", "go"))
    assert eta.remaining_s() == 39 - 4
    clock.now += 8
    eta.seen(done("go", 0))
    # node measured slower than planned: the same levels, estimated again
    eta.replan([*planned[:2], Slot("node", "hello", 0, 25, 0, 1, 20.0, lead_s=3.0)])
    assert eta.remaining_s() == 7 + 3 + 20 + 10
    eta.replan(planned[:1])  # another plan's levels are not taken
    assert len(eta.slots) == 3
    eta.seen(done("node", 0))
    clock.now += 4
    assert eta.current() is None and eta.remaining_s() == 10 - 4  # the report is left


def test_an_event_reads_with_its_stack_first() -> None:
    assert step(Phase.START, "starting", "go").describe() == "go: starting"
    assert step(Phase.HOSTS, "hosts: h1: connecting").describe() == "hosts: h1: connecting"
    assert done("go", 2, 1).repetition == 1 and step(Phase.START, "x").repetition is None
