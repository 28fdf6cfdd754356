"""run --until-decided's scheduling: which undecided levels the next look repeats, within the
budget, and what it tells while it decides."""

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import native_loader_built

from stackbench.config.plan import LevelKey, build_plan
from stackbench.config.suite import parse_suite
from stackbench.config.todecide import MAX_LOOKS
from stackbench.engine.progress import Phase, ProgressEvent
from stackbench.engine.runner import Runner, RunSetup
from stackbench.engine.until_decided import (
    UntilDecided,
    level_seconds,
    next_round,
    rounds_left,
    until_decided,
)
from stackbench.store.store import Store
from tests.engine.test_runner import INTERLEAVED, suite_file
from tests.store.test_store import case as stored_case
from tests.store.test_store import level, run_record, settings


@dataclass(frozen=True)
class Found:
    """What the analysis answers (analysis.undecided.Undecided has these fields)."""

    decidable: dict[LevelKey, int] = field(default_factory=dict)
    hopeless: int = 0


def test_next_round_takes_the_most_decisions_per_second_within_the_budget() -> None:
    found = Found(
        {LevelKey("a", "w", 1.0): 3, LevelKey("b", "w", 1.0): 1, LevelKey("c", "w", 1.0): 2}, 0
    )
    seconds = {"a": 30.0, "b": 5.0, "c": 10.0}

    def cost(k: LevelKey) -> float:
        return seconds[k.stack]

    # per second: c 0.2, b 0.2 (tie: by key), a 0.1
    assert next_round(found, cost, 100.0) == [
        LevelKey("b", "w", 1.0),
        LevelKey("c", "w", 1.0),
        LevelKey("a", "w", 1.0),
    ]
    assert next_round(found, cost, 16.0) == [LevelKey("b", "w", 1.0), LevelKey("c", "w", 1.0)]
    assert next_round(found, cost, 4.0) == []


def stored_plan(tmp_path, fake_inventory, looks: int = MAX_LOOKS):
    """The fake stack's one-level plan and a stored run of it, started with `looks`
    (MAX_LOOKS: as with --until-decided; 1: a plain run), no level measured yet."""
    suite = tmp_path / "s.toml"
    suite.write_text(
        'name = "s"\nstacks = ["refserver"]\nworkloads = ["hello"]\n[load]\n'
        "connections = [2]\nduration_s = 30\nwarmup_s = 1\npause_s = 1\n"
    )
    plan = build_plan(parse_suite(suite), fake_inventory, None, None)
    store = Store(tmp_path / "s.sqlite")
    return plan, store, store.start_run(run_record(settings=settings(decision_looks=looks)))


def _looks(plan, store, run_id, found: Found, budget_s: float) -> list[str]:
    events: list[ProgressEvent] = []
    setup = RunSetup({}, store, Path("/nonexistent"), events.append)
    until_decided(plan, setup, run_id, UntilDecided(budget_s, lambda _data: found, "m"))
    assert all(e.phase is Phase.LOOK for e in events)
    return [e.text for e in events]


def test_nothing_left_to_decide_ends_at_the_first_look(tmp_path, fake_inventory) -> None:
    plan, store, run_id = stored_plan(tmp_path, fake_inventory)
    said = _looks(plan, store, run_id, Found({}, 2), 600.0)
    assert said == [
        "until decided: every comparison that measurement can decide is decided; 2 "
        "comparison(s) that more measurement will not decide (a ratio at the threshold, more "
        "repetitions than advised, a disturbed or a loader-bound level)"
    ]


def test_a_budget_smaller_than_one_level_adds_nothing(tmp_path, fake_inventory) -> None:
    plan, store, run_id = stored_plan(tmp_path, fake_inventory)
    key = LevelKey("refserver", "hello", 2.0)
    cost = level_seconds(plan, [], key)
    assert cost > 32.0  # 1 s warm-up, 30 s of load, 1 s pause and the loader's start
    said = _looks(plan, store, run_id, Found({key: 1}), 32.0)
    assert said == [
        "until decided: the budget (0.5 min) is spent; 1 level(s) still in undecided comparisons"
    ]
    assert store.load_run(run_id).levels == []


