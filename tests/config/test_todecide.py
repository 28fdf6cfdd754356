"""What a plan leaves of its suite's load budget for until-decided rounds, priced at the
plan's own estimates, and the wall time such rounds add (hand-made timelines)."""

import math

import pytest

from stackbench.config.estimate import LevelTime, Overheads, Step, Timeline
from stackbench.config.plan import LevelKey
from stackbench.config.todecide import remeasure_room, rounds_room, rounds_time


def _level(stack: str, value: float | None, load_s: float, rep: int = 0) -> Step:
    time = LevelTime(load_s + 5.0, load_s, "duration", "")
    return Step("level", time.seconds, stack, "hello", 0, value, rep, 3, time)


def test_the_room_is_the_budget_less_the_planned_load_and_each_level_costs_its_load():
    timeline = Timeline(
        (
            Step("run start", 4.0),
            *(_level("php", 3000.0, 12.0, rep) for rep in range(3)),
            *(_level("node", 3000.0, 12.0, rep) for rep in range(3)),
            _level("node", None, 2.0),  # a rate search's probe: no level to repeat
            Step("report", 10.0),
        )
    )
    room = rounds_room(timeline, 120.0)
    assert room is not None
    assert room.planned_s == 74.0  # the levels' load alone, the probe's included
    assert room.left_s == 46.0
    assert room.cost(LevelKey("php", "hello", 3000.0)) == 12.0  # one repetition, no warm-up
    assert math.isinf(room.cost(LevelKey("php", "hello", 5000.0)))  # not in the plan
    over = rounds_room(timeline, 60.0)
    assert over is not None and over.left_s == 0.0  # a plan past its budget leaves nothing
    assert rounds_room(timeline, None) is None  # no load budget: the rounds' is unknown here
    # the levels measured again for a disturbance are paid out of the same room
    assert remeasure_room(timeline, 120.0) == 46.0 and remeasure_room(timeline, 60.0) == 0.0
    assert remeasure_room(timeline, None) is None  # no budget: no cap


def test_the_rounds_wall_time_is_their_levels_and_their_fresh_starts() -> None:
    """php @3000 twice and node @3000 once more: each repetition as long as the plan's level
    (12 s of load + 5 s of warm-up, pause and overhead: 17 s); php starts twice, node once,
    each start 2 s plus 0.5 s for its one case: 3 x 17 + 3 x 2.5 = 58.5 s."""
    oh = Overheads(3, 2, 0.5, 0.25, 10, 1, 0.01)
    timeline = Timeline(
        (
            *(_level("php", 3000.0, 12.0, rep) for rep in range(3)),
            *(_level("node", 3000.0, 12.0, rep) for rep in range(3)),
        ),
        oh,
    )
    php, node = LevelKey("php", "hello", 3000.0), LevelKey("node", "hello", 3000.0)
    assert rounds_time(timeline, {php: 2, node: 1}) == pytest.approx(58.5)
    assert rounds_time(timeline, {}) == 0.0
