"""The plan's time in words (commands/plantime.py): what it counts and where rates came from."""

from pathlib import Path

from stackbench.analysis.claims import Readiness
from stackbench.commands.plantime import (
    RoundsAhead,
    rounds_ahead,
    time_lines,
    until_decided_line,
)
from stackbench.config.claims import claims_from_data
from stackbench.config.estimate import LevelTime, Overheads, RateSource, Step, Timeline
from stackbench.config.plan import LevelKey

OH = Overheads(3, 2, 0.5, 0.25, 10, 1, 0.01)


def _level(seconds: float, load: float, source: RateSource) -> Step:
    return Step("level", seconds, "s", "w", 0, 1.0, 0, 1, LevelTime(seconds, load, source, ""))


def test_the_total_counts_every_step_and_names_each_rate_source():
    timeline = Timeline(
        (
            Step("run start", 3),
            Step("stack start", 2, "s"),
            Step("case start", 0.5, "s", "w"),
            _level(5.25, 4, "measured"),
            _level(61.25, 60, "guess"),
            Step("report", 11),
        ),
        OH,
    )
    first, rates, built = time_lines(timeline, ["java-servlet"])
    assert first.startswith("2 load levels, about 83 s in all: 64 s of load, 2 s of warm-ups")
    # stack and case starts: 2.5 s, printed rounded half to even
    assert "2 s of stack starts" in first and "14 s to start and to write the report" in first
    assert rates == (
        "levels counted in requests: 1 from the rate measured here at the same level; 1 at "
        "a GUESS (never measured here; the ETA corrects it as levels finish)"
    )
    assert built.endswith(": java-servlet")


def test_levels_of_a_duration_say_nothing_of_rates():
    timeline = Timeline((_level(14.25, 12, "duration"),), OH)
    assert len(time_lines(timeline, [])) == 1


def test_standalone_timings_never_timed_here_are_said_to_be_a_guess():
    timeline = Timeline(
        (Step("case start", 30.5, "s", "w"),),
        OH,
        guessed_timings=16,
        guessed_timing_s=160.0,
        borrowed_timings=4,
        borrowed_timing_s=20.0,
    )
    assert time_lines(timeline, [])[1:] == [
        "4 standalone timings at another stack's timing of the same workload here, the "
        "slowest (a rough guess): 20 s of the plan",
        "16 standalone timings at a GUESS of 10 ms an iteration (never timed here): 2.7 min "
        "of the plan, which a workload's real timing can make several times shorter or longer",
    ]


def test_the_total_with_until_decided_rounds_expected_and_at_most():
    """A plan of 120 s (two levels of 50 s of load, 60 s each), 10 s of calibration aside;
    its claims expect 2 rounds adding 80 s of load, 100 s of wall time; the budget leaves
    200 s of load, 240 s at the plan's 1.2 s of wall time a second of load."""
    timeline = Timeline(
        (Step("calibration", 10.0), _level(60.0, 50.0, "duration"), _level(60.0, 50.0, "duration")),
        OH,
    )
    ahead = RoundsAhead(2, 80.0, 100.0, 200.0, 240.0)
    lines = time_lines(timeline, [], 300.0, ahead)
    assert lines[1] == (
        "with --until-decided: 2.0 min (calibration aside), up to 3.7 min with the 2 "
        "until-decided rounds its claims are expected to need (80 s of load, within the "
        "budget); at most about 6.0 min if the rounds spend all the 3.3 min of load the "
        "suite's budget leaves after the plan"
    )
    none = until_decided_line(timeline, RoundsAhead(0, 0.0, 0.0, 200.0, 240.0))
    assert "its claims are expected to need no until-decided round; at most about 6.0" in none


def test_the_rounds_ahead_are_the_claims_expected_rounds_priced_as_the_plan():
    """Level s w @1 (50 s of load, 60 s of wall time) once more for one claim: 50 s of load,
    60 s plus a fresh start of s with its case (2 + 0.5 s); the budget of 300 s leaves 200 s
    of load after the plan's 100: the rounds' 62.5 s, and the other 150 s of load at the
    plan's 1.2 s of wall time each, 242.5 s at most."""
    data = {
        "article": "000_test.txt",
        "title": "t",
        "suites": ["s"],
        "claim": [
            {
                "id": "c",
                "says": "a claim",
                "figures": [],
                "test": {
                    "kind": "ratio",
                    "metric": "requests_per_s",
                    "numerator": {"stack": "s"},
                    "denominator": {"stack": "t"},
                    "expect": "greater",
                    "threshold": 1.0,
                    "workloads": ["w"],
                },
            }
        ],
    }
    (claim,) = claims_from_data(Path("t.toml"), data).claims
    timeline = Timeline((_level(60.0, 50.0, "duration"), _level(60.0, 50.0, "duration")), OH)
    key = LevelKey("s", "w", 1.0)
    ready = [Readiness(claim, (), True, "", 1, 50.0, ((key, 1),)), Readiness(claim, (), True)]
    assert rounds_ahead(timeline, ready, 300.0) == RoundsAhead(1, 50.0, 62.5, 200.0, 242.5)
    assert rounds_ahead(timeline, ready, None) is None