def test_a_run_started_without_until_decided_adds_no_round(tmp_path, fake_inventory) -> None:
    """Its verdicts spend alpha on one look (decision_looks 1): a round would add a look they
    do not pay for, so none is added, whatever is undecided, and it says why."""
    plan, store, run_id = stored_plan(tmp_path, fake_inventory, looks=1)
    said = _looks(plan, store, run_id, Found({LevelKey("refserver", "hello", 2.0): 1}), 600.0)
    assert said == [
        f"until decided: run {run_id} was started without --until-decided: its verdicts "
        "spend alpha on one look, so a round would add a look they do not pay for; start the "
        "run with --until-decided"
    ]


def test_a_resumed_run_counts_each_repetition_past_its_plan_as_a_round() -> None:
    """Six looks pay for five rounds; a run (repeat 2) whose levels have 3 and 4 repetitions
    may have taken 1 + 2 = 3 rounds before it stopped: 2 are left, and none at 5 or more."""
    store = Store(":memory:")
    run_id = store.start_run(run_record(settings=settings(decision_looks=6, repeat=2)))
    a = store.add_case(stored_case(run_id, "sha256"))
    b = store.add_case(stored_case(run_id, "hello"))
    for case_id, reps in ((a, 3), (b, 4)):
        for r in range(reps):
            store.add_level(level(case_id, 0, repetition=r))
    left = rounds_left(store.load_run(run_id), 5)
    assert left.rounds == 2
    assert rounds_left(store.load_run(run_id), 1).rounds == 1
    store.add_level(level(a, 0, repetition=3))
    store.add_level(level(a, 0, repetition=4))
    left = rounds_left(store.load_run(run_id), 5)
    assert left.rounds == 0
    assert left.why == (
        "the run's verdicts pay for 6 looks and it may have taken 6 (5 repetition(s) past "
        "its plan's 2, each counted as a round)"
    )


@pytest.mark.integration
@pytest.mark.skipif(not native_loader_built(), reason="loadgen not built")
def test_a_look_repeats_the_chosen_level_into_the_same_run(tmp_path, fake_inventory) -> None:
    """The strategy end to end on the fake stack: a first look that finds one decidable level
    runs one more repetition of it (a fresh start, a runner of its own that begins with the
    extension's plan); the second look finds nothing left."""
    text = INTERLEAVED.replace("repeat = 3", "repeat = 1")
    plan = build_plan(parse_suite(suite_file(tmp_path, "native", text)), fake_inventory, None, None)
    store = Store(tmp_path / "s.sqlite")
    events: list[ProgressEvent] = []
    setup = RunSetup(fake_inventory, store, tmp_path, events.append, decision_looks=MAX_LOOKS)
    run_id = Runner(plan, setup).execute()
    key = LevelKey("refserver-b", "hello", 2.0)
    answers = iter([Found({key: 1}), Found()])
    until_decided(plan, setup, run_id, UntilDecided(600.0, lambda _data: next(answers), "m"))
    looks = [e.text for e in events if e.phase is Phase.LOOK]
    assert looks[0].startswith("until decided: look 2 of 6: repeating 1 level(s)")
    assert looks[1] == "until decided: every comparison that measurement can decide is decided"
    begins = [e.plan for e in events if e.phase is Phase.BEGIN]
    assert len(begins) == 2 and begins[1] is not None
    assert [s.name for s in begins[1].stacks] == ["refserver-b"]
    data = store.load_run(run_id)
    case = next(c for c in data.cases if c.stack == "refserver-b")
    assert sorted(lv.repetition for lv in data.levels_of(case.id)) == [0, 1]
    assert all(c.status == "ok" for c in data.cases) and data.run.status == "complete"
