"""The plan's time in words (commands/plantime.py): what it counts and where rates came from."""

from stackbench.commands.plantime import time_lines
from stackbench.config.estimate import LevelTime, Overheads, RateSource, Step, Timeline

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
    timeline = Timeline((Step("case start", 30.5, "s", "w"),), OH, guessed_timings=16)
    assert time_lines(timeline, [])[1] == (
        "16 standalone timings at a GUESS of 10 ms an iteration (never timed here)"
    )
